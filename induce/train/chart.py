"""``induce train --arch chart``: the supervised chart parser on a dataset's gold trees
(Kitaev and Klein 2018, Section 2.2 and Appendix): the structured hinge loss with
Hamming-augmented decoding, Adam, linear warm-up, then the rate halved when dev F1 stalls;
dev F1 (EVALB, ``train.evalb``, COLLINS by default) a few times an epoch; the best
checkpoint kept.

The same run directory, checkpoints, kill-safety and events as the masked-LM engine
(:mod:`induce.train.engine`): ``start``, ``train``, ``eval`` (``f1``, ``recall``,
``precision``), ``done`` and ``interrupted``.
"""

from __future__ import annotations

import math
import os
import random
import time
import warnings
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from induce.data.dataset import load_dataset
from induce.data.errors import ConfigError, InduceWarning, InputError
from induce.data.files import FileLock, atomic_write
from induce.data.ptb import read_trees
from induce.decode.cky import hinge_loss
from induce.metrics.evalb import score_corpus
from induce.metrics.evalb_params import load_params
from induce.models import build_parser
from induce.models.chart import ChartParser
from induce.runs.batches import plan_batches
from induce.runs.chart import Encoder, Example, example, inventories, parse_words
from induce.runs.config import RunConfig, load_config
from induce.runs.device import pick_device, set_cpu_threads, set_matmul_precision
from induce.runs.directory import (
    LOCK,
    METRICS,
    dataset_record,
    open_run,
    read_pointer,
    write_run_files,
)
from induce.structure.chart import clean_tree
from induce.train.bookkeeping import Callback, CheckpointedRun, Meter
from induce.train.options import TrainOptions, build_optimizer, check_new_run_directory


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


class ChartTrainer(CheckpointedRun):
    model: ChartParser

    def __init__(self, options: TrainOptions, on_event: Callback | None = None) -> None:
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            raise ConfigError("the chart parser trains in one process (no torchrun)")
        self.on_event: Callback = on_event or (lambda kind, record: None)
        self.stop_requested = False
        self.device = pick_device(options.device)
        self.path = Path(options.out)
        self.lock = FileLock(self.path / LOCK, "the run directory")
        self.config, data = self._settings(options)
        set_matmul_precision(self.device, self.config.train.tf32)
        if self.device.type == "cpu":
            set_cpu_threads(self.config.train.threads)
        if options.deterministic:
            torch.use_deterministic_algorithms(True)
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
            vocab, found = inventories(self.train_examples, unescape)
            model = {**self.config.model, **{k: list(v) for k, v in found.items()}}
            self.config = load_config(
                self.config.arch, base={**self.config.to_dict(), "model": model}
            )
        self.vocab = vocab
        torch.manual_seed(self.config.train.seed)
        self.model = build_parser(
            self.config.arch, self.config.model, len(vocab), vocab.id("<pad>")
        )
        self.model.to(self.device)
        self._check_lengths()
        self.encoder = Encoder(self.model, vocab)
        self.optimizer, self.scheduler = build_optimizer(self.model, self.config.optim)
        self.params = load_params(self.config.train.evalb)
        self.state: dict[str, Any] = {
            "step": 0,
            "epoch": 0,
            "position": 0,
            "best_f1": -1.0,
            "bad_evals": 0,
            "tokens": 0,
            "seconds": 0.0,  # training and validation time, summed over resumes
        }
        self.began = time.perf_counter()
        self.meter = Meter()
        self.plan = self._plan()
        try:
            self._open_run_directory(options)
            if options.resume:
                self._restore()
        except BaseException:
            self.lock.release()
            raise

    def _settings(self, options: TrainOptions) -> tuple[RunConfig, str]:
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
            raise ConfigError("is needed: a dataset directory with gold trees", "data")
        check_new_run_directory(self.path)
        return load_config(options.arch, options.overrides, preset=options.config), options.data

    def _open_run_directory(self, options: TrainOptions) -> None:
        if not options.resume:
            self.path.mkdir(parents=True, exist_ok=True)
        self.lock.acquire()
        if options.resume:
            return  # what killed writes left is cleared once the checkpoint has loaded
        write_run_files(self.path, self.config, self.vocab, dataset_record(self.dataset))
        atomic_write(self.path / METRICS, "")

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

    # -- the loop --------------------------------------------------------------------------
    def train_step(self, indices: list[int], rng: random.Random) -> torch.Tensor:
        """One update from the batch ``indices``: whole (``data.shuffle: batches``, whose
        batches are of one length already) or as sub-batches of similar length whose
        gradients add up to the whole batch's (``sentences``)."""
        self.model.train()
        examples = [self.train_examples[k] for k in indices]
        self.warm_up()
        counts = len(examples), sum(len(ex.tags) for ex in examples)  # the batch's, once
        if self.config.data.shuffle == "batches":
            loss = chart_loss(self.model, self.encoder, examples, rng, *counts)
            return self.update(loss, self.config.optim.clip)
        self.optimizer.zero_grad(set_to_none=True)
        total = torch.zeros((), device=self.device)
        for group in sub_batches(examples, self.config.data.subbatch_tokens):
            part = chart_loss(self.model, self.encoder, group, rng, *counts)
            part.backward()
            total += part.detach()
        self.apply_gradients(self.config.optim.clip)
        return total

    def validate(self) -> dict[str, Any]:
        s = self.state
        s["validated_step"] = s["step"]
        began = time.perf_counter()
        words = [ex.words for ex in self.valid_examples]
        tags = [ex.tags for ex in self.valid_examples]
        parsed = iter(parse_words(self.model, self.encoder, words, tags))
        # predicted trees aligned with the file's trees (None where it gives no example)
        test = [next(parsed) if tree is not None else None for tree in self.valid_raw]
        gold = self.valid_raw
        result = score_corpus(gold, test, self.params).all
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
        if s["step"] >= self.config.train.warmup:
            self.scheduler.step(-f1)  # the plateau schedule minimises: -F1
        improved = f1 > s["best_f1"]
        if improved:
            s["best_f1"] = f1
            s["bad_evals"] = 0
        else:
            s["bad_evals"] += 1
        record["best"] = improved
        self.record("eval", record)
        self.save_checkpoint(best=improved)
        return record

    def _eval_every(self) -> int:
        t = self.config.train
        if t.evals_per_epoch:
            return max(1, math.ceil(len(self.plan) / t.evals_per_epoch))
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

    def fit(self) -> str:
        c, s = self.config, self.state
        total = c.train.max_steps or c.train.epochs * len(self.plan)
        self.emit(
            "start",
            {
                "steps_per_epoch": len(self.plan),
                "total_steps": total,
                "parameters": sum(p.numel() for p in self.model.parameters()),
                "device": str(self.device),
                "world": 1,
                "resumed_at": s["step"],
                "path": str(self.path),
            },
        )
        every = self._eval_every()
        while s["epoch"] < c.train.epochs and not self._finished(total):
            plan, order = self._epoch(s["epoch"])
            while s["position"] < len(order):
                position = s["position"]
                rng = random.Random(f"{c.train.seed}/{s['epoch']}/{position}")
                indices = plan[order[position]]
                tokens = sum(len(self.train_examples[k].words) for k in indices)
                self.meter.add(self.train_step(indices, rng), tokens)
                s["step"] += 1
                s["position"] = position + 1
                s["tokens"] += tokens
                if s["step"] % max(c.train.log_every, 1) == 0:
                    lr = self.optimizer.param_groups[0]["lr"]
                    logged = self.meter.record(s["step"], s["epoch"], lr, total)
                    self.record("train", {**logged, "loss_kind": "hinge"})
                if every and s["step"] % every == 0 and self.valid_examples:
                    self.validate()
                elif self.stop_requested or (
                    c.train.checkpoint_every and s["step"] % c.train.checkpoint_every == 0
                ):
                    self.save_checkpoint()
                if self.stop_requested:
                    self.emit("interrupted", {"step": s["step"]})
                    return "interrupted"
                if self._finished(total):
                    break
            else:
                s["epoch"] += 1
                s["position"] = 0
                if not every and self.valid_examples:
                    self.validate()
        if self.valid_examples and s["step"] != s.get("validated_step"):
            self.validate()
        elif s["step"] != s.get("saved_step"):
            self.save_checkpoint()
        if (read_pointer(self.path) or {}).get("best") is None:
            self.save_checkpoint(best=True)  # no validation set: the last is the best
        self.emit("done", {"step": s["step"], "best_f1": s["best_f1"]})
        return "done"

    def _finished(self, total: int) -> bool:
        t, s = self.config.train, self.state
        return (t.max_steps > 0 and s["step"] >= t.max_steps) or s["bad_evals"] >= t.patience > 0


