"""The Python API: a trained run as an object (``induce.load``).

>>> model = induce.load("runs/chart-demo")          # doctest: +SKIP
>>> [p.tree.to_string() for p in model.parse([["cars", "see", "his", "map"]])]  # doctest: +SKIP
['(S (NP (NNS cars)) (VP (VBP see) (NP (PRP$ his) (NN map))))']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from induce.data.ptb import parse_trees
from induce.data.types import Tree
from induce.parse import Parser, Sentence


@dataclass
class Parse:
    """One sentence's parse: its words, its tree (labelled for a chart parser; ``None`` for
    an empty sentence), and dependency heads (0 = root, 1-based) with labels where the model
    gives them (a chart parser: by the penn2malt head rules)."""

    words: list[str]
    tree: Tree | None
    heads: list[int] | None
    labels: list[str] | None

    def to_ptb(self) -> str:
        return self.tree.to_string() if self.tree is not None else ""


class LoadedRun:
    """A run directory's model, ready to parse."""

    def __init__(self, run_dir: str, weights: str = "best", device: str = "auto") -> None:
        self.parser = Parser(run_dir, device, weights)
        self.parser.check_format("conllu" if self.parser.has_heads else "ptb")

    def parse(
        self,
        sentences: Sequence[str | Sequence[str]],
        tags: Sequence[Sequence[str] | None] | None = None,
    ) -> list[Parse]:
        """Parse sentences given as token lists (or strings split on spaces); ``tags``:
        the words' POS tags, kept in a chart parser's trees."""
        items = []
        for k, sentence in enumerate(sentences):
            tokens = sentence.split() if isinstance(sentence, str) else list(sentence)
            sentence_tags = tags[k] if tags is not None else None
            given = list(sentence_tags) if sentence_tags is not None else None
            items.append(Sentence(tokens, k + 1, " ".join(tokens), tags=given))
        out = []
        for parsed in self.parser.parse(items, source="<python>"):
            tree = parse_trees(parsed.tree).trees[0] if parsed.tree else None
            out.append(Parse(parsed.sentence.tokens, tree, parsed.heads, parsed.labels))
        return out


def load(run_dir: str, weights: str = "best", device: str = "auto") -> LoadedRun:
    """The run in ``run_dir`` (``weights``: ``best`` or ``last``) on ``device``."""
    return LoadedRun(run_dir, weights, device)
