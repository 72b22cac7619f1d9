"""Shared fixtures of the Python package's tests: ../shared's tiny checkpoints, a corpus,
the CLI binary built beside the package, and analyze's windows run through transformers.

Under CI=true what a test needs must be there: a missing fixture fails, never skips."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _require(path: pathlib.Path, what: str) -> pathlib.Path:
    if path.exists():
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"missing {what}: {path}")
    pytest.skip(f"needs {what} ({path})")


@pytest.fixture(scope="session")
def shared() -> pathlib.Path:
    return _require(pathlib.Path(os.environ.get("POSGEOM_SHARED", ROOT.parent / "shared")), "../shared")


@pytest.fixture(scope="session")
def fixture_model(shared):
    def model(name: str) -> str:
        return str(_require(shared / "fixtures" / "models" / name, f"the fixture model {name}"))

    return model


@pytest.fixture(scope="session")
def cli() -> str:
    """The posgeom executable: $POSGEOM_CLI, else the CMake build's."""
    return str(_require(pathlib.Path(os.environ.get("POSGEOM_CLI", ROOT / "build" / "src" / "posgeom")), "the posgeom CLI (tools/build)"))


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> str:
    """Three short documents: enough for a dozen windows of 16 tokens."""
    folder = tmp_path_factory.mktemp("corpus")
    texts = {
        "a.txt": "The quick brown fox jumps over the lazy dog. " * 6,
        "b.txt": "Position and context: every hidden state is a mean over positions plus the rest. " * 5,
        "c.txt": "Attention heads look back at earlier tokens by their distance and by their content. " * 5,
    }
    for name, text in texts.items():
        (folder / name).write_text(text)
    return str(folder)


def run_cli(cli: str, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run([cli, *args], capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"posgeom {' '.join(args)} exited {result.returncode}: {result.stderr[-2000:]}"
    return result
