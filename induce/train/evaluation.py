"""Evaluation passes of a masked-LM model: perplexity on seeded masks, and parsing a split to
score it against gold structures.  Used during training and by ``induce evaluate mlm``."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from induce.data.dataset import Dataset
from induce.decode.dependencies import arc_scores, decode_arcs
from induce.decode.distances import decode_batch, decode_sentence
from induce.structure.subwords import word_distances, word_heights
from induce.train import distributed as dd
from induce.train.batches import Specials, evaluation_batches
from induce.train.config import DataConfig
from induce.train.validate import Gold, ParseScorer


@torch.no_grad()
def evaluate_split(
    model,
    sentences: Sequence[Sequence[int]],
    specials: Specials,
    data: DataConfig,
    device: torch.device,
    world: dd.World = dd.World(),
    autocast: Callable = torch.no_grad,
) -> tuple[float, int]:
    """``(mean cross-entropy over masked tokens, masked token count)`` with masks drawn from
    ``data.eval_seed``: the same number for the same model and split, whatever the batch
    order of training.  Perplexity = ``exp`` of the mean."""
    model.eval()
    total, count = 0.0, 0
    for batch in evaluation_batches(
        sentences,
        data.eval_batch_tokens,
        specials,
        data.mask_rate,
        data.eval_seed,
        world.rank,
        world.size,
    ):
        if not batch.targets.numel():
            continue
        batch = batch.to(device)
        with autocast():
            out = model(batch.ids, batch.keep)
            logits = model.logits(out.hidden[batch.masked]).float()
        total += float(F.cross_entropy(logits, batch.targets, reduction="sum"))
        count += batch.targets.numel()
    total, count = dd.sum_all(world, total, float(count), device=device)
    return (total / count if count else math.nan), int(count)


@torch.no_grad()
def parse_batches(
    model,
    sentences: Sequence[Sequence[int]],
    specials: Specials,
    batch_tokens: int,
    device: torch.device,
    autocast: Callable,
) -> list[tuple[int, Any]]:
    """``(sentence index, EncoderOutput row tensors on CPU)`` for every sentence, unmasked."""
    model.eval()
    rows = []
    for batch in evaluation_batches(sentences, batch_tokens, specials, None, 0):
        batch = batch.to(device)
        with autocast():
            out = model.structure(batch.ids, batch.keep)  # the parser alone
        for k, index in enumerate(batch.index):
            n = len(sentences[index])
            rows.append(
                (
                    index,
                    (
                        out.distances[k, :n].float().cpu() if out.distances is not None else None,
                        out.heights[k, :n].float().cpu() if out.heights is not None else None,
                        out.parents[k, :n, :n].float().cpu() if out.parents is not None else None,
                        out.roots[k, :n].float().cpu() if out.roots is not None else None,
                    ),
                )
            )
    return rows


def parse_split(
    model,
    dataset: Dataset,
    split: str,
    sentences: Sequence[Sequence[int]],
    gold: Gold,
    specials: Specials,
    data: DataConfig,
    device: torch.device,
    autocast: Callable,
) -> dict[str, float]:
    """UF1 and UAS/UUAS of the model's parses of ``split`` (word-level: subword scores are
    mapped to words first, dependencies then by Algorithm 3)."""
    tokens = [line.split() for line in dataset.lines(f"{split}.txt")]
    align = (
        [list(map(int, line.split())) for line in dataset.lines(f"{split}.align")]
        if dataset.has(f"{split}.align")
        else None
    )
    words = [line.split() for line in dataset.lines(f"{split}.words")] if align else tokens
    scorer = ParseScorer()
    for index, (d, h, p, r) in parse_batches(
        model, sentences, specials, data.eval_batch_tokens, device, autocast
    ):
        if index >= len(gold.sentences) or gold.sentences[index] is None:
            continue
        if r is not None and p is not None:
            if align is not None:
                continue  # arc scores between subwords: no word-level read-out
            parse = decode_arcs(tokens[index], arc_scores(p, r))
        elif align is None:
            parse = decode_batch(
                [tokens[index]],
                None if d is None else d[None],
                None if h is None else h[None],
                None if p is None else p[None],
            )[0]
        else:
            wd = word_distances(d.tolist()[:-1], align[index]) if d is not None else None
            wh = word_heights(h.tolist(), align[index]) if h is not None else None
            parse = decode_sentence(words[index], wd, wh, None, "algorithm3")
        scorer.add(index, gold.sentences[index], parse)
    return scorer.summary()
