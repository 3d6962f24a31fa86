"""Training checkpoints, switched atomically.

A checkpoint is one folder, ``RUN/checkpoints/<step>-<tag>/``, holding the weights and the
trainer state (optimizer, scheduler, progress, every random generator, and how many bytes of
``metrics.jsonl`` it has seen).  It is written under a temporary name, flushed to disk and
renamed; then ``RUN/checkpoint.json`` - which names the current ``last`` and ``best``
checkpoints - is replaced in one rename.  A kill at any instant leaves either the old
pointer with its complete folders or the new one with its: a resumed run continues from a
complete checkpoint and, on CPU, ends with the same weights and metrics as a run that was
never stopped.  Folders and temporary files that no pointer names are removed when a run
starts.

Runs written before this layout (``RUN/last/``, ``RUN/best/``, ``RUN/trainer_state.pt``) are
still read.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import secrets
import shutil
from pathlib import Path
from typing import Any

import torch

from induce.data.errors import InputError
from induce.data.files import atomic_write, remove_stale_temporaries
from induce.runs.directory import (
    CHECKPOINTS,
    METRICS,
    STATE,
    WEIGHTS,
    keep_metrics_until,
    load_state,
    load_weights,
    read_pointer,
    save_state,
    save_weights,
    write_pointer,
)

Scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau


def save(
    run: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: Scheduler,
    progress: dict[str, Any],
    device: torch.device,
    best: bool = False,
) -> None:
    """Write a checkpoint of the current step and make it the run's ``last`` (and ``best``)."""
    folder = run / CHECKPOINTS
    folder.mkdir(exist_ok=True)
    name = f"{progress['step']:08d}-{secrets.token_hex(3)}"  # unique: never over a live one
    tmp = folder / f"{name}.tmp"
    tmp.mkdir()
    save_weights(model, tmp / WEIGHTS)
    rng: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if device.type == "cuda":
        rng["cuda"] = torch.cuda.get_rng_state(device)
    metrics = run / METRICS
    state = {
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "progress": {**progress, "metrics_bytes": metrics.stat().st_size},
        "rng": rng,
    }
    save_state(state, tmp / STATE)
    _fsync_dir(tmp)
    os.replace(tmp, folder / name)
    _fsync_dir(folder)
    previous = read_pointer(run) or {}
    earlier = previous.get("best")
    if earlier is None and (run / "best" / WEIGHTS).is_file():
        earlier = "best"  # a run of the earlier layout keeps its best weights where they are
    current = f"{CHECKPOINTS}/{name}"
    write_pointer(run, progress["step"], current, current if best else earlier)
    _fsync_dir(run)
    clean(run)


def restore(
    run: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: Scheduler,
    device: torch.device,
    cut_metrics: bool = True,
) -> dict[str, Any] | None:
    """Load the last checkpoint into ``model``, ``optimizer``, ``scheduler`` and the random
    generators, cut ``metrics.jsonl`` back to what it held then (``cut_metrics``: the
    process that writes it), and return the saved progress (step, epoch, position, ...).
    ``None`` when the run was stopped before its first checkpoint: it starts again."""
    pointer = read_pointer(run)
    orphan = newest_complete(run) if pointer is None else None
    if pointer is None and orphan is not None:
        # killed between a first checkpoint's rename and its pointer (or the pointer was
        # deleted): the folder is complete, since it is renamed into place only once written
        pointer = {"step": _step(orphan), "last": f"{CHECKPOINTS}/{orphan.name}"}
    if pointer is None and not (run / STATE).is_file():
        if cut_metrics:
            atomic_write(run / METRICS, "", own=True)
        return None
    if pointer is None:  # a run of the earlier layout
        folder, state_path = run / "last", run / STATE
    else:
        folder = run / pointer["last"]
        state_path = folder / STATE
    saved = load_state(state_path)
    progress: dict[str, Any] = saved["progress"]
    if pointer is not None and progress.get("step") != pointer["step"]:
        raise InputError(
            f"the trainer state is of step {progress.get('step')}, the checkpoint of step "
            f"{pointer['step']}: it belongs to another checkpoint",
            str(state_path),
        )
    load_weights(model, folder / WEIGHTS, str(device))
    _load_optimizer(optimizer, saved["optimizer"], state_path)
    scheduler.load_state_dict(saved["scheduler"])
    torch.set_rng_state(saved["rng"]["torch"])
    if device.type == "cuda" and "cuda" in saved["rng"]:
        torch.cuda.set_rng_state(saved["rng"]["cuda"], device)
    random.setstate(_tuple(saved["rng"]["python"]))
    if cut_metrics:
        _cut_metrics(run / METRICS, progress)
        if orphan is not None:  # named again, so that cleaning keeps it
            write_pointer(run, progress["step"], f"{CHECKPOINTS}/{orphan.name}", None)
    return progress