def chart_loss(
    model: ChartParser,
    encoder: Encoder,
    examples: list[Example],
    rng: random.Random,
    sentences: int,
    tags: int,
) -> torch.Tensor:
    """The hinge loss of ``examples`` over ``sentences`` (the update's batch) and their tag
    loss over ``tags`` (the batch's tags), on the model's device: the losses of sub-batches
    of one batch add up to the batch's.  ``rng`` draws word dropout."""
    device = next(model.parameters()).device
    batch = encoder.batch(
        [ex.words for ex in examples], [ex.tags for ex in examples], dropout=rng
    ).to(device)
    scores, tag_logits = model(batch)
    gold = [encoder.gold(ex.spans) for ex in examples]
    loss = hinge_loss(scores, gold, batch.lengths) / sentences
    if tag_logits is not None:
        wanted = torch.full(tag_logits.shape[:2], -100, dtype=torch.long)
        for b, ex in enumerate(examples):
            wanted[b, : len(ex.tags)] = torch.tensor([encoder.tags.get(t, 0) - 1 for t in ex.tags])
        tag_loss = F.cross_entropy(
            tag_logits.flatten(0, 1),
            wanted.flatten().to(device),
            ignore_index=-100,
            reduction="sum",
        )
        loss = loss + model.config.tag_loss_scale * tag_loss / max(tags, 1)
    return loss


def sub_batches(examples: list[Example], tokens: int) -> list[list[Example]]:
    """``examples`` in groups of similar length, each padded to at most ``tokens`` tokens
    (``<start>`` and ``<stop>`` counted; a longer sentence goes alone), shortest first."""
    lengths = [len(ex.words) + 2 for ex in examples]
    return [[examples[k] for k in group] for group in plan_batches(lengths, tokens, "padded")]
