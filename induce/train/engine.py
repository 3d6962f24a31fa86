"""``induce train``: every architecture on the one training loop (:mod:`induce.train.loop`),
on CPU, one GPU or ``torchrun``.


:func:`train` picks the trainer of the architecture's objective (the registry,
:mod:`induce.data.architectures`): masked language models on text
(:mod:`induce.train.masked_lm`), supervised parsers on gold trees (:mod:`induce.train.chart`),
grammars by their likelihood (:mod:`induce.train.grammar`);
SIGINT and SIGTERM save a checkpoint and return.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType
from typing import Any

import torch

from induce.data.architectures import BY_NAME
from induce.data.errors import ConfigError
from induce.runs.config import load_config
from induce.runs.directory import read_settings
from induce.train import distributed as dd
from induce.train.bookkeeping import Callback
from induce.train.chart import ChartTrainer
from induce.train.grammar import GrammarTrainer
from induce.train.loop import Trainer
from induce.train.masked_lm import MaskedLMTrainer
from induce.train.options import RunExistsError, TrainOptions, build_optimizer

# the trainer of each objective (the registry's ``objective``)
TRAINERS: dict[str, type[Trainer]] = {
    "masked-lm": MaskedLMTrainer,
    "hinge": ChartTrainer,
    "likelihood": GrammarTrainer,
}

# the options and the optimizer live in induce.train.options; they are part of this module's
# API as before
__all__ = [
    "TRAINERS",
    "RunExistsError",
    "TrainOptions",
    "Trainer",
    "build_optimizer",
    "build_trainer",
    "train",
]


def build_trainer(options: TrainOptions, on_event: Callback | None = None) -> Trainer:
    """The trainer of the run ``options`` describe (a resumed run's own architecture)."""
    arch = options.arch
    if options.resume:
        arch = str(read_settings(options.out).get("arch") or arch)
    elif arch is None:
        arch = load_config(None, options.overrides, preset=options.config).arch
    # an unknown name goes on to the config loader, whose error lists the architectures
    kind = BY_NAME[arch].objective if arch in BY_NAME else "masked-lm"
    return TRAINERS[kind](options, on_event)


@contextlib.contextmanager
def _memory_named() -> Iterator[None]:
    """An allocation the device cannot make (the model's sizes, a batch) is a one-line
    error saying what to lower, not torch's traceback."""
    try:
        yield
    except (RuntimeError, MemoryError) as err:  # torch.cuda.OutOfMemoryError is one
        cuda = isinstance(err, torch.cuda.OutOfMemoryError) or "CUBLAS_STATUS_ALLOC" in str(err)
        if not (cuda or isinstance(err, MemoryError) or "can't allocate memory" in str(err)):
            raise
        where = "the GPU" if cuda else "this machine"
        raise ConfigError(
            f"out of memory on {where}: lower the model's sizes (model.*) or the batches "
            "(data.batch_tokens, data.batch_sentences, data.eval_batch_tokens); the "
            "checkpoints saved before are kept"
        ) from None


def train(options: TrainOptions, on_event: Callback | None = None) -> str:
    """Train (or resume) a run; SIGINT and SIGTERM save a checkpoint and return."""
    with _memory_named():
        trainer = build_trainer(options, on_event)
    previous: dict[signal.Signals, Any] = {}

    def handler(signum: int, frame: FrameType | None) -> None:
        trainer.request_stop()

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread: no signal handling
            pass
    try:
        with _memory_named():
            return trainer.fit()
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        trainer.lock.release()
        dd.stop(trainer.world)
