"""The acceptance of the package: statistics accumulated from transformers' hidden states
are those of `posgeom analyze` on the same checkpoint and windows, and a state saved from
Python merges with the CLI's shards."""

import json
import subprocess

import pytest

import posgeom
from conftest import run_cli
from families import LAST_BLOCK, TOKENIZER, accumulate, assert_same_numbers, assert_same_statistics, model_dir

WINDOWS = {"seq_len": 16, "num_seqs": 8, "batch_size": 3}

def cli_options(directory, corpus, **extra):
    args = ["--model", directory, "--tokenizer", TOKENIZER, "--corpus", corpus, "--dtype", "float64"]
    for key, value in {**WINDOWS, **extra}.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    return args

def comparable(summary):
    """A summary's numbers: what two runs of the same analysis share (not its timings, data or effective settings)."""
    return {k: v for k, v in summary.items() if k not in ("timings", "data", "effective")}

@pytest.mark.parametrize("family", sorted(LAST_BLOCK))
def test_transformers_hidden_states_give_analyzes_statistics(family, shared, corpus, cli, tmp_path):
    directory = model_dir(shared, family)
    state = accumulate(family, directory, corpus=corpus, **WINDOWS).state()
    run_cli(cli, "analyze", *cli_options(directory, corpus), "--out", str(tmp_path / "cli"))
    reference = posgeom.load(tmp_path / "cli" / "state.safetensors")
    assert state.windows == 8
    assert_same_statistics(state, reference)
    with open(tmp_path / "cli" / "summary.json") as f:
        assert_same_numbers(comparable(posgeom.metrics(state).summary), comparable(json.load(f)))

def test_a_layer_selection_is_analyzes(shared, corpus, cli, tmp_path):
    # Every hidden state up to the last selected one passes through: the cosine with the
    # previous layer of hidden state 3 is with hidden state 2, selected or not.
    directory = model_dir(shared, "tiny-gpt2")
    state = accumulate("tiny-gpt2", directory, corpus=corpus, layer=[1, 3], **WINDOWS).state()
    run_cli(cli, "analyze", *cli_options(directory, corpus), "--layer", "1,3", "--out", str(tmp_path / "cli"))
    reference = posgeom.load(tmp_path / "cli" / "state.safetensors")
    assert state.layers == [1, 3]
    assert reference.statistics(3)["previous_cosine_sum"] != 0
    assert_same_statistics(state, reference)


def test_a_state_saved_from_python_merges_with_a_cli_shard(shared, corpus, cli, tmp_path):
    directory = model_dir(shared, "tiny-gpt2")
    accumulate("tiny-gpt2", directory, corpus=corpus, shard="1/2", **WINDOWS).save(tmp_path / "python-1of2.safetensors")
    assert posgeom.load(tmp_path / "python-1of2.safetensors").settings["data"]["complete"]
    run_cli(cli, "analyze", *cli_options(directory, corpus, shard="0/2"), "--out", str(tmp_path / "cli-0of2"))
    run_cli(cli, "merge", str(tmp_path / "cli-0of2" / "state.safetensors"), str(tmp_path / "python-1of2.safetensors"),
            "--out", str(tmp_path / "merged"))
    run_cli(cli, "analyze", *cli_options(directory, corpus), "--out", str(tmp_path / "whole"))
    assert_same_statistics(posgeom.load(tmp_path / "merged" / "state.safetensors"),
                           posgeom.load(tmp_path / "whole" / "state.safetensors"))

def test_the_cli_refuses_a_python_state_of_other_windows(shared, corpus, cli, tmp_path):
    directory = model_dir(shared, "tiny-gpt2")
    options = {**WINDOWS, "seq_len": 12}
    accumulate("tiny-gpt2", directory, corpus=corpus, shard="1/2", **options).save(tmp_path / "python.safetensors")
    run_cli(cli, "analyze", *cli_options(directory, corpus, shard="0/2"), "--out", str(tmp_path / "cli"))

    result = subprocess.run([cli, "merge", str(tmp_path / "cli" / "state.safetensors"), str(tmp_path / "python.safetensors"),
                             "--out", str(tmp_path / "merged")], capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "seq_len" in result.stderr
    assert not (tmp_path / "merged").exists()

def test_python_shards_merge_into_the_whole_run(shared, corpus, cli, tmp_path):
    directory = model_dir(shared, "tiny-bert")
    first = accumulate("tiny-bert", directory, corpus=corpus, shard="0/2", **WINDOWS)
    second = accumulate("tiny-bert", directory, corpus=corpus, shard="1/2", **WINDOWS)
    merged = posgeom.merge([first.state(), second.state()])
    first.merge(second)
    run_cli(cli, "analyze", *cli_options(directory, corpus), "--out", str(tmp_path / "cli"))
    reference = posgeom.load(tmp_path / "cli" / "state.safetensors")
    assert_same_statistics(merged, reference)
    assert_same_statistics(first.state(), reference)
