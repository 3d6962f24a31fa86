"""What the masked-LM engine and the chart trainer share: checkpoints of the run's
progress, the ``metrics.jsonl`` records (and their TensorBoard copy) and events, stop
requests, and the loss meter."""

from __future__ import annotations

import importlib.util
import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from induce.data.errors import ConfigError, InduceWarning, InputError
from induce.data.vocab import Vocabulary
from induce.models.base import Loss
from induce.runs.config import RunConfig
from induce.runs.directory import METRICS
from induce.train import checkpoint
from induce.train.options import optim_settings

Callback = Callable[[str, dict[str, Any]], None]
TENSORBOARD = "tensorboard"  # the run's TensorBoard folder (train.log: [..., tensorboard])


def check_logs(config: RunConfig) -> None:
    """Refuse ``train.log`` settings this machine cannot honour before anything is written."""
    if TENSORBOARD in config.train.log and importlib.util.find_spec("tensorboard") is None:
        raise ConfigError(
            "tensorboard needs the tensorboard package: pip install 'induce[tensorboard]'",
            "train.log",
        )


class TensorBoardLog:
    """Each ``metrics.jsonl`` record's numbers as TensorBoard scalars (``train/loss``,
    ``eval/valid_loss``, ...) at the record's step, in ``RUN/tensorboard``; written and
    flushed as the record is.  A resumed run's writer drops the events after the checkpoint
    (``purge_step``), as ``metrics.jsonl`` is cut back there."""

    SKIP = frozenset({"step", "epoch", "total_steps"})

    def __init__(self, folder: Path, resumed_at: int | None) -> None:
        from torch.utils.tensorboard import SummaryWriter  # the optional extra

        purge = None if resumed_at is None else resumed_at + 1
        self.writer = SummaryWriter(str(folder), purge_step=purge)

    def write(self, kind: str, data: dict[str, Any]) -> None:
        step = int(data.get("step", 0))
        for key, value in data.items():
            if key in self.SKIP or isinstance(value, bool) or not isinstance(value, int | float):
                continue
            self.writer.add_scalar(f"{kind}/{key}", value, step)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class CheckpointedRun:
    """A training loop's run-directory side.  Subclasses set ``path``, ``model``,
    ``optimizer``, ``scheduler``, ``device``, ``state`` (progress), ``meter``, ``on_event``
    and ``stop_requested``; ``main`` is False on the processes of ``torchrun`` that do not
    write."""

    path: Path
    config: RunConfig
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: checkpoint.Scheduler
    device: torch.device
    vocab: Vocabulary  # the vocabulary the model trains with (its digest goes with the weights)
    state: dict[str, Any]
    meter: Meter
    on_event: Callback
    stop_requested: bool
    resumed_at: int | None = None  # the step a resumed run continues from
    # the optimizer settings the restored checkpoint was saved under (None: saved before
    # they were kept, or no checkpoint)
    ran_with: dict[str, Any] | None = None
    tensorboard: TensorBoardLog | None = None

    @property
    def main(self) -> bool:
        return True

    def _restore(self) -> None:
        """Load the last checkpoint, then (only then) clear what interrupted writes left: a
        resume that cannot load changes nothing on disk."""
        progress = checkpoint.restore(
            self.path,
            self.model,
            self.optimizer,
            self.scheduler,
            self.device,
            cut_metrics=self.main,
            vocab=self.vocab,
        )
        if self.main:
            checkpoint.clean(self.path)
        if progress is None:
            warnings.warn(
                f"{self.path}: no checkpoint was saved before the run stopped: it starts again",
                InduceWarning,
                stacklevel=2,
            )
            return
        progress.pop("metrics_bytes", None)
        progress.pop("metrics_sha256", None)
        self.ran_with = progress.pop("optim", None)
        self.meter.restore(progress.pop("meter", None))
        self.state.update(progress)
        self.resumed_at = int(self.state["step"])

    def _before_save(self) -> None:
        """Progress to bring up to date before it is saved (nothing by default)."""

    def begin_checkpoint(self) -> Path | None:
        """The temporary folder of the checkpoint about to be saved (on the process that
        writes), made before the validation record that the checkpoint follows."""
        return checkpoint.begin(self.path, self.state["step"]) if self.main else None

    def save_checkpoint(self, best: bool = False, unfinished: Path | None = None) -> None:
        self.state["saved_step"] = self.state["step"]
        self._before_save()
        if self.main:
            checkpoint.save(
                self.path,
                self.model,
                self.optimizer,
                self.scheduler,
                {
                    **self.state,
                    "meter": self.meter.state(),
                    "optim": optim_settings(self.config.optim),
                },
                self.device,
                best,
                self.vocab,
                unfinished,
            )

    def record(self, kind: str, data: dict) -> None:
        """A ``metrics.jsonl`` record and its event."""
        if not self.main:
            return
        try:  # a line torn by a full disk is cut back by the resume, as a kill's
            with open(self.path / METRICS, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"kind": kind, **data}) + "\n")
        except OSError as err:
            raise InputError(f"cannot write: {err.strerror}", str(self.path / METRICS)) from None
        if TENSORBOARD in self.config.train.log:
            if self.tensorboard is None:
                self.tensorboard = TensorBoardLog(self.path / TENSORBOARD, self.resumed_at)
            self.tensorboard.write(kind, data)
        self.on_event(kind, data)

    def emit(self, kind: str, data: dict) -> None:
        """An event only (start, done, interrupted: the last two close the logs)."""
        if kind in ("done", "interrupted") and self.tensorboard is not None:
            self.tensorboard.close()
            self.tensorboard = None
        if self.main:
            self.on_event(kind, data)

    def warm_up(self) -> None:
        """Linear learning-rate warm-up (``train.warmup``): the update numbered ``k`` (from
        1) of the first ``warmup`` runs at ``lr * k / warmup`` (``train.warmup_from_zero``:
        the first ``warmup + 1`` at ``lr * (k - 1) / warmup``, benepar's ramp); after them
        the plateau schedule owns the rate.  Set from the step count, so a resumed run
        continues the same ramp."""
        t, lr = self.config.train, self.config.optim.lr
        step = self.state["step"] + (0 if t.warmup_from_zero else 1)
        if t.warmup and step <= t.warmup:
            for group in self.optimizer.param_groups:
                group["lr"] = lr * step / t.warmup

    def update(self, loss: torch.Tensor, clip: float) -> torch.Tensor:
        """One optimizer update from ``loss`` (gradients clipped to norm ``clip`` when > 0);
        returns the loss detached, still on the device: reading it as a number would wait
        for the device at every update, so the meter reads it at log time."""
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.apply_gradients(clip)
        return loss.detach()

    def apply_gradients(self, clip: float) -> None:
        """The optimizer step from the gradients in ``.grad`` (clipped to norm ``clip`` when
        > 0)."""
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), clip)
        self.optimizer.step()

    def request_stop(self) -> None:
        """Finish the current update, save a checkpoint, return (SIGINT/SIGTERM call this)."""
        self.stop_requested = True


