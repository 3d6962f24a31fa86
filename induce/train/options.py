"""What starting or resuming a run takes, shared by the trainers: the options, the check of
a new run's folder, and the optimizer."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import torch

from induce.data.errors import InputError
from induce.runs.config import OptimConfig


class RunExistsError(InputError):
    """A new run was asked for in a folder that already holds files."""


def check_new_run_directory(path: Path) -> None:
    """A new run's folder must be empty or creatable: a clear error before any work."""
    if path.exists():
        if not path.is_dir():
            raise InputError("the run directory is a file", str(path))
        if any(path.iterdir()):
            raise RunExistsError("the run directory exists and is not empty", str(path))
    ancestor = path.absolute()
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError(f"cannot create the run directory: {ancestor} is a file", str(path))
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise InputError(f"cannot create the run directory: {ancestor} is not writable", str(path))


@dataclass
class TrainOptions:
    out: str
    arch: str | None = None  # new runs: the architecture (default structformer); resumed: a check
    data: str | None = None
    overrides: list[str] = field(default_factory=list)
    resume: bool = False
    device: str = "auto"
    deterministic: bool = False
    config: str = "paper"  # paper | demo | a YAML file (new runs only)


def build_optimizer(
    model: torch.nn.Module, o: OptimConfig
) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.ReduceLROnPlateau]:
    """Adam and ReduceLROnPlateau on the validation loss, as the reference code; Adam's
    fused kernel when ``o.fused`` and the model is on CUDA (build it after ``model.to``)."""
    params = list(model.parameters())
    optimizer = torch.optim.Adam(
        params,
        lr=o.lr,
        betas=(o.betas[0], o.betas[1]),
        eps=o.eps,
        weight_decay=o.weight_decay,
        fused=True if o.fused and params and all(p.is_cuda for p in params) else None,
    )
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer,
        "min",
        factor=o.plateau_factor,
        patience=o.plateau_patience,
        threshold=0.0,
        min_lr=o.min_lr,
    )
    return optimizer, scheduler
