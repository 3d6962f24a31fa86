"""``induce train``: one engine for every architecture, on CPU, one GPU or ``torchrun``.

The engine reports through a callback (``on_event(kind, record)``); it never prints.  Events:
``start`` (run facts), ``step`` (every ``log_every`` updates), ``eval`` (validation),
``done`` and ``interrupted``.  Train and eval records also go to ``metrics.jsonl``.
"""

from __future__ import annotations

import json
import math
import random
import signal
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from induce.data.dataset import Dataset, load_dataset
from induce.data.errors import ConfigError, InputError
from induce.data.files import atomic_write
from induce.models import build_model
from induce.train import distributed as dd
from induce.train.batches import Specials, plan_batches, steps_per_epoch, training_batches
from induce.train.config import load_config
from induce.train.evaluation import evaluate_split, parse_split
from induce.train.run import (
    METRICS,
    STATE,
    load_run,
    load_state,
    load_weights,
    save_state,
    save_weights,
    write_run_files,
)
from induce.train.validate import load_gold

Callback = Callable[[str, dict], None]


@dataclass
class TrainOptions:
    out: str
    arch: str = "structformer"
    data: str | None = None
    overrides: list[str] = field(default_factory=list)
    resume: bool = False
    device: str = "auto"
    deterministic: bool = False
    config: str = "paper"  # paper | demo | a YAML file (new runs only)


def pick_device(spec: str, world: dd.World | None = None) -> torch.device:
    if spec == "auto":
        spec = "cuda" if torch.cuda.is_available() else "cpu"
    if spec.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ConfigError(f"--device {spec}: CUDA is not available on this machine")
        if spec == "cuda" and world is not None and world.size > 1:
            spec = f"cuda:{world.local_rank}"
    elif spec != "cpu":
        raise ConfigError(f"--device must be auto, cpu, cuda or cuda:N, got {spec!r}")
    return torch.device(spec)


def dataset_record(dataset: Dataset) -> dict[str, Any]:
    m = dataset.manifest
    return {
        "path": str(dataset.path.resolve()),
        "format": m.get("format"),
        "normalization": m.get("normalization", {}),
        "tokenizer": m.get("tokenizer"),
        "counts": m.get("counts"),
        "sources": m.get("source", m.get("sources")),
    }


