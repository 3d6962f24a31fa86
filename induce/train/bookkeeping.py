"""What the masked-LM engine and the chart trainer share: checkpoints of the run's
progress, the ``metrics.jsonl`` records and events, stop requests, and the loss meter."""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from induce.data.errors import InduceWarning
from induce.runs.config import RunConfig
from induce.runs.directory import METRICS
from induce.train import checkpoint

Callback = Callable[[str, dict[str, Any]], None]


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
    state: dict[str, Any]
    meter: Meter
    on_event: Callback
    stop_requested: bool

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
        self.meter.restore(progress.pop("meter", None))
        self.state.update(progress)

    def _before_save(self) -> None:
        """Progress to bring up to date before it is saved (nothing by default)."""

    def save_checkpoint(self, best: bool = False) -> None:
        self.state["saved_step"] = self.state["step"]
        self._before_save()
        if self.main:
            checkpoint.save(
                self.path,
                self.model,
                self.optimizer,
                self.scheduler,
                {**self.state, "meter": self.meter.state()},
                self.device,
                best,
            )

    def record(self, kind: str, data: dict) -> None:
        """A ``metrics.jsonl`` record and its event."""
        if not self.main:
            return
        with open(self.path / METRICS, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"kind": kind, **data}) + "\n")
        self.on_event(kind, data)

    def emit(self, kind: str, data: dict) -> None:
        """An event only (start, done, interrupted)."""
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
    """Mean loss and tokens/s since the last log line (kept in checkpoints, so that the
    first log line after a resume averages the same updates as without the stop)."""

    def __init__(self) -> None:
        self.began, self.tokens = time.perf_counter(), 0
        self.losses: list[float | torch.Tensor] = []  # tensors stay on the device until read

    def state(self) -> dict[str, Any]:
        return {"losses": [float(x) for x in self.losses], "tokens": self.tokens}

    def restore(self, state: dict[str, Any] | None) -> None:
        if state:
            self.losses, self.tokens = [float(x) for x in state["losses"]], int(state["tokens"])

    def add(self, loss: float | torch.Tensor, tokens: int) -> None:
        self.losses.append(loss)
        self.tokens += tokens

    def record(self, step: int, epoch: int, lr: float, total: int) -> dict[str, Any]:
        elapsed = time.perf_counter() - self.began
        out = {
            "step": step,
            "epoch": epoch,
            "loss": round(sum(float(x) for x in self.losses) / len(self.losses), 5),
            "tokens_per_s": round(self.tokens / elapsed, 1),
            "lr": lr,
            "total_steps": total,
        }
        self.began, self.tokens, self.losses = time.perf_counter(), 0, []
        return out
