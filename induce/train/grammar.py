"""Grammars trained by marginal likelihood on the one training loop (:mod:`induce.train.loop`):
the PCFG family (Kim, Dyer and Rush 2019).

The training text in batches of ``data.batch_sentences`` sentences of one length (Kim et
al.'s ``train.py`` batches of equal lengths), the batch order shuffled per epoch from the
seed; sentences of one word are left out (a PCFG derives none) and so are those longer than
the epoch's length limit: ``data.max_length`` words in the first epoch, raised by
``data.length_step`` each epoch up to ``data.final_max_length`` (Kim et al.'s curriculum,
30 + 1 per epoch up to 40; 0: no limit).  The loss is the model's (the negative ELBO); the
validation figure that picks the best checkpoint is the validation text's negative ELBO per
word, counting one end of sentence per sentence as Kim et al.'s perplexity does, with the
induced trees' scores beside it when the dataset has gold trees.
"""

from __future__ import annotations

import contextlib
import math
import random
from collections.abc import Iterator
from typing import Any

import numpy
import torch

from induce.data.errors import ConfigError, InputError
from induce.metrics.validation import Gold, load_gold
from induce.models import build_model
from induce.models.base import Loss
from induce.models.grammar import GrammarModel, WordBatch
from induce.runs.config import DataConfig
from induce.runs.grammar import equal_length_batches, grammar_sums, word_batch
from induce.train import distributed as dd
from induce.train.loop import Trainer
from induce.train.options import TrainOptions, build_optimizer
from induce.train.validation import parse_split


def length_limit(epoch: int, start: int, step: int, final: int) -> int:
    """The length limit of ``epoch`` (from 0) under the curriculum: ``start`` words, ``step``
    more each epoch, at most ``final`` (0: no end); ``start`` 0: no limit."""
    if not start:
        return 0
    grown = start + step * epoch
    return min(grown, final) if final else grown


def epoch_plan(lengths: list[int], data: DataConfig, seed: int, epoch: int) -> list[list[int]]:
    """The batches of ``epoch`` in the order they run: the sentences of ``lengths`` within the
    epoch's length limit in batches of ``data.batch_sentences`` of one length, shuffled by a
    generator seeded with ``seed`` and ``epoch`` (a run's ``data`` settings).  Which
    sentences share a batch: ``data.length_groups``."""
    limit = length_limit(epoch, data.max_length, data.length_step, data.final_max_length)
    order = None
    if data.length_groups == "shuffled":  # drawn once for the run, as a preprocessed file
        order = list(range(len(lengths)))
        random.Random(f"{seed}/groups").shuffle(order)
    elif data.length_groups == "argsort":  # preprocess.py's own order (numpy's default sort)
        order = numpy.argsort(numpy.asarray(lengths, dtype=numpy.int64)).tolist()
    plan = equal_length_batches(lengths, data.batch_sentences, limit, order)
    random.Random(f"{seed}/{epoch}").shuffle(plan)
    return plan


