"""``induce report``: the evaluation results of several runs (seeds) as the papers' "mean (std)"
table.

A run contributes the JSON files that ``induce evaluate ... --json`` wrote into ``RUN/eval/``
(the reproduction scripts put them there) and, when it has none of a kind, its best validation
record in ``metrics.jsonl``.  Each file is recognised by its contents:

- unsupervised bracketing (``sentence_f1``): UF1 (sentence level), corpus UF1 and the per-label
  recall of the most frequent labels;
- dependencies (``uas``): UAS and UUAS, named after the file (``deps-stanford.json`` gives
  ``UAS stanford``);
- masked-LM perplexity (``perplexity``): PPL.

Runs are grouped by everything in their ``config.yaml`` except the seed and the CPU thread
count (keys a run predates count as their defaults), so one table row is
one setting over its seeds; the standard deviation is the sample one (``ddof = 1``), as the
papers report it.  Each row names the protocol (preset) the runs followed and, for the
dependency columns, the gold conversion scheme the scores are against.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from induce.data.errors import InputError
from induce.data.files import read_text
from induce.runs.config import with_defaults
from induce.runs.directory import METRICS, read_metrics, read_settings

if TYPE_CHECKING:
    import pandas as pd

LABELS = ("SBAR", "NP", "VP", "PP", "ADJP", "ADVP")  # the papers' per-label columns


@dataclass
class RunResults:
    path: Path
    arch: str
    setting: str  # the config without its seed, for grouping
    seed: int | None
    values: dict[str, float] = field(default_factory=dict)
    protocol: str = "custom"
    gold: dict[str, str] = field(default_factory=dict)  # dependency column -> gold scheme


def read_run(path: str | Path) -> RunResults:
    """The headline numbers of one run directory."""
    folder = Path(path)
    config = with_defaults(read_settings(folder))
    train = config.get("train")
    seed = train.pop("seed", None) if isinstance(train, dict) else None
    if isinstance(train, dict):
        train.pop("threads", None)  # how fast, not what: seeds on other machines group together
    setting = json.dumps(_plain(config), sort_keys=True)
    protocol = config.get("protocol")
    name = protocol.get("name", "custom") if isinstance(protocol, dict) else "custom"
    out = RunResults(folder, str(config.get("arch", "?")), setting, seed, protocol=str(name))
    for file in sorted((folder / "eval").glob("*.json")):
        try:
            data = json.loads(read_text(file))
        except json.JSONDecodeError as err:
            raise InputError(f"not JSON: {err.msg}", str(file), err.lineno) from None
        except RecursionError:
            raise InputError("not JSON: nested too deeply", str(file)) from None
        if not isinstance(data, dict):
            raise InputError("not a report of induce evaluate: expected a JSON object", str(file))
        settings = data.get("settings")
        if settings is not None and not isinstance(settings, dict):
            raise InputError("settings is not a mapping of settings", str(file))
        found = _headline(file, data)
        out.values.update(found)
        scheme = (settings or {}).get("gold_scheme")
        if scheme is not None and not isinstance(scheme, str):
            raise InputError("settings.gold_scheme is not the name of a scheme", str(file))
        if scheme:
            out.gold.update({key: scheme for key in found})
    if not any(k in out.values for k in ("UF1", "PPL")):
        out.values.update(_validation(folder))
    return out


def read_runs(paths: Iterable[str | Path]) -> list[RunResults]:
    """:func:`read_run` of each run directory, each run once: the same directory named twice
    (``r`` and ``./r/``, or through a link) would be counted as two seeds, its numbers twice
    in the mean and a standard deviation made up of nothing, and is refused; so are two
    directories of one setting with one seed (a copied run, or a run repeated with its
    seed: the same draws, so not a second sample either)."""
    seen: dict[tuple[int, int], str] = {}
    seeds: dict[tuple[str, int | None], Path] = {}
    out = []
    for path in paths:
        try:
            status = os.stat(path)
            identity: tuple[int, int] | None = (status.st_dev, status.st_ino)
        except (OSError, ValueError):
            identity = None  # read_run says what is wrong with it
        if identity is not None and identity in seen:
            first = seen[identity]
            also = f" (also as {first})" if first != str(path) else ""
            raise InputError(
                f"the run directory is named twice{also}: it would count as two seeds",
                str(path),
            )
        run = read_run(path)
        twin = seeds.setdefault((run.setting, run.seed), run.path)
        if twin is not run.path:
            raise InputError(
                f"the same settings and seed (train.seed {run.seed}) as {twin}: a copy or a "
                "repeat of one run would count as two seeds",
                str(path),
            )
        out.append(run)
        if identity is not None:
            seen[identity] = str(path)
    return out


def _plain(value: Any) -> Any:
    """Settings as JSON can hold them, for comparing runs: keys as text, and values that are
    not JSON (YAML dates, sets) as their text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float)):
        return value
    return str(value)


