"""The one training loop of every architecture, on CPU, one GPU or ``torchrun``.

:class:`Trainer` owns what does not depend on the objective: the run directory and its lock,
the settings of a new or resumed run (and the refusals of a resume), devices and threads, the
process group and DDP, the loop over epochs and updates with its logging, checkpoints,
validation cadence, best checkpoint, plateau schedule, patience and stop requests (Ctrl-C,
SIGTERM), and the events.  An objective subclasses it and fills in the hooks: ``build`` (data,
vocabulary, model, optimizer), ``steps_per_epoch``, ``epoch_batches``, ``train_step``,
``batch_tokens``, ``evaluate`` and ``has_validation`` (:mod:`induce.train.masked_lm`,
:mod:`induce.train.chart`).

The trainer reports through a callback (``on_event(kind, record)``); it never prints.
Events: ``start`` (run facts), ``train`` (every ``log_every`` updates), ``eval``
(validation), ``done`` and ``interrupted``.  Train and eval records also go to
``metrics.jsonl`` (and TensorBoard with ``train.log``).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import torch

from induce.data.dataset import load_dataset
from induce.data.errors import ConfigError, InputError
from induce.data.locks import FileLock
from induce.data.vocab import Vocabulary
from induce.models.base import Loss
from induce.runs.batches import Specials
from induce.runs.config import RunConfig, load_config
from induce.runs.device import (
    autocast,
    pick_device,
    set_cpu_threads,
    set_matmul_precision,
)
from induce.runs.directory import (
    LOCK,
    check_whole_settings,
    create_run_files,
    dataset_record,
    open_run,
    read_pointer,
    write_run_files,
)
from induce.runs.identity import check_same_dataset
from induce.train import distributed as dd
from induce.train.bookkeeping import Callback, CheckpointedRun, Meter, check_logs
from induce.train.graphs import GraphedLoss, compiled
from induce.train.options import (
    RunExistsError,
    TrainOptions,
    check_new_run_directory,
    optim_settings,
    retune,
)
from induce.train.settings import check_settings


class Trainer(CheckpointedRun):
    """One run's training.  Subclasses set the class attributes and implement the hooks."""

    # what --data must name (the message when it is missing)
    data_needed = "a dataset directory from preprocessing"
    # the progress key of the best validation figure, and whether higher is better
    best_key = "best_loss"
    maximise = False
    # the done event's name for it
    done_key = "best_valid_loss"
    # extra fields of every train record
    train_facts: dict[str, Any] = {}
    # the step replayed from CUDA graphs, when the objective has one
    graphed: GraphedLoss | None = None
    made_folders: list[Path] = []  # what a new run made of its folder's path
    # whether train.compile applies (the masked LMs' forward; the grammars' inside loops
    # over widths, which a compiler would unroll at every length)
    compiles = False
    # whether train.bf16 / train.cpu_bf16 apply (the grammars' inside sums probabilities in
    # log space over O(n^3) terms: they train in float32 only)
    autocasts = True
    dataset: Any
    vocab: Vocabulary
    run_vocab: Vocabulary
    recorded: RunConfig  # a resumed run's settings as its config.yaml held them
    recorded_dataset: dict[str, Any]  # and its dataset.yaml

    def __init__(self, options: TrainOptions, on_event: Callback | None = None) -> None:
        self.on_event: Callback = on_event or (lambda kind, record: None)
        self.stop_requested = False
        self.device = pick_device(options.device)  # a bad one refused before a process group
        self.world = dd.start(self.device.type)
        if self.world.size > 1:  # under torchrun, plain cuda is this process's own GPU
            self.device = pick_device(options.device, self.world.local_rank)
        self.path = Path(options.out)
        self.lock = FileLock(self.path / LOCK, "the run directory")
        self.config, data = self._settings(options)
        check_logs(self.config)
        t = self.config.train
        if (t.bf16 or t.cpu_bf16) and not self.autocasts:
            raise ConfigError(
                f"is not for {self.config.arch}: it trains in float32 only",
                "train.bf16" if t.bf16 else "train.cpu_bf16",
            )
        if t.compile_scope != "model" and not t.compile:
            raise ConfigError("applies with train.compile=true only", "train.compile_scope")
        if t.compile and not self.compiles:
            raise ConfigError(
                f"compiles the masked LMs' training step only, not {self.config.arch}'s",
                "train.compile",
            )
        set_matmul_precision(self.device, t.tf32)
        if self.device.type == "cpu":
            set_cpu_threads(self.config.train.threads, dd.processes_here())
        if options.deterministic:
            torch.use_deterministic_algorithms(True)
        self.state: dict[str, Any] = {"step": 0, "epoch": 0, "position": 0}
        self.state.update({self.best_key: -math.inf if self.maximise else math.inf})
        self.state.update({"bad_evals": 0, "tokens": 0})
        self.meter = Meter()
        self.build(data, options)
        self.net: torch.nn.Module = self.model
        if self.world.size > 1:
            self.net = torch.nn.parallel.DistributedDataParallel(
                self.model, device_ids=[self.device.index] if self.device.type == "cuda" else None
            )
        if self.config.train.compile:  # after DDP, as torch.compile's DDP support wants
            self.net = compiled(self.net, self.compile_regions())
        self.graphed = self._graphed_loss()
        self._start(options)

    def _start(self, options: TrainOptions) -> None:
        """Open the run directory and, for a resume, restore the checkpoint; a run that
        cannot start neither holds the folder nor leaves the one it made."""
        try:
            if self.world.main:
                self._open_run_directory(options)
            dd.barrier(self.world)
            if options.resume:
                self._restore()
                # the checkpoint's own settings, or (saved before it kept them) the run's
                ran_with = self.ran_with or optim_settings(self.recorded.optim)
                retune(self.optimizer, self.scheduler, ran_with, self.config.optim)
                # the settings it now runs with, and where its data now lies
                if (options.overrides or options.data) and self.world.main:
                    write_run_files(
                        self.path, self.config, self.vocab, dataset_record(self.dataset)
                    )
            dd.barrier(self.world)  # rank 0 trims metrics.jsonl while restoring
        except BaseException:
            self.lock.release()  # a run that could not start is not held
            for folder in self.made_folders:  # nor leaves the folders it made (empty now)
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise

    def autocast(self) -> AbstractContextManager[object]:
        """bfloat16 autocast of a forward pass where ``train.bf16`` / ``train.cpu_bf16`` ask
        for it and the device has it (:func:`induce.runs.device.autocast`); full precision
        otherwise (and always for objectives that refuse them: ``autocasts``)."""
        t = self.config.train
        return autocast(self.device, t.bf16, t.cpu_bf16)

    # -- hooks -----------------------------------------------------------------------------
    def _graphed_loss(self) -> GraphedLoss | None:
        """The step replayed from CUDA graphs, built once ``self.net`` is final (None: the
        objective has none)."""
        return None

    def build(self, data: str, options: TrainOptions) -> None:
        """Load the data and set ``dataset``, ``vocab``, ``model`` (seeded from
        ``train.seed``), ``optimizer`` and ``scheduler``; add the objective's progress keys."""
        raise NotImplementedError

    def compile_regions(self) -> list[tuple[torch.nn.Module, str]] | None:
        """What ``train.compile`` compiles apart under ``train.compile_scope`` (``None``:
        the whole forward), for an objective whose step compiles (:attr:`compiles`)."""
        return None

    def steps_per_epoch(self) -> int:
        raise NotImplementedError

    def epoch_batches(self, epoch: int, start: int) -> Iterator[tuple[int, Any]]:
        """``(position in the epoch, batch)`` of this process from ``start`` on: a function
        of the seed, the epoch and the position, so that a resumed run continues the same
        epoch."""
        raise NotImplementedError

    def train_step(self, batch: Any) -> Loss:
        """One update; the model's loss and figures, detached, on the device."""
        raise NotImplementedError

    def batch_tokens(self, batch: Any) -> int:
        """The tokens the update read, over every process."""
        raise NotImplementedError

    @property
    def has_validation(self) -> bool:
        raise NotImplementedError

    def evaluate(self) -> tuple[dict[str, Any], float]:
        """The eval record (``step``, ``epoch``, the figures, ``lr``) and the figure that
        picks the best checkpoint (``best_key``'s)."""
        raise NotImplementedError

    def eval_every(self) -> int:
        """Updates between validations (0: at the end of each epoch)."""
        return self.config.train.eval_every

    def start_facts(self) -> dict[str, Any]:
        return {}

    def load_text(self, data: str) -> None:
        """For objectives that train on text: the dataset, its vocabulary and special ids,
        and the training and validation sentences as ids (``valid_ids`` empty without a
        ``valid.txt``)."""
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

    # -- the run directory -----------------------------------------------------------------
    @property
    def main(self) -> bool:
        return self.world.main

    def _settings(self, options: TrainOptions) -> tuple[RunConfig, str]:
        """The run's config and dataset path: a resumed run's own, or new ones."""
        if options.resume:
            check_whole_settings(self.path)
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
            self.recorded, self.recorded_dataset = run.recorded, run.dataset
            check_settings(run.config, run.recorded)  # what the overrides bring, if anything
            return run.config, str(data)
        if options.data is None:
            raise ConfigError(f"is needed: {self.data_needed}", "data")
        if self.world.main:
            check_new_run_directory(self.path)
        config = load_config(options.arch, options.overrides, preset=options.config)
        check_settings(config)
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
        dataset (its vocabulary and identity) and clear what killed writes left."""
        if not options.resume:
            # the folders this run makes, the run's own first (removed if it cannot start)
            self.made_folders = [f for f in (self.path, *self.path.parents) if not f.exists()]
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
            now = dataset_record(self.dataset)
            check_same_dataset(self.recorded_dataset, now, str(self.dataset.path))
            return  # what killed writes left is cleared once the checkpoint has loaded
        # a file of another process's means a race for the folder lost; a rival's attempt
        # at the lock, refused, leaves a temporary beside it for an instant: not a run
        if any(not self.lock.owns(entry) for entry in self.path.iterdir()):
            raise RunExistsError("the run directory exists and is not empty", str(self.path))
        create_run_files(self.path, self.config, self.vocab, dataset_record(self.dataset))

    # -- the loop --------------------------------------------------------------------------
    def validate(self) -> dict[str, Any]:
        """Evaluate, step the plateau schedule (after the warm-up), keep the best, save."""
        s = self.state
        s["validated_step"] = s["step"]
        record, figure = self.evaluate()
        if not math.isfinite(figure):
            self.record("eval", {**record, "best": False})
            self._diverged(f"the validation figure is {figure}")
        if s["step"] >= self.config.train.warmup:  # the plateau schedule minimises
            self.scheduler.step(-figure if self.maximise else figure)
        best = s[self.best_key]
        improved = figure > best if self.maximise else figure < best
        if improved:
            s[self.best_key] = figure
            s["bad_evals"] = 0
        else:
            s["bad_evals"] += 1
        record["best"] = improved
        # the checkpoint's folder exists before its record: a kill between the two must not
        # leave a validation that a restart takes for a lost checkpoint
        unfinished = self.begin_checkpoint()
        self.record("eval", record)
        self.save_checkpoint(best=improved, unfinished=unfinished)
        return record

    def fit(self) -> str:
        """Train until the epochs, ``max_steps`` or patience run out, or a stop request;
        returns ``"done"`` or ``"interrupted"``."""
        c, s = self.config, self.state
        per_epoch = self.steps_per_epoch()
        total = c.train.max_steps or c.train.epochs * per_epoch
        self.emit(
            "start",
            {
                "steps_per_epoch": per_epoch,
                "total_steps": total,
                "parameters": sum(p.numel() for p in self.model.parameters()),
                "device": str(self.device),
                "cuda_graphs": self.graphed is not None,
                "compiled": self.config.train.compile,
                "world": self.world.size,
                "resumed_at": s["step"],
                "path": str(self.path),
                **self.start_facts(),
            },
        )
        while s["epoch"] < c.train.epochs and not self._finished(total):
            if self._run_epoch(total) == "interrupted":
                return "interrupted"
        # the last update is always validated (when there is a validation set) and saved,
        # even when a checkpoint was just written at that step
        if self.has_validation and s["step"] != s.get("validated_step"):
            self.validate()
        elif s["step"] != s.get("saved_step"):
            self.save_checkpoint()
        if self.world.main and (read_pointer(self.path) or {}).get("best") is None:
            self.save_checkpoint(best=True)  # no validation set: the last is the best
        self.emit("done", {"step": s["step"], self.done_key: s[self.best_key]})
        return "done"

    def _run_epoch(self, total: int) -> str:
        """The rest of the current epoch: ``"interrupted"``, ``"finished"`` (a limit was
        reached inside it) or ``"epoch"`` (it ran to its end, then validated)."""
        c, s = self.config, self.state
        every = self.eval_every()
        for position, batch in self.epoch_batches(s["epoch"], s["position"]):
            tokens = self.batch_tokens(batch)
            self.meter.add(self.train_step(batch), tokens)
            s["step"] += 1
            s["position"] = position + 1
            s["tokens"] += tokens
            if s["step"] % max(c.train.log_every, 1) == 0:
                lr = self.optimizer.param_groups[0]["lr"]
                logged = self.meter.record(s["step"], s["epoch"], lr, total)
                self.record("train", {**logged, **self.train_facts})
                # read at log time, where the meter reads the losses anyway (no extra wait
                # for the device); every process logs at the same updates
                if dd.any_all(self.world, not math.isfinite(logged["loss"]), self.device):
                    self._diverged(f"the training loss is {logged['loss']}")
            stop = dd.any_all(self.world, self.stop_requested, self.device)
            if every and s["step"] % every == 0 and self.has_validation:
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
        if not every and self.has_validation:
            self.validate()
        else:
            self.save_checkpoint()
        return "epoch"

    def _diverged(self, what: str) -> None:
        """Stop a run whose loss is no longer a number, before its weights are saved: the
        checkpoints written before stay, and none of nan weights becomes the best."""
        raise ConfigError(
            f"training diverged after {self.state['step']} updates: {what}; a lower optim.lr "
            f"(now {self.config.optim.lr:g}) or gradient clipping (optim.clip) may help; the "
            "checkpoints saved before are kept"
        )

    def _finished(self, total: int) -> bool:
        t, s = self.config.train, self.state
        return (t.max_steps > 0 and s["step"] >= t.max_steps) or s["bad_evals"] >= t.patience > 0
