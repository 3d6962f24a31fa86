"""``induce convert checkpoint`` with a damaged input: the official weights (safetensors or a
torch file) or the dictionary truncated, emptied, replaced by text or binary junk, a folder,
or missing.  Each case: exit code 2, one ``error:`` line, no run folder, the input as it
was."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from induce.cli.app import app
from tests.reliability.test_bad_runs import _one_error
from tests.runs.test_official_import import WORDS, checkpoint, official


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _text(path: Path) -> None:
    path.write_text("this is not a checkpoint\n")


def _junk(path: Path) -> None:
    path.write_bytes(os.urandom(3000))


def _folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _missing(path: Path) -> None:
    path.unlink()


DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate,
    "empty": _empty,
    "text": _text,
    "binary junk": _junk,
    "a folder": _folder,
    "missing": _missing,
}
WEIGHTS = ("safetensors", "torch file")
CASES = [(f, d) for f in (*WEIGHTS, "dictionary") for d in DAMAGE]


def _inputs(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    if kind == "torch file":
        weights = tmp_path / "model.pt"
        torch.save(official("udgn")[0], weights)  # a plain state dict: loads without trust
    else:
        weights = checkpoint(tmp_path, "udgn")
    words = tmp_path / "words.txt"
    shutil.copy(WORDS, words)
    return weights, words


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("what, damage", CASES, ids=[f"{w}|{d}" for w, d in CASES])
def test_a_damaged_checkpoint_input_is_one_line(tmp_path, what, damage):
    inputs = tmp_path / "in"
    inputs.mkdir()
    weights, words = _inputs(inputs, "torch file" if what == "torch file" else "safetensors")
    DAMAGE[damage](words if what == "dictionary" else weights)
    before = _snapshot(inputs)
    run = tmp_path / "run"
    args = ["convert", "checkpoint", str(weights), "--arch", "udgn", "--dict", str(words)]
    _one_error(CliRunner().invoke(app, [*args, "--out", str(run)]))
    assert not run.exists()
    assert _snapshot(inputs) == before


@pytest.mark.parametrize("kind", WEIGHTS)
def test_the_undamaged_inputs_convert(tmp_path, kind):
    weights, words = _inputs(tmp_path, kind)
    args = ["convert", "checkpoint", str(weights), "--arch", "udgn", "--dict", str(words)]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
