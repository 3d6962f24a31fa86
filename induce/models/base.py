"""The interface every architecture implements, and the masked-LM pieces they share.

A model is built from its frozen config (``config_class``), the vocabulary size and the
padding id.  ``forward(ids, keep)`` returns an :class:`EncoderOutput` whose ``hidden`` states
feed the tied output layer (``logits``) at the masked positions; ``structure(ids, keep)``
returns the parser's typed scores alone (``None`` for a model that induces no structure), and
``scores_class.decoders`` names the decoders those scores support, the first being the default.

Shapes: ``B`` batch, ``L`` padded length, ``D`` model width, ``H`` heads, ``V`` vocabulary,
``M`` masked positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import torch
import torch.nn.functional as F
from torch import nn

from induce.data.architectures import ARCHITECTURES
from induce.data.config import Positive, Rate, Size
from induce.data.errors import ConfigError, InputError
from induce.decode.scores import Scores
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


class MaskedLM(nn.Module):
    """Base of every architecture: word embeddings (plus absolute positions when configured),
    a final LayerNorm and an output layer tied to the embeddings.

    Subclasses create their own layers between :meth:`__init__` and :meth:`_add_output`, so
    that parameters are created (and drawn from the seed) in a fixed order."""

    config_class: ClassVar[type[BackboneConfig]] = BackboneConfig
    starts_from_bert: ClassVar[bool] = False  # whether load_pretrained reads a BERT folder
    scores_class: ClassVar[type[Scores] | None] = None

    def __init__(self, config: BackboneConfig, vocab_size: int, pad_id: int) -> None:
        super().__init__()
        self.config = config
        self.pad_id = pad_id
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

    def structure(self, ids: torch.Tensor, keep: torch.Tensor) -> Scores | None:
        """The parser's scores only, without the encoder layers (``None``: no parser)."""
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
        """Keep every layer's attention weights of the next forward passes (or stop)."""
        raise NotImplementedError

    def attention(self) -> list[torch.Tensor]:
        """Per layer, the recorded weights ``[B, H, L, L]`` (query i, key j)."""
        raise NotImplementedError
