"""posgeom.analyze, posgeom.Windows, posgeom.metrics and posgeom.report: the CLI's analysis
and report from Python, under the CLI's output policy."""

import json
import os

import numpy as np
import pytest

import posgeom
from families import TOKENIZER, model_dir

OPTIONS = {"tokenizer": TOKENIZER, "seq_len": 16, "num_seqs": 6, "batch_size": 3}


def test_analyze_returns_what_it_writes(shared, corpus, tmp_path):
    results = posgeom.analyze(model=model_dir(shared, "tiny-gpt2"), corpus=corpus, out=tmp_path / "report", **OPTIONS)
    with open(tmp_path / "report" / "summary.json") as f:
        assert results.summary == json.load(f)
    assert (tmp_path / "report" / "report.html").exists()
    assert results.layers == [0, 1, 2, 3]
    arrays = results.arrays(2)
    assert arrays["positional"].shape == (15, 64)  # T' = 16 - skip_first, d
    assert arrays["gram"].shape == (15, 15)
    np.testing.assert_allclose(np.diag(arrays["gram"]), 1.0, rtol=1e-12)  # a normalized Gram
    with pytest.raises(ValueError, match="layer: 9 is not among"):
        results.arrays(9)


def test_analyze_without_out_keeps_nothing(shared, corpus, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    results = posgeom.analyze(model=model_dir(shared, "tiny-gpt2"), corpus=corpus, **OPTIONS)
    assert results.summary["data"]["windows"] == 6
    assert os.listdir(tmp_path) == ["tmp"]
    assert os.listdir(tmp_path / "tmp") == []


def test_force_without_out_is_refused(shared, corpus):
    with pytest.raises(ValueError, match="force: replaces the report in out=: give out= too"):
        posgeom.analyze(model=model_dir(shared, "tiny-gpt2"), corpus=corpus, force=True, **OPTIONS)


def test_analyze_refuses_an_out_it_did_not_write(shared, corpus, tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("\\documentclass{article}")
    with pytest.raises(ValueError, match="mine: exists and is not empty; pass force=True to replace it"):
        posgeom.analyze(model=model_dir(shared, "tiny-gpt2"), corpus=corpus, out=tmp_path / "mine", **OPTIONS)
    assert os.listdir(tmp_path / "mine") == ["thesis.tex"]


def test_report_writes_a_state_and_its_report_once(shared, corpus, tmp_path):
    windows = posgeom.Windows(model=model_dir(shared, "tiny-gpt2"), corpus=corpus, **OPTIONS)
    accumulator = windows.accumulator()
    rng = np.random.default_rng(0)
    for batch in windows:
        accumulator.add(rng.standard_normal((5, len(batch), 16, 64)), batch=batch)
    state = accumulator.state()
    posgeom.report(state, tmp_path / "r")
    assert {"summary.json", "report.html", "state.safetensors", "layers.csv"} <= set(os.listdir(tmp_path / "r"))
    with open(tmp_path / "r" / "summary.json") as f:
        assert json.load(f)["layers"] == posgeom.metrics(state).summary["layers"]
    with pytest.raises(ValueError, match="r: exists and is not empty; pass force=True"):
        posgeom.report(state, tmp_path / "r")  # a report there: replaced only with force=True
    posgeom.report(posgeom.metrics(state), tmp_path / "r", force=True)
    assert "state.safetensors" not in os.listdir(tmp_path / "r")  # results hold no statistics
    with pytest.raises(ValueError, match="report: takes a posgeom.State or posgeom.Results, not dict"):
        posgeom.report({}, tmp_path / "other")


def test_a_state_of_windows_left_unread_is_incomplete(shared, corpus):
    windows = posgeom.Windows(model=model_dir(shared, "tiny-gpt2"), corpus=corpus, **OPTIONS)
    accumulator = windows.accumulator()
    batch = next(windows)
    accumulator.add(np.zeros((5, len(batch), 16, 64)) + 1.0, batch=batch)
    assert not accumulator.state().settings["data"]["complete"]  # posgeom merge wants --partial for it
    for batch in windows:
        accumulator.add(np.zeros((5, len(batch), 16, 64)) + 1.0, batch=batch)
    assert accumulator.state().settings["data"]["complete"]


def test_metrics_options_are_checked(shared, corpus):
    accumulator = posgeom.Accumulator(8, 4)
    accumulator.add(np.random.default_rng(0).standard_normal((3, 8, 4)))
    with pytest.raises(ValueError, match=r"lowfreq_k: must be a whole number >= 1 \(got 0\)"):
        posgeom.metrics(accumulator.state(), lowfreq_k=0)
    assert posgeom.metrics(accumulator.state(), screenot_k=1).summary["report"]["screenot_k"] == 1


def test_windows_are_analyzes_and_name_their_settings(shared, corpus):
    windows = posgeom.Windows(model=model_dir(shared, "tiny-gpt2"), corpus=corpus, **OPTIONS)
    assert (windows.num_positions, windows.dim, windows.layers) == (16, 64, [0, 1, 2, 3])
    batches = list(windows)
    assert [len(b) for b in batches] == [3, 3]
    assert batches[1].indices.tolist() == [3, 4, 5]
    assert batches[0].ids.shape == (3, 16) and batches[0].ids.dtype == np.int64
    assert set(batches[0].labels) <= {"a.txt", "b.txt", "c.txt"}
    assert windows.settings["seq_len"] == 16 and windows.settings["shard"] == "0/1"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"seq_lne": 16}, "seq_lne: is not an option of posgeom's analysis (did you mean seq_len?)"),
        ({"seq_len": "16"}, "seq_len: must be an integer, not str"),
        ({"seq_len": 1}, "seq_len: must be a whole number >= 2 (got 1)"),
        ({"batch_size": -1}, "batch_size: must be a whole number >= 0 (got -1)"),
        ({"special_tokens": 1}, "special_tokens: must be True or False, not int"),
        ({"dtype": "float8"}, "dtype: 'float8' is not a compute dtype"),
        ({"shard": "3/2"}, "shard:"),

    ],
)
def test_bad_options_are_one_value_error_before_the_model_loads(kwargs, message, corpus, tmp_path):
    options = {"model": str(tmp_path / "no-model"), "corpus": corpus, **kwargs}
    with pytest.raises(ValueError) as raised:
        posgeom.Windows(**options)
    assert str(raised.value).startswith(message), str(raised.value)