def newest_complete(run: Path) -> Path | None:
    """The checkpoint folder of the highest step that holds both weights and trainer state
    (unfinished writes are ``.tmp`` folders and do not count)."""
    folder = run / CHECKPOINTS
    if not folder.is_dir():
        return None
    found = [
        entry
        for entry in folder.iterdir()
        if _NAME.fullmatch(entry.name) and (entry / WEIGHTS).is_file() and (entry / STATE).is_file()
    ]
    return max(found, key=_step, default=None)


def _step(folder: Path) -> int:
    """The step a checkpoint folder's name (``STEP-...``) records."""
    return int(folder.name.split("-")[0])


_NAME = re.compile(r"\d{8,}-\w+")  # what save() (STEP-HEX) and convert (STEP-import) name


def clean(run: Path) -> None:
    """Remove what interrupted writes left: temporary files, and checkpoint folders that the
    pointer does not name (unfinished, or superseded).  A ``best`` that is not also ``last``
    keeps its weights only."""
    remove_stale_temporaries(run)
    folder = run / CHECKPOINTS
    if not folder.is_dir():
        return
    pointer = read_pointer(run) or {}
    live = {pointer.get("last"), pointer.get("best")}
    for entry in folder.iterdir():
        relative = f"{CHECKPOINTS}/{entry.name}"
        if relative not in live:
            shutil.rmtree(entry, ignore_errors=True)
            continue
        remove_stale_temporaries(entry)
        if relative != pointer.get("last"):
            with contextlib.suppress(FileNotFoundError):
                (entry / STATE).unlink()


def _load_optimizer(optimizer: torch.optim.Optimizer, saved: dict[str, Any], path: Path) -> None:
    """The optimizer state, after checking that it is one of these parameters' shapes."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    groups = saved.get("param_groups", [])
    count = sum(len(group["params"]) for group in groups)
    if count != len(params):
        raise InputError(
            f"the optimizer state has {count} parameters, the model {len(params)}: it is "
            "another model's",
            str(path),
        )
    for index, param in enumerate(params):
        moment = saved.get("state", {}).get(index, {}).get("exp_avg")
        if moment is not None and tuple(moment.shape) != tuple(param.shape):
            raise InputError(
                f"the optimizer state of parameter {index} has shape {tuple(moment.shape)}, "
                f"the model's {tuple(param.shape)}: it is another model's",
                str(path),
            )
    kernels = [(g.get("fused"), g.get("foreach")) for g in optimizer.param_groups]
    optimizer.load_state_dict(saved)
    # the kernel choice is this machine's (fused on CUDA), not the saving machine's
    for group, (fused, foreach) in zip(optimizer.param_groups, kernels, strict=True):
        group["fused"], group["foreach"] = fused, foreach
        for param in group["params"] if fused else ():
            step = optimizer.state.get(param, {}).get("step")
            if isinstance(step, torch.Tensor):  # the fused kernel reads it on the device
                optimizer.state[param]["step"] = step.to(param.device, torch.float32)


def _cut_metrics(metrics: Path, progress: dict[str, Any]) -> None:
    """Forget what ``metrics.jsonl`` gained after the checkpoint (a resumed run redoes it),
    a line torn by the kill included."""
    size = progress.get("metrics_bytes")
    if size is None:  # the earlier layout: by step
        keep_metrics_until(metrics, progress["step"])
        return
    if not metrics.is_file() or metrics.stat().st_size < size:
        raise InputError("the metrics file is shorter than the checkpoint says", str(metrics))
    os.truncate(metrics, size)


def _fsync_dir(folder: Path) -> None:
    """Make a rename inside ``folder`` durable (no-op where folders cannot be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _tuple(value: Any) -> Any:
    """``random.setstate`` wants the nested tuples that the state file stores as lists."""
    return tuple(_tuple(v) for v in value) if isinstance(value, (list, tuple)) else value
