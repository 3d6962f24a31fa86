"""``induce train``: one engine for every architecture, on CPU, one GPU or ``torchrun``.

The engine reports through a callback (``on_event(kind, record)``); it never prints.  Events:
``start`` (run facts), ``train`` (every ``log_every`` updates), ``eval`` (validation),
``done`` and ``interrupted``.  Train and eval records also go to ``metrics.jsonl``.
"""

from __future__ import annotations

import math
import signal
from contextlib import AbstractContextManager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import torch

from induce.data.dataset import load_dataset
from induce.data.errors import ConfigError, InputError
from induce.data.files import FileLock, atomic_write
from induce.metrics.validation import Gold, load_gold
from induce.models import build_model
from induce.models.base import MaskedLM
from induce.runs.batches import Batch, Specials, plan_batches, steps_per_epoch, training_batches
from induce.runs.config import RunConfig, load_config
from induce.runs.device import autocast, pick_device, set_cpu_threads, set_matmul_precision
from induce.runs.directory import (
    LOCK,
    METRICS,
    dataset_record,
    open_run,
    read_pointer,
    read_settings,
    write_run_files,
)
from induce.runs.inference import masked_lm_training_loss
from induce.train import distributed as dd
from induce.train.bookkeeping import Callback, CheckpointedRun, Meter
from induce.train.graphs import GraphedLoss
from induce.train.options import (
    RunExistsError,
    TrainOptions,
    build_optimizer,
    check_new_run_directory,
)
from induce.train.validation import parse_split, validation_loss

if TYPE_CHECKING:
    from induce.train.chart import ChartTrainer

# the options and the optimizer live in induce.train.options (the chart trainer shares them
# without importing this module); they are part of this module's API as before
__all__ = ["RunExistsError", "TrainOptions", "Trainer", "build_optimizer", "train"]


