"""A run's results for ``induce report``: the evaluation reports that ``induce evaluate ...
--json`` wrote into ``RUN/eval/`` (the reproduction scripts put them there) and, when it has
none of a kind, its best validation record in ``metrics.jsonl``.  Each file is recognised by
its contents:

- unsupervised bracketing (``sentence_f1``): UF1 (sentence level), corpus UF1 and the per-label
  recall of the most frequent labels;
- dependencies (``uas``): UAS and UUAS, named after the file (``deps-stanford.json`` gives
  ``UAS stanford``);
- labelled brackets (EVALB): F1 named by its parameters and the file (``evalb-test.json``
  gives ``F1 collins test``);
- masked-LM perplexity (``perplexity``): PPL.

A run holds one report of a kind (two would give one column, one of them lost); each column
keeps the report it came from and how that report scored, so that a table row averages only
numbers scored alike (:func:`induce.reporting.table.aggregate`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from induce.data.config import parse_yaml
from induce.data.errors import InputError
from induce.data.reading import read_text
from induce.runs.config import with_defaults
from induce.runs.directory import DATASET, LOCK, METRICS, read_metrics, read_settings
from induce.runs.identity import dataset_identity

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
    # column -> the report file it came from and how that report scored (its settings but
    # the paths of its inputs): one row averages only numbers scored the same way
    sources: dict[str, tuple[Path, str]] = field(default_factory=dict)


def read_run(path: str | Path) -> RunResults:
    """The headline numbers of one run directory."""
    folder = Path(path)
    config = with_defaults(read_settings(folder))
    setting, seed = _setting(folder, config)
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
        for column in found:
            if column in out.sources:
                raise InputError(
                    f"{column} is also in {out.sources[column][0].name}: a run's eval/ holds one "
                    "report of a kind (name several deps-NAME.json or evalb-NAME.json: NAME "
                    "then names their columns)",
                    str(file),
                )
            out.sources[column] = (file, _scoring(settings))
        out.values.update(found)
        scheme = (settings or {}).get("gold_scheme")
        if scheme is not None and not (isinstance(scheme, str) and scheme.isprintable()):
            # a line end in it would end the tables' note (live LaTeX after a % comment)
            raise InputError("settings.gold_scheme is not the name of a scheme", str(file))
        if scheme:
            out.gold.update({key: scheme for key in found})
    if not any(k in out.values for k in ("UF1", "PPL")):
        out.values.update(_validation(folder))
    return out


def warn_unfinished(run: RunResults) -> None:
    """A run still training gives its best so far, and a run with no numbers an empty row:
    each said, not averaged or listed in silence."""
    import warnings

    from induce.data.errors import InduceWarning
    from induce.data.locks import live_holder

    holder = live_holder(run.path / LOCK)
    if holder is not None:
        warnings.warn(
            f"{run.path}: still training ({holder}): its numbers are its best so far",
            InduceWarning,
            stacklevel=4,
        )
    if not run.values:
        warnings.warn(
            f"{run.path}: no numbers (no report in eval/, no validation in {METRICS})",
            InduceWarning,
            stacklevel=4,
        )


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


def _setting(folder: Path, config: dict[str, Any]) -> tuple[str, int | None]:
    """The run's setting as text (what its seeds share: the settings but the seed and the
    thread count, and the dataset) and its seed."""
    train = config.get("train")
    seed = train.pop("seed", None) if isinstance(train, dict) else None
    if isinstance(train, dict):
        train.pop("threads", None)  # how fast, not what: seeds on other machines group together
    data = _dataset(folder)
    if data:  # seeds trained on other data are another setting
        config = {**config, "dataset": data}
    return json.dumps(_plain(config), sort_keys=True), seed


def _dataset(folder: Path) -> str:
    """What tells the run's dataset from another (``dataset.yaml``): the dataset folder's
    name and a digest of what the data is (``ptb-pcfg 3f2a9c1e``), never of where it lies
    (the same treebank at another path, on another machine, is the same data).  Empty for
    a run without the record (an earlier version's, or an imported checkpoint)."""
    import hashlib

    file = folder / DATASET
    if not file.is_file():
        return ""
    record = parse_yaml(read_text(file), str(file))
    if not isinstance(record, dict):
        raise InputError("not a mapping of the dataset's record", str(file))
    text = json.dumps(_plain(dataset_identity(record)), sort_keys=True)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    name = Path(str(record.get("path") or "")).name
    return f"{name} {digest}" if name else digest


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


# the settings of a report that name its inputs, not how it scored them
_PATHS = ("gold", "prediction", "model", "data")


def _scoring(settings: dict[str, Any] | None) -> str:
    kept = {k: v for k, v in (settings or {}).items() if k not in _PATHS}
    return json.dumps(_plain(kept), sort_keys=True)


def _named(file: Path, prefix: str) -> str:
    """The column suffix of a report named ``PREFIX-NAME.json`` (`` NAME``), else none."""
    stem = file.stem
    name = stem[len(prefix) :].strip("-_ ") if stem.startswith(prefix) else stem
    return f" {name}" if name else ""


def _headline(file: Path, data: dict[str, Any]) -> dict[str, float]:
    """The numbers of one ``induce evaluate --json`` report, recognised by its keys."""
    kind = next((k for k in _KINDS if k in data), None)
    if kind is None:
        return _brackets(file, data)
    suffix = _named(file, "deps") if kind == "uas" else ""
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
    (``F1 collins``: labelled, the chart parser's number) and, for ``evalb-NAME.json``, NAME
    (``F1 collins test``); nothing for other reports."""
    settings = data.get("settings")
    block = data.get("all")
    if not (isinstance(settings, dict) and settings.get("metric") == "brackets"):
        return {}
    if not isinstance(block, dict):
        raise InputError("a brackets report without its 'all' block", str(file))
    evalb = settings.get("evalb")
    name = evalb.get("name") if isinstance(evalb, dict) else None
    value = _number(block.get("f1"), "all.f1", str(file))
    column = f"F1 {name or 'evalb'}{_named(file, 'evalb')}"
    return {} if value is None else {column: value}


def _number(value: Any, key: str, path: str, where: str = "") -> float | None:
    """``value`` as a number (``None`` stays: no value); anything else is an InputError."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > sys.float_info.max:
        raise InputError(f"{where}{key} is beyond a float's range: {str(value)[:40]}...", path)
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
