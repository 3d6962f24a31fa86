"""The ``induce`` command: a thin Typer layer over the library.

Subcommand modules import their workflows lazily, so ``induce evaluate`` never loads torch.
"""

from __future__ import annotations

import typer

import induce
from induce.cli import convert, evaluate, parse, preprocess, report, train
from induce.cli.helptext import polish

app = typer.Typer(
    name="induce",
    help="Unsupervised grammar induction and its evaluation.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(evaluate.app, name="evaluate")
app.add_typer(convert.app, name="convert")
app.add_typer(preprocess.app, name="preprocess")
app.command("train")(train.train)
app.command("parse")(parse.parse)
app.command("report")(report.report)
polish(app)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"induce {induce.__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        callback=_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """Unsupervised grammar induction and its evaluation."""


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
