"""``induce report``: the evaluation results of several runs (seeds) as the papers' "mean (std)"
table; each run's numbers are read by :mod:`induce.reporting.results`.

Runs are grouped by everything in their ``config.yaml`` except the seed and the CPU thread
count (keys a run predates count as their defaults), and by their dataset (what the data is,
not where it lies), so one table row is one setting over its seeds; the standard deviation
is the sample one (``ddof = 1``), as the papers report it.  A row's column averages reports
scored alike only (the same convention, EVALB parameters, gold: refused otherwise), and a
column some of the row's runs lack is said in a warning.  Each row names the protocol
(preset) the runs followed and, for the dependency columns, the gold conversion scheme the
scores are against.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from induce.data.errors import InduceWarning, InputError
from induce.reporting.results import LABELS, RunResults, warn_unfinished

if TYPE_CHECKING:
    import pandas as pd


def aggregate(runs: list[RunResults]) -> pd.DataFrame:
    """A pandas DataFrame: one row per setting, ``mean`` and ``std`` of every number, and the
    number of runs (seeds)."""
    import numpy as np
    import pandas as pd

    groups: dict[str, list[RunResults]] = {}
    for run in runs:
        groups.setdefault(run.setting, []).append(run)
    for members in groups.values():  # a refusal comes alone, before any warning
        _check_scoring(members)
    for run in runs:
        warn_unfinished(run)
    rows = []
    labels = setting_labels([members[0] for members in groups.values()])
    for members, label in zip(groups.values(), labels):
        frame = pd.DataFrame([m.values for m in members])
        gold = sorted(
            {
                f"{scheme} (UAS/UUAS{key.removeprefix('UAS')})"
                for m in members
                for key, scheme in m.gold.items()
                if key.startswith("UAS")
            }
        )
        row: dict[Any, Any] = {
            "model": label,
            "protocol": members[0].protocol,
            "gold": "; ".join(gold),
            "runs": len(members),
        }
        for column in frame.columns:
            values = frame[column][lambda v: np.isfinite(v.astype(float))]
            if len(values) < len(members):
                _warn_partial(label, column, len(values), members)
            with np.errstate(over="ignore", invalid="ignore"):  # said below, not by numpy
                row[(column, "mean")] = values.mean() if len(values) else math.nan
                row[(column, "std")] = values.std(ddof=1) if len(values) > 1 else math.nan
            found = [row[(column, "mean")]] if len(values) else []
            found += [row[(column, "std")]] if len(values) > 1 else []
            if not np.isfinite(found).all():
                _warn_overflow(label, column)
        rows.append(row)
    return pd.DataFrame(rows)


def _check_scoring(members: list[RunResults]) -> None:
    """One row's column must come from reports scored alike (the same convention, EVALB
    parameters, split...): a mean over two conventions is no number of either."""
    first: dict[str, tuple[Path, str]] = {}
    for run in members:
        for column, (file, scoring) in run.sources.items():
            seen = first.setdefault(column, (file, scoring))
            if seen[1] != scoring:
                raise InputError(
                    f"{column} was scored otherwise than in {seen[0]} "
                    f"({_difference(seen, (file, scoring))}): the runs' row would average the "
                    "two",
                    str(file),
                )


def _difference(first: tuple[Path, str], other: tuple[Path, str]) -> str:
    """The first setting in which two reports' scorings (``(file, settings)``) differ, in
    words."""
    theirs, ours = json.loads(first[1]), json.loads(other[1])
    key = next(k for k in sorted({*theirs, *ours}) if theirs.get(k) != ours.get(k))
    if key in theirs and key in ours:
        return f"settings.{key} differs"
    # most likely a setting a newer induce added: scoring the older run again is the way out
    lacking = other[0] if key in theirs else first[0]
    return (
        f"settings.{key} is in one of the two only: {lacking}, without it, was most likely "
        "written by an earlier induce; evaluate that run again"
    )


def _warn_partial(label: str, column: str, found: int, members: list[RunResults]) -> None:
    import warnings

    # a NaN or an infinity (a diverged run's perplexity, say) is dropped from the mean as a
    # missing value is
    lacking = next(m for m in members if not math.isfinite(m.values.get(column, math.nan)))
    what = str(lacking.values[column]).replace("nan", "NaN") if column in lacking.values else "none"
    warnings.warn(
        f"{label}: {column} from {found} of its {len(members)} runs ({what} in {lacking.path}): "
        "its mean (std) is theirs",
        InduceWarning,
        stacklevel=3,
    )


def _warn_overflow(label: str, column: str) -> None:
    import warnings

    warnings.warn(
        f"{label}: {column}: the mean (std) of its runs' numbers is beyond a float's range",
        InduceWarning,
        stacklevel=3,
    )


def setting_labels(runs: list[RunResults], shown: int = 3) -> list[str]:
    """A row name for each setting: its architecture, and where several settings share one,
    the settings in which they differ (``udgn (model.lr=0.003, train.max_steps=500)``;
    at most ``shown`` of them, then how many more)."""
    flat = [_flatten(json.loads(run.setting)) for run in runs]
    out = []
    for k, run in enumerate(runs):
        same = [j for j, other in enumerate(runs) if other.arch == run.arch]
        if len(same) == 1:
            out.append(run.arch)
            continue
        differ = {key for j in same for key in flat[j]} - {
            key for key in flat[k] if all(flat[j].get(key) == flat[k][key] for j in same)
        }
        # the keys that tell this setting from most of the others first
        keys = sorted(
            differ, key=lambda x: (-sum(flat[j].get(x) != flat[k].get(x) for j in same), x)
        )
        told = _telling(keys, flat, k, [j for j in same if j != k])
        keys = told + [key for key in keys if key not in told][: max(0, shown - len(told))]
        parts = [f"{key}={flat[k].get(key, '-')}" for key in keys]
        if len(differ) > len(keys):
            parts.append(f"+{len(differ) - len(keys)} more")
        out.append(f"{run.arch} ({', '.join(parts)})")
    return out


def _telling(keys: list[str], flat: list[dict[str, Any]], k: int, others: list[int]) -> list[str]:
    """Keys (from ``keys``, in their order) enough to tell setting ``k`` from each of
    ``others``: each the one that tells it from most of those not told yet.  The first keys
    alone could all tie on a grid (lr x size) and name two rows alike."""
    told: list[str] = []
    left = [j for j in others if flat[j] != flat[k]]
    while left and keys:
        key = max(keys, key=lambda x: sum(flat[j].get(x) != flat[k].get(x) for j in left))
        if all(flat[j].get(key) == flat[k].get(key) for j in left):
            break  # nothing tells the rest apart
        told.append(key)
        left = [j for j in left if flat[j].get(key) == flat[k].get(key)]
    return told


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(value, dict):
        return {prefix: value}
    out: dict[str, Any] = {}
    for key, item in value.items():
        out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    return out


def cells(table: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """The header and the rows of the printed table: ``mean (std)`` cells, two decimals; a
    single run shows its value alone."""
    metrics = ordered({c[0] for c in table.columns if isinstance(c, tuple)})
    header = ["Model", "Protocol", "Runs"] + metrics
    rows = []
    for _, row in table.iterrows():
        out = [str(row["model"]), str(row["protocol"]), str(row["runs"])]
        for metric in metrics:
            mean, std = row.get((metric, "mean")), row.get((metric, "std"))
            if mean is None or (isinstance(mean, float) and math.isnan(mean)):
                out.append("")
            elif std is None or math.isnan(std):
                out.append(f"{mean:.2f}")
            else:
                out.append(f"{mean:.2f} ({std:.2f})")
        rows.append(out)
    return header, rows


def _notes(table: pd.DataFrame) -> list[str]:
    golds = sorted({g for g in table["gold"] if g}) if "gold" in table else []
    return [f"Dependency gold: {g}." for g in golds]


def to_markdown(table: pd.DataFrame) -> str:
    """The table as markdown (what ``induce report`` prints)."""
    header, rows = cells(table)
    header = [_markdown_cell(h) for h in header]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---", "---"] + ["---:"] * (len(header) - 2)) + "|",
    ]
    lines += ["| " + " | ".join(_markdown_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n" + "".join("\n" + n + "\n" for n in _notes(table))


def _markdown_cell(text: str) -> str:
    """A cell's text with its ``|`` escaped (a report named ``deps-a|b.json`` split the
    header into one cell more than the rows)."""
    return text.replace("|", "\\|")


_LATEX_SPECIAL = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        # not in the default OT1 encoding's text font: they print as other glyphs
        "|": r"\textbar{}",
        "<": r"\textless{}",
        ">": r"\textgreater{}",
    }
)


def latex_escape(text: str) -> str:
    return text.translate(_LATEX_SPECIAL)


def to_latex(table: pd.DataFrame) -> str:
    """The table as a LaTeX ``tabular`` (booktabs rules), notes as a comment line each."""
    header, rows = cells(table)
    spec = "ll" + "r" * (len(header) - 2)
    lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule"]
    lines.append(" & ".join(latex_escape(h) for h in header) + " \\\\")
    lines.append("\\midrule")
    lines += [" & ".join(latex_escape(c) for c in row) + " \\\\" for row in rows]
    lines += ["\\bottomrule", "\\end{tabular}"]
    lines += [f"% {n}" for n in _notes(table)]
    return "\n".join(lines) + "\n"


def ordered(metrics: Iterable[str]) -> list[str]:
    """The papers' column order: UF1, per-label recall, UAS/UUAS, perplexity, validation."""

    def key(name: str) -> tuple[int, str]:
        for rank, prefix in enumerate(
            (
                "UF1",
                "corpus UF1",
                *(f"{x} recall" for x in LABELS),
                "UAS",
                "UUAS",
                "PPL",
                "valid UF1",
                "valid UAS",
                "valid UUAS",
                "valid PPL",
            )
        ):
            if name == prefix or (prefix in ("UAS", "UUAS") and name.startswith(prefix + " ")):
                return rank, name
        return 99, name

    return sorted(metrics, key=key)


def to_csv(table: pd.DataFrame) -> str:
    metrics = ordered({c[0] for c in table.columns if isinstance(c, tuple)})
    flat = table[
        ["model", "protocol", "gold", "runs"]
        + [(m, part) for m in metrics for part in ("mean", "std")]
    ]
    flat.columns = [" ".join(c) if isinstance(c, tuple) else c for c in flat.columns]
    return flat.to_csv(index=False)
