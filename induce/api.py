"""The Python API: a trained run as an object (``induce.load``).

>>> model = induce.load("runs/chart-demo")          # doctest: +SKIP
>>> [p.tree.to_string() for p in model.parse([["cars", "see", "his", "map"]])]  # doctest: +SKIP
['(S (NP (NNS cars)) (VP (VBP see) (NP (PRP$ his) (NN map))))']

``docs/api.md`` walks through it with examples the tests run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from induce.data.types import Tree
from induce.parse import Parsed, Parser, Sentence, format_parsed

__all__ = ["LoadedRun", "Parse", "load"]


@dataclass
class Parse:
    """One sentence's parse: its words, its tree (labelled for a chart parser; ``None`` for
    an empty sentence), dependency heads (0 = root, 1-based) with labels where the model
    gives them (a chart parser: by the penn2malt head rules), and the model's scores.

    ``distances``: the syntactic distances between adjacent words the model read
    (StructFormer's, Combiner's merge order; punctuation the model never saw is not among
    them), ``None`` for a model without distances (UDGN, a chart parser); ``scores``: every
    score the model gives for the sentence (``heights``, ``parents``, ``roots``, a chart
    parser's ``spans``, ...)."""

    words: list[str]
    tree: Tree | None
    heads: list[int] | None
    labels: list[str] | None
    scores: dict[str, Any] = field(default_factory=dict)
    _parsed: Parsed | None = field(default=None, repr=False, compare=False)

    @property
    def distances(self) -> list[float] | None:
        value = self.scores.get("distances")
        return list(value) if value is not None else None

    def to_ptb(self) -> str:
        """The tree in PTB brackets, on one line (``""`` for an empty sentence)."""
        return self.tree.to_string() if self.tree is not None else ""

    def to_conllu(self) -> str:
        """The sentence as a CoNLL-U block (``induce parse --format conllu``); needs heads."""
        if self._parsed is None:
            raise ValueError("this parse was not made by a model")
        return format_parsed([self._parsed], "conllu")


class LoadedRun:
    """A run directory's model, ready to parse."""

    def __init__(self, run_dir: str | None, weights: str = "best", device: str = "auto") -> None:
        if run_dir is None:
            from induce.runs import latest_run

            run_dir = str(latest_run())
        self.path = run_dir
        self.parser = Parser(run_dir, device, weights)
        self.parser.check_format("conllu" if self.parser.has_heads else "ptb")
        self.parser.trees = True  # a Parse has its tree whatever the heads come from

    def parse(
        self,
        sentences: Sequence[str | Sequence[str]],
        tags: Sequence[Sequence[str] | None] | None = None,
        normalized: bool = False,
    ) -> list[Parse]:
        """Parse sentences given as token lists (or strings split on spaces); ``tags``:
        the words' POS tags, kept in a chart parser's trees; ``normalized``: the tokens are
        model tokens already (a dataset's sentences), read as they stand rather than
        normalised as the model's dataset was."""
        items = []
        for k, sentence in enumerate(sentences):
            tokens = sentence.split() if isinstance(sentence, str) else list(sentence)
            sentence_tags = tags[k] if tags is not None else None
            given = list(sentence_tags) if sentence_tags is not None else None
            items.append(
                Sentence(tokens, k + 1, " ".join(tokens), tags=given, normalized=normalized)
            )
        out = []
        for parsed in self.parser.parse(items, scores=True, source="<python>"):
            words = parsed.sentence.tokens
            out.append(
                Parse(words, parsed.tree, parsed.heads, parsed.labels, parsed.scores or {}, parsed)
            )
        return out


def load(run_dir: str | None = None, weights: str = "best", device: str = "auto") -> LoadedRun:
    """The run in ``run_dir`` (the most recent run of ``induce train`` when ``None``;
    ``weights``: ``best`` or ``last``) on ``device``."""
    return LoadedRun(run_dir, weights, device)
