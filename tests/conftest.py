"""Shared test helpers: where ``../shared`` is, and small file fixtures."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("INDUCE_SHARED", ROOT.parent / "shared"))
REFERENCE = SHARED / "reference"
DATA = SHARED / "data"


def bench_module(name: str) -> Any:
    """``bench/NAME.py`` imported as a module (the benchmark scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_bench(name: str, *args: object, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``python bench/NAME.py ARGS...`` in a fresh process, its output captured as text."""
    command = [sys.executable, str(ROOT / "bench" / f"{name}.py"), *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def needs_shared(*parts: str):
    """Skip (cleanly) when the shared development data is not beside the checkout."""
    path = SHARED.joinpath(*parts)
    return pytest.mark.skipif(not path.exists(), reason=f"{path} not available")


@pytest.fixture(autouse=True, scope="session")
def own_cache(tmp_path_factory):
    """The suite's own user cache: a test's ``induce train`` recorded its run as the user's
    latest (which ``induce parse`` without ``--model`` then took), and the built-in dataset
    is the suite's to build.  ``INDUCE_CACHE_DIR`` set outside the suite is kept."""
    if os.environ.get("INDUCE_CACHE_DIR"):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INDUCE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture
def write(tmp_path):
    """``write(name, text)`` -> path of a new file under the test's temporary folder."""

    def _write(name: str, text: str | bytes) -> str:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return str(path)

    return _write


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` skip (cleanly) where no CUDA device is available: CI and laptops."""
    marked = [item for item in items if item.get_closest_marker("gpu")]
    if not marked:
        return
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in marked:
        item.add_marker(skip)
