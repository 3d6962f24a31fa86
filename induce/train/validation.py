"""Validation during training: masked-LM loss over the processes, and the parses of a split
scored against its gold structures (word level: subword scores are read out as words)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from induce.data.dataset import Dataset
from induce.data.errors import ConfigError, InputError
from induce.metrics.validation import Gold, ParseScorer
from induce.models.base import Model
from induce.models.masked_lm import MaskedLM
from induce.runs.batches import Specials, evaluation_batches
from induce.runs.config import DataConfig
from induce.runs.inference import Cast, masked_lm_loss, sentence_scores
from induce.train import distributed as dd


def validation_loss(
    model: MaskedLM,
    sentences: Sequence[Sequence[int]],
    specials: Specials,
    data: DataConfig,
    device: torch.device,
    world: dd.World,
    cast: Cast,
    step: int = 0,
) -> tuple[float, int]:
    """``(mean cross-entropy over masked tokens, masked token count)`` over all processes,
    masks drawn from ``validation_seed(data, step)``; with ``data.eval_runs`` > 1 the mean of
    the runs' losses (run ``r`` masks from that seed ``+ r``, as the UDGN code averages 5
    random draws) and the masked tokens of all runs.  A draw that masks no token has no
    loss: refused, naming ``data.mask_rate``, rather than a validation figure of nan."""

    def reduce(total: float, count: int) -> Sequence[float]:  # over all processes
        return dd.sum_all(world, total, float(count), device=device)

    loss, tokens, empty = masked_lm_loss(
        model,
        sentences,
        specials,
        data.mask_rate,
        validation_seed(data, step),
        data.eval_runs,
        data.eval_batch_tokens,
        device,
        cast,
        world.rank,
        world.size,
        reduce,
    )
    if empty:
        raise ConfigError(
            f"{data.mask_rate:g} masked no token of the validation split in "
            f"{empty} of {data.eval_runs} draws: no validation loss"
            f"{_unknown_words(sentences, specials)}",
            setting="data.mask_rate",
        )
    return loss, tokens


def _unknown_words(sentences: Sequence[Sequence[int]], specials: Specials) -> str:
    """Why few tokens could be masked, when that is why: ``<unk>`` is never masked, and a
    validation split far from the vocabulary is mostly ``<unk>`` (a small training split,
    or another corpus)."""
    total = sum(len(s) for s in sentences)
    unknown = sum(token == specials.unk for s in sentences for token in s)
    if not unknown:
        return ""
    return f" ({unknown} of its {total} tokens are <unk>, which is never masked)"


def check_validation_masks(
    sentences: Sequence[Sequence[int]], specials: Specials, data: DataConfig
) -> None:
    """Before training: refuse a ``data.mask_rate`` whose validation draws mask no token of
    the validation split (no validation loss), which :func:`validation_loss` would only find
    at the first validation, an epoch of training later.  Exact for ``eval_masks: fixed``,
    whose draws are every validation's (drawn here as there: masks only, no model); the
    draws of ``fresh`` masks depend on the update, and are checked when they are drawn."""
    if not sentences or data.eval_masks != "fixed":  # no validation split, or later draws
        return
    for draw in range(data.eval_runs):
        seed = validation_seed(data, 0) + draw
        batches = evaluation_batches(
            sentences, data.eval_batch_tokens, specials, data.mask_rate, seed
        )
        if not any(batch.targets.numel() for batch in batches):
            raise ConfigError(
                f"{data.mask_rate:g} masks no token of the validation split in draw {draw + 1} "
                f"of {data.eval_runs}: there would be no validation loss"
                f"{_unknown_words(sentences, specials)}",
                setting="data.mask_rate",
            )


def validation_seed(data: DataConfig, step: int) -> int:
    """The seed of validation's first mask draw after ``step`` updates: ``data.eval_seed``
    (``eval_masks: fixed``), or a new block of ``eval_runs`` seeds per update count
    (``fresh``: the official code's new random masks at every evaluation, made
    reproducible)."""
    if data.eval_masks == "fixed":
        return data.eval_seed
    return data.eval_seed + step * data.eval_runs


def parse_split(
    model: Model,
    dataset: Dataset,
    split: str,
    sentences: Sequence[Sequence[int]],
    gold: Gold,
    specials: Specials,
    data: DataConfig,
    device: torch.device,
    cast: Cast,
    decoder: str | None = None,
) -> dict[str, float]:
    """UF1 and UAS/UUAS of the model's parses of ``split`` with each score type's default
    decoder, or ``decoder`` (subword scores: word distances and heights, then Algorithm 3)."""
    align = None
    if dataset.has(f"{split}.align"):  # subword text: the words are in {split}.words
        tokens = [line.split() for line in dataset.lines(f"{split}.words")]
        align = _alignments(dataset, split, tokens)
    else:  # the tree leaves only: read as written, no normalisation needed
        tokens = [line.split() for line in dataset.lines(f"{split}.txt")]
    scorer = ParseScorer()
    for index, scores in sentence_scores(
        model, sentences, specials, data.eval_batch_tokens, device, cast
    ):
        if index >= len(gold.sentences) or gold.sentences[index] is None:
            continue
        if align is None:
            parse = scores.read_out(tokens[index], decoder)
        else:
            subword_parse = scores.read_out_subwords(tokens[index], align[index])
            if subword_parse is None:
                continue  # arc scores between subwords: no word-level read-out
            parse = subword_parse
        scorer.add(index, gold.sentences[index], parse.tree, parse.heads)
    return scorer.summary()


def _alignments(dataset: Dataset, split: str, words: list[list[str]]) -> list[list[int]]:
    """``{split}.align``, each line checked against its words: a dataset of an earlier
    version could leave a word without a piece (WordPiece deleted it), which stopped the
    validation with a traceback; it is now named at its line."""
    from induce.structure.subwords import check_alignment

    out = []
    for k, line in enumerate(dataset.lines(f"{split}.align")):
        align = list(map(int, line.split()))
        try:
            n = check_alignment(align)
        except ValueError as err:
            raise InputError(str(err), str(dataset.path / f"{split}.align"), k + 1) from None
        if k < len(words) and n != len(words[k]):
            raise InputError(
                f"aligns {n} words, but {split}.words has {len(words[k])} on this line "
                "(preprocess the dataset again)",
                str(dataset.path / f"{split}.align"),
                k + 1,
            )
        out.append(align)
    return out
