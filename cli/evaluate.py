"""``induce evaluate``: score parses against gold standards (no torch is imported here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from induce.cli.common import (
    emit_report,
    handle_errors,
    one_of,
    warn,
    with_progress,
)
from induce.cli.evaluate_models import likelihood, mlm, pcc
from induce.cli.evaluate_options import JSON, QUIET, check_format, format_option

app = typer.Typer(
    help="Score trees or dependencies against a gold standard, the way the reference "
    "scorers do (EVALB; the StructFormer/UDGN and compound-PCFG conventions).",
    no_args_is_help=True,
)

GOLD = typer.Argument(..., help="Gold file (or a directory of them); - for stdin.")
PRED = typer.Argument(None, help="Prediction file; omit it when using --baseline.")
WIDE = typer.Option(
    False, "--wide", help="Tables in full: long paths are not cut to the terminal's width."
)
TAGSET = typer.Option(
    None,
    "--tagset",
    help="Which gold tags mark words: ptb_word_tags (default), bllip_word_tags, "
    "mikolov_word_tags (his text's: $ and # too), ud_word_tags (UPOS), or all.",
)
HTML = typer.Option(
    None,
    "--html",
    metavar="FILE",
    help="Also write one self-contained HTML page: every sentence drawn, gold above the "
    "prediction with its mistakes marked, an index with per-sentence scores.",
)
TREE_BASELINE = typer.Option(
    None,
    "--baseline",
    help="Score a baseline instead of PRED: right, left, balanced, random[:SEED].",
)


@app.callback()
def _batch() -> None:
    """Scoring builds many small acyclic objects (trees) and exits: the cyclic garbage
    collector would only slow it down (by about a third on WSJ-sized files)."""
    import gc

    gc.disable()


@app.command("brackets")
@handle_errors
@with_progress
def brackets(
    gold: str = GOLD,
    pred: str | None = PRED,
    param: str = typer.Option(
        "collins", "--param", "-p", help="EVALB parameters: collins, unlabeled, nk or a .prm file."
    ),
    baseline: str | None = TREE_BASELINE,
    json_path: str | None = JSON,
    html: str | None = HTML,
    fmt: str = format_option("table, evalb (EVALB's own report), json"),
    quiet: bool = QUIET,
    wide: bool = WIDE,
) -> None:
    """EVALB bracket scores: the numbers the C EVALB prints, for any sentence length."""
    one_of(pred, baseline)
    check_format(fmt, ("table", "evalb", "json"))
    from induce.evaluate.brackets import evaluate_brackets

    report = evaluate_brackets(gold, pred, param=param, baseline=baseline, views=bool(html))
    if html:
        report.write_html(html)
    for error in report.result.errors[:5]:
        warn(f"sentence {error.index} not scored: {error.message}")
    if len(report.result.errors) > 5:
        warn(f"... and {len(report.result.errors) - 5} more sentences not scored")
    data = report.to_dict()

    def text() -> str:
        from induce.metrics.evalb_text import format_evalb

        return format_evalb(report.result)

    emit_report(data, json_path, fmt, quiet, lambda: _render("brackets", wide, data), text)


@app.command("unsupervised")
@handle_errors
@with_progress
def unsupervised(
    gold: str = GOLD,
    pred: str | None = PRED,
    convention: str = typer.Option(
        "structformer",
        "--convention",
        "-c",
        help="structformer (also UDGN, ON-LSTM, PRPN), cpcfg (Kim et al.'s eval.py) or "
        "tnpcfg (the TN-PCFG repository's metric.py).",
    ),
    baseline: str | None = TREE_BASELINE,
    label: list[str] | None = typer.Option(
        None,
        "--label",
        "-l",
        help="Label for per-label recall (repeatable; 'all' for every "
        "gold label). Default: SBAR NP VP PP ADJP ADVP.",
    ),
    max_words: int | None = typer.Option(
        None,
        "--max-words",
        help="Skip sentences with more words (0 = no limit). Default: "
        "the convention's (cpcfg: 150).",
    ),
    tagset: str | None = TAGSET,
    unlabelled: bool = typer.Option(
        False,
        "--unlabelled",
        help="PRED is a bare bracketing such as ((the cat) sat); a one-word sentence may be "
        "the word alone.",
    ),
    wrappers: str | None = typer.Option(
        None,
        "--wrappers",
        help="Root labels dropped as the treebank's wrapper, comma-separated (an unlabelled "
        "outer bracket always is). Default: TOP,ROOT,S1,VROOT; the official readers drop TOP "
        "only and score a ROOT or S1 root as a constituent: --wrappers TOP.",
    ),
    json_path: str | None = JSON,
    fmt: str = format_option("table, json"),
    quiet: bool = QUIET,
    wide: bool = WIDE,
) -> None:
    """Unlabelled span F1 (sentence and corpus level) and per-label recall of induced trees."""
    from induce.evaluate.unsupervised import evaluate_unsupervised

    _score(
        "unsupervised",
        lambda: evaluate_unsupervised(
            gold,
            pred,
            convention=convention,
            baseline=baseline,
            labels=label,
            max_words=max_words,
            tagset=tagset,
            unlabelled=unlabelled,
            wrappers=None if wrappers is None else _labels(wrappers),
        ),
        (pred, baseline, json_path, fmt, quiet),
        lambda data: _render("unsupervised", wide, data),
    )


@app.command("deps")
@handle_errors
@with_progress
def deps(
    gold: str = GOLD,
    pred: str | None = PRED,
    convention: str = typer.Option(
        "position",
        "--convention",
        "-c",
        help="position (UDGN's DDA/UDA) or structformer (its word-string matching).",
    ),
    baseline: str | None = typer.Option(
        None, "--baseline", help="Score a baseline instead of PRED: next, prev, random[:SEED]."
    ),
    gold_format: str | None = typer.Option(
        None,
        "--gold-format",
        help="The gold file's format: conllu, conllx or malt [default: guessed from its "
        "suffix or columns].",
    ),
    pred_format: str | None = typer.Option(
        None,
        "--pred-format",
        help="The prediction's format: conllu, conllx or malt [default: guessed from its "
        "suffix or columns].",
    ),
    tagset: str | None = TAGSET,
    gold_scheme: str | None = typer.Option(
        None,
        "--gold-scheme",
        help="The gold's conversion (stanford-basic, conll2007, penn2malt...), recorded in the "
        "report [default: the scheme a dataset records for its SPLIT.deps.conllu].",
    ),
    json_path: str | None = JSON,
    html: str | None = HTML,
    fmt: str = format_option("table, json"),
    quiet: bool = QUIET,
    wide: bool = WIDE,
    every: bool = typer.Option(
        False, "--all", help="Every relation in the per-relation table, not the 12 most frequent."
    ),
) -> None:
    """UAS/UUAS (DDA/UDA), root accuracy and per-relation recall of dependency trees."""
    from induce.evaluate.deps import evaluate_deps

    def score() -> Any:
        report = evaluate_deps(
            gold,
            pred,
            convention=convention,
            baseline=baseline,
            gold_format=gold_format,
            pred_format=pred_format,
            tagset=tagset,
            gold_scheme=gold_scheme,
            views=bool(html),
        )
        if html:
            report.write_html(html)
        return report

    _score(
        "deps",
        score,
        (pred, baseline, json_path, fmt, quiet),
        lambda data: _render("deps", wide, data, None if every else 12),
    )


@app.command("baselines")
@handle_errors
@with_progress
def baselines(
    gold: str | None = typer.Argument(
        None, help="Gold trees; default: the small treebank shipped with induce."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the random baseline."),
    json_path: str | None = JSON,
    fmt: str = format_option("table, json"),
    quiet: bool = QUIET,
    wide: bool = WIDE,
) -> None:
    """How far trivial trees get: right/left-branching, balanced and random baselines under
    EVALB (unlabelled) and both unsupervised conventions."""
    check_format(fmt, ("table", "json"))
    from induce.evaluate.baselines import builtin_treebank, score_baselines

    if gold is None:
        gold = builtin_treebank()
        warn(f"no gold trees given: using the built-in sample treebank {gold}")
    rows = score_baselines(gold, seed)
    data = {"settings": {"metric": "baselines", "gold": gold, "seed": seed}, "rows": rows}
    emit_report(
        data,
        json_path,
        fmt,
        quiet,
        lambda: _render("baselines", wide, rows, "Baselines", gold),
    )


# the evaluations of a trained model, in their own module (this one scores files), after
# the files' scorers: the help lists the commands in this order
app.command("mlm")(mlm)
app.command("likelihood")(likelihood)
app.command("pcc")(pcc)


def _score(
    kind: str,
    evaluate: Callable[[], Any],
    output: tuple[str | None, str | None, str | None, str, bool],
    table: Callable[[dict], None],
) -> None:
    """Check the prediction-or-baseline choice and the format, then score and report
    (``kind`` names the evaluation; ``table(data)`` prints the table).
    ``output``: ``(pred, baseline, json_path, fmt, quiet)``."""
    pred, baseline, json_path, fmt, quiet = output
    one_of(pred, baseline)
    check_format(fmt, ("table", "json"))
    data = evaluate().to_dict()
    emit_report(data, json_path, fmt, quiet, lambda: table(data))


def _render(kind: str, wide: bool, *args: Any) -> None:
    """Print the ``kind`` table; ``wide``: paths in full."""
    from induce.cli import render

    render.WIDE = wide
    getattr(render, kind)(*args)


def _labels(text: str) -> list[str]:
    """``--wrappers``' comma-separated labels; an empty list names none (the unlabelled outer
    bracket still goes)."""
    from induce.data.errors import ConfigError

    labels = [label.strip() for label in text.split(",") if label.strip()]
    if any(any(c.isspace() or c in "()" for c in label) for label in labels):
        raise ConfigError(f"labels hold no spaces or brackets, got {text!r}", setting="wrappers")
    return labels
