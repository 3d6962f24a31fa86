"""EVALB's own text report, byte for byte: the per-sentence table and the summary."""

from __future__ import annotations

import math

from induce.metrics.evalb import EvalbResult, Summary

_RULE = "=" * 76 + "\n"
_HEAD = (
    "  Sent.                        Matched  Bracket   Cross        Correct Tag\n"
    " ID  Len.  Stat. Recal  Prec.  Bracket gold test Bracket Words  Tags Accracy\n"
)


def _f(value: float, width: int = 6) -> str:
    """C's ``%6.2f``; glibc prints the NaN of 0/0 as ``-nan``."""
    text = "-nan" if math.isnan(value) else f"{value:.2f}"
    return text.rjust(width)


def format_evalb(result: EvalbResult) -> str:
    """The text the C EVALB prints for the same files and parameters."""
    out = [_HEAD, _RULE]
    for s in result.sentences:
        recall = 100.0 * s.matched / s.gold if s.gold else 0.0
        precision = 100.0 * s.matched / s.test if s.test else 0.0
        accuracy = 100.0 * s.correct_tags / s.words if s.words else 0.0
        out.append(
            f"{s.index:4d}  {s.length:3d}    {s.status:d}  "
            f"{_f(recall)} {_f(precision)}   {s.matched:3d}    {s.gold:3d}  "
            f"{s.test:3d}    {s.crossing:3d}"
            f"   {s.words:4d}  {s.correct_tags:4d}   {_f(accuracy)}\n"
        )
    out.append(_RULE)
    total = result.all
    if total.gold_brackets > 0 and total.test_brackets > 0:
        out.append(
            f"                {_f(total.recall)} {_f(total.precision)} "
            f"{total.matched:6d} {total.gold_brackets:5d} {total.test_brackets:5d}  "
            f"{total.crossing:5d}"
        )
    out.append(f"  {total.words:5d} {total.correct_tags:5d}   {_f(total.tagging_accuracy)}\n")
    out.append("=== Summary ===\n")
    out.append("\n-- All --\n")
    out.append(_summary(total))
    out.append(f"\n-- len<={result.params.cutoff_len} --\n")
    out.append(_summary(result.short))
    return "".join(out)


def _summary(s: Summary) -> str:
    rows = [
        ("Number of sentence", f"{s.sentences:6d}"),
        ("Number of Error sentence", f"{s.error_sentences:6d}"),
        ("Number of Skip  sentence", f"{s.skip_sentences:6d}"),
        ("Number of Valid sentence", f"{s.valid_sentences:6d}"),
        ("Bracketing Recall", _f(s.recall)),
        ("Bracketing Precision", _f(s.precision)),
        ("Bracketing FMeasure", _f(s.f1)),
        ("Complete match", _f(s.complete_match)),
        ("Average crossing", _f(s.avg_crossing)),
        ("No crossing", _f(s.no_crossing)),
        ("2 or less crossing", _f(s.two_or_less_crossing)),
        ("Tagging accuracy", _f(s.tagging_accuracy)),
    ]
    return "".join(f"{name:<26}= {value}\n" for name, value in rows)