class Meter:
    """Mean loss (and the objective's other figures) and tokens/s since the last log line
    (kept in checkpoints, so that the first log line after a resume averages the same
    updates as without the stop)."""

    def __init__(self) -> None:
        self.began, self.tokens = time.perf_counter(), 0
        self.losses: list[float | torch.Tensor] = []  # tensors stay on the device until read
        self.figures: dict[str, list[float | torch.Tensor]] = {}

    def state(self) -> dict[str, Any]:
        figures = {k: [float(x) for x in v] for k, v in self.figures.items()}
        return {
            "losses": [float(x) for x in self.losses],
            "tokens": self.tokens,
            "figures": figures,
        }

    def restore(self, state: dict[str, Any] | None) -> None:
        if state:
            self.losses, self.tokens = [float(x) for x in state["losses"]], int(state["tokens"])
            found = state.get("figures", {})  # absent from older checkpoints
            self.figures = {k: [float(x) for x in v] for k, v in found.items()}

    def add(self, loss: Loss, tokens: int) -> None:
        self.losses.append(loss.value)
        for key, figure in loss.figures.items():
            self.figures.setdefault(key, []).append(figure)
        self.tokens += tokens

    def record(self, step: int, epoch: int, lr: float, total: int) -> dict[str, Any]:
        elapsed = time.perf_counter() - self.began
        out = {
            "step": step,
            "epoch": epoch,
            "loss": _mean(self.losses),
            **{key: _mean(values) for key, values in self.figures.items()},
            "tokens_per_s": round(self.tokens / elapsed, 1),
            "lr": lr,
            "total_steps": total,
        }
        self.began, self.tokens, self.losses, self.figures = time.perf_counter(), 0, [], {}
        return out


def _mean(values: list[float | torch.Tensor]) -> float:
    return round(sum(float(x) for x in values) / len(values), 5)
