"""``induce train --arch chart``: the supervised chart parser on a dataset's gold trees
(Kitaev and Klein 2018, Section 2.2 and Appendix): the structured hinge loss with
Hamming-augmented decoding, Adam, linear warm-up, then the rate halved when dev F1 stalls;
dev F1 (EVALB, ``train.evalb``, COLLINS by default) a few times an epoch; the best
checkpoint kept.  ``train.bf16`` (CUDA) and ``train.cpu_bf16`` (a CPU with hardware bf16) run
the encoder and the label MLP under bfloat16 autocast, validation's parses too; the hinge
loss's CKY and margins stay in float32.

The one training loop (:mod:`induce.train.loop`) runs it: the same run directory,
checkpoints, kill-safety, ``torchrun`` and events as every architecture: ``start``, ``train``,
``eval`` (``f1``, ``recall``, ``precision``), ``done`` and ``interrupted``.
"""

from __future__ import annotations

import contextlib
import math
import random
import time
import warnings
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import torch

from induce.data.dataset import load_dataset
from induce.data.errors import ConfigError, InduceWarning, InputError
from induce.data.ptb import read_trees
from induce.metrics.evalb import score_corpus
from induce.metrics.evalb_params import load_params
from induce.models import build_model
from induce.models.base import Loss
from induce.models.chart import ChartParser
from induce.runs.batches import plan_batches
from induce.runs.chart import Encoder, Example, example, inventories, parse_words
from induce.runs.config import load_config
from induce.runs.device import uses_bf16
from induce.structure.chart import clean_tree
from induce.train.loop import Trainer
from induce.train.options import TrainOptions, build_optimizer


def read_examples(dataset_path: Path, split: str) -> tuple[list[Example], list[Any], list[int]]:
    """The split's gold trees as examples (cleaned), the raw trees in file order (what dev
    F1 is scored against), ``None`` where a tree gives no example, and the line each
    example's tree starts on."""
    path = dataset_path / f"{split}.trees"
    if not path.is_file():
        raise InputError(
            f"the dataset has no {split}.trees: the chart parser needs gold trees", str(path)
        )
    found = read_trees(path)
    raw = found.trees
    examples, lines = [], []
    for k, tree in enumerate(raw):
        clean = clean_tree(tree) if tree is not None else None
        if clean is not None:
            examples.append(example(clean))
            lines.append(found.lines[k])
        else:
            raw[k] = None
    return examples, raw, lines


