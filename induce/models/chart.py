"""The self-attentive chart parser (Kitaev and Klein 2018, seed paper 001), supervised.

Sentence ``<start> w_1 .. w_n <stop>``:

1. the content vector of each token is the sum of its lexical parts (Section 4): a
   character model (``induce.models.chars``; ``chars: lstm``, a bidirectional LSTM over the
   word's characters whose final states are concatenated, the paper's best; ``concat``, the
   embeddings of the first and last ``char_concat`` characters concatenated and projected),
   and optionally word and tag embeddings (``words``, ``tags``), each with its dropout;
   words are replaced by ``<unk>`` with probability ``1 / (1 + count)`` in training (word
   dropout by frequency);
2. a learned position table; ``factored`` (Section 3) concatenates content and position
   (``x = [c; p]``) and keeps the halves apart in every projection: queries, keys and values
   of each head are ``[c W_c; p W_p]``, the output projection and the feed-forward block are
   one per half; ``factored: false`` adds position to content and uses ordinary layers;
3. ``n_layers`` post-LayerNorm Transformer layers (Eqs. 1-2 of Section 2.1);
4. span ``(i, j)`` is ``[fwd_j - fwd_i; bwd_{j+1} - bwd_{i+1}]``, fwd and bwd the even and
   odd coordinates of the outputs (of each half when factored), Section 2.1;
5. the label MLP ``s(i, j, .) = W2 relu(LN(W1 v + b1)) + b2``, with the empty label's
   score fixed at 0 (Section 2.1, footnote 3).

``W1`` is affine, so ``W1 (f_j - f_i) = W1 f_j - W1 f_i``: the first layer runs once per
fencepost, not once per span.  ``tag_head`` (not in the paper: K&K 2018b) adds a tag
classifier so that parses of plain text carry tags.

The label, tag and character inventories are part of the config (the trainer fills them from
the training trees), so a run directory rebuilds the model from ``config.yaml`` alone.

Shapes: ``B`` batch, ``T = n + 2`` tokens with ``<start>``/``<stop>``, ``n`` words, ``W``
characters, ``D`` model width, ``C`` labels including the empty label at index 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar, Literal

import torch
import torch.nn.functional as F
from torch import nn

from induce.data.config import Rate, Size
from induce.data.errors import ConfigError
from induce.decode.span_scores import SpanScores
from induce.models.base import Loss, Model
from induce.models.bilstm import Precision
from induce.models.chars import CharConcat, CharLSTM
from induce.structs.spans import hinge_loss

START, STOP = "<start>", "<stop>"  # the sentence-boundary tokens of the word vocabulary
CHAR_PAD, CHAR_UNK, CHAR_BOW, CHAR_EOW = "<pad>", "<unk>", "<w>", "</w>"
CHAR_SPECIALS = (CHAR_PAD, CHAR_UNK, CHAR_BOW, CHAR_EOW)


@dataclass(frozen=True)
class ChartConfig:
    d_model: Size = 1024
    n_layers: Size = 8
    n_heads: Size = 8
    d_kv: Size = 64
    d_ff: Size = 2048
    factored: bool = True
    d_position: Size = 512  # factored: the position half; content is d_model - d_position
    max_length: Size = 302  # tokens, <start> and <stop> included
    chars: Literal["lstm", "concat", "none"] = "lstm"
    d_char: Size = 32  # character embeddings
    char_concat: Size = 8  # concat: first and last characters kept
    words: bool = False
    tags: bool = False
    tag_head: bool = False  # predict tags (K&K 2018b), for trees of plain text
    tag_loss_scale: float = 5.0
    d_label_hidden: Size = 250
    attn_dropout: Rate = 0.2
    relu_dropout: Rate = 0.1
    residual_dropout: Rate = 0.2
    char_dropout: Rate = 0.2  # the character model's input and output
    word_dropout: Rate = 0.4  # word embeddings
    tag_dropout: Rate = 0.2  # tag embeddings
    # how the residual, feed-forward and character-output dropouts draw their masks: element
    # (each element apart, nn.Dropout) or feature (one mask per sentence and feature, shared
    # by every position: benepar's FeatureDropout, partitioned_transformer.py)
    dropout_kind: Literal["element", "feature"] = "element"
    # the attention projections' initialisation: pytorch (nn.Linear's default, about
    # U(+-1/sqrt(fan_in))) or benepar (uniform with standard deviation 0.02, benepar's
    # initializer_range in PartitionedMultiHeadAttention)
    init: Literal["pytorch", "benepar"] = "pytorch"
    # the character model reads PTB escapes as the text they stand for (-LRB- as "(", two
    # backquotes as a double quote, ...: induce.data.ptb.unescape_token), as benepar's
    # CharLSTM reads its unescaped words (ptb_unescape.py); the word embeddings and the
    # trees keep the tokens as written
    unescape_chars: bool = False
    # the character table: seen (the training trees' characters; others read as <unk>) or
    # codepoints (benepar's RetokenizerForCharLSTM.build_vocab: every code point below 256,
    # or 512 when the training text goes above 255, so that characters unseen in training
    # keep entries of their own; above 511 benepar falls back to the seen characters too)
    char_table: Literal["seen", "codepoints"] = "seen"
    # the dtype the character LSTM runs in under autocast (induce.models.bilstm.lstm_dtype):
    # auto (on CUDA under bf16: bf16 where cuDNN runs bf16 RNNs, else fp32, never the fp16
    # that PyTorch's autocast picks for cuDNN's RNNs), float32, or autocast (PyTorch's)
    lstm_precision: Precision = "auto"
    labels: tuple[str, ...] = ("",)  # index 0: the empty label
    tag_set: tuple[str, ...] = ()
    char_set: tuple[str, ...] = CHAR_SPECIALS

    def check(self) -> None:
        """What the field types cannot say (``Size`` and ``Rate`` check sizes and dropouts)."""
        if self.max_length < 3:
            raise ConfigError("model.max_length must be at least 3")
        if self.factored and not (0 < self.d_position < self.d_model):
            raise ConfigError("model.d_position must be between 0 and model.d_model")
        if self.factored and (self.d_kv % 2 or self.d_ff % 2 or self.d_position % 2):
            raise ConfigError("factored: model.d_kv, d_ff and d_position must be even")
        if self.d_model % 2:
            raise ConfigError("model.d_model must be even (fwd/bwd halves)")
        if self.chars == "none" and not (self.words or self.tags):
            raise ConfigError("the model needs a lexical input: chars, words or tags")
        if self.tags and not self.tag_set:
            raise ConfigError("model.tags needs the tag set (model.tag_set)")
        if not self.labels or self.labels[0] != "":
            raise ConfigError("model.labels must start with the empty label ''")

    def decoder_problem(self, decoder: str) -> str | None:
        """CKY is the one read-out, and it needs no setting."""
        return None

    @property
    def d_content(self) -> int:
        return self.d_model - self.d_position if self.factored else self.d_model


@dataclass
class ChartInput:
    """A batch: ``words [B, T]``, ``tags [B, T]`` (0 where unknown), ``chars [B, T, W]``,
    ``keep [B, T]`` (True at real tokens, ``<start>``/``<stop>`` included), ``lengths``
    (words per sentence, ``n``).  For training, the targets: ``gold`` spans ``(i, j, label
    id)`` per sentence, ``tag_targets [B, n]`` (``-100`` where none) and the divisors of the
    update's whole batch (``sentences``, ``tag_count``), so that the losses of sub-batches
    of one update add up to the update's."""

    words: torch.Tensor
    tags: torch.Tensor
    chars: torch.Tensor
    keep: torch.Tensor
    lengths: list[int]
    gold: list[list[tuple[int, int, int]]] | None = None
    tag_targets: torch.Tensor | None = None
    sentences: int = 1
    tag_count: int = 1

    def to(self, device: torch.device) -> ChartInput:
        targets = self.tag_targets
        return replace(
            self,
            words=self.words.to(device),
            tags=self.tags.to(device),
            chars=self.chars.to(device),
            keep=self.keep.to(device),
            tag_targets=None if targets is None else targets.to(device),
        )


