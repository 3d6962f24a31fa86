"""Running a model over a split: the batched loops that training, parsing and the model-backed
evaluations share.  Each loop exists once here.

Sentences are lists of token ids; batches are length-sorted under a token budget
(:func:`induce.runs.batches.evaluation_batches`), so results come back out of input order,
each with its sentence's index.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext

import numpy as np
import torch

from induce.decode.scores import Scores
from induce.models.base import Model
from induce.models.masked_lm import MaskedLM
from induce.runs.batches import Batch, Specials, evaluation_batches

Cast = Callable[[], AbstractContextManager[object]]


def sentence_scores(
    model: Model,
    sentences: Sequence[Sequence[int]],
    specials: Specials,
    batch_tokens: int,
    device: torch.device,
    cast: Cast = nullcontext,
    max_padding: float | None = 0.2,
) -> Iterator[tuple[int, Scores]]:
    """``(sentence index, its parser scores on the CPU)`` for every sentence, unmasked, from
    the parser alone (``model.structure``: the encoder layers are skipped), under
    ``torch.inference_mode``.  ``cast``: the precision of the forward pass, e.g.
    ``lambda: induce.runs.device.inference_autocast(device, True)`` for bfloat16 (trees may
    then differ slightly from fp32's; ``nullcontext``, the default, is fp32).  The
    sentences of a batch share its scores (``Scores.sentences``), so that a read-out can
    decode the whole batch at once.  Batches pad at most ``max_padding`` of their size
    (:func:`induce.runs.batches.plan_batches`; ``None``: the masked-LM evaluation's batches,
    15-40% padding on WSJ lengths).  0.2 rather than less: StructFormer's convolutions pay
    for padding, UDGN's packed LSTM does not but runs small batches less efficiently, and
    every new batch shape costs oneDNN a new kernel.  As with any change of
    ``batch_tokens``, a sentence's scores may then differ from another batching's in the
    last bits of float32.

    A batch's rows are given out after the next batch's forward pass is queued, so that on
    a GPU the caller's read-out of one batch (on the host) runs while the device computes
    the next, rather than one waiting for the other; on a CPU the order of work is all that
    changes."""
    model.eval()
    ready: list[tuple[int, Scores]] = []
    for batch in evaluation_batches(
        sentences, batch_tokens, specials, None, 0, max_padding=max_padding
    ):
        with torch.inference_mode():
            batch = batch.to(device)
            with cast():
                scores = model.structure(batch.ids, batch.keep)
            if scores is None:
                raise TypeError(f"{type(model).__name__} has no parser")
        yield from ready  # read out while this batch's forward pass runs on the device
        with torch.inference_mode():  # the copy to the host waits for that pass
            rows = scores.sentences([len(sentences[index]) for index in batch.index])
        ready = list(zip(batch.index, rows))
    yield from ready


def masked_lm_training_loss(
    net: torch.nn.Module, model: MaskedLM, batch: Batch, cast: Cast
) -> torch.Tensor:
    """The training loss of one batch (already on the model's device), the model's own
    objective (:meth:`MaskedLM.loss`) under the precision context ``cast`` opens; ``net`` is
    ``model`` or its DDP wrapper.  The trainer and its CUDA graphs train with it;
    ``bench/side_by_side.py`` times it."""
    net.train()
    with cast():
        return model.loss(batch, net).value


@torch.no_grad()
def masked_lm_sums(
    model: MaskedLM,
    sentences: Sequence[Sequence[int]],
    specials: Specials,
    mask_rate: float,
    seed: int,
    batch_tokens: int,
    device: torch.device,
    cast: Cast = nullcontext,
    rank: int = 0,
    world: int = 1,
) -> tuple[float, int]:
    """``(summed cross-entropy over masked tokens, masked token count)`` with masks drawn
    from ``seed``: the same numbers for the same model and split, whatever the batch order
    of training.  With ``world`` processes, this process's share (sum them over processes);
    perplexity is ``exp(total / count)``."""
    model.eval()
    total, count = 0.0, 0
    for batch in evaluation_batches(
        sentences, batch_tokens, specials, mask_rate, seed, rank, world
    ):
        if not batch.targets.numel():
            continue
        with cast():
            total += float(model.loss_sum(batch.to(device)))
        count += batch.targets.numel()
    return total, count


def masked_lm_loss(
    model: MaskedLM,
    sentences: Sequence[Sequence[int]],
    specials: Specials,
    mask_rate: float,
    seed: int,
    runs: int,
    batch_tokens: int,
    device: torch.device,
    cast: Cast = nullcontext,
    rank: int = 0,
    world: int = 1,
    reduce: Callable[[float, int], Sequence[float]] = lambda total, count: (total, count),
) -> tuple[float, int, int]:
    """``(loss, masked tokens, empty draws)``: the mean over ``runs`` mask draws (draw ``r``
    from ``seed + r``, as the UDGN code averages 5 random draws) of each draw's cross-entropy
    per masked token, the masked tokens of all draws, and how many draws masked nothing
    (then the loss is ``nan``: no loss, not a model's NaN).  ``reduce`` sums a draw's
    ``(total, count)`` over the processes."""
    losses, tokens, empty = [], 0, 0
    for draw in range(runs):
        total, count = reduce(
            *masked_lm_sums(
                model,
                sentences,
                specials,
                mask_rate,
                seed + draw,
                batch_tokens,
                device,
                cast,
                rank,
                world,
            )
        )
        losses.append(total / count if count else math.nan)
        tokens += int(count)
        empty += not count  # a NaN of the model's own has a count
    return sum(losses) / runs, tokens, empty


@torch.no_grad()
def attention_maps(
    model: MaskedLM,
    sentences: Sequence[Sequence[int]],
    specials: Specials,
    batch_tokens: int,
    device: torch.device,
) -> Iterator[tuple[int, np.ndarray]]:
    """``(sentence index, attention [layers, H, L, L])`` from an unmasked forward pass (what
    each architecture records: see ``MaskedLM.attention``); ``L`` is the batch's padded
    length."""
    model.eval()
    model.record_attention(True)
    try:
        for batch in evaluation_batches(sentences, batch_tokens, specials, None, 0):
            model(batch.ids.to(device), batch.keep.to(device))
            layers = torch.stack([a.float() for a in model.attention()], 1).cpu().numpy()
            for row, index in enumerate(batch.index):
                yield index, layers[row]
    finally:
        model.record_attention(False)
