"""posgeom.Accumulator on its own: what it takes, where it reduces, what it refuses."""

import numpy as np
import pytest
import torch

import posgeom
from posgeom import _core


def hidden(batch=3, positions=8, dim=4, layers=2, dtype=torch.float64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(batch, positions, dim, dtype=dtype, generator=generator) for _ in range(layers)]


def test_a_torch_tensor_is_read_where_it_is():
    t = torch.randn(4, 8, 16)
    assert _core._view_address(t) == t.data_ptr()
    strided = torch.randn(8, 4, 16).transpose(0, 1)  # not contiguous: read through its strides
    assert not strided.is_contiguous()
    assert _core._view_address(strided) == strided.data_ptr()
    assert _core._view_address(t[1:]) == t[1:].data_ptr()
    array = np.ones((2, 8, 4))
    assert _core._view_address(array) == array.ctypes.data


def test_a_reversed_view_is_read_as_its_copy():
    array = np.random.default_rng(0).standard_normal((2, 8, 4))
    a, b = posgeom.Accumulator(8, 4), posgeom.Accumulator(8, 4)
    a.add(np.flip(array, axis=1))
    b.add(np.ascontiguousarray(np.flip(array, axis=1)))
    np.testing.assert_array_equal(a.state().statistics(0)["position_sum"], b.state().statistics(0)["position_sum"])


def test_nnsight_imported_first_leaves_both_working():
    # nnsight mounts a save() on every object; posgeom's own save methods must still load.
    import subprocess
    import sys

    code = "import nnsight, posgeom; posgeom.Accumulator(8, 4); assert hasattr(object(), 'save'); print('ok')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]


def test_a_strided_view_gives_the_statistics_of_its_copy():
    strided = torch.randn(8, 3, 4, dtype=torch.float64).transpose(0, 1)
    a, b = posgeom.Accumulator(8, 4), posgeom.Accumulator(8, 4)
    a.add(strided)
    b.add(strided.contiguous())
    np.testing.assert_array_equal(a.state().statistics(0)["position_sum"], b.state().statistics(0)["position_sum"])


def test_the_sums_are_those_of_the_definition():
    layers = hidden(batch=5, positions=8, dim=4, layers=2)
    accumulator = posgeom.Accumulator(8, 4, layers=2, skip_first=1)
    accumulator.add(layers[:])  # a list: one [batch, T, d] per hidden state
    state = accumulator.state()
    assert state.windows == 5 and state.layers == [0, 1]
    for index, h in enumerate(layers):
        h = h[:, 1:].numpy()  # the first position skipped
        stats = state.statistics(index)
        np.testing.assert_allclose(stats["position_sum"], h.sum(axis=0), rtol=1e-12)
        flat = h.reshape(-1, 4)
        np.testing.assert_allclose(stats["second_moment"], flat.T @ flat, rtol=1e-12)
        means = h.mean(axis=1)
        np.testing.assert_allclose(stats["context_second_moment"], means.T @ means, rtol=1e-12)
        assert stats["norm_sum"] == pytest.approx(np.linalg.norm(h, axis=-1).sum(), rel=1e-12)


def test_one_array_of_every_layer_and_a_list_give_the_same_state():
    layers = hidden(layers=3)
    a, b, c = (posgeom.Accumulator(8, 4, layers=3) for _ in range(3))
    a.add(torch.stack(layers))
    b.add(tuple(layers))
    c.add(np.stack([h.numpy() for h in layers]))
    for layer in range(3):
        sums = [x.state().statistics(layer)["position_sum"] for x in (a, b, c)]
        np.testing.assert_array_equal(sums[0], sums[1])
        np.testing.assert_array_equal(sums[0], sums[2])


def test_listed_layers_are_the_only_ones_kept():
    accumulator = posgeom.Accumulator(8, 4, layers=[1, 3])
    accumulator.add(hidden(layers=4))
    assert accumulator.state().layers == [1, 3]


