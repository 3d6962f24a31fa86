"""Rich tables for the terminal (imported only when a table is printed)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table


def _pct(value: float | None, missing: str = "-nan") -> str:
    """2 decimals; ``-nan`` (EVALB's word for 0/0) or ``missing`` where there is no value."""
    return missing if value is None else f"{value:.2f}"


def _report_table(title: str, settings: dict) -> Table:
    """A table titled ``title`` whose caption names the files scored."""
    return Table(
        title=title, title_justify="left", caption=_files(settings), caption_justify="left"
    )


def _files(settings: dict) -> str:
    return f"prediction: {settings['prediction']}\ngold: {settings['gold']}"


def _console() -> Console:
    # Paths and labels come from users: never read them as Rich markup ("exp[lr=1e-3]").
    return Console(highlight=False, markup=False)


def brackets(report: dict) -> None:
    settings = report["settings"]
    params = settings["evalb"]
    cut = f"len<={params['cutoff_len']}"
    mode = "labelled" if params["labeled"] else "unlabelled"
    table = _report_table(f"EVALB ({params['name']}, {mode})", settings)
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
    _console().print(table)


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
    console.print(table)
    if report["per_label_recall"]:
        labels = Table(title="Per-label recall", title_justify="left")
        labels.add_column("label")
        labels.add_column("recall", justify="right")
        labels.add_column("gold spans", justify="right")
        for label, value in report["per_label_recall"].items():
            counts = report["per_label_counts"][label]
            labels.add_row(label, _pct(value, "n/a"), f"{counts['correct']}/{counts['total']}")
        console.print(labels)


def deps(report: dict, max_relations: int = 12) -> None:
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
    console.print(table)
    relations = report["per_relation_recall"]
    if len(relations) > 1:
        rel = Table(
            title=f"Per-relation recall (first {max_relations} by name)", title_justify="left"
        )
        rel.add_column("relation")
        rel.add_column("recall", justify="right")
        for label, value in list(relations.items())[:max_relations]:
            rel.add_row(label, _pct(value, "n/a"))
        console.print(rel)


_BASELINE_COLUMNS = {
    "baseline": "baseline",
    "evalb_unlabeled_f1": "EVALB\nunlab. F1",
    "structformer_sentence_f1": "StructFormer\nsentence F1",
    "structformer_corpus_f1": "StructFormer\ncorpus F1",
    "cpcfg_sentence_f1": "C-PCFG\nsentence F1",
    "cpcfg_corpus_f1": "C-PCFG\ncorpus F1",
}


def baselines(rows: list[dict], title: str) -> None:
    table = Table(title=title, title_justify="left")
    for column in rows[0]:
        table.add_column(
            _BASELINE_COLUMNS.get(column, column),
            justify="left" if column == "baseline" else "right",
        )
    for row in rows:
        table.add_row(*[v if isinstance(v, str) else _pct(v) for v in row.values()])
    _console().print(table)
