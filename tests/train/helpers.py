"""A tiny dataset and tiny model settings for training tests."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from induce.cli.app import app
from tests.preprocess.fixtures import make_ptb

TINY = [
    "model.d_model=32",
    "model.n_layers=2",
    "model.n_heads=2",
    "data.batch_tokens=96",
    "data.eval_batch_tokens=256",
    "train.log_every=1",
    "train.checkpoint_every=0",
    "model.dropout=0.1",
]
EXTRA = {
    "transformer": ["model.d_ff=64"],
    "structformer": ["model.d_ff=64", "model.n_parser_layers=1", "model.conv_size=3"],
    "udgn": ["model.head_size=8", "model.n_parser_layers=1"],
    "combiner": ["model.d_ff=64"],
}


def tiny(arch: str) -> list[str]:
    return TINY + EXTRA[arch]


def make_dataset(root: Path) -> Path:
    """Sections 02 (train, 20 trees), 22 (valid, 5), 23 (test, 5) of the sample treebank."""
    make_ptb(root / "ptb", {"02": range(0, 20), "22": range(20, 25), "23": range(25, 30)})
    out = root / "data"
    result = CliRunner().invoke(app, ["preprocess", "ptb", "-t", str(root / "ptb"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def last_state(run: Path) -> dict:
    """The trainer state of the run's last checkpoint."""
    import torch

    from induce.runs.directory import STATE, read_pointer

    pointer = read_pointer(run)
    assert pointer is not None, f"{run} has no checkpoint"
    return torch.load(run / pointer["last"] / STATE, weights_only=True)


def weights_file(run: Path, which: str = "last") -> Path:
    from induce.runs.directory import open_run

    return open_run(run).weights(which)