def test_float32_and_half_types_are_read_as_they_are():
    # A batch is summed in float32 (float64 for float64 input), and batches add up in float64.
    h = hidden(layers=1, dtype=torch.float64)[0]
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        accumulator = posgeom.Accumulator(8, 4)
        accumulator.add(h.to(dtype))
        expected = h.to(dtype).double()[:, 1:].sum(0).numpy()
        np.testing.assert_allclose(accumulator.state().statistics(0)["position_sum"], expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: [torch.zeros(2, 7, 4)] * 2, "hidden: hidden state 0 is [2, 7, 4]; this accumulator takes [batch, 8, 4]"),
        (lambda: torch.zeros(2, 8, 4), "hidden: is one hidden state [batch, T, d]; this accumulator takes 2"),
        (lambda: torch.zeros(2, 8, 4, dtype=torch.int64), "hidden: holds int64 values"),
        (lambda: torch.zeros(2, 8, 4, requires_grad=True), "hidden: requires grad"),
        (lambda: "hidden states", "hidden: is a str"),
        (lambda: torch.zeros(8, 4), "hidden: has shape [8, 4]"),
        (lambda: [torch.zeros(2, 8, 4)] * 3, "hidden: gives 3 hidden states; this accumulator takes 2"),
    ],
)
def test_bad_hidden_states_are_one_clear_value_error(make, message):
    accumulator = posgeom.Accumulator(8, 4, layers=2)
    with pytest.raises(ValueError) as raised:
        accumulator.add(make())
    assert str(raised.value).startswith(message), str(raised.value)
    assert "\n" not in str(raised.value)
    assert accumulator.windows == 0


def test_nan_is_refused_named_and_poisons_nothing_silently(tmp_path):
    h = hidden(layers=3)
    h[2][0, 3, 2] = float("nan")
    accumulator = posgeom.Accumulator(8, 4, layers=[0, 2])
    accumulator.add(hidden(layers=3, seed=1))
    with pytest.raises(ValueError, match="hidden: hidden state 2 holds NaN or Inf"):
        accumulator.add(h)
    # part of the batch is in the sums now: nothing more comes out of it
    for use in (lambda: accumulator.state(), lambda: accumulator.save(tmp_path / "s.safetensors"),
                lambda: accumulator.add(hidden(layers=3))):
        with pytest.raises(ValueError, match="holds part of a refused batch"):
            use()
    assert not (tmp_path / "s.safetensors").exists()


def test_one_hidden_state_for_an_accumulator_of_hidden_state_0():
    accumulator = posgeom.Accumulator(8, 4, layers=[0])
    accumulator.add(hidden(layers=1)[0])
    assert accumulator.state().layers == [0]


def test_bad_batch_windows_and_labels_are_value_errors():
    accumulator = posgeom.Accumulator(8, 4)
    h = hidden(layers=1)[0]
    for kwargs, message in [({"batch": [1, 2, 3]}, "batch: must be a posgeom.WindowBatch, not list"),
                            ({"windows": "abc"}, "windows: must be a sequence of window indices, not str"),
                            ({"labels": [1, 2, 3]}, "labels: must be a sequence of strings, not list"),
                            ({"windows": [0, 1]}, "windows: gives 2 windows for a batch of 3"),
                            ({"windows": [0, 2, 1]}, "windows: window 1 comes after window 2"),
                            ({"windows": [-3, 0, 1]}, "windows: window -3 comes after window -1")]:
        with pytest.raises(ValueError) as raised:
            accumulator.add(h, **kwargs)
        assert str(raised.value).startswith(message), str(raised.value)


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((0, 4), {}, "num_positions: must be a whole number >= 2 (got 0)"),
        ((8, 4), {"layers": 0}, "layers: must be positive"),
        ((8, 4), {"layers": "all"}, "layers: must be a count or a list"),
        ((8, 4), {"skip_first": 8}, "skip_first: leaves no positions"),
        ((8, 4), {"shard": "2/2"}, "shard:"),
        ((8, 4), {"device": "gpu"}, "device: 'gpu' is not a device"),
        ((8, 4), {"device": "meta"}, "device: 'meta' is not a device"),
        ((1, 4), {}, "num_positions: must be a whole number >= 2 (got 1)"),
        ((8, 4), {"skip_first": -1}, "skip_first: must be 0 or more, not -1"),
        ((8, 2**20), {"layers": 64}, "dim: 1048576 needs"),
    ],
)
def test_bad_settings_are_refused_before_any_work(args, kwargs, message):
    with pytest.raises(ValueError) as raised:
        posgeom.Accumulator(*args, **kwargs)
    assert str(raised.value).startswith(message), str(raised.value)


def test_an_empty_accumulator_has_no_state():
    with pytest.raises(ValueError, match="holds no windows yet"):
        posgeom.Accumulator(8, 4).state()


