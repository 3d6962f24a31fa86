"""Training checkpoints, switched atomically.

A checkpoint is one folder, ``RUN/checkpoints/<step>-<tag>/``, holding the weights and the
trainer state (optimizer, scheduler, progress, every random generator, and how many bytes of
``metrics.jsonl`` it has seen).  It is written under a temporary name, flushed to disk and
renamed; then ``RUN/checkpoint.json`` - which names the current ``last`` and ``best``
checkpoints - is replaced in one rename.  A kill at any instant leaves either the old
pointer with its complete folders or the new one with its: a resumed run continues from a
complete checkpoint and, on CPU, ends with the same weights and metrics as a run that was
never stopped.  Folders and temporary files that no pointer names are removed when a run
starts.  A run without a pointer resumes from its newest complete folder; without one either,
it starts again only if it holds nothing that a restart would lose (a run stopped before its
first checkpoint); otherwise the resume is refused and nothing is changed.

Runs written before this layout (``RUN/last/``, ``RUN/best/``, ``RUN/trainer_state.pt``) are
still read.
"""

from __future__ import annotations

import contextlib
import hashlib
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
from induce.data.vocab import Vocabulary
from induce.runs.directory import (
    CHECKPOINTS,
    METRICS,
    POINTER,
    STATE,
    VOCAB,
    WEIGHTS,
    keep_metrics_until,
    metrics_records,
    read_metrics,
    read_pointer,
    write_pointer,
)
from induce.runs.weights import (
    load_state,
    load_weights,
    save_state,
    save_weights,
)
from induce.train.trainer_state import check_state

Scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau


def begin(run: Path, step: int) -> Path:
    """The temporary folder of a checkpoint of update ``step``, made before anything the
    checkpoint stands for is recorded (a validation's record): a kill in between leaves it,
    and tells a restart that the first checkpoint was cut short, not lost."""
    folder = run / CHECKPOINTS
    name = f"{step:08d}-{secrets.token_hex(3)}"  # unique: never over a live one
    try:
        folder.mkdir(exist_ok=True)
        (folder / f"{name}.tmp").mkdir()
    except OSError as err:
        raise InputError(f"cannot write a checkpoint: {err.strerror}", str(folder)) from None
    return folder / f"{name}.tmp"


def save(
    run: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: Scheduler,
    progress: dict[str, Any],
    device: torch.device,
    best: bool = False,
    vocab: Vocabulary | None = None,
    unfinished: Path | None = None,
) -> None:
    """Write a checkpoint of the current step and make it the run's ``last`` (and ``best``);
    ``vocab``: the vocabulary the model is trained with, whose digest the weights keep;
    ``unfinished``: the folder :func:`begin` made for it (else made here)."""
    tmp = unfinished or begin(run, progress["step"])
    folder, name = tmp.parent, tmp.name.removesuffix(".tmp")
    save_weights(model, tmp / WEIGHTS, vocab)
    rng: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if device.type == "cuda":
        rng["cuda"] = torch.cuda.get_rng_state(device)
    history = (run / METRICS).read_bytes()
    seen = {"metrics_bytes": len(history), "metrics_sha256": hashlib.sha256(history).hexdigest()}
    state = {
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "progress": {**progress, **seen},
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
    vocab: Vocabulary | None = None,
) -> dict[str, Any] | None:
    """Load the last checkpoint into ``model``, ``optimizer``, ``scheduler`` and the random
    generators, cut ``metrics.jsonl`` back to what it held then (``cut_metrics``: the
    process that writes it), and return the saved progress (step, epoch, position, ...).
    ``None`` when the run was stopped before its first checkpoint: it starts again.  Nothing
    is written before the checkpoint has loaded, and a run that holds more than a run
    stopped before its first checkpoint holds is never started again (raises instead)."""
    pointer = read_pointer(run)
    orphan = newest_complete(run) if pointer is None else None
    if pointer is None:
        check_unnamed(run, orphan)
    if orphan is not None:
        # killed between a first checkpoint's rename and its pointer (or the pointer was
        # deleted): the folder is complete, since it is renamed into place only once written
        last = f"{CHECKPOINTS}/{orphan.name}"
        pointer = {"step": _step(orphan), "last": last, "best": former_best(run, orphan)}
    if pointer is None and not (run / STATE).is_file():
        check_nothing_to_lose(run)
        if cut_metrics:
            atomic_write(run / METRICS, "", own=True)
        return None
    if pointer is None:  # a run of the earlier layout
        folder, state_path = run / "last", run / STATE
    else:
        folder = run / pointer["last"]
        state_path = folder / STATE
    saved = load_state(state_path)
    check_state(saved, state_path, optimizer, scheduler)
    progress: dict[str, Any] = saved["progress"]
    if pointer is not None and progress.get("step") != pointer["step"]:
        raise InputError(
            f"the trainer state is of step {progress.get('step')}, the checkpoint of step "
            f"{pointer['step']}: it belongs to another checkpoint",
            str(state_path),
        )
    source = None if vocab is None else (vocab, run / VOCAB)
    load_weights(model, folder / WEIGHTS, str(device), source)
    _load_optimizer(optimizer, saved["optimizer"], state_path)
    scheduler.load_state_dict(saved["scheduler"])
    _set_rng(saved["rng"], device, state_path)
    if cut_metrics:
        _cut_metrics(run / METRICS, progress)
        if orphan is not None and pointer is not None:  # named again: cleaning keeps it
            write_pointer(run, progress["step"], pointer["last"], pointer["best"])
    return progress


