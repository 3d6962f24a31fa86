"""Rich tables for the terminal (imported only when a table is printed)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from induce.cli.common import stdout_console


def _pct(value: float | None, missing: str = "-nan") -> str:
    """2 decimals; ``-nan`` (EVALB's word for 0/0) or ``missing`` where there is no value."""
    return missing if value is None else f"{value:.2f}"


WIDE = False  # --wide: paths in full, however long; else cut to the terminal's width


def _report_table(title: str, settings: dict) -> Table:
    """A table titled ``title``; :func:`_print_report` names the files scored under it."""
    return Table(title=title, title_justify="left", min_width=len(title))


def _print_report(console: Console, table: Table, settings: dict) -> None:
    """The table, then the files scored, one line each (not wrapped at the table's width:
    cut at their start to the terminal's width, or whole with ``--wide``)."""
    console.print(table)
    for line in _files(settings).splitlines():
        console.print(line, soft_wrap=True)


def _files(settings: dict) -> str:
    width = _console().width
    return "\n".join(
        f"{name}: {shorten(str(settings[name]), width - len(name) - 2)}"
        for name in ("prediction", "gold")
    )


def shorten(path: str, room: int) -> str:
    """``path`` cut at its start to ``room`` characters (``…`` marks the cut), so that the
    file name stays readable; whole with ``--wide``."""
    if WIDE or len(path) <= room or room < 8:
        return path
    return "…" + path[len(path) - room + 1 :]


def _console() -> Console:
    # Paths and labels come from users: never read them as Rich markup ("exp[lr=1e-3]").
    # --wide: no wrapping at the terminal's width (a pipe gets the full lines)
    return stdout_console(soft_wrap=WIDE, width=100_000 if WIDE else None)


def brackets(report: dict) -> None:
    settings = report["settings"]
    params = settings["evalb"]
    cut = f"len<={params['cutoff_len']}"
    mode = "labelled" if params["labeled"] else "unlabelled"
    name = params["name"]
    # a preset named for its mode ("unlabeled") says it once
    said = name.lower().replace("unlabeled", "unlabelled") in (mode, mode.replace("ll", "l"))
    table = _report_table(f"EVALB ({name})" if said else f"EVALB ({name}, {mode})", settings)
    table.add_column("")
    table.add_column("all", justify="right")
    table.add_column(cut, justify="right")
    rows = [
        ("Recall", "recall"),
        ("Precision", "precision"),
        ("F1", "f1"),
        ("Complete match", "complete_match"),
        ("Average crossing", "avg_crossing"),
        ("No crossing", "no_crossing"),
        ("2 or less crossing", "two_or_less_crossing"),
        ("Tagging accuracy", "tagging_accuracy"),
    ]
    for name, key in rows:
        table.add_row(name, _pct(report["all"][key]), _pct(report[cut][key]))
    for name, key in (
        ("Sentences", "sentences"),
        ("  error", "error_sentences"),
        ("  skipped", "skip_sentences"),
        ("Brackets matched", "matched"),
        ("  gold", "gold_brackets"),
        ("  test", "test_brackets"),
    ):
        table.add_row(name, str(report["all"][key]), str(report[cut][key]))
    _print_report(_console(), table, settings)


def unsupervised(report: dict) -> None:
    settings = report["settings"]
    table = _report_table(
        f"Unlabelled span F1 ({settings['convention']['name']} convention)", settings
    )
    table.add_column("")
    table.add_column("sentence-level", justify="right")
    table.add_column("corpus-level", justify="right")
    for name in ("precision", "recall", "f1"):
        table.add_row(
            name.capitalize() if name != "f1" else "F1",
            _pct(report[f"sentence_{name}"]),
            _pct(report[f"corpus_{name}"]),
        )
    skipped = sum(report["skipped_sentences"].values())
    table.add_row("Sentences", str(report["sentences"]), f"{skipped} skipped" if skipped else "")
    console = _console()
    _print_report(console, table, settings)
    if report["per_label_recall"]:
        labels = Table(title="Per-label recall", title_justify="left")
        labels.add_column("label")
        labels.add_column("recall", justify="right")
        labels.add_column("gold spans", justify="right")
        for label, value in report["per_label_recall"].items():
            counts = report["per_label_counts"][label]
            labels.add_row(label, _pct(value, "n/a"), f"{counts['correct']}/{counts['total']}")
        console.print(labels)


def deps(report: dict, max_relations: int | None = 12) -> None:
    """The scores, then recall per relation: the ``max_relations`` most frequent (all with
    ``None``)."""
    settings = report["settings"]
    table = _report_table(
        f"Dependency accuracy ({settings['convention']['name']} convention)", settings
    )
    table.add_column("")
    table.add_column("score", justify="right")
    table.add_row("UAS (DDA)", _pct(report["uas"], "n/a"))
    table.add_row("UUAS (UDA)", _pct(report["uuas"], "n/a"))
    table.add_row("Root accuracy", _pct(report["root_accuracy"], "n/a"))
    table.add_row("Words", str(report["tokens"]))
    table.add_row("Sentences", str(report["sentences"]))
    console = _console()
    _print_report(console, table, settings)
    relations = report["per_relation_recall"]
    counts = report.get("per_relation_counts", {})
    if len(relations) > 1:
        order = sorted(relations, key=lambda x: (-counts.get(x, {}).get("total", 0), x))
        shown = order if max_relations is None else order[:max_relations]
        title = (
            "Per-relation recall, most frequent first"
            if len(shown) == len(order)
            else f"Per-relation recall: the {len(shown)} most frequent of {len(order)} "
            "(--all for every one)"
        )
        rel = Table(title=title, title_justify="left", min_width=len(title))
        rel.add_column("relation")
        rel.add_column("recall", justify="right")
        rel.add_column("words", justify="right")
        for label in shown:
            total = counts.get(label, {}).get("total")
            rel.add_row(label, _pct(relations[label], "n/a"), "" if total is None else str(total))
        console.print(rel)


_BASELINE_COLUMNS = {
    "baseline": "baseline",
    "evalb_unlabeled_f1": "EVALB\nunlab. F1",
    "structformer_sentence_f1": "StructFormer\nsentence F1",
    "structformer_corpus_f1": "StructFormer\ncorpus F1",
    "cpcfg_sentence_f1": "C-PCFG\nsentence F1",
    "cpcfg_corpus_f1": "C-PCFG\ncorpus F1",
}


def baselines(rows: list[dict], title: str, gold: str = "") -> None:
    """The baselines table; ``gold`` (the file scored) is named under it like the others'."""
    table = Table(title=title, title_justify="left", min_width=len(title))
    for column in rows[0]:
        table.add_column(
            _BASELINE_COLUMNS.get(column, column),
            justify="left" if column == "baseline" else "right",
        )
    for row in rows:
        table.add_row(*[v if isinstance(v, str) else _pct(v) for v in row.values()])
    console = _console()
    console.print(table)
    if gold:
        console.print(f"gold: {shorten(gold, console.width - 6)}", soft_wrap=True)