class FeatureDropout(nn.Module):
    """Dropout with one mask per sentence and feature: ``x [B, T, F]`` keeps or drops feature
    f of sentence b at every position together (inverted scaling, as ``nn.Dropout``)."""

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        keep = torch.empty(x.shape[0], 1, x.shape[-1], dtype=x.dtype, device=x.device)
        return x * keep.bernoulli_(1.0 - self.p).div_(1.0 - self.p)


def _dropout(c: ChartConfig, p: float) -> nn.Module:
    return FeatureDropout(p) if c.dropout_kind == "feature" else nn.Dropout(p)


class _Attention(nn.Module):
    """Multi-head self-attention, factored into content and position halves or not."""

    def __init__(self, c: ChartConfig) -> None:
        super().__init__()
        self.c = c
        halves = [c.d_content, c.d_position] if c.factored else [c.d_model]
        self.dk = dk = c.d_kv // len(halves)  # each half's share of a head
        self.qkv = nn.ModuleList(nn.Linear(d, 3 * c.n_heads * dk, bias=False) for d in halves)
        self.out = nn.ModuleList(nn.Linear(c.n_heads * dk, d, bias=False) for d in halves)
        if c.init == "benepar":  # standard deviation 0.02: uniform on +-sqrt(3) * 0.02
            bound = math.sqrt(3.0) * 0.02
            for linear in [*self.qkv, *self.out]:
                nn.init.uniform_(linear.weight, -bound, bound)

    def forward(self, parts: list[torch.Tensor], keep: torch.Tensor) -> list[torch.Tensor]:
        """``parts``: the halves ``[B, T, d]`` (one when not factored), ``keep [B, T]`` the
        real tokens; each half's output ``[B, T, d]``.

        Section 2.1's factored attention: the logits are the sums of the halves' dot
        products, ``q_c . k_c + q_p . k_p``, scaled by ``1 / sqrt(d_kv)``; dropout on the
        attention weights while training.  That is one attention over the halves side by
        side (``[q_c; q_p] . [k_c; k_p]``, and ``[v_c; v_p]`` gives each half's output as a
        slice of one product): ``F.scaled_dot_product_attention``, fused kernels on a GPU
        with no ``[B, H, T, T]`` weights kept for the backward, the fused CPU kernel when
        parsing.  Training on a CPU computes it written out (:meth:`_written_out`)."""
        c = self.c
        b, t, _ = parts[0].shape
        # each half's projections [B, T, 3, H, dk]
        projected = [p(x).view(b, t, 3, c.n_heads, -1) for x, p in zip(parts, self.qkv)]
        if parts[0].device.type == "cpu" and torch.is_grad_enabled():
            return self._written_out(projected, keep)
        side_by_side = projected[0] if len(projected) == 1 else torch.cat(projected, -1)
        q, k, v = side_by_side.permute(2, 0, 3, 1, 4)  # [B, H, T, d_kv] each
        y = F.scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=keep[:, None, None, :],
            dropout_p=c.attn_dropout if self.training else 0.0,
            scale=1.0 / math.sqrt(c.d_kv),
        )
        halves = y.transpose(1, 2).split(self.dk, -1)  # [B, T, H, dk] each
        return [project(h.reshape(b, t, -1)) for h, project in zip(halves, self.out)]

    def _written_out(self, projected: list[torch.Tensor], keep: torch.Tensor) -> list[torch.Tensor]:
        """The same attention as separate operations, half by half: training on a CPU,
        where PyTorch's kernels cost more in bf16 at the paper's sizes (32 sentences of 30
        words, 8 heads of 32; AMD EPYC Zen 4): the fused kernel's backward twice the time
        without dropout, the math kernel (bf16 computed in float32) 9% more with it."""
        b, t = keep.shape
        heads = [x.permute(2, 0, 3, 1, 4) for x in projected]  # [3, B, H, T, dk] per half
        logits = heads[0][0] @ heads[0][1].transpose(-1, -2)
        for q, k, _ in heads[1:]:
            logits = logits + q @ k.transpose(-1, -2)
        logits = (logits / math.sqrt(self.c.d_kv)).masked_fill(~keep[:, None, None, :], -math.inf)
        weights = F.dropout(torch.softmax(logits, -1), self.c.attn_dropout, self.training)
        return [
            project(torch.matmul(weights, v).transpose(1, 2).reshape(b, t, -1))
            for (_, _, v), project in zip(heads, self.out)
        ]