def _set_rng(rng: dict[str, Any], device: torch.device, path: Path) -> None:
    """Set the random generators to a checked state's (their own checks of the contents
    become the file's error)."""
    try:
        torch.set_rng_state(rng["torch"])
        if device.type == "cuda" and "cuda" in rng:
            torch.cuda.set_rng_state(rng["cuda"], device)
        random.setstate(_tuple(rng["python"]))
    except (RuntimeError, ValueError, TypeError, OverflowError) as err:
        raise InputError(
            f"not a trainer state of induce (its random generator state: {err})", str(path)
        ) from None


def _holding_files(run: Path) -> list[Path]:
    """The folders in ``RUN/checkpoints/`` that hold any file, newest first, but for the
    ``.tmp`` folders of unfinished writes (never renamed into place: of no use)."""
    folder = run / CHECKPOINTS
    if not folder.is_dir():
        return []
    found = [
        entry
        for entry in folder.iterdir()
        if entry.is_dir()
        and not entry.name.endswith(".tmp")
        and any(p.is_file() for p in entry.rglob("*"))
    ]
    return sorted(found, key=lambda e: _step(e) if _NAME.fullmatch(e.name) else -1, reverse=True)


def check_unnamed(run: Path, resumed: Path | None) -> None:
    """A run without ``checkpoint.json`` resumes from ``resumed``, its newest complete
    checkpoint (``None``: it has none), and the clean-up then deletes every other folder:
    refuse when that would lose one that could be the run's progress (an incomplete folder
    newer than ``resumed``, or any incomplete folder when there is none to resume from).
    Older folders are superseded checkpoints and the best's weights (named again)."""
    for entry in _holding_files(run):
        if entry == resumed:
            continue
        if resumed is not None and _NAME.fullmatch(entry.name) and _step(entry) < _step(resumed):
            continue
        lacking = [name for name in (WEIGHTS, STATE) if not (entry / name).is_file()]
        what = f"no {' and no '.join(lacking)}" if lacking else "not named STEP-TAG"
        consequence = (
            "nothing to resume from"
            if resumed is None
            else f"a resume from the older {resumed.name} would delete it"
        )
        raise InputError(
            f"incomplete checkpoint ({what}) and no {POINTER}: {consequence}; put the missing "
            "file back, or train a new run in another folder",
            str(entry),
        )


