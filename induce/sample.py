"""``induce sample``: sentences drawn from a trained grammar (a generative model of the
registry's ``samples``: the PCFG family), top-down from its root."""

from __future__ import annotations

from induce.data.architectures import architecture
from induce.data.errors import ConfigError
from induce.runs.directory import open_run


def sample_sentences(
    run_path: str,
    count: int,
    seed: int = 0,
    max_words: int = 100,
    weights: str = "best",
    device: str = "cpu",
) -> list[list[str]]:
    """``count`` sentences of at most ``max_words`` words drawn from the run's grammar (a
    compound PCFG draws its sentence vector ``z`` from its prior), the same for the same
    ``seed``; words as the model's vocabulary writes them."""
    if count < 1:
        raise ConfigError(f"must be 1 or more, got {count}", setting="count")
    if max_words < 1:
        raise ConfigError(f"must be 1 or more, got {max_words}", setting="max_words")
    run = open_run(run_path)
    if not architecture(run.config.arch).samples:
        raise ConfigError(f"a {run.config.arch} model has no grammar to draw sentences from")
    model = run.load_model(weights, device)
    tokens = run.vocab.tokens
    return [[tokens[i] for i in ids] for ids in model.sample(count, seed, max_words)]
