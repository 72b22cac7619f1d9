"""posgeom.heads: the heads analysis of `analyze --heads` from attention inputs accumulated in
Python and the query and key maps taken from the model transformers holds."""

import json

import numpy as np
import pytest
import torch
import transformers

import posgeom
from conftest import run_cli
from families import TOKENIZER, assert_same_numbers, model_dir

WINDOWS = {"seq_len": 16, "num_seqs": 8, "batch_size": 4}


def gpt2_maps(block, heads):
    """GPT-2's c_attn (a Conv1D: x @ W + b, W [d, 3d]) as query and key maps [heads, head_dim, d]."""
    weight, bias = block.attn.c_attn.weight.detach(), block.attn.c_attn.bias.detach()
    d = weight.shape[0]
    dh = d // heads
    return {
        "q_weight": weight[:, :d].T.reshape(heads, dh, d),
        "k_weight": weight[:, d : 2 * d].T.reshape(heads, dh, d),
        "q_bias": bias[:d].reshape(heads, dh),
        "k_bias": bias[d : 2 * d].reshape(heads, dh),
    }


@pytest.fixture(scope="module")
def gpt2_state(shared, corpus):
    directory = model_dir(shared, "tiny-gpt2")
    windows = posgeom.Windows(model=directory, tokenizer=TOKENIZER, corpus=corpus, dtype="float64", heads=True, **WINDOWS)
    model = transformers.AutoModel.from_pretrained(directory).double().eval()
    seen = {}
    for b, block in enumerate(model.h):  # block b's attention input: its ln_1's output
        block.ln_1.register_forward_hook(lambda module, args, output, b=b: seen.update({b: output}))
    model.h[-1].register_forward_hook(lambda module, args, output: seen.update(last=output[0] if isinstance(output, tuple) else output))
    accumulator = windows.accumulator()
    with torch.no_grad():
        for batch in windows:
            hidden = list(model(torch.from_numpy(batch.ids), output_hidden_states=True).hidden_states)
            hidden[-1] = seen["last"]
            accumulator.add(hidden, batch=batch, attention_inputs=[seen[b] for b in range(len(model.h))])
    return directory, model, accumulator.state()


def test_heads_from_python_are_analyzes(gpt2_state, corpus, cli, tmp_path):
    directory, model, state = gpt2_state
    args = ["--model", directory, "--tokenizer", TOKENIZER, "--corpus", corpus, "--dtype", "float64", "--heads"]
    for key, value in WINDOWS.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    run_cli(cli, "analyze", *args, "--out", str(tmp_path / "cli"))
    with open(tmp_path / "cli" / "summary.json") as f:
        reference = json.load(f)["heads"]
    heads = model.config.n_head
    for b, block in enumerate(model.h):
        rows = posgeom.heads(state, b, **gpt2_maps(block, heads))
        assert len(rows) == heads
        for row in rows:
            assert row["etc_curve"].shape == (16,) and row["kernel_thumb"].shape == (16, 16)
            theirs = next(r for r in reference if r["block"] == b and r["head"] == row["head"])
            ours = {k: v for k, v in row.items() if k in theirs}
            assert ours.keys() == theirs.keys()
            # The sampled attention inputs are kept in float32 on both sides.
            assert_same_numbers(ours, theirs, rel=1e-6, path=f"block {b} head {row['head']}")


def test_heads_refuses_maps_that_do_not_fit(gpt2_state):
    directory, model, state = gpt2_state
    maps = gpt2_maps(model.h[0], model.config.n_head)
    with pytest.raises(ValueError, match="k_weight: has 3 heads, which must divide q_weight's 4"):
        posgeom.heads(state, 0, maps["q_weight"], maps["k_weight"][:3])
    with pytest.raises(ValueError, match=r"q_weight: holds a \[16, 32\] head"):
        posgeom.heads(state, 0, maps["q_weight"][:, :, :32], maps["k_weight"])
    with pytest.raises(ValueError, match="block: the state holds no attention inputs of block 7"):
        posgeom.heads(state, 7, maps["q_weight"], maps["k_weight"])
    with pytest.raises(ValueError, match="alibi_slopes: gives 2 slopes for 4 heads"):
        posgeom.heads(state, 0, maps["q_weight"], maps["k_weight"], alibi_slopes=[0.5, 0.25])
    plain = posgeom.Accumulator(16, 64)
    plain.add(np.ones((2, 16, 64)))
    with pytest.raises(ValueError, match="block: the state holds no attention inputs"):
        posgeom.heads(plain.state(), 0, maps["q_weight"], maps["k_weight"])


def test_attention_inputs_are_asked_for_when_kept_and_refused_otherwise():
    keeping = posgeom.Accumulator(8, 4, layers=2, attention_inputs=True)
    with pytest.raises(ValueError, match="attention_inputs: are needed"):
        keeping.add(np.ones((2, 2, 8, 4)))
    with pytest.raises(ValueError, match=r"attention_inputs: block 0's input is \[2, 8, 3\]"):
        keeping.add(np.ones((2, 2, 8, 4)), attention_inputs=[np.ones((2, 8, 3))])
    keeping.add(np.ones((2, 2, 8, 4)), attention_inputs=[np.ones((2, 8, 4))])
    with pytest.raises(ValueError, match="attention_inputs: are kept by an accumulator made with attention_inputs=True"):
        posgeom.Accumulator(8, 4).add(np.ones((2, 8, 4)), attention_inputs=[np.ones((2, 8, 4))])
