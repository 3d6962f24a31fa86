"""Masked language models on the one training loop (:mod:`induce.train.loop`): the text of
a dataset as ids in token-budget batches with their masks, the masked-LM loss (eager, or
replayed from CUDA graphs on one GPU), validation by masked-LM loss (the best checkpoint's
figure) with the induced trees' scores beside it when the dataset has gold trees."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import torch

from induce.data.errors import ConfigError, InputError
from induce.metrics.validation import Gold, load_gold
from induce.models import build_model
from induce.models.base import Loss
from induce.models.masked_lm import MaskedLM
from induce.runs.batches import Batch, plan_batches, steps_per_epoch, training_batches
from induce.runs.device import autocast
from induce.train.graphs import GraphedLoss
from induce.train.loop import Trainer
from induce.train.options import TrainOptions, build_optimizer
from induce.train.validation import check_validation_masks, parse_split, validation_loss


class MaskedLMTrainer(Trainer):
    model: MaskedLM
    compiles = True

    def build(self, data: str, options: TrainOptions) -> None:
        self._load_data(data)
        torch.manual_seed(self.config.train.seed)
        model = build_model(self.config.arch, self.config.model, len(self.vocab), self.specials.pad)
        assert isinstance(model, MaskedLM)  # the registry's objective: masked-lm
        self.model = model
        if self.config.train.init_from and not options.resume:
            self.model.load_pretrained(self.config.train.init_from)
        self._check_lengths()
        check_validation_masks(self.valid_ids, self.specials, self.config.data)
        self.model = self.model.to(self.device)
        self.optimizer, self.scheduler = build_optimizer(self.model, self.config.optim)
        self.gold = self._validation_gold()

    def compile_regions(self) -> list[tuple[torch.nn.Module, str]] | None:
        return self.model.compile_regions(self.config.train.compile_scope)

    def _load_data(self, data: str) -> None:
        """The dataset's vocabulary, sentences as ids, and the batch plan of an epoch."""
        self.load_text(data)
        if not any(self.train_ids):  # no sentence, or blank lines only
            raise InputError("the training split is empty", str(self.dataset.path))
        limit = self.config.data.max_length
        usable = [i for i, s in enumerate(self.train_ids) if s and (not limit or len(s) <= limit)]
        if not usable:
            shortest = min(len(s) for s in self.train_ids if s)
            raise ConfigError(
                f"{limit} leaves no training sentence (the shortest has {shortest} words)",
                setting="data.max_length",
            )
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
            self.net,
            self.model,
            lambda: autocast(self.device, t.bf16, t.cpu_bf16, cache=False),
            self.specials,
            self.device,
        )

    # -- the hooks -------------------------------------------------------------------------
    @property
    def has_validation(self) -> bool:
        return bool(self.valid_ids)

    def steps_per_epoch(self) -> int:
        return steps_per_epoch(self.plan, self.world.size)

    def epoch_batches(self, epoch: int, start: int) -> Iterator[tuple[int, Batch]]:
        c = self.config
        return training_batches(
            self.train_ids,
            self.plan,
            self.specials,
            c.data.mask_rate,
            c.train.seed,
            epoch,
            start,
            self.world.rank,
            self.world.size,
        )

    def batch_tokens(self, batch: Batch) -> int:
        return batch.tokens * self.world.size

    def train_step(self, batch: Batch) -> Loss:
        self.warm_up()
        if self.graphed is not None:
            # the graphs accumulate into .grad tensors that must never be freed
            self.optimizer.zero_grad(set_to_none=False)
            loss = self.graphed(batch)
            self.apply_gradients(self.config.optim.clip)
            return Loss(loss)
        self.net.train()
        with self.autocast():
            found = self.model.loss(batch.to(self.device), self.net)
        return Loss(self.update(found.value, self.config.optim.clip), found.figures)

    def evaluate(self) -> tuple[dict[str, Any], float]:
        c = self.config
        loss, count = validation_loss(
            self.model,
            self.valid_ids,
            self.specials,
            c.data,
            self.device,
            self.world,
            self.autocast,
            self.state["step"],
        )
        result: dict[str, Any] = {
            "step": self.state["step"],
            "epoch": self.state["epoch"],
            "valid_loss": round(loss, 5),
            "valid_ppl": round(math.exp(min(loss, 50.0)), 3),
            "masked_tokens": count,
            "lr": self.optimizer.param_groups[0]["lr"],
        }
        # no parses of a diverged model (nan scores): the loop stops the run
        if (
            math.isfinite(loss)
            and self.gold is not None
            and not self.gold.problem
            and self.world.main
        ):
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
        return result, loss
