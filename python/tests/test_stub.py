"""The type stub shipped with the package is the extension's own signatures and docstrings:
regenerated from the installed module by nanobind's stubgen, it must be the committed one."""

import subprocess
import sys

from conftest import ROOT


def test_the_committed_stub_is_the_extensions(tmp_path):
    generated = tmp_path / "_core.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "posgeom._core", "-o", str(generated)], check=True)
    committed = ROOT / "python" / "posgeom" / "_core.pyi"
    assert generated.read_text() == committed.read_text(), (
        "python/posgeom/_core.pyi is stale: python -m nanobind.stubgen -m posgeom._core -o python/posgeom/_core.pyi"
    )