class GrammarTrainer(Trainer):
    model: GrammarModel
    # the loss is the negative ELBO per sentence (not per word: no perplexity of it)
    train_facts = {"loss_kind": "-ELBO"}
    autocasts = False

    def build(self, data: str, options: TrainOptions) -> None:
        self.load_text(data)
        if self.config.data.batch_sentences < 1:
            raise ConfigError("a grammar trains on batches of data.batch_sentences sentences")
        if not equal_length_batches([len(s) for s in self.train_ids], 1, 0):
            raise InputError("no training sentence of two words or more", str(self.dataset.path))
        if self.valid_ids and not any(len(s) >= 2 for s in self.valid_ids):
            # a grammar scores sentences of two words or more: no validation loss (it was
            # reported as a diverged run at the first validation)
            raise InputError(
                "no validation sentence of two words or more: a grammar scores none of them",
                str(self.dataset.path / "valid.txt"),
            )
        self._check_batches()
        torch.manual_seed(self.config.train.seed)
        model = build_model(self.config.arch, self.config.model, len(self.vocab), self.specials.pad)
        assert isinstance(model, GrammarModel)  # the registry's objective: likelihood
        self.model = model.to(self.device)
        self.optimizer, self.scheduler = build_optimizer(self.model, self.config.optim)
        self.gold = self._validation_gold()

    def _check_batches(self) -> None:
        """Refuse settings that leave no batch in any epoch (the length limit only grows, so
        the last epoch has the most): a run of no update would end "done", its untrained
        model saved as the best."""
        d = self.config.data
        if len(self._plan(self.config.train.epochs - 1)) >= self.world.size:
            return
        limit = length_limit(
            self.config.train.epochs - 1, d.max_length, d.length_step, d.final_max_length
        )
        raise ConfigError(
            f"no training batch of {d.batch_sentences} sentences of one length (of two words or "
            f"more) under a length limit of {limit or 'none'} words"
            + (f" for {self.world.size} processes" if self.world.size > 1 else "")
            + ": raise data.max_length or lower data.batch_sentences"
        )

    def _validation_gold(self) -> Gold | None:
        if not (self.config.train.parse_metrics and self.world.main and self.valid_ids):
            return None
        return load_gold(self.dataset, "valid")

    def _plan(self, epoch: int) -> list[list[int]]:
        """The epoch's batches in the order they run (a function of the seed and epoch)."""
        lengths = [len(s) for s in self.train_ids]
        return epoch_plan(lengths, self.config.data, self.config.train.seed, epoch)

    # -- the hooks -------------------------------------------------------------------------
    @property
    def has_validation(self) -> bool:
        return bool(self.valid_ids)

    def steps_per_epoch(self) -> int:
        return len(self._plan(self.state["epoch"])) // self.world.size

    def epoch_batches(self, epoch: int, start: int) -> Iterator[tuple[int, WordBatch]]:
        plan = self._plan(epoch)
        for position in range(start, len(plan) // self.world.size):
            chosen = plan[position * self.world.size + self.world.rank]
            yield position, word_batch([self.train_ids[k] for k in chosen], self.specials.pad)

    def batch_tokens(self, batch: WordBatch) -> int:
        return batch.words * self.world.size

    def train_step(self, batch: WordBatch) -> Loss:
        self.net.train()
        self.warm_up()
        found = self.model.loss(batch.to(self.device), self.net)
        return Loss(self.update(found.value, self.config.optim.clip), found.figures)

    def evaluate(self) -> tuple[dict[str, Any], float]:
        nll, kl, words, sentences = self._valid_sums()
        per_word = (nll + kl) / words if words else math.nan
        result: dict[str, Any] = {
            "step": self.state["step"],
            "epoch": self.state["epoch"],
            "valid_loss": round(per_word, 5),
            "valid_ppl": round(math.exp(min(per_word, 50.0)), 3),
            "valid_nll": round(nll / max(sentences, 1), 4),
            "valid_kl": round(kl / max(sentences, 1), 4),
            "lr": self.optimizer.param_groups[0]["lr"],
        }
        # no parses of a diverged model (nan scores): the loop stops the run
        if (
            math.isfinite(per_word)
            and self.gold is not None
            and not self.gold.problem
            and self.world.main
        ):
            c = self.config
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
                    contextlib.nullcontext,
                    c.train.valid_decoder,
                )
            )
        return result, per_word

    def _valid_sums(self) -> tuple[float, float, int, int]:
        """The validation split's sums (:func:`induce.runs.grammar.grammar_sums`) over every
        process."""
        return grammar_sums(
            self.model,
            self.valid_ids,
            self.specials.pad,
            self.config.data.batch_sentences * 4,
            self.device,
            self.world.rank,
            self.world.size,
            lambda *sums: dd.sum_all(self.world, *sums, device=self.device),
        )
