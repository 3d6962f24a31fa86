"""Training checkpoints: the weights (``last/``, and ``best/`` when validation improved) and
the trainer state beside them (optimizer, scheduler, progress, every random generator), so
that a resumed run continues exactly where it stopped."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import torch

from induce.runs.directory import STATE, WEIGHTS, load_state, load_weights, save_state, save_weights


def save(
    run: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.ReduceLROnPlateau,
    progress: dict[str, Any],
    device: torch.device,
    best: bool = False,
) -> None:
    if best:
        save_weights(model, run / "best" / WEIGHTS)
    save_weights(model, run / "last" / WEIGHTS)
    rng: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if device.type == "cuda":
        rng["cuda"] = torch.cuda.get_rng_state(device)
    save_state(
        {
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "progress": dict(progress),
            "rng": rng,
        },
        run / STATE,
    )


def restore(
    run: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.ReduceLROnPlateau,
    device: torch.device,
) -> dict[str, Any]:
    """Load the last checkpoint into ``model``, ``optimizer``, ``scheduler`` and the random
    generators; returns the saved progress (step, epoch, position, ...)."""
    saved = load_state(run / STATE)
    load_weights(model, run / "last" / WEIGHTS, str(device))
    optimizer.load_state_dict(saved["optimizer"])
    scheduler.load_state_dict(saved["scheduler"])
    torch.set_rng_state(saved["rng"]["torch"])
    if device.type == "cuda" and "cuda" in saved["rng"]:
        torch.cuda.set_rng_state(saved["rng"]["cuda"], device)
    random.setstate(_tuple(saved["rng"]["python"]))
    progress: dict[str, Any] = saved["progress"]
    return progress


def _tuple(value: Any) -> Any:
    """``random.setstate`` wants the nested tuples that the state file stores as lists."""
    return tuple(_tuple(v) for v in value) if isinstance(value, (list, tuple)) else value
