"""``induce report``: runs (seeds) into the papers' mean (std) table."""

from __future__ import annotations

import sys

import typer

from induce.cli.common import handle_errors


@handle_errors
def report(
    runs: list[str] = typer.Argument(..., metavar="RUN...", help="Run directories."),
    markdown: str | None = typer.Option(
        None, "--markdown", help="Also write the markdown table here (atomically)."
    ),
    csv: str | None = typer.Option(
        None, "--csv", help="Write means and standard deviations as CSV here (atomically)."
    ),
) -> None:
    """Mean (std) over seeds of each setting's results (RUN/eval/*.json from `induce evaluate
    --json`, else the best validation record), as markdown on stdout."""
    from induce.data.files import atomic_write
    from induce.report import aggregate, read_run, to_csv, to_markdown

    table = aggregate([read_run(run) for run in runs])
    text = to_markdown(table)
    sys.stdout.write(text)
    if markdown:
        atomic_write(markdown, text)
    if csv:
        atomic_write(csv, to_csv(table))
