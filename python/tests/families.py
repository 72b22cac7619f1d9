"""The fixture models the Python tests run through transformers, with where each keeps its
last block: posgeom's hidden state L is that block's output before any final norm, where
transformers' output_hidden_states ends with the normed one (tools/hf_goldens.py does the same)."""

import pathlib

import numpy as np
import torch
import transformers

import posgeom

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The fixtures carry no tokenizer: the text is cut by the bundled model's (characters, 87 ids).
TOKENIZER = str(ROOT / "models" / "default")

# Families whose transformers forward runs in float64 throughout (no float32 norm, softmax or
# rotary table inside), so that posgeom's float64 run is the same arithmetic in another order.
LAST_BLOCK = {
    "tiny-gpt2": lambda model: model.h[-1],
    "tiny-bert": lambda model: model.encoder.layer[-1],
    "hf-opt": lambda model: model.decoder.layers[-1],
}


def model_dir(shared: pathlib.Path, name: str) -> str:
    if name.startswith("hf-"):
        return str(ROOT / "tests" / "fixtures" / "hf" / name)
    return str(shared / "fixtures" / "models" / name)


def accumulate(name: str, directory: str, device: str = "cpu", **options) -> posgeom.Accumulator:
    """analyze's windows through transformers in float64, batch by batch into an accumulator."""
    windows = posgeom.Windows(model=directory, tokenizer=TOKENIZER, dtype="float64", **options)
    model = transformers.AutoModel.from_pretrained(directory).to(device=device, dtype=torch.float64).eval()
    last = {}
    LAST_BLOCK[name](model).register_forward_hook(lambda module, args, output: last.update(out=output[0] if isinstance(output, tuple) else output))
    accumulator = windows.accumulator()
    with torch.no_grad():
        for batch in windows:
            out = model(torch.from_numpy(batch.ids).to(device), output_hidden_states=True)
            hidden = list(out.hidden_states)
            hidden[-1] = last["out"]
            accumulator.add(hidden, batch=batch)
    return accumulator


STATISTICS = ("position_sum", "second_moment", "context_second_moment", "context_means", "reservoir")


def assert_same_statistics(a: posgeom.State, b: posgeom.State, rel: float = 1e-9) -> None:
    """Every float64 sum and kept sample within `rel` of the largest value of its kind."""
    assert a.layers == b.layers
    assert a.windows == b.windows
    for layer in b.layers:
        x, y = a.statistics(layer), b.statistics(layer)
        assert x["sequences"] == y["sequences"]
        assert x["context_windows"] == y["context_windows"]
        assert x["reservoir_windows"] == y["reservoir_windows"]
        for key in ("norm_sum", "previous_cosine_sum"):
            assert abs(x[key] - y[key]) <= rel * max(abs(y[key]), 1e-300), (layer, key)
        for key in STATISTICS:
            assert x[key].shape == y[key].shape, (layer, key)
            if y[key].size:
                assert np.abs(x[key] - y[key]).max() <= rel * np.abs(y[key]).max(), (layer, key)


def assert_same_numbers(a, b, rel: float = 1e-9, path: str = "") -> None:
    """Two summaries' numbers within `rel` (1 for values below 1), keys and strings equal."""
    if isinstance(b, dict):
        assert isinstance(a, dict) and a.keys() == b.keys(), path
        for key in b:
            assert_same_numbers(a[key], b[key], rel, f"{path}.{key}")
    elif isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_numbers(x, y, rel, f"{path}[{i}]")
    elif isinstance(b, float) or isinstance(a, float):
        assert abs(a - b) <= rel * max(1.0, abs(b)), f"{path}: {a} != {b}"
    else:
        assert a == b, path