class Trainer(CheckpointedRun):
    model: MaskedLM

    def __init__(self, options: TrainOptions, on_event: Callback | None = None) -> None:
        self.on_event: Callback = on_event or (lambda kind, record: None)
        self.stop_requested = False
        cuda = options.device.startswith("cuda") or (
            options.device == "auto" and torch.cuda.is_available()
        )
        self.world = dd.start("cuda" if cuda else "cpu")
        self.device = pick_device(
            options.device, self.world.local_rank if self.world.size > 1 else None
        )
        self.path = Path(options.out)
        self.lock = FileLock(self.path / LOCK, "the run directory")
        self.config, data = self._settings(options)
        set_matmul_precision(self.device, self.config.train.tf32)
        if self.device.type == "cpu":
            set_cpu_threads(self.config.train.threads, dd.processes_here())
        if options.deterministic:
            torch.use_deterministic_algorithms(True)
        self._load_data(data)
        torch.manual_seed(self.config.train.seed)
        self.model = build_model(
            self.config.arch, self.config.model, len(self.vocab), self.specials.pad
        )
        if self.config.train.init_from and not options.resume:
            self.model.load_pretrained(self.config.train.init_from)
        self._check_lengths()
        self.model = self.model.to(self.device)
        self.optimizer, self.scheduler = build_optimizer(self.model, self.config.optim)
        self.state: dict[str, Any] = {
            "step": 0,
            "epoch": 0,
            "position": 0,
            "best_loss": math.inf,
            "bad_evals": 0,
            "tokens": 0,
        }
        self.meter = Meter()
        self.gold = self._validation_gold()
        self.graphed = self._graphed_loss()
        self.net: torch.nn.Module = self.model
        if self.world.size > 1:
            self.net = torch.nn.parallel.DistributedDataParallel(
                self.model, device_ids=[self.device.index] if self.device.type == "cuda" else None
            )
        try:
            if self.world.main:
                self._open_run_directory(options)
            dd.barrier(self.world)
            if options.resume:
                self._restore()
                if options.overrides and self.world.main:  # the settings it now runs with
                    write_run_files(
                        self.path, self.config, self.vocab, dataset_record(self.dataset)
                    )
            dd.barrier(self.world)  # rank 0 trims metrics.jsonl while restoring
        except BaseException:
            self.lock.release()  # a run that could not start is not held
            raise

    def _settings(self, options: TrainOptions) -> tuple[RunConfig, str]:
        """The run's config and dataset path: a resumed run's own, or new ones."""
        if options.resume:
            run = open_run(self.path, options.overrides)
            if options.arch is not None and options.arch != run.config.arch:
                raise ConfigError(
                    f"{options.arch} differs from the run's architecture, {run.config.arch}",
                    "arch",
                )
            data = options.data or run.dataset.get("path")
            if not data:
                raise ConfigError("is needed: the run does not record its dataset", "data")
            self.run_vocab = run.vocab
            return run.config, str(data)
        if options.data is None:
            raise ConfigError("is needed: a dataset directory from preprocessing", "data")
        if self.world.main:
            check_new_run_directory(self.path)
        config = load_config(options.arch, options.overrides, preset=options.config)
        if config.train.init_from:  # the checkpoint fixes the sizes (after the user's)
            from induce.models import model_class
            from induce.models.pretrained import bert_settings

            model_class(config.arch).check_pretrained()
            sizes = bert_settings(config.train.init_from)
            extra = [f"model.{key}={value}" for key, value in sizes.items()]
            config = load_config(options.arch, options.overrides + extra, preset=options.config)
        return config, options.data

    def _open_run_directory(self, options: TrainOptions) -> None:
        """Lock the run directory; write a new run's files, or check a resumed run's
        vocabulary and clear what killed writes left."""
        if not options.resume:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise InputError(
                    f"cannot create the run directory: {err.strerror}", str(self.path)
                ) from None
        self.lock.acquire()
        if options.resume:
            if self.run_vocab.tokens != self.vocab.tokens:
                raise InputError(
                    "the dataset's vocabulary differs from the run's: resume on the data the "
                    "run was trained on",
                    str(self.dataset.path),
                )
            return  # what killed writes left is cleared once the checkpoint has loaded
        if any(entry.name != LOCK for entry in self.path.iterdir()):  # lost a race for it
            raise RunExistsError("the run directory exists and is not empty", str(self.path))
        write_run_files(self.path, self.config, self.vocab, dataset_record(self.dataset))
        atomic_write(self.path / METRICS, "")

    def _load_data(self, data: str) -> None:
        """The dataset's vocabulary, sentences as ids, and the batch plan of an epoch."""
        self.dataset = load_dataset(data)
        vocab = self.dataset.vocab
        if vocab is None:
            raise InputError("the dataset has no vocab.json", str(self.dataset.path))
        self.vocab = vocab
        self.specials = Specials.of(vocab)
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
                [len(self.train_ids[i]) for i in usable],
                self.config.data.batch_tokens,
                self.config.data.batching,
            )
        ]
        if steps_per_epoch(self.plan, self.world.size) == 0:
            raise ConfigError("fewer training batches than processes")

    def _check_lengths(self) -> None:
        """Before any training: a sentence longer than the model's position table is an
        error at its line of ``SPLIT.txt`` (training sentences beyond ``data.max_length``
        are skipped, so that setting is the way to drop them)."""
        limit = self.model.max_words
        if limit is None:
            return
        skip = self.config.data.max_length
        for split, ids in (("train", self.train_ids), ("valid", self.valid_ids)):
            for k, sentence in enumerate(ids):
                if len(sentence) <= limit or (split == "train" and 0 < skip < len(sentence)):
                    continue
                fix = "raise model.max_length"
                if split == "train":
                    fix = "set data.max_length to skip such training sentences, or " + fix
                raise InputError(
                    f"a sentence of {len(sentence)} tokens is longer than the model reads "
                    f"(model.max_length {limit}): {fix}",
                    str(self.dataset.path / f"{split}.txt"),
                    k + 1,
                )

    def _validation_gold(self) -> Gold | None:
        """Gold structures of the validation split when the model parses and they exist."""
        if not (self.config.train.parse_metrics and self.world.main and self.valid_ids):
            return None
        if type(self.model).scores_class is None:
            return None
        return load_gold(self.dataset, "valid")

    def _graphed_loss(self) -> GraphedLoss | None:
        """The step through CUDA graphs when ``train.cuda_graphs`` is set and the run is one
        process on a GPU; eager on CPU (as ``train.bf16``) and under torchrun (DDP's
        gradient hooks are not captured in a graph)."""
        t = self.config.train
        if not (t.cuda_graphs and self.device.type == "cuda" and self.world.size == 1):
            return None
        return GraphedLoss(
            self.model,
            self.model,
            lambda: autocast(self.device, t.bf16, t.cpu_bf16, cache=False),
            self.specials,
            self.device,
        )

    # -- checkpoints -----------------------------------------------------------------------
    @property
    def main(self) -> bool:
        return self.world.main

    # -- the loop --------------------------------------------------------------------------
    def autocast(self) -> AbstractContextManager[object]:
        return autocast(self.device, self.config.train.bf16, self.config.train.cpu_bf16)

    def train_step(self, batch: Batch) -> torch.Tensor:
        self.warm_up()
        if self.graphed is not None:
            # the graphs accumulate into .grad tensors that must never be freed
            self.optimizer.zero_grad(set_to_none=False)
            loss = self.graphed(batch)
            self.apply_gradients(self.config.optim.clip)
            return loss
        loss = masked_lm_training_loss(self.net, self.model, batch.to(self.device), self.autocast)
        return self.update(loss, self.config.optim.clip)

    def validate(self) -> dict[str, Any]:
        c = self.config
        self.state["validated_step"] = self.state["step"]
        loss, count = validation_loss(
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
                    c.train.valid_decoder,
                )
            )
        if self.state["step"] >= c.train.warmup:  # the plateau schedule starts after it
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
                "cuda_graphs": self.graphed is not None,
                "world": self.world.size,
                "resumed_at": s["step"],
                "path": str(self.path),
            },
        )
        while s["epoch"] < c.train.epochs and not self._finished(total):
            if self._run_epoch(total, self.meter) == "interrupted":
                return "interrupted"
        # the last update is always validated (when there is a validation set) and saved,
        # even when a checkpoint was just written at that step
        if self.valid_ids and s["step"] != s.get("validated_step"):
            self.validate()
        elif s["step"] != s.get("saved_step"):
            self.save_checkpoint()
        if self.world.main and (read_pointer(self.path) or {}).get("best") is None:
            self.save_checkpoint(best=True)  # no validation set: the last is the best
        self.emit("done", {"step": s["step"], "best_valid_loss": s["best_loss"]})
        return "done"

    def _run_epoch(self, total: int, meter: Meter) -> str:
        """The rest of the current epoch: ``"interrupted"``, ``"finished"`` (a limit was
        reached inside it) or ``"epoch"`` (it ran to its end, then validated)."""
        c, s = self.config, self.state
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
            meter.add(self.train_step(batch), batch.tokens * self.world.size)
            s["step"] += 1
            s["position"] = position + 1
            s["tokens"] += batch.tokens * self.world.size
            if s["step"] % max(c.train.log_every, 1) == 0:
                lr = self.optimizer.param_groups[0]["lr"]
                self.record("train", meter.record(s["step"], s["epoch"], lr, total))
            stop = dd.any_all(self.world, self.stop_requested, self.device)
            if c.train.eval_every and s["step"] % c.train.eval_every == 0 and self.valid_ids:
                self.validate()
            elif stop or (c.train.checkpoint_every and s["step"] % c.train.checkpoint_every == 0):
                self.save_checkpoint()
            if stop:
                self.emit("interrupted", {"step": s["step"]})
                return "interrupted"
            if self._finished(total):
                return "finished"
        s["epoch"] += 1
        s["position"] = 0
        if not c.train.eval_every and self.valid_ids:
            self.validate()
        else:
            self.save_checkpoint()
        return "epoch"

    def _finished(self, total: int) -> bool:
        c, s = self.config.train, self.state
        return (c.max_steps > 0 and s["step"] >= c.max_steps) or s["bad_evals"] >= c.patience > 0


def train(options: TrainOptions, on_event: Callback | None = None) -> str:
    """Train (or resume) a run; SIGINT and SIGTERM save a checkpoint and return."""
    from induce.models import trains_on_trees

    arch = options.arch
    if options.resume:
        arch = str(read_settings(options.out).get("arch") or arch)
    elif arch is None:
        arch = load_config(None, options.overrides, preset=options.config).arch
    trainer: Trainer | ChartTrainer
    if trains_on_trees(arch):
        from induce.train.chart import ChartTrainer

        trainer = ChartTrainer(options, on_event)
    else:
        trainer = Trainer(options, on_event)
    previous: dict[signal.Signals, Any] = {}

    def handler(signum: int, frame: FrameType | None) -> None:
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
        trainer.lock.release()
        if isinstance(trainer, Trainer):
            dd.stop(trainer.world)
