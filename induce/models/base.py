"""The interface every architecture implements, whatever its objective.

A model is built from its frozen config (``config_class``), the vocabulary size and the
padding id.  It owns its objective: ``loss(batch, net)`` returns the training loss of a batch
and the figures to log beside it (:class:`Loss`), so that the training loop never knows how a
model learns.  ``scores_class`` names the typed scores its parser returns (their
``decoders``, the default first; ``None`` for a model that induces no structure).  What it
can do beyond that (what it trains on, whether it has a perplexity, whether it records
attention, whether it starts from BERT) is data in the one registry,
:mod:`induce.data.architectures`, read by the command line without importing torch; a test
holds each entry to its class.

The pieces of one family live with it: the masked-LM backbone and its tied output layer in
:mod:`induce.models.masked_lm`, the chart parser's inputs in :mod:`induce.models.chart`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch
from torch import nn

from induce.data.architectures import ARCHITECTURES
from induce.data.errors import ConfigError
from induce.decode.scores import Scores


@dataclass
class Loss:
    """A batch's training loss (a scalar that ``backward()`` differentiates) and the figures
    to log beside it (scalars, detached; the loop averages them over the updates of a log
    line)."""

    value: torch.Tensor
    figures: dict[str, torch.Tensor] = field(default_factory=dict)


class Model(nn.Module):
    """Base of every architecture.  ``net`` in :meth:`loss` is the module that runs the
    forward pass: the model itself, or its ``DistributedDataParallel`` wrapper under
    ``torchrun`` (whose forward pass is what averages the gradients)."""

    config_class: ClassVar[type[Any]]
    scores_class: ClassVar[type[Scores] | None] = None
    starts_from_bert: ClassVar[bool] = False  # whether load_pretrained reads a BERT folder

    def __init__(self, config: Any, vocab_size: int, pad_id: int) -> None:
        super().__init__()
        self.config = config
        self.pad_id = pad_id

    def loss(self, batch: Any, net: nn.Module | None = None) -> Loss:
        """The training loss of ``batch`` (on the model's device), in the mode the caller
        set (``train()`` for training: dropout on)."""
        raise NotImplementedError

    def structure(self, ids: torch.Tensor, keep: torch.Tensor) -> Scores | None:
        """A model that parses text: its parser's scores of ``ids [B, L]`` (``keep [B, L]``:
        True at real tokens), without what only training needs; ``None``: no such parser
        (a masked LM without one, or a model that reads other inputs, as the chart
        parser)."""
        return None

    @property
    def max_words(self) -> int | None:
        """The longest sentence the model can read, else ``None``."""
        return None

    @classmethod
    def check_pretrained(cls) -> None:
        """A clear error before any work when the architecture cannot start from BERT."""
        if not cls.starts_from_bert:
            able = ", ".join(a.name for a in ARCHITECTURES if a.starts_from_bert)
            raise ConfigError(
                f"a {cls.__name__} cannot start from a BERT checkpoint ({able} can)",
                setting="init_from",
            )

    def load_pretrained(self, folder: str) -> None:
        """Start from a pretrained checkpoint (``train.init_from``); only some models can."""
        self.check_pretrained()
        raise NotImplementedError

    def record_attention(self, on: bool = True) -> None:
        """Keep every layer's attention weights of the next forward passes (or stop); the
        registry's ``attention`` says which architectures can."""
        raise ConfigError(f"a {type(self).__name__} does not record attention weights")

    def attention(self) -> list[torch.Tensor]:
        """Per layer, the recorded weights ``[B, H, L, L]`` (query i, key j)."""
        raise ConfigError(f"a {type(self).__name__} does not record attention weights")

    def sample(
        self,
        count: int,
        seed: int = 0,
        max_words: int = 100,
        excluded: frozenset[int] = frozenset(),
    ) -> list[list[int]]:
        """``count`` sentences (word ids) drawn from the model, for a generative model (the
        registry's ``samples``); a sentence holding a word of ``excluded`` is drawn again
        (the model's sentences given that they hold none)."""
        raise ConfigError(f"a {type(self).__name__} has no grammar to draw sentences from")