# the headline numbers of each kind of report: (key in the file, column)
_KINDS = {
    "sentence_f1": (("sentence_f1", "UF1"), ("corpus_f1", "corpus UF1")),
    "uas": (("uas", "UAS"), ("uuas", "UUAS")),
    "perplexity": (("perplexity", "PPL"),),
}


def _headline(file: Path, data: dict[str, Any]) -> dict[str, float]:
    """The numbers of one ``induce evaluate --json`` report, recognised by its keys."""
    kind = next((k for k in _KINDS if k in data), None)
    if kind is None:
        return _brackets(file, data)
    suffix = ""
    if kind == "uas":
        stem = file.stem
        name = stem[len("deps") :].strip("-_ ") if stem.startswith("deps") else stem
        suffix = f" {name}" if name else ""
    values: dict[str, float] = {}
    for key, column in _KINDS[kind]:
        if key not in data:
            raise InputError(f"a report with {kind} but no {key}", str(file))
        value = _number(data[key], key, str(file))
        if value is not None:
            values[column + suffix] = value
    if kind == "sentence_f1":
        recalls = data.get("per_label_recall") or {}
        if not isinstance(recalls, dict):
            raise InputError("per_label_recall is not a mapping of labels", str(file))
        for label in LABELS:
            recall = _number(recalls.get(label), f"per_label_recall.{label}", str(file))
            if recall is not None:
                values[f"{label} recall"] = recall
    return values


def _brackets(file: Path, data: dict[str, Any]) -> dict[str, float]:
    """``evaluate brackets --json``: F1 of all sentences, named by its EVALB parameters
    (``F1 collins``: labelled, the chart parser's number); nothing for other reports."""
    settings = data.get("settings")
    block = data.get("all")
    if not (isinstance(settings, dict) and settings.get("metric") == "brackets"):
        return {}
    if not isinstance(block, dict):
        raise InputError("a brackets report without its 'all' block", str(file))
    evalb = settings.get("evalb")
    name = evalb.get("name") if isinstance(evalb, dict) else None
    value = _number(block.get("f1"), "all.f1", str(file))
    return {} if value is None else {f"F1 {name or 'evalb'}": value}


def _number(value: Any, key: str, path: str, where: str = "") -> float | None:
    """``value`` as a number (``None`` stays: no value); anything else is an InputError."""
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    raise InputError(f"{where}{key} is not a number: {json.dumps(value)[:40]}", path)


def _validation(folder: Path) -> dict[str, float]:
    best = None
    for record in read_metrics(folder / METRICS):
        if record.get("kind") == "eval" and record.get("best"):
            best = record
    if best is None:
        return {}
    names = {
        "valid_ppl": "valid PPL",
        "uf1": "valid UF1",
        "uas": "valid UAS",
        "uuas": "valid UUAS",
        "f1": "valid F1",  # the chart parser: labelled F1 by EVALB
    }
    path, where = str(folder / METRICS), f"the best validation (step {best.get('step')}): "
    values = {name: _number(best.get(key), key, path, where) for key, name in names.items()}
    return {name: value for name, value in values.items() if value is not None}


def aggregate(runs: list[RunResults]) -> pd.DataFrame:
    """A pandas DataFrame: one row per setting, ``mean`` and ``std`` of every number, and the
    number of runs (seeds)."""
    import pandas as pd

    groups: dict[str, list[RunResults]] = {}
    for run in runs:
        groups.setdefault(run.setting, []).append(run)
    rows = []
    labels = setting_labels([members[0] for members in groups.values()])
    for members, label in zip(groups.values(), labels):
        frame = pd.DataFrame([m.values for m in members])
        gold = sorted(
            {
                f"{scheme} (UAS/UUAS {key.partition(' ')[2] or key})"
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
            values = frame[column].dropna()
            row[(column, "mean")] = values.mean() if len(values) else math.nan
            row[(column, "std")] = values.std(ddof=1) if len(values) > 1 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


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
        parts = [f"{key}={flat[k].get(key, '-')}" for key in keys[:shown]]
        if len(keys) > shown:
            parts.append(f"+{len(keys) - shown} more")
        out.append(f"{run.arch} ({', '.join(parts)})")
    return out


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
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---", "---"] + ["---:"] * (len(header) - 2)) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n" + "".join("\n" + n + "\n" for n in _notes(table))


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
