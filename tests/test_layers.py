"""The house rules that hold by contract, not habit (docs/architecture.md).

The import layers themselves are import-linter contracts in pyproject.toml, run by .ci/run;
``test_import_contracts`` runs them here too when import-linter is installed.  The rest are
checked on the source: the library never reaches up into the CLI, never prints, reads argv or
exits, and names no architecture outside ``induce/models``.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

LIBRARY = sorted((ROOT / "induce").rglob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _imports(tree: ast.Module) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
    return out


def test_the_library_never_imports_the_cli():
    bad = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in LIBRARY
        for line, name in _imports(_tree(path))
        if name == "induce.cli" or name.startswith("induce.cli.")
    ]
    assert not bad, bad


def test_the_library_never_prints_reads_argv_or_exits():
    bad = []
    for path in LIBRARY:
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in ("print", "exit", "quit"):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.func.id}()")
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id == "sys" and node.attr in ("argv", "exit"):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} sys.{node.attr}")
    assert not bad, bad


def _names(node: ast.expr) -> list[object]:
    """The constants a comparison operand holds: itself, or the items of a literal tuple,
    list or set (``arch in ("udgn", "chart")``)."""
    if isinstance(node, ast.Constant):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant)]
    return []


def test_no_architecture_is_named_outside_models():
    """Dispatch goes through the registry and the model interface, never ``arch == ...``:
    every registered name (a new architecture is covered by registering it)."""
    from induce.models import MODELS

    arches = set(MODELS)
    bad = []
    for path in LIBRARY:
        if path.is_relative_to(ROOT / "induce" / "models"):
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Compare) and any(
                name in arches for c in [node.left, *node.comparators] for name in _names(c)
            ):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, bad


@pytest.mark.skipif(shutil.which("lint-imports") is None, reason="import-linter not installed")
def test_import_contracts():
    result = subprocess.run(
        [shutil.which("lint-imports") or "lint-imports", "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": str(Path(sys.executable).parent)},
    )
    assert result.returncode == 0, result.stdout[-3000:]


def test_every_package_is_installed():
    """``induce.structs`` was missing from pyproject's package list: an editable install (the
    README's) worked, a wheel (``pip install induce[...]``) had no inside algorithms."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    folders = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "induce").rglob("__init__.py")
    }
    assert folders - listed == set()
    assert {"induce.cli", "induce.resources"} <= listed