def test_two_accumulators_of_one_run_merge_only_as_shards():
    h = hidden(layers=1)
    whole = posgeom.Accumulator(8, 4)
    whole.add(h)
    again = posgeom.Accumulator(8, 4)
    again.add(h)
    with pytest.raises(ValueError, match="again"):
        whole.merge(again)  # two whole runs: every window would count twice
    first, second = posgeom.Accumulator(8, 4, shard="0/2"), posgeom.Accumulator(8, 4, shard="1/2")
    first.add([h[0][[0, 2]]])  # shard 0/2's windows are 0, 2, ... unless windows= says otherwise
    second.add([h[0][[1]]])
    first.merge(second)
    merged = first.state().statistics(0)
    np.testing.assert_allclose(merged["position_sum"], whole.state().statistics(0)["position_sum"], rtol=1e-12)
    assert merged["context_windows"] == [0, 1, 2]
    np.testing.assert_allclose(merged["context_means"], whole.state().statistics(0)["context_means"], rtol=1e-12)
    assert first.windows == 3
    total = posgeom.Accumulator(8, 4)  # an empty accumulator takes a state as it is
    total.merge(first)
    np.testing.assert_array_equal(total.state().statistics(0)["position_sum"], merged["position_sum"])


def test_other_settings_do_not_merge():
    a, b = posgeom.Accumulator(8, 4, shard="0/2"), posgeom.Accumulator(8, 4, shard="1/2", skip_first=2)
    a.add(hidden(layers=1))
    b.add(hidden(layers=1))
    with pytest.raises(ValueError, match="skip_first"):
        a.merge(b)


def test_a_window_is_added_once():
    accumulator = posgeom.Accumulator(8, 4)
    accumulator.add(hidden(layers=1)[0], windows=[0, 1, 2])
    with pytest.raises(ValueError, match="windows: window 1 comes after window 2"):
        accumulator.add(hidden(layers=1)[0], windows=[1, 3, 4])  # 1 again would count twice
    accumulator.add(hidden(layers=1)[0])  # default indices go on from the last
    assert accumulator.state().statistics(0)["context_windows"] == [0, 1, 2, 3, 4, 5]


def test_empty_and_missing_arguments_are_named(tmp_path):
    accumulator = posgeom.Accumulator(8, 4)
    accumulator.add(hidden(layers=1)[0])
    with pytest.raises(ValueError, match="path: is empty"):
        accumulator.save("")
    with pytest.raises(ValueError, match="states: is empty"):
        posgeom.merge([])
    with pytest.raises(ValueError, match="seq_len: is too large"):
        posgeom.Windows(model=str(tmp_path), corpus=str(tmp_path), seq_len=2**70)
    with pytest.raises(ValueError, match="level: 'loud' is not a log level"):
        posgeom.set_log_level("loud")


def test_save_replaces_nothing_it_did_not_write(tmp_path):
    accumulator = posgeom.Accumulator(8, 4)
    accumulator.add(hidden(layers=1))
    path = tmp_path / "state.safetensors"
    accumulator.save(path)
    loaded = posgeom.load(path)
    np.testing.assert_array_equal(loaded.statistics(0)["position_sum"], accumulator.state().statistics(0)["position_sum"])
    with pytest.raises(ValueError, match="exists; pass overwrite=True"):
        accumulator.save(path)
    accumulator.save(path, overwrite=True)  # a posgeom state: replaced when asked
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    with pytest.raises(ValueError, match="is not a posgeom state; not replaced"):
        accumulator.save(notes, overwrite=True)
    assert notes.read_text() == "my notes"


def test_load_names_the_file_it_cannot_read(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a state")
    with pytest.raises(ValueError, match=str(bad)):
        posgeom.load(bad)


if torch.cuda.is_available():

    def test_cuda_tensors_are_reduced_on_their_device():
        h = [t.cuda() for t in hidden(layers=2)]
        accumulator = posgeom.Accumulator(8, 4, layers=2)
        assert _core._view_address(h[0]) == h[0].data_ptr()
        accumulator.add(h)
        assert "on cuda:0" in repr(accumulator)
        on_cpu = posgeom.Accumulator(8, 4, layers=2)
        on_cpu.add([t.cpu() for t in h])
        np.testing.assert_allclose(accumulator.state().statistics(1)["second_moment"],
                                   on_cpu.state().statistics(1)["second_moment"], rtol=1e-12)
        with pytest.raises(ValueError, match="this accumulator reduces on cuda:0"):
            accumulator.add([t.cpu() for t in h])
        named = posgeom.Accumulator(8, 4, layers=2, device="cuda")  # "cuda": the GPU of the first batch
        named.add(h)
        assert "on cuda:0" in repr(named)