class ChartTrainer(Trainer):
    model: ChartParser
    data_needed = "a dataset directory with gold trees"
    best_key = done_key = "best_f1"
    maximise = True
    train_facts = {"loss_kind": "hinge"}

    def build(self, data: str, options: TrainOptions) -> None:
        self.dataset = load_dataset(data)
        self.train_examples, _, self.train_lines = read_examples(self.dataset.path, "train")
        if not self.train_examples:
            raise InputError("the training split has no usable trees", str(self.dataset.path))
        self.valid_examples: list[Example] = []
        self.valid_raw: list[Any] = []
        self.valid_lines: list[int] = []
        if self.dataset.has("valid.trees"):
            self.valid_examples, self.valid_raw, self.valid_lines = read_examples(
                self.dataset.path, "valid"
            )
        if options.resume:
            vocab = self.run_vocab
        else:
            unescape = bool(self.config.model.get("unescape_chars", False))
            table = str(self.config.model.get("char_table", "seen"))
            vocab, found = inventories(self.train_examples, unescape, table)
            model = {**self.config.model, **{k: list(v) for k, v in found.items()}}
            self.config = load_config(
                self.config.arch, base={**self.config.to_dict(), "model": model}
            )
        self.vocab = vocab
        torch.manual_seed(self.config.train.seed)
        parser = build_model(self.config.arch, self.config.model, len(vocab), vocab.id("<pad>"))
        assert isinstance(parser, ChartParser)  # the registry's objective: hinge
        self.model = parser.to(self.device)
        self._check_lengths()
        self.encoder = Encoder(self.model, vocab)
        self.optimizer, self.scheduler = build_optimizer(self.model, self.config.optim)
        self.params = load_params(self.config.train.evalb)
        self.state["seconds"] = 0.0  # training and validation time, summed over resumes
        self.began = time.perf_counter()
        self.plan = self._plan()

    def _check_lengths(self) -> None:
        """Before any training: a dev sentence longer than the model reads is an error at
        its line (dev F1 must cover every sentence); longer training sentences are skipped,
        with a warning that names the first."""
        limit, wanted = self.model.max_words, self.config.data.max_length
        if wanted > limit:
            raise ConfigError(
                f"data.max_length {wanted} is longer than the model reads: {limit} words "
                f"(model.max_length {self.model.config.max_length} minus <start> and <stop>)"
            )
        for ex, line in zip(self.valid_examples, self.valid_lines, strict=True):
            if len(ex.words) > limit:
                raise InputError(
                    f"a dev sentence of {len(ex.words)} words is longer than the model reads "
                    f"({limit}): raise model.max_length",
                    str(self.dataset.path / "valid.trees"),
                    line,
                )
        cap = wanted or limit
        long = [k for k, ex in enumerate(self.train_examples) if len(ex.words) > cap]
        if long and not wanted:
            warnings.warn(
                f"{self.dataset.path / 'train.trees'}:{self.train_lines[long[0]]}: "
                f"{len(long)} training sentence(s) longer than the model reads ({limit} "
                "words) are skipped (model.max_length sets the limit)",
                InduceWarning,
                stacklevel=2,
            )

    def _plan(self, epoch: int = 0) -> list[list[int]]:
        """Batches of the training sentences, cut by ``data.batch_sentences`` (or the token
        budget when 0): sorted by length (``data.shuffle: batches``; the fit loop shuffles
        their order per epoch), or in the epoch's random order (``sentences``: new batches
        each epoch, as many as the sorted plan has, a function of the seed and the epoch)."""
        d = self.config.data
        limit = d.max_length or self.model.max_words
        usable = [k for k, ex in enumerate(self.train_examples) if len(ex.words) <= limit]
        if d.shuffle == "sentences":
            random.Random(f"{self.config.train.seed}/sentences/{epoch}").shuffle(usable)
        else:
            usable.sort(key=lambda k: len(self.train_examples[k].words))
        batches: list[list[int]] = []
        current: list[int] = []
        for k in usable:
            longest = len(self.train_examples[k].words) + 2
            full = (
                len(current) >= d.batch_sentences
                if d.batch_sentences
                else (len(current) + 1) * longest > d.batch_tokens
            )
            if current and full:
                batches.append(current)
                current = []
            current.append(k)
        if current:
            batches.append(current)
        return batches

    def _elapsed(self) -> float:
        return self.state["seconds"] + time.perf_counter() - self.began

    def _before_save(self) -> None:
        self.state["seconds"], self.began = self._elapsed(), time.perf_counter()

    # -- the hooks -------------------------------------------------------------------------
    @property
    def has_validation(self) -> bool:
        return bool(self.valid_examples)

    def steps_per_epoch(self) -> int:
        return len(self.plan) // self.world.size

    def epoch_batches(
        self, epoch: int, start: int
    ) -> Iterator[tuple[int, tuple[list[int], random.Random]]]:
        """The epoch's batches (sentence indices) from ``start`` on, each with the generator
        of its word dropout; with several processes each takes every ``world``-th batch of
        the epoch's order (the tail that does not fill a round is dropped)."""
        plan, order = self._epoch(epoch)
        seed, world = self.config.train.seed, self.world
        # one process keeps the generators of a run before torchrun (seed/epoch/position)
        rank = f"/{world.rank}" if world.size > 1 else ""
        for position in range(start, len(order) // world.size):
            indices = plan[order[position * world.size + world.rank]]
            yield position, (indices, random.Random(f"{seed}/{epoch}/{position}{rank}"))

    def batch_tokens(self, batch: tuple[list[int], random.Random]) -> int:
        return sum(len(self.train_examples[k].words) for k in batch[0]) * self.world.size

    def train_step(self, batch: tuple[list[int], random.Random]) -> Loss:
        """One update from the batch's sentences: whole (``data.shuffle: batches``, whose
        batches are of one length already) or as sub-batches of similar length whose
        gradients add up to the whole batch's (``sentences``; under torchrun the gradients
        are averaged over the processes once, after the last sub-batch)."""
        indices, rng = batch
        self.net.train()
        examples = [self.train_examples[k] for k in indices]
        self.warm_up()
        counts = len(examples), sum(len(ex.tags) for ex in examples)  # the batch's, once
        if self.config.data.shuffle == "batches":
            with self.autocast():
                loss = chart_loss(self.model, self.encoder, examples, rng, *counts, self.net)
            return Loss(self.update(loss.value, self.config.optim.clip), loss.figures)
        self.optimizer.zero_grad(set_to_none=True)
        total = Loss(torch.zeros((), device=self.device))
        groups = sub_batches(examples, self.config.data.subbatch_tokens)
        for k, group in enumerate(groups):
            with self._no_sync(last=k == len(groups) - 1):
                with self.autocast():
                    part = chart_loss(self.model, self.encoder, group, rng, *counts, self.net)
                part.value.backward()
            total.value += part.value.detach()
            for key, figure in part.figures.items():
                total.figures[key] = total.figures.get(key, 0) + figure
        self.apply_gradients(self.config.optim.clip)
        return total

    def _no_sync(self, last: bool) -> AbstractContextManager[object]:
        """DDP's gradient averaging only with the last sub-batch's backward pass."""
        if last or not isinstance(self.net, torch.nn.parallel.DistributedDataParallel):
            return contextlib.nullcontext()
        return self.net.no_sync()

    def evaluate(self) -> tuple[dict[str, Any], float]:
        """Dev F1 by EVALB (``train.evalb``) over the dev trees; every process parses the
        whole dev set (the same weights give the same F1, so that the plateau schedule and
        patience agree)."""
        s = self.state
        began = time.perf_counter()
        words = [ex.words for ex in self.valid_examples]
        tags = [ex.tags for ex in self.valid_examples]
        t = self.config.train  # validation parses in the precision training runs in
        bf16 = uses_bf16(self.device, t.bf16, t.cpu_bf16)
        parsed = iter(parse_words(self.model, self.encoder, words, tags, bf16=bf16))
        # predicted trees aligned with the file's trees (None where it gives no example)
        test = [next(parsed) if tree is not None else None for tree in self.valid_raw]
        result = score_corpus(self.valid_raw, test, self.params).all
        f1 = result.f1 if not math.isnan(result.f1) else 0.0
        record: dict[str, Any] = {
            "step": s["step"],
            "epoch": s["epoch"],
            "f1": round(f1, 2),
            "recall": round(result.recall, 2),
            "precision": round(result.precision, 2),
            "sentences": result.valid_sentences,
            "evalb": self.params.name,
            "eval_seconds": round(time.perf_counter() - began, 1),
            "elapsed_s": round(self._elapsed(), 1),
            "lr": self.optimizer.param_groups[0]["lr"],
        }
        return record, f1

    def eval_every(self) -> int:
        t = self.config.train
        if t.evals_per_epoch:
            return max(1, math.ceil(self.steps_per_epoch() / t.evals_per_epoch))
        return t.eval_every

    def _epoch(self, epoch: int) -> tuple[list[list[int]], list[int]]:
        """The epoch's batches and the order they run in (a function of the seed and the
        epoch, so that a resumed run continues the same epoch)."""
        if self.config.data.shuffle == "sentences":
            plan = self._plan(epoch)  # new batches: the order is theirs
            return plan, list(range(len(plan)))
        order = list(range(len(self.plan)))
        random.Random(self.config.train.seed * 1000 + epoch).shuffle(order)
        return self.plan, order


def chart_loss(
    model: ChartParser,
    encoder: Encoder,
    examples: list[Example],
    rng: random.Random,
    sentences: int,
    tags: int,
    net: torch.nn.Module | None = None,
) -> Loss:
    """The model's loss (:meth:`ChartParser.loss`) of ``examples`` over ``sentences`` (the
    update's batch) and ``tags`` (the batch's tags), on the model's device: the losses of
    sub-batches of one batch add up to the batch's.  ``rng`` draws word dropout; ``net``:
    the module that runs the forward pass (the model, or its DDP wrapper)."""
    device = next(model.parameters()).device
    batch = encoder.training_batch(examples, rng, sentences, tags).to(device)
    return model.loss(batch, net)


def sub_batches(examples: list[Example], tokens: int) -> list[list[Example]]:
    """``examples`` in groups of similar length, each padded to at most ``tokens`` tokens
    (``<start>`` and ``<stop>`` counted; a longer sentence goes alone), shortest first."""
    lengths = [len(ex.words) + 2 for ex in examples]
    return [[examples[k] for k in group] for group in plan_batches(lengths, tokens, "padded")]
