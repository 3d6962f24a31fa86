"""``induce evaluate mlm``: masked-LM perplexity of a trained model on a dataset split, with
masks drawn from a fixed seed (the papers' PPL column, reproducible to the last digit)."""

from __future__ import annotations

import math
from typing import Any

from induce.data.architectures import architecture
from induce.data.errors import ConfigError, InputError
from induce.evaluate.common import words_digest
from induce.runs.device import autocast
from induce.runs.directory import open_run
from induce.runs.inference import masked_lm_loss


def evaluate_mlm(
    run_path: str,
    data: str,
    split: str = "test",
    which: str = "best",
    device: str = "auto",
    seed: int | None = None,
    mask_rate: float | None = None,
    batch_tokens: int | None = None,
    runs: int | None = None,
) -> dict[str, Any]:
    """Perplexity of the run's ``which`` weights on ``split`` of dataset ``data``; ``seed``,
    ``mask_rate``, ``batch_tokens`` and ``runs`` (mask draws averaged, draw ``r`` from
    ``seed + r``: the mean of the draws' losses, then ``exp``) default to the run's own
    validation settings."""
    run = open_run(run_path)
    if not architecture(run.config.arch).perplexity:
        raise ConfigError(f"a {run.config.arch} model has no masked-LM perplexity")
    model = run.load_language_model(which, device)
    dataset = run.split_of(data, split)
    words = list(dataset.sentences(split))
    sentences = [run.vocab.ids(s) for s in words if s]
    settings = run.config.data
    seed = settings.eval_seed if seed is None else seed
    mask_rate = settings.mask_rate if mask_rate is None else mask_rate
    batch_tokens = settings.eval_batch_tokens if batch_tokens is None else batch_tokens
    if not 0.0 < mask_rate < 1.0:
        raise ConfigError(f"must be between 0 and 1, got {mask_rate}", setting="mask_rate")
    runs = settings.eval_runs if runs is None else runs
    if runs < 1:
        raise ConfigError(f"must be at least 1, got {runs}", setting="runs")
    dev = next(model.parameters()).device
    loss, count, empty = masked_lm_loss(
        model,
        sentences,
        run.specials,
        mask_rate,
        seed,
        runs,
        batch_tokens,
        dev,
        lambda: autocast(dev, run.config.train.bf16, run.config.train.cpu_bf16),
    )
    if empty:  # that draw has no loss, and the mean of the draws none
        raise InputError(
            f"no token of the {split} split was masked in {empty} of {runs} draws "
            "(<unk> is never masked): a higher --mask-rate, or more text",
            data,
        )
    if not math.isfinite(loss):
        raise InputError(
            f"the model's loss on the {split} split is not a number: its {which} weights "
            "hold NaN or infinite values (a diverged run?)",
            str(run.path),
        )
    return {
        "settings": {
            "metric": "mlm",
            "model": str(run.path),
            "weights": which,
            "data": str(dataset.path),
            # the text itself, wherever it lies: report never averages two texts' figures
            "data_digest": words_digest(words),
            "split": split,
            "arch": run.config.arch,
            "mask_rate": mask_rate,
            "seed": seed,
            "runs": runs,
        },
        "loss": round(loss, 6),
        "perplexity": round(math.exp(loss), 4),
        "masked_tokens": count,
        "sentences": len(sentences),
    }
