"""posgeom: the positional geometry of Transformer language models, from Python.

The same C++ core as the `posgeom` command: hidden states from transformers, TransformerLens
or nnsight go into an Accumulator batch by batch (torch tensors on the CPU or CUDA, numpy
arrays; read where they are, without a copy), and its State gives the numbers and the
report of `posgeom analyze`. See docs/python.md.
"""

# The extension links the LibTorch of the torch it was built with: that torch is imported
# first, so the process holds one LibTorch, and a torch of another build is said at once.
import sys as _sys

import torch as _torch


def _load_core():
    # nnsight, imported first, mounts a `save` method on every object; nanobind, defining
    # posgeom's own `save` methods, would take that one for an overload of theirs and abort
    # the process. The mount is lifted while the extension loads, then put back.
    nnsight = _sys.modules.get("nnsight")
    mounted = nnsight is not None and "save" in vars(object)
    if mounted:
        from nnsight._c import mount, unmount

        unmount("save")
    try:
        from . import _core
    finally:
        if mounted:
            mount(nnsight.save, "save")
    return _core


_core = _load_core()

if _torch.__version__ != _core.built_with_torch():
    raise ImportError(
        f"posgeom was built against torch {_core.built_with_torch()}, and this environment imports torch "
        f"{_torch.__version__}: reinstall posgeom (pip install --force-reinstall --no-cache-dir posgeom's source) "
        "with the torch you run"
    )

from ._core import (  # noqa: E402
    Accumulator,
    Results,
    State,
    WindowBatch,
    Windows,
    analyze,
    heads,
    load,
    merge,
    metrics,
    report,
    set_log_level,
)

__version__ = _core.__version__
__all__ = [
    "Accumulator",
    "Results",
    "State",
    "WindowBatch",
    "Windows",
    "analyze",
    "heads",
    "load",
    "merge",
    "metrics",
    "report",
    "set_log_level",
]
