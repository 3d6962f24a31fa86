"""The masked language models' family: what their encoders share and their objective.

``forward(ids, keep)`` returns an :class:`EncoderOutput` whose ``hidden`` states feed the
output layer tied to the word embeddings (``logits``) at the masked positions; ``loss(batch)``
is the masked-LM cross-entropy (:class:`induce.models.base.Model`'s objective);
``structure(ids, keep)`` returns the parser's typed scores alone (``None`` for a model that
induces no structure).

Shapes: ``B`` batch, ``L`` padded length, ``D`` model width, ``H`` heads, ``V`` vocabulary,
``M`` masked positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, Protocol

import torch
import torch.nn.functional as F
from torch import nn

from induce.data.config import Positive, Rate, Size
from induce.data.errors import ConfigError, InputError
from induce.decode.scores import Scores
from induce.models.base import Loss, Model
from induce.models.layers import Dropout


@dataclass(frozen=True)
class BackboneConfig:
    """What every masked-LM encoder has: width, depth, heads, dropout, word embeddings
    initialised ``U(-init_range, init_range)`` as the reference code does, and positions
    (``absolute``: a learned table of ``max_length`` rows added to the embeddings).

    ``init``: ``xavier`` draws every attention projection matrix (query, key, value, output,
    each its own matrix) Xavier-uniform with zero bias, as the reference code's attention
    modules do; ``torch`` keeps PyTorch's default ``nn.Linear`` initialisation (about 0.6x the
    reference scale for square projections)."""

    d_model: Size = 512
    n_layers: Size = 8
    n_heads: Size = 8
    dropout: Rate = 0.1
    attn_dropout: Rate = 0.1
    position: str = "absolute"
    max_length: Size = 500
    init_range: Positive = 0.1
    init: Literal["xavier", "torch"] = "xavier"

    def check(self) -> None:
        """Checks beyond the field types: ``from_mapping`` enforces those, sizes (``Size``)
        and rates (``Rate``) included; architectures add what types cannot say."""

    def decoder_problem(self, decoder: str) -> str | None:
        """Why these settings cannot use ``decoder`` (one of the scores' decoders), or
        ``None``: an architecture whose read-out needs a setting says so here."""
        return None


def check_rate(key: str, value: float) -> None:
    """A dropout rate: ``0 <= value < 1``."""
    if not 0.0 <= value < 1.0:
        raise ConfigError(f"{key} must be in [0, 1), got {value}")


@dataclass
class EncoderOutput:
    """``hidden [B, L, D]`` after the final LayerNorm (and dropout); ``scores``: the parser's
    scores computed on the way, for models that have a parser."""

    hidden: torch.Tensor
    scores: Scores | None = None


class MaskedBatch(Protocol):
    """What the masked-LM objective reads of a batch (:class:`induce.runs.batches.Batch`):
    ``ids [B, L]`` with the masked tokens replaced, ``keep [B, L]``, ``targets [M]`` and the
    hidden states at the ``M`` masked positions."""

    ids: torch.Tensor
    keep: torch.Tensor
    targets: torch.Tensor

    def at_masked(self, hidden: torch.Tensor) -> torch.Tensor: ...


class MaskedLM(Model):
    """Base of the masked language models: word embeddings (plus absolute positions when
    configured), a final LayerNorm and an output layer tied to the embeddings.

    Subclasses create their own layers between :meth:`__init__` and :meth:`_add_output`, so
    that parameters are created (and drawn from the seed) in a fixed order."""

    config_class: ClassVar[type[BackboneConfig]] = BackboneConfig
    config: BackboneConfig
    # the method of the model that computes the parser's scores inside ``forward``, a region
    # of its own under ``train.compile_scope: regions`` (``None``: no parser in the forward)
    parser_region: ClassVar[str | None] = None
    layers: nn.ModuleList  # the stack, every layer running the same code

    def __init__(self, config: BackboneConfig, vocab_size: int, pad_id: int) -> None:
        super().__init__(config, vocab_size, pad_id)
        c = config
        self.embed = nn.Embedding(vocab_size, c.d_model, padding_idx=pad_id)
        self.positions = nn.Embedding(c.max_length, c.d_model) if c.position == "absolute" else None
        self.drop = Dropout(c.dropout)

    def _add_output(self, vocab_size: int) -> None:
        self.norm = nn.LayerNorm(self.config.d_model)
        self.out_bias = nn.Parameter(torch.zeros(vocab_size))

    def _init_projections(self) -> None:
        """With ``init: xavier``, every submodule that has attention projections redraws them
        (``reset_xavier``); called last in ``__init__`` so the other draws keep their order."""
        if self.config.init == "xavier":
            for module in self.modules():
                reset = getattr(module, "reset_xavier", None)
                if callable(reset):
                    reset()

    def _init_tables(self, *tables: nn.Embedding | None) -> None:
        """Embedding tables ~ ``U(-init_range, init_range)``, in the order given."""
        r = self.config.init_range
        for table in tables:
            if table is not None:
                nn.init.uniform_(table.weight, -r, r)

    @property
    def max_words(self) -> int | None:
        """The longest sentence the model can read (absolute positions), else ``None``."""
        return self.config.max_length if self.positions is not None else None

    def embed_tokens(self, ids: torch.Tensor) -> torch.Tensor:
        """``ids [B, L] -> [B, L, D]``: word embeddings plus positions (no dropout)."""
        h = self.embed(ids)
        if self.positions is not None:
            if ids.shape[1] > self.config.max_length:
                raise InputError(
                    f"a sentence of {ids.shape[1]} tokens is longer than the model's "
                    f"max_length {self.config.max_length}"
                )
            h = h + self.positions(torch.arange(ids.shape[1], device=ids.device))[None]
        return h

    def finish(self, h: torch.Tensor) -> torch.Tensor:
        return self.drop(self.norm(h))

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Tied output layer: ``hidden [M, D] -> [M, V]``."""
        return F.linear(hidden, self.embed.weight, self.out_bias)

    def forward(self, ids: torch.Tensor, keep: torch.Tensor) -> EncoderOutput:
        """``ids [B, L]``, ``keep [B, L]`` (True at real tokens)."""
        raise NotImplementedError

    def compile_regions(self, scope: str) -> list[tuple[nn.Module, str]] | None:
        """What ``train.compile_scope`` compiles apart, as ``(module, method name)``:
        ``None`` for ``model`` (the whole forward), each layer's ``forward`` for ``layers``,
        those and the parser's method (:attr:`parser_region`) for ``regions``.  The layers
        share one compilation: their code is the same, their weights are inputs of the
        compiled graph."""
        if scope == "model":
            return None
        regions: list[tuple[nn.Module, str]] = [(layer, "forward") for layer in self.layers]
        if scope == "regions" and self.parser_region is not None:
            regions.append((self, self.parser_region))
        return regions

    def loss(self, batch: MaskedBatch, net: nn.Module | None = None) -> Loss:
        """Cross-entropy of the tied output layer at the masked positions only, under the
        caller's mode and precision context; nothing masked: a zero loss that still touches
        every parameter (so that DDP's gradient averaging sees them)."""
        runner = self if net is None else net
        out = runner(batch.ids, batch.keep)
        if batch.targets.numel():
            logits = self.logits(batch.at_masked(out.hidden))
            return Loss(F.cross_entropy(logits.float(), batch.targets))
        return Loss(self.logits(out.hidden[:, 0]).float().sum() * 0.0)

    def loss_sum(self, batch: MaskedBatch) -> torch.Tensor:
        """The summed cross-entropy over the masked tokens (evaluation: perplexity is
        ``exp(sum / count)`` over a split), under the caller's mode and precision."""
        logits = self.logits(batch.at_masked(self(batch.ids, batch.keep).hidden)).float()
        return F.cross_entropy(logits, batch.targets, reduction="sum")
