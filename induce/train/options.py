"""What starting or resuming a run takes, shared by the trainers: the options, the check of
a new run's folder, and the optimizer."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from induce.data.errors import ConfigError, InputError
from induce.runs.config import OptimConfig

# Adam's fused kernel takes CPU tensors from torch 2.4 on
_FUSED_ON_CPU = tuple(int(part) for part in torch.__version__.split(".")[:2]) >= (2, 4)


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
    fused kernel when the model is on CUDA and ``o.fused``, or on the CPU and
    ``o.fused_cpu`` (build it after ``model.to``)."""
    params = list(model.parameters())
    fused = _fused(o, params)
    if fused and not params[0].is_cuda and not _FUSED_ON_CPU:
        raise ConfigError(f"optim.fused_cpu needs torch >= 2.4 (this is {torch.__version__})")
    optimizer = torch.optim.Adam(
        params,
        lr=o.lr,
        betas=(o.betas[0], o.betas[1]),
        eps=o.eps,
        weight_decay=o.weight_decay,
        fused=True if fused else None,
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


# the optimizer settings that Adam's parameter groups hold, and those of the plateau schedule
_GROUP_SETTINGS = ("lr", "weight_decay", "eps", "betas")
_SCHEDULE_SETTINGS = {"plateau_factor": "factor", "plateau_patience": "patience"}


def optim_settings(o: OptimConfig) -> dict[str, Any]:
    """The settings of ``o`` that the optimizer and schedule hold, as a checkpoint keeps
    them (what a resume compares with its own, :func:`retune`)."""
    names = (*_GROUP_SETTINGS, *_SCHEDULE_SETTINGS, "min_lr")
    return {name: list(o.betas) if name == "betas" else getattr(o, name) for name in names}


def retune(
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.ReduceLROnPlateau,
    ran_with: dict[str, Any],
    now: OptimConfig,
) -> None:
    """Put the optimizer settings that a resume changes (``--set optim.lr=...``) into the
    optimizer and schedule its checkpoint restored: loading their states brings back the
    values the checkpoint ran with (``ran_with``: :func:`optim_settings`), and the change,
    written to ``config.yaml``, had no effect.  A new ``optim.lr`` is the rate from the
    resume on: the schedule's reductions so far are dropped (during ``train.warmup`` the
    ramp climbs to it)."""
    wanted = optim_settings(now)
    for name in _GROUP_SETTINGS:
        if wanted[name] != ran_with.get(name, wanted[name]):
            for group in optimizer.param_groups:
                group[name] = tuple(wanted[name]) if name == "betas" else wanted[name]
    for name, attribute in _SCHEDULE_SETTINGS.items():
        if wanted[name] != ran_with.get(name, wanted[name]):
            setattr(scheduler, attribute, wanted[name])
    if wanted["min_lr"] != ran_with.get("min_lr", wanted["min_lr"]):
        scheduler.min_lrs = [wanted["min_lr"]] * len(optimizer.param_groups)


def _fused(o: OptimConfig, params: list[torch.nn.Parameter]) -> bool:
    """Whether Adam takes its fused kernel: every parameter on CUDA and ``o.fused``, or every
    one on the CPU and ``o.fused_cpu``."""
    if not params:
        return False
    if all(p.is_cuda for p in params):
        return o.fused
    return o.fused_cpu and all(p.device.type == "cpu" for p in params)
