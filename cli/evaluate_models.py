"""``induce evaluate mlm``, ``likelihood`` and ``pcc``: the evaluations of a trained model
(its perplexity, its attention against gold labels), registered on ``induce evaluate``'s app
by :mod:`induce.cli.evaluate`.  No torch is imported until a command runs."""

from __future__ import annotations

import typer

from induce.cli.common import check_weights, emit_report, handle_errors
from induce.cli.evaluate_options import (
    DATA,
    DEVICE,
    JSON,
    QUIET,
    SPLIT,
    WEIGHTS,
    check_format,
    format_option,
)


@handle_errors
def mlm(
    model: str = typer.Option(..., "--model", "-m", help="Run directory from `induce train`."),
    data: str = DATA,
    split: str = SPLIT,
    weights: str = WEIGHTS,
    seed: int | None = typer.Option(
        None, "--seed", help="Mask seed (default: the run's data.eval_seed)."
    ),
    mask_rate: float | None = typer.Option(
        None, "--mask-rate", help="Default: the run's data.mask_rate."
    ),
    runs: int | None = typer.Option(
        None,
        "--runs",
        help="Mask draws averaged, draw r from seed + r (default: the run's data.eval_runs; "
        "the UDGN protocol uses 5).",
    ),
    device: str = DEVICE,
    json_path: str | None = JSON,
    fmt: str = format_option("table, json"),
    quiet: bool = QUIET,
) -> None:
    """Masked-LM perplexity of a trained model on seeded masks (the papers' PPL column)."""
    check_format(fmt, ("table", "json"))
    check_weights(weights)
    from induce.evaluate.mlm import evaluate_mlm

    report = evaluate_mlm(
        model, data, split, weights, device, seed, mask_rate, batch_tokens=None, runs=runs
    )

    def table() -> None:
        s = report["settings"]
        typer.echo(
            f"{s['arch']} {s['model']} ({s['weights']}) on {s['data']} {s['split']}: "
            f"perplexity {report['perplexity']:.2f} (loss {report['loss']:.4f}, "
            f"{report['masked_tokens']} masked tokens of {report['sentences']} "
            f"sentences, mask rate {s['mask_rate']}, seed {s['seed']})"
        )

    emit_report(report, json_path, fmt, quiet, table)


@handle_errors
def likelihood(
    model: str = typer.Option(..., "--model", "-m", help="Run directory of a grammar."),
    data: str = DATA,
    split: str = SPLIT,
    weights: str = WEIGHTS,
    batch_sentences: int = typer.Option(16, "--batch-sentences", help="Sentences per batch."),
    device: str = DEVICE,
    json_path: str | None = JSON,
    fmt: str = format_option("table, json"),
    quiet: bool = QUIET,
) -> None:
    """A grammar's perplexity (the PCFG family): the likelihood or its ELBO bound per word, one
    end of sentence counted per sentence (the PCFG papers' PPL)."""
    check_format(fmt, ("table", "json"))
    check_weights(weights)
    from induce.evaluate.likelihood import evaluate_likelihood

    report = evaluate_likelihood(model, data, split, weights, device, batch_sentences)

    def table() -> None:
        s = report["settings"]
        typer.echo(
            f"{s['arch']} {s['model']} ({s['weights']}) on {s['data']} {s['split']}: "
            f"perplexity {report['perplexity']:.2f} (reconstruction "
            f"{report['recon_perplexity']:.2f}, KL {report['kl_per_sentence']:.3f} per "
            f"sentence; {report['sentences']} sentences, {report['tokens']} tokens with "
            f"one end of sentence each; {report['skipped_sentences']} of one word or none "
            "skipped)"
        )

    emit_report(report, json_path, fmt, quiet, table)


@handle_errors
def pcc(
    gold: str = typer.Argument(..., help="Gold dependencies (CoNLL-U, CoNLL-X or Malt-TAB)."),
    model: str = typer.Option(..., "--model", "-m", help="Run directory from `induce train`."),
    direction: str = typer.Option(
        "child-to-parent", "--direction", help="child-to-parent | parent-to-child."
    ),
    subtypes: bool = typer.Option(
        False, "--subtypes", help="Keep label subtypes (nsubj:pass); default: the universal part."
    ),
    top: int = typer.Option(10, "--top", min=1, help="Labels in the table (most frequent first)."),
    statistic: str = typer.Option(
        "official",
        "--statistic",
        help="official (each head's mean weight on each label's edges, as UDGN's "
        "test_phrase_grammar.py) | pearson (Pearson's r over the edges between read words).",
    ),
    plot: str | None = typer.Option(None, "--plot", help="Heat map PNG (needs matplotlib)."),
    weights: str = WEIGHTS,
    device: str = DEVICE,
    json_path: str | None = JSON,
    fmt: str = format_option("table, json"),
    quiet: bool = QUIET,
) -> None:
    """How every attention head tracks every dependency label over the gold edges (UDGN
    Table 3): the best head for the most frequent labels, by the official script's mean
    weight or by Pearson's r."""
    check_format(fmt, ("table", "json"))
    check_weights(weights)
    from induce.data.config import choose
    from induce.data.extras import require
    from induce.data.files import check_writable
    from induce.evaluate.pcc import DIRECTIONS, STATISTICS, head_label_correlation, plot_heatmap

    if plot:
        require("matplotlib", "plot")  # before the model runs, not after
    outputs = [json_path if json_path != "-" else None, plot]
    check_writable(outputs)  # a folder or a missing one: refused before the model runs

    chosen = choose(direction, DIRECTIONS, "direction")
    how = choose(statistic, STATISTICS, "statistic")
    report = head_label_correlation(
        model, gold, chosen, device, weights, subtypes, top=top, statistic=how
    )
    check_writable(outputs)  # the run's files are inputs now: none is replaced after printing

    def table() -> None:
        s = report["settings"]
        typer.echo(
            f"{s['arch']} {s['model']} on {s['gold']} ({s['direction']}, {report['edges']} edges)"
        )
        value = "r" if s["statistic"] == "pearson" else "mean"
        typer.echo(f"{'label':<12} {'edges':>7} {'best head':>10} {value:>8}")
        for row in report["best"]:
            typer.echo(f"{row['label']:<12} {row['edges']:>7} {row['head']:>10} {row[value]:>8.3f}")

    emit_report(report, json_path, fmt, quiet, table)
    if plot:  # after the JSON: a plot that cannot be written loses no numbers
        plot_heatmap(report, plot)
