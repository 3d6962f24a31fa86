"""Grammars' data and inference (the PCFG family): sentences of word ids in batches of one
length, and the sums a split's likelihood or ELBO perplexity is made of, written once for
training's validation and ``induce evaluate likelihood``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from induce.models.grammar import GrammarModel, WordBatch


def word_batch(sentences: Sequence[Sequence[int]], pad: int) -> WordBatch:
    """Sentences of word ids as one padded batch."""
    width = max(len(s) for s in sentences)
    ids = torch.full((len(sentences), width), pad, dtype=torch.long)
    for row, sentence in enumerate(sentences):
        ids[row, : len(sentence)] = torch.tensor(sentence, dtype=torch.long)
    return WordBatch(ids, torch.tensor([len(s) for s in sentences]))


def equal_length_batches(
    lengths: Sequence[int], size: int, limit: int, order: Sequence[int] | None = None
) -> list[list[int]]:
    """Indices of the sentences of two words up to ``limit`` (0: any), grouped by length
    and cut into batches of at most ``size``, shortest first (a PCFG derives no sentence of
    one word; Kim et al.'s batches are of one length); within a length in the order of
    ``order`` (a permutation of the indices; default: the indices' own)."""
    by_length: dict[int, list[int]] = {}
    for k in range(len(lengths)) if order is None else order:
        n = lengths[k]
        if n >= 2 and (not limit or n <= limit):
            by_length.setdefault(n, []).append(k)
    return [
        group[start : start + size]
        for _, group in sorted(by_length.items())
        for start in range(0, len(group), size)
    ]


Reduce = Callable[[float, float, float, float], Sequence[float]]


@torch.no_grad()
def grammar_sums(
    model: GrammarModel,
    sentences: Sequence[Sequence[int]],
    pad: int,
    batch_sentences: int,
    device: torch.device,
    rank: int = 0,
    world: int = 1,
    reduce: Reduce = lambda *sums: sums,
) -> tuple[float, float, int, int]:
    """``(nll, kl, tokens, sentences)`` over the sentences of two words or more, ``z`` at its
    mean: ``-log p(x | z)`` and the KL summed, the words plus one end of sentence each (Kim
    et al.'s perplexity counts the ``</s>`` the grammar implicitly generates), and their
    count.  With ``world`` processes this process's share, summed over them by ``reduce``.
    The ELBO perplexity is ``exp((nll + kl) / tokens)``."""
    model.eval()
    plan = equal_length_batches([len(s) for s in sentences], batch_sentences, 0)
    nll = kl = 0.0
    tokens = count = 0
    for chosen in plan[rank::world]:
        batch = word_batch([sentences[k] for k in chosen], pad).to(device)
        found_nll, found_kl = model(batch.ids, batch.lengths)
        nll += float(found_nll.sum())
        kl += float(found_kl.sum())
        tokens += batch.words + len(chosen)
        count += len(chosen)
    total = reduce(nll, kl, float(tokens), float(count))
    return total[0], total[1], int(total[2]), int(total[3])
