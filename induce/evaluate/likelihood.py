"""``induce evaluate likelihood``: a grammar's perplexity on a dataset split (the PCFG papers'
PPL): the likelihood of each sentence of two words or more (N-PCFG) or its ELBO bound
(C-PCFG, ``z`` at its mean for the reconstruction), per word with one end of sentence counted
per sentence, as Kim et al.'s ``eval.py`` counts it."""

from __future__ import annotations

import math
from typing import Any

from induce.data.architectures import architecture
from induce.data.errors import ConfigError, InputError
from induce.evaluate.common import words_digest
from induce.models.grammar import GrammarModel
from induce.runs.directory import open_run
from induce.runs.grammar import grammar_sums


def evaluate_likelihood(
    run_path: str,
    data: str,
    split: str = "test",
    which: str = "best",
    device: str = "auto",
    batch_sentences: int = 16,
) -> dict[str, Any]:
    """The grammar's perplexity of ``split`` of dataset ``data``: ``perplexity`` is the
    ELBO bound ``exp((nll + kl) / tokens)`` (the likelihood itself for an N-PCFG, whose KL
    is 0), ``recon_perplexity`` ``exp(nll / tokens)``."""
    run = open_run(run_path)
    if architecture(run.config.arch).objective != "likelihood":
        raise ConfigError(
            f"a {run.config.arch} model is not a grammar: its perplexity is evaluate mlm's"
        )
    dataset = run.split_of(data, split)
    if batch_sentences < 1:
        raise ConfigError(f"must be 1 or more, got {batch_sentences}", "batch_sentences")
    words = list(dataset.sentences(split))
    sentences = [run.vocab.ids(s) for s in words]
    model = run.load_model(which, device)
    assert isinstance(model, GrammarModel)  # the registry's objective: likelihood
    device_of = next(model.parameters()).device
    nll, kl, tokens, count = grammar_sums(model, sentences, run.pad_id, batch_sentences, device_of)
    if not count:
        raise InputError(f"the {split} split has no sentence of two words or more", data)
    if not math.isfinite(nll + kl):  # a report of NaN: no JSON, no figure
        raise InputError(
            f"the model's likelihood of the {split} split is not a number: its {which} weights "
            "hold NaN or infinite values (a diverged run?)",
            str(run.path),
        )
    return {
        "settings": {
            "metric": "likelihood",
            "model": str(run.path),
            "weights": which,
            "data": str(dataset.path),
            # the text itself, wherever it lies: report never averages two texts' figures
            "data_digest": words_digest(words),
            "split": split,
            "arch": run.config.arch,
        },
        "perplexity": round(math.exp((nll + kl) / tokens), 4),
        "recon_perplexity": round(math.exp(nll / tokens), 4),
        "nll_per_sentence": round(nll / count, 4),
        "kl_per_sentence": round(kl / count, 4),
        "tokens": tokens,
        "sentences": count,
        "skipped_sentences": len(sentences) - count,
    }