class _Layer(nn.Module):
    """Attention and feed-forward sublayers, each ``LN(x + dropout(sublayer(x)))``."""

    def __init__(self, c: ChartConfig) -> None:
        super().__init__()
        self.c = c
        halves = [c.d_content, c.d_position] if c.factored else [c.d_model]
        d_ff = c.d_ff // len(halves)
        self.attention = _Attention(c)
        self.norm_attn = nn.LayerNorm(c.d_model)
        self.ff = nn.ModuleList(
            nn.Sequential(
                nn.Linear(d, d_ff), nn.ReLU(), _dropout(c, c.relu_dropout), nn.Linear(d_ff, d)
            )
            for d in halves
        )
        self.norm_ff = nn.LayerNorm(c.d_model)
        self.drop = _dropout(c, c.residual_dropout)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        c = self.c
        sizes = [c.d_content, c.d_position] if c.factored else [c.d_model]
        parts = list(x.split(sizes, -1))
        x = self.norm_attn(x + self.drop(torch.cat(self.attention(parts, keep), -1)))
        parts = list(x.split(sizes, -1))
        return self.norm_ff(x + self.drop(torch.cat([f(p) for f, p in zip(self.ff, parts)], -1)))


class ChartParser(Model):
    """``forward(batch) -> span scores [B, n + 1, n + 1, C]`` (and tag logits
    ``[B, n, tags]`` when ``tag_head``); ``scores[b, i, j, 0] = 0``.  Its objective
    (:meth:`loss`): the structured hinge loss (Section 2.2) plus the tag head's
    cross-entropy."""

    config_class = ChartConfig
    config: ChartConfig
    scores_class: ClassVar[type[SpanScores]] = SpanScores

    def __init__(self, config: ChartConfig, vocab_size: int, pad_id: int) -> None:
        super().__init__(config, vocab_size, pad_id)
        c = config
        d = c.d_content
        self.word_embed = nn.Embedding(vocab_size, d, padding_idx=pad_id) if c.words else None
        self.tag_embed = nn.Embedding(len(c.tag_set) + 1, d, padding_idx=0) if c.tags else None
        n_chars = len(c.char_set)
        self.chars: nn.Module | None = None
        if c.chars == "lstm":
            self.chars = CharLSTM(n_chars, c.d_char, d, c.char_dropout, c.lstm_precision)
        elif c.chars == "concat":
            self.chars = CharConcat(n_chars, c.d_char, c.char_concat, d)
        self.positions = nn.Embedding(c.max_length, c.d_position if c.factored else c.d_model)
        self.norm_in = nn.LayerNorm(c.d_model)
        self.drop_chars = _dropout(c, c.char_dropout)
        self.drop_words = nn.Dropout(c.word_dropout)
        self.drop_tags = nn.Dropout(c.tag_dropout)
        self.layers = nn.ModuleList(_Layer(c) for _ in range(c.n_layers))
        self.label_in = nn.Linear(c.d_model, c.d_label_hidden)
        self.label_norm = nn.LayerNorm(c.d_label_hidden)
        self.label_out = nn.Linear(c.d_label_hidden, len(c.labels) - 1)
        self.tagger = (
            nn.Sequential(
                nn.Linear(c.d_model, c.d_label_hidden),
                nn.LayerNorm(c.d_label_hidden),
                nn.ReLU(),
                nn.Linear(c.d_label_hidden, len(c.tag_set)),
            )
            if c.tag_head
            else None
        )

    @property
    def max_words(self) -> int:
        return self.config.max_length - 2

    def encode(self, batch: ChartInput) -> torch.Tensor:
        """``[B, T, D]``: the encoder's outputs."""
        c = self.config
        b, t = batch.words.shape
        if t > c.max_length:
            from induce.data.errors import InputError

            raise InputError(
                f"a sentence of {t - 2} words is longer than the model's {self.max_words}"
            )
        content = torch.zeros(b, t, c.d_content, device=batch.words.device)
        if self.chars is not None:
            content = content + self.drop_chars(self.chars(batch.chars))
        if self.word_embed is not None:
            content = content + self.drop_words(self.word_embed(batch.words))
        if self.tag_embed is not None:
            content = content + self.drop_tags(self.tag_embed(batch.tags))
        position = self.positions(torch.arange(t, device=content.device))[None].expand(b, t, -1)
        x = torch.cat([content, position], -1) if c.factored else content + position
        x = self.norm_in(x)
        for layer in self.layers:
            x = layer(x, batch.keep)
        return x

    def fenceposts(self, y: torch.Tensor) -> torch.Tensor:
        """``y [B, T, D] -> [B, n + 1, D]``: ``f_k = [fwd(y_k); bwd(y_{k+1})]`` (Section 2.1)."""
        c = self.config
        halves = list(y.split([c.d_content, c.d_position], -1)) if c.factored else [y]
        fwd = torch.cat([h[..., 0::2] for h in halves], -1)
        bwd = torch.cat([h[..., 1::2] for h in halves], -1)
        return torch.cat([fwd[:, :-1], bwd[:, 1:]], -1)

    def span_scores(self, y: torch.Tensor) -> torch.Tensor:
        """``[B, n + 1, n + 1, C]`` from the encoder outputs (empty label: 0)."""
        projected = F.linear(self.fenceposts(y), self.label_in.weight)  # W1 f_k, once per fencepost
        hidden = projected[:, None, :, :] - projected[:, :, None, :] + self.label_in.bias
        scores = self.label_out(F.relu(self.label_norm(hidden)))
        return F.pad(scores, (1, 0))

    def tag_logits(self, y: torch.Tensor) -> torch.Tensor | None:
        """``[B, n, tags]`` at the words, or ``None`` without a tag head."""
        return None if self.tagger is None else self.tagger(y[:, 1:-1])

    def forward(self, batch: ChartInput) -> tuple[torch.Tensor, torch.Tensor | None]:
        y = self.encode(batch)
        return self.span_scores(y), self.tag_logits(y)

    def loss(self, batch: ChartInput, net: nn.Module | None = None) -> Loss:
        """The hinge loss of the batch's gold trees over ``batch.sentences`` (Section 2.2,
        Hamming-augmented decoding), plus ``tag_loss_scale`` x the tags' summed
        cross-entropy over ``batch.tag_count``; both are logged."""
        if batch.gold is None:
            raise ValueError("a training batch needs its gold spans")
        runner = self if net is None else net
        scores, tag_logits = runner(batch)
        hinge = hinge_loss(scores, batch.gold, batch.lengths) / batch.sentences
        figures = {"hinge": hinge.detach()}
        if tag_logits is None or batch.tag_targets is None:
            return Loss(hinge, figures)
        tag_sum = F.cross_entropy(
            tag_logits.flatten(0, 1),
            batch.tag_targets.flatten(),
            ignore_index=-100,
            reduction="sum",
        )
        tagging = self.config.tag_loss_scale * tag_sum / max(batch.tag_count, 1)
        figures["tag_loss"] = tagging.detach()
        return Loss(hinge + tagging, figures)
