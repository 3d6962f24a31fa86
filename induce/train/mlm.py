"""``induce evaluate mlm``: masked-LM perplexity of a trained model on a dataset split, with
masks drawn from a fixed seed (the papers' PPL column, reproducible to the last digit)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import torch

from induce.data.dataset import load_dataset
from induce.data.errors import InputError
from induce.models import build_model
from induce.train.batches import Specials
from induce.train.engine import pick_device
from induce.train.evaluation import evaluate_split
from induce.train.run import load_run, load_weights


def load_trained(run_path: str, which: str = "best", device: str = "auto"):
    """``(run, model in eval mode on the device)``."""
    run = load_run(run_path)
    dev = pick_device(device)
    pad = run.vocab.id("<pad>")
    model = build_model(run.config.arch, run.config.model, len(run.vocab), pad)
    load_weights(model, run.weights(which))
    return run, model.to(dev).eval()


def evaluate_mlm(
    run_path: str,
    data: str,
    split: str = "test",
    which: str = "best",
    device: str = "auto",
    seed: int | None = None,
    mask_rate: float | None = None,
    batch_tokens: int | None = None,
) -> dict[str, Any]:
    run, model = load_trained(run_path, which, device)
    dataset = load_dataset(data)
    if dataset.vocab is None or dataset.vocab.tokens != run.vocab.tokens:
        raise InputError(
            "the dataset's vocabulary differs from the run's: the model can only "
            "be evaluated on data preprocessed with its vocabulary",
            data,
        )
    if not dataset.has(f"{split}.txt"):
        raise InputError(f"the dataset has no {split} split", data)
    vocab = run.vocab
    sentences = [vocab.ids(s) for s in dataset.sentences(split) if s]
    settings = run.config.data
    settings = replace(
        settings,
        **{
            k: v
            for k, v in {
                "eval_seed": seed,
                "mask_rate": mask_rate,
                "eval_batch_tokens": batch_tokens,
            }.items()
            if v is not None
        },
    )
    specials = Specials(vocab.id("<pad>"), vocab.id("<unk>"), vocab.id("<mask>"))
    dev = next(model.parameters()).device
    cast = (
        (lambda: torch.autocast("cuda", dtype=torch.bfloat16))
        if dev.type == "cuda" and run.config.train.bf16
        else torch.no_grad
    )
    loss, count = evaluate_split(model, sentences, specials, settings, dev, autocast=cast)
    if not count:
        raise InputError(f"no token of the {split} split could be masked", data)
    return {
        "settings": {
            "metric": "mlm",
            "model": str(run.path),
            "weights": which,
            "data": str(dataset.path),
            "split": split,
            "arch": run.config.arch,
            "mask_rate": settings.mask_rate,
            "seed": settings.eval_seed,
        },
        "loss": round(loss, 6),
        "perplexity": round(math.exp(loss), 4),
        "masked_tokens": count,
        "sentences": len(sentences),
    }
