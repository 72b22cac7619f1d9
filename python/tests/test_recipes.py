"""docs/python.md's recipes, run as written on tiny-gpt2 (given the bundled model's
tokenizer, so that transformers and TransformerLens load it like a hub model), each state
checked against `posgeom analyze` on the same windows."""

import json
import os
import re
import runpy
import shutil

import pytest

import posgeom
from conftest import ROOT, run_cli
from families import TOKENIZER, assert_same_statistics

RECIPES = re.findall(r"### Recipe: (.+?)\n\n```python\n(.*?)```", (ROOT / "docs" / "python.md").read_text(), re.S)
OPTIONS = dict(seq_len=16, num_seqs=6, batch_size=3, dtype="float64")


def test_the_guide_has_three_recipes():
    assert [title.split(",")[0] for title, _ in RECIPES] == ["transformers", "TransformerLens", "nnsight"]


@pytest.fixture(scope="module")
def model_with_tokenizer(shared, tmp_path_factory):
    folder = tmp_path_factory.mktemp("models") / "tiny-gpt2"
    shutil.copytree(shared / "fixtures" / "models" / "tiny-gpt2", folder)
    with open(os.path.join(TOKENIZER, "tokenizer.json")) as f:
        tokenizer = json.load(f)
    tokenizer.setdefault("added_tokens", [])  # transformers' reader needs the key; the bundled file has none
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "PreTrainedTokenizerFast"}))
    return str(folder)


@pytest.fixture(scope="module")
def analyzed(model_with_tokenizer, corpus, cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("analyze") / "report"
    args = ["--model", model_with_tokenizer, "--corpus", corpus]
    for key, value in OPTIONS.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    run_cli(cli, "analyze", *args, "--out", str(out))
    return posgeom.load(out / "state.safetensors")


@pytest.mark.parametrize("title, code", RECIPES, ids=[title.split(",")[0] for title, _ in RECIPES])
def test_a_recipe_gives_analyzes_state(title, code, model_with_tokenizer, corpus, analyzed, tmp_path, monkeypatch):
    settings = {"model_name": repr(model_with_tokenizer), "corpus": repr(corpus), "options": f"dict(**{OPTIONS!r})"}
    for name, value in settings.items():
        code, count = re.subn(rf"^{name} = .*$", f"{name} = {value}", code, flags=re.M)
        assert count == 1, f"{title}: no line sets {name}"
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "recipe.py"  # nnsight reads a trace's source back from its file
    script.write_text(code)
    namespace = runpy.run_path(str(script))
    script.unlink()
    assert_same_statistics(namespace["accumulator"].state(), analyzed)
    written = [name for name in os.listdir(tmp_path) if name.startswith(("report-", "transformer-lens"))]
    assert len(written) == 1  # each recipe keeps its result: a report, or a state to merge