class Trainer:
    def __init__(self, options: TrainOptions, on_event: Callback | None = None) -> None:
        self.on_event = on_event or (lambda kind, record: None)
        self.stop_requested = False
        self.world = dd.start(
            "cuda"
            if options.device.startswith("cuda")
            or (options.device == "auto" and torch.cuda.is_available())
            else "cpu"
        )
        self.device = pick_device(options.device, self.world)
        self.path = Path(options.out)
        if options.resume:
            run = load_run(self.path, options.overrides)
            self.config = run.config
            data = options.data or run.dataset.get("path")
            if not data:
                raise InputError("the run does not record its dataset; give --data", str(self.path))
        else:
            if options.data is None:
                raise ConfigError("give --data DIR (a dataset from induce preprocess)")
            if self.world.main and self.path.exists() and any(self.path.iterdir()):
                raise InputError(
                    "the run directory exists and is not empty; use --resume to "
                    "continue it or choose another --out",
                    str(self.path),
                )
            self.config = load_config(options.arch, options.overrides, preset=options.config)
            data = options.data
        if options.deterministic:
            torch.use_deterministic_algorithms(True)
        self.dataset = load_dataset(data)
        vocab = self.dataset.vocab
        if vocab is None:
            raise InputError("the dataset has no vocab.json", str(self.dataset.path))
        self.vocab = vocab
        self.specials = Specials(vocab.id("<pad>"), vocab.id("<unk>"), vocab.id("<mask>"))
        self.train_ids = [vocab.ids(s) for s in self.dataset.sentences("train")]
        self.valid_ids = (
            [vocab.ids(s) for s in self.dataset.sentences("valid")]
            if self.dataset.has("valid.txt")
            else []
        )
        if not self.train_ids:
            raise InputError("the training split is empty", str(self.dataset.path))
        limit = self.config.data.max_length
        usable = [i for i, s in enumerate(self.train_ids) if s and (not limit or len(s) <= limit)]
        self.plan = [
            [usable[k] for k in batch]
            for batch in plan_batches(
                [len(self.train_ids[i]) for i in usable], self.config.data.batch_tokens
            )
        ]
        if steps_per_epoch(self.plan, self.world.size) == 0:
            raise ConfigError("fewer training batches than processes")
        torch.manual_seed(self.config.train.seed)
        self.model = build_model(
            self.config.arch, self.config.model, len(vocab), self.specials.pad
        ).to(self.device)
        o = self.config.optim
        self.optimizer = torch.optim.Adam(
            self.model.parameters(),
            lr=o.lr,
            betas=tuple(o.betas),
            eps=o.eps,
            weight_decay=o.weight_decay,
        )
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            self.optimizer,
            "min",
            factor=o.plateau_factor,
            patience=o.plateau_patience,
            threshold=0.0,
            min_lr=o.min_lr,
        )
        self.state: dict[str, Any] = {
            "step": 0,
            "epoch": 0,
            "position": 0,
            "best_loss": math.inf,
            "bad_evals": 0,
            "tokens": 0,
        }
        self.gold = None
        if (
            self.config.train.parse_metrics
            and self.world.main
            and getattr(self.model, "parse", None) is not None
        ):
            self.gold = load_gold(self.dataset, "valid") if self.valid_ids else None
        self.net = self.model
        if self.world.size > 1:
            self.net = torch.nn.parallel.DistributedDataParallel(
                self.model, device_ids=[self.device.index] if self.device.type == "cuda" else None
            )
        if not options.resume and self.world.main:
            self.path.mkdir(parents=True, exist_ok=True)
            write_run_files(self.path, self.config, vocab, dataset_record(self.dataset))
            atomic_write(self.path / METRICS, "")
        dd.barrier(self.world)
        if options.resume:
            self._restore()
        dd.barrier(self.world)  # rank 0 trims metrics.jsonl while restoring

    # -- checkpoints -----------------------------------------------------------------------
    def _restore(self) -> None:
        saved = load_state(self.path / STATE)
        load_weights(self.model, self.path / "last" / "model.safetensors", str(self.device))
        self.optimizer.load_state_dict(saved["optimizer"])
        self.scheduler.load_state_dict(saved["scheduler"])
        self.state.update(saved["progress"])
        torch.set_rng_state(saved["rng"]["torch"])
        if self.device.type == "cuda" and "cuda" in saved["rng"]:
            torch.cuda.set_rng_state(saved["rng"]["cuda"], self.device)
        random.setstate(_tuple(saved["rng"]["python"]))
        if self.world.main:  # forget records written after the checkpoint
            kept = [
                line
                for line in (self.path / METRICS).read_text().splitlines()
                if line and json.loads(line).get("step", 0) <= self.state["step"]
            ]
            atomic_write(self.path / METRICS, "".join(line + "\n" for line in kept))

    def save_checkpoint(self, best: bool = False) -> None:
        if not self.world.main:
            return
        if best:
            save_weights(self.model, self.path / "best" / "model.safetensors")
        save_weights(self.model, self.path / "last" / "model.safetensors")
        rng: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
        if self.device.type == "cuda":
            rng["cuda"] = torch.cuda.get_rng_state(self.device)
        save_state(
            {
                "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict(),
                "progress": dict(self.state),
                "rng": rng,
            },
            self.path / STATE,
        )

    def record(self, kind: str, data: dict) -> None:
        if not self.world.main:
            return
        with open(self.path / METRICS, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"kind": kind, **data}) + "\n")
        self.on_event(kind, data)

    def emit(self, kind: str, data: dict) -> None:
        if self.world.main:
            self.on_event(kind, data)

    def request_stop(self) -> None:
        """Finish the current update, save a checkpoint, return (SIGINT/SIGTERM call this)."""
        self.stop_requested = True

    # -- the loop --------------------------------------------------------------------------
    def autocast(self):
        if self.device.type == "cuda" and self.config.train.bf16:
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return nullcontext()

    def train_step(self, batch) -> float:
        self.net.train()
        batch = batch.to(self.device)
        with self.autocast():
            out = self.net(batch.ids, batch.keep)
            if batch.targets.numel():
                logits = self.model.logits(out.hidden[batch.masked])
                loss = F.cross_entropy(logits.float(), batch.targets)
            else:  # nothing masked: a zero loss that still touches every parameter
                loss = self.model.logits(out.hidden[:, 0]).float().sum() * 0.0
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.config.optim.clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.optim.clip)
        self.optimizer.step()
        return float(loss.detach())

    def validate(self) -> dict[str, Any]:
        c = self.config
        loss, count = evaluate_split(
            self.model,
            self.valid_ids,
            self.specials,
            c.data,
            self.device,
            self.world,
            self.autocast,
        )
        result: dict[str, Any] = {
            "step": self.state["step"],
            "epoch": self.state["epoch"],
            "valid_loss": round(loss, 5),
            "valid_ppl": round(math.exp(min(loss, 50.0)), 3),
            "masked_tokens": count,
            "lr": self.optimizer.param_groups[0]["lr"],
        }
        if self.gold is not None and not self.gold.problem and self.world.main:
            result.update(
                parse_split(
                    self.model,
                    self.dataset,
                    "valid",
                    self.valid_ids,
                    self.gold,
                    self.specials,
                    c.data,
                    self.device,
                    self.autocast,
                )
            )
        self.scheduler.step(loss)
        improved = loss < self.state["best_loss"]
        if improved:
            self.state["best_loss"] = loss
            self.state["bad_evals"] = 0
        else:
            self.state["bad_evals"] += 1
        result["best"] = improved
        self.record("eval", result)
        self.save_checkpoint(best=improved)
        return result

    def fit(self) -> str:
        """Train until the epochs, ``max_steps`` or patience run out, or a stop request;
        returns ``"done"`` or ``"interrupted"``."""
        c, s = self.config, self.state
        per_epoch = steps_per_epoch(self.plan, self.world.size)
        total = c.train.max_steps or c.train.epochs * per_epoch
        self.emit(
            "start",
            {
                "steps_per_epoch": per_epoch,
                "total_steps": total,
                "parameters": sum(p.numel() for p in self.model.parameters()),
                "device": str(self.device),
                "world": self.world.size,
                "resumed_at": s["step"],
                "path": str(self.path),
            },
        )
        began, tokens_since, losses = time.perf_counter(), 0, []
        while s["epoch"] < c.train.epochs and not self._finished(total):
            for position, batch in training_batches(
                self.train_ids,
                self.plan,
                self.specials,
                c.data.mask_rate,
                c.train.seed,
                s["epoch"],
                s["position"],
                self.world.rank,
                self.world.size,
            ):
                losses.append(self.train_step(batch))
                tokens_since += batch.tokens * self.world.size
                s["step"] += 1
                s["position"] = position + 1
                s["tokens"] += batch.tokens * self.world.size
                if s["step"] % max(c.train.log_every, 1) == 0:
                    elapsed = time.perf_counter() - began
                    self.record(
                        "train",
                        {
                            "step": s["step"],
                            "epoch": s["epoch"],
                            "loss": round(sum(losses) / len(losses), 5),
                            "tokens_per_s": round(tokens_since / elapsed, 1),
                            "lr": self.optimizer.param_groups[0]["lr"],
                            "total_steps": total,
                        },
                    )
                    began, tokens_since, losses = time.perf_counter(), 0, []
                stop = dd.any_all(self.world, self.stop_requested, self.device)
                if c.train.eval_every and s["step"] % c.train.eval_every == 0 and self.valid_ids:
                    self.validate()
                elif stop or (
                    c.train.checkpoint_every and s["step"] % c.train.checkpoint_every == 0
                ):
                    self.save_checkpoint()
                if stop:
                    self.emit("interrupted", {"step": s["step"]})
                    return "interrupted"
                if self._finished(total):
                    break
            else:
                s["epoch"] += 1
                s["position"] = 0
                if not c.train.eval_every and self.valid_ids:
                    self.validate()
                else:
                    self.save_checkpoint()
        if self.world.main and not (self.path / "best" / "model.safetensors").exists():
            self.save_checkpoint(best=True)  # no validation set: the last is the best
        self.emit("done", {"step": s["step"], "best_valid_loss": s["best_loss"]})
        return "done"

    def _finished(self, total: int) -> bool:
        c, s = self.config.train, self.state
        return (c.max_steps > 0 and s["step"] >= c.max_steps) or s["bad_evals"] >= c.patience > 0


def _tuple(value: Any) -> Any:
    return tuple(_tuple(v) for v in value) if isinstance(value, (list, tuple)) else value


def train(options: TrainOptions, on_event: Callback | None = None) -> str:
    """Train (or resume) a run; SIGINT and SIGTERM save a checkpoint and return."""
    trainer = Trainer(options, on_event)
    previous = {}

    def handler(signum, frame):
        trainer.request_stop()

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread: no signal handling
            pass
    try:
        return trainer.fit()
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        dd.stop(trainer.world)
