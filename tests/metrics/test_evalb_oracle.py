"""Differential test against a real C EVALB binary, when one is available.

Set ``INDUCE_EVALB=/path/to/evalb`` (a build of the January-2006 EVALB; raise its static limits
if you like, nothing else) to compare the full text report on thousands of random sentence
pairs: punctuation, traces, function tags, quote repair, EQ_LABEL/EQ_WORD, skipped and error
sentences and MAX_ERROR stops.  Skipped otherwise.
"""

from __future__ import annotations

import os
import random
import subprocess
from importlib import resources

import pytest

from induce.evaluate.brackets import evaluate_brackets
from induce.metrics.evalb import EvalbStopped
from induce.metrics.evalb_params import parse_params
from induce.metrics.evalb_text import format_evalb

EVALB = os.environ.get("INDUCE_EVALB")
pytestmark = pytest.mark.skipif(
    not EVALB or not os.path.exists(EVALB), reason="set INDUCE_EVALB to a C evalb binary"
)

TAGS = ["NN", "DT", "VB", ",", ".", "-NONE-", "''", "``", "POS", ":", "CD", "RB", "RP", "?"]
LABELS = [
    "NP",
    "VP",
    "PP",
    "ADVP",
    "PRT",
    "S",
    "NP-SBJ",
    "PP-LOC=2",
    "SBAR",
    "X",
    "S1",
    "-LRB-",
    "NP=1",
]
WORDS = ["a", "b", "c", "'", '"', "/", "d", "e"]
EXTRA = "\nEQ_LABEL NP S\nEQ_LABEL S VP\nEQ_WORD a b\nEQ_LABEL TOP X\nEQ_LABEL , NN\n"


def _tree(rng: random.Random, leaves: list[str], depth: int = 0) -> str:
    if len(leaves) == 1 and rng.random() < 0.7:
        return leaves[0]
    if depth and rng.random() < 0.05:
        return f"({rng.choice(LABELS)})"
    k = rng.randint(1, min(4, len(leaves))) if len(leaves) > 1 else 1
    cuts = sorted(rng.sample(range(1, len(leaves)), k - 1)) if k > 1 else []
    parts, previous = [], 0
    for cut in cuts + [len(leaves)]:
        parts.append(_tree(rng, leaves[previous:cut], depth + 1))
        previous = cut
    return f"({rng.choice(LABELS)} {' '.join(parts)})"


def _pair(rng: random.Random) -> tuple[str, str]:
    n = rng.randint(1, 12)
    words = [rng.choice(WORDS) for _ in range(n)]
    tags = [rng.choice(TAGS) for _ in range(n)]
    gold = (
        f"({rng.choice(['TOP', '', 'S1'])} "
        f"{_tree(rng, [f'({t} {w})' for t, w in zip(tags, words)])})"
    )
    roll = rng.random()
    if roll < 0.05:
        return gold, ""
    test_words = list(words)
    test_tags = [t if rng.random() < 0.8 else rng.choice(TAGS) for t in tags]
    if roll < 0.1:
        test_words[rng.randrange(n)] = "zz"
    elif roll < 0.13:
        test_words.append("q")
        test_tags.append("NN")
    test = _tree(rng, [f"({t} {w})" for t, w in zip(test_tags, test_words)])
    return gold, f"({rng.choice(['TOP', '', 'S1'])} {test})"


@pytest.mark.parametrize("preset", ["collins", "unlabeled", "nk", "nk+eq"])
def test_same_report_as_c_evalb(tmp_path, preset):
    base = preset.split("+")[0]
    text = resources.files("induce.resources").joinpath("evalb", f"{base}.prm").read_text()
    if preset.endswith("+eq"):
        text = text.replace("MAX_ERROR 10000", "MAX_ERROR 3") + EXTRA
    prm = tmp_path / "p.prm"
    prm.write_text(text)
    params = parse_params(text, str(prm))
    for seed in range(150):
        rng = random.Random(seed)
        pairs = [_pair(rng) for _ in range(30)]
        gold, test = tmp_path / "gold.txt", tmp_path / "test.txt"
        gold.write_text("".join(g + "\n" for g, _ in pairs))
        test.write_text("".join(t + "\n" for _, t in pairs))
        done = subprocess.run(
            [EVALB, "-p", str(prm), str(gold), str(test)], capture_output=True, text=True
        )
        expected = done.stdout if done.returncode == 0 else "STOPPED"
        try:  # the whole path: reading both files (empty lines too), pairing, scoring
            ours = format_evalb(evaluate_brackets(str(gold), str(test), param=params).result)
        except EvalbStopped:
            ours = "STOPPED"
        assert ours == expected, f"seed {seed}"
