"""``induce sample``: sentences drawn from a trained grammar (a generative model of the
registry's ``samples``: the PCFG family), top-down from its root."""

from __future__ import annotations

from induce.data.architectures import architecture
from induce.data.config import SEED, check_choice
from induce.data.errors import ConfigError
from induce.data.vocab import MASK, PAD
from induce.runs.config import WEIGHT_CHOICES
from induce.runs.directory import open_run

# The shortest sentence a grammar of the family derives: its root always rewrites to two
# symbols (binary rules), each of which derives a word or more.
SHORTEST = 2
# vocabulary entries no training sentence holds, which a grammar's emissions still cover:
# padding, the mask, and the sentence boundaries of Kim et al.'s dictionaries (their
# training strips them; an imported run keeps them as entries)
NOT_WORDS = frozenset((PAD, MASK, "<s>", "</s>"))


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
    ``seed``; words as the model's vocabulary writes them.  The grammar's emissions cover
    the whole vocabulary, :data:`NOT_WORDS` too, which no training sentence holds: a draw
    with one is drawn again (``<unk>`` stays, a word of the corpus)."""
    if count < 1:
        raise ConfigError(f"must be 1 or more, got {count}", setting="count")
    if max_words < SHORTEST:
        raise ConfigError(
            f"must be {SHORTEST} or more, got {max_words}: a grammar's root rewrites to two "
            f"symbols, so every sentence it draws has {SHORTEST} words or more",
            setting="max_words",
        )
    if not SEED.holds(seed):
        raise ConfigError(f"must be {SEED.describe()}, got {seed}", setting="seed")
    check_choice(weights, WEIGHT_CHOICES, "weights")
    run = open_run(run_path)
    if not architecture(run.config.arch).samples:
        raise ConfigError(f"a {run.config.arch} model has no grammar to draw sentences from")
    model = run.load_model(weights, device)
    tokens = run.vocab.tokens
    excluded = frozenset(k for k, token in enumerate(tokens) if token in NOT_WORDS)
    drawn = model.sample(count, seed, max_words, excluded)
    return [[tokens[i] for i in ids] for ids in drawn]