def former_best(run: Path, resumed: Path) -> str | None:
    """The best checkpoint of a run whose ``checkpoint.json`` is gone, resumed from
    ``resumed``: the folder of the step that ``metrics.jsonl`` last records as a new best
    (so that the clean-up keeps its weights), or ``None`` when it records none."""
    try:
        records = read_metrics(run / METRICS)
    except InputError:
        return None  # a damaged history: the best is chosen again by the next validation
    steps = [
        r.get("step")
        for r in records
        if r.get("kind") == "eval"
        and r.get("best") is True
        and isinstance(r.get("step"), int)
        and r["step"] <= _step(resumed)
    ]
    for entry in _holding_files(run) if steps else ():
        if _NAME.fullmatch(entry.name) and _step(entry) == steps[-1]:
            if (entry / WEIGHTS).is_file():
                return f"{CHECKPOINTS}/{entry.name}"
    return None


def check_nothing_to_lose(run: Path) -> None:
    """Before a run without checkpoint starts again (it empties ``metrics.jsonl``): refuse
    unless it holds only what a run stopped before its first checkpoint holds: records of
    training, which it redoes, and no validation (a validation is followed at once by a
    checkpoint, so one means the checkpoints are lost), but for one as the last record
    beside the ``.tmp`` folder of the first checkpoint's write that a kill interrupted.  No
    files either in the folders of the earlier layout.  Checkpoint folders holding files
    were refused by :func:`check_unnamed`."""
    for name in ("last", "best"):  # the earlier layout, without its trainer_state.pt
        if (run / name).is_dir() and any(p.is_file() for p in (run / name).rglob("*")):
            raise InputError(
                f"a checkpoint of the earlier layout without {STATE} and no {POINTER}: "
                "nothing to resume from; train a new run in another folder",
                str(run / name),
            )
    records = read_metrics(run / METRICS)
    evals = [r for r in records if r.get("kind") == "eval"]
    interrupted = len(evals) == 1 and records[-1] is evals[0] and _unfinished_write(run)
    if evals and not interrupted:
        raise InputError(
            f"records the validation of update {evals[0].get('step')}, but the run has no "
            f"checkpoint and no {POINTER}: nothing to resume from; put the checkpoint back, "
            "or train a new run in another folder",
            str(run / METRICS),
        )


def _unfinished_write(run: Path) -> bool:
    """Whether ``RUN/checkpoints/`` holds the ``.tmp`` folder of a write cut short."""
    folder = run / CHECKPOINTS
    return folder.is_dir() and any(entry.name.endswith(".tmp") for entry in folder.iterdir())


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
    sizes = [len(group["params"]) for group in optimizer.param_groups]
    if [len(group["params"]) for group in groups] != sizes:
        raise InputError(
            f"the optimizer state's groups are not of {sizes} parameters: it is another model's",
            str(path),
        )
    for index, param in enumerate(params):
        for key, moment in saved.get("state", {}).get(index, {}).items():
            # the moments (exp_avg, exp_avg_sq) are of the parameter's shape; "step" is a
            # scalar
            if key == "step" or not isinstance(moment, torch.Tensor):
                continue
            if tuple(moment.shape) != tuple(param.shape):
                raise InputError(
                    f"the optimizer state of parameter {index} has shape "
                    f"{tuple(moment.shape)}, the model's {tuple(param.shape)}: it is another "
                    "model's",
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
    try:
        history = metrics.read_bytes()[:size] if metrics.is_file() else None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", str(metrics)) from None
    if history is None or len(history) < size:
        raise InputError("the metrics file is shorter than the checkpoint says", str(metrics))
    # what is kept must be the history the checkpoint saw: whole records (found damaged only
    # when the resumed run had trained to its end, or never)
    if history and not history.endswith(b"\n"):
        raise InputError(
            f"changed since the checkpoint: its byte {size}, where the checkpoint's history "
            "ends, does not end a record",
            str(metrics),
        )
    metrics_records(history, metrics)  # a damaged record: an error naming its line
    digest = progress.get("metrics_sha256")  # saved since it is
    if digest is not None and hashlib.sha256(history).hexdigest() != digest:
        raise InputError(
            f"changed since the checkpoint: its first {size} bytes are not the history the "
            "checkpoint saw",
            str(metrics),
        )
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
