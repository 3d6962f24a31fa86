"""``induce parse``'s output: parses written as CoNLL-U (the input's own block where it came
as CoNLL-U), PTB brackets, JSON lines, or pictures for the terminal and an HTML page."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, get_args

from induce.data.errors import ConfigError
from induce.data.types import Tree
from induce.parse_input import Sentence

Format = Literal["conllu", "ptb", "jsonl", "tree", "html"]
FORMATS: tuple[Format, ...] = get_args(Format)


@dataclass
class Parsed:
    """One sentence's parse, over every token the output writes (punctuation included)."""

    sentence: Sentence
    heads: list[int] | None  # over all tokens (punctuation attached); None: no dependencies
    labels: list[str] | None
    tree: Tree | None  # over every token written (None: an empty sentence)
    scores: dict[str, Any] | None = None


def format_parsed(parsed: list[Parsed], fmt: str) -> str:
    """``parsed`` in the output format ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "jsonl":
        out = []
        for p in parsed:
            record: dict[str, Any] = {
                "words": p.sentence.tokens,
                "heads": p.heads,
                "labels": p.labels,
                "tree": _text(p.tree),
            }
            if p.scores is not None:
                record["scores"] = p.scores
            out.append(json.dumps(record, ensure_ascii=False) + "\n")
        return "".join(out)
    if fmt == "ptb":
        return "".join(_text(p.tree) + "\n" for p in parsed)
    if fmt in ("tree", "html"):
        return _pictures(parsed, fmt)
    if fmt != "conllu":
        raise ConfigError(f"must be one of {', '.join(FORMATS)}", setting="format")
    return "".join(_conllu_block(p) for p in parsed)


def _conllu_block(p: Parsed) -> str:
    """One parse as a CoNLL-U block: the input's own block with our heads where it came as
    CoNLL-U, else a block of the tokens (``""`` for an empty sentence, which CoNLL-U cannot
    hold: the caller counts them)."""
    s = p.sentence
    if p.heads is None or p.labels is None:
        raise ConfigError("conllu needs dependencies: use ptb or jsonl", setting="format")
    if s.conllu is not None:
        import copy

        tokens = copy.deepcopy(s.conllu)
        for t in tokens:  # the input's enhanced graph (DEPS) is gold, not ours: cleared, on
            t["deps"] = None  # the empty nodes (1.1) too
        words = [t for t in tokens if isinstance(t["id"], int)]
        for t, h, label in zip(words, p.heads, p.labels):
            t["head"], t["deprel"] = h, label
        return str(tokens.serialize())
    if not s.tokens:
        return ""
    lines = [f"# sent_id = {s.line}"] + ([f"# text = {s.text}"] if s.text else [])
    lines += [
        f"{i}\t{t}\t_\t_\t_\t_\t{h}\t{label}\t_\t_"
        for i, (t, h, label) in enumerate(zip(s.tokens, p.heads, p.labels), 1)
    ]
    return "\n".join(lines) + "\n\n"


def _text(tree: Tree | None) -> str:
    """PTB brackets on one line ("" for an empty sentence)."""
    return tree.to_string() if tree is not None else ""


def _pictures(parsed: list[Parsed], fmt: str) -> str:
    """Each parse drawn for the terminal (``tree``) or as an HTML section (``html``; the page
    around the sections is :func:`page_frame`'s)."""
    from induce.render.html import sentence
    from induce.render.terminal import draw
    from induce.render.views import parse_view

    views = [
        parse_view(p.sentence.line, p.sentence.tokens, p.heads, p.labels, p.tree) for p in parsed
    ]
    if fmt == "tree":
        return "".join(draw(view) for view in views)
    return "".join(sentence(view) for view in views)


def page_frame(fmt: str, source: str, model: str) -> tuple[str, str]:
    """What comes before the first and after the last parse in the output: an HTML page's
    head and end, nothing for the other formats."""
    if fmt != "html":
        return "", ""
    from induce.render.html import page_end, page_start

    summary = [("input", source), ("model", model)]
    return page_start(f"induce parse {source}", summary, ("arcs", "spans")), page_end()
