"""``induce report``: runs (seeds) into the papers' mean (std) table, and their curves."""

from __future__ import annotations

import sys

import typer

from induce.cli.common import handle_errors


@handle_errors
def report(
    runs: list[str] = typer.Argument(..., metavar="RUN", help="Run directories."),
    markdown: str | None = typer.Option(
        None, "--markdown", help="Also write the markdown table here (atomically)."
    ),
    csv: str | None = typer.Option(
        None, "--csv", help="Write means and standard deviations as CSV here (atomically)."
    ),
    latex: str | None = typer.Option(
        None, "--latex", help="Write the table as a LaTeX tabular (booktabs) here (atomically)."
    ),
    plot: str | None = typer.Option(
        None,
        "--plot",
        help="Draw the training curves here, FILE.png, .svg or .pdf: loss, validation "
        "perplexity and UF1/UAS/UUAS against updates, the seeds of a setting as mean and a "
        "band of one standard deviation (needs matplotlib: pip install 'induce[plot]').",
    ),
) -> None:
    """Mean (std) over seeds of each setting's results (RUN/eval/*.json from `induce evaluate
    --json`, else the best validation record), as markdown on stdout (or, named -, the one
    of --markdown, --csv and --latex).  Name each run once:
    a run named twice, a copy, or one setting's seed run twice would count as two seeds,
    and is refused."""
    from induce.data.errors import ConfigError
    from induce.data.files import atomic_write, check_writable
    from induce.reporting import aggregate, read_runs, to_csv, to_latex, to_markdown

    if plot:
        from induce.data.extras import require
        from induce.reporting.curves import check_path

        check_path(plot)
        require("matplotlib", "plot")  # before any run is read
    # "-": that table on stdout, in place of the markdown (two tables there would be neither)
    piped = [name for name, path in (("markdown", markdown), ("csv", csv), ("latex", latex))
             if path == "-"]  # fmt: skip
    if len(piped) > 1:
        raise ConfigError(f"and --{piped[1]} both name stdout (-): give one", piped[0])
    table = aggregate(read_runs(runs))
    # the runs' files are inputs now: an output over one is refused before the table prints
    check_writable([markdown, csv, latex, plot])
    picture = None
    if plot:  # drawn before anything is written: a run's curves may still be refused
        from induce.reporting.curves import curves, draw_curves

        picture = draw_curves(curves(list(runs)), plot)
    text = to_markdown(table)
    if not piped:
        sys.stdout.write(text)
    if markdown:
        atomic_write(markdown, text)
    if csv:
        atomic_write(csv, to_csv(table))
    if latex:
        atomic_write(latex, to_latex(table))
    if plot is not None and picture is not None:
        from induce.reporting.curves import write_picture

        write_picture(picture, plot)
