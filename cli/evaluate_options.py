"""The options ``induce evaluate``'s subcommands share: the report as JSON, quiet, the
format on stdout; a trained model's checkpoint, device, dataset and split."""

from __future__ import annotations

import typer

JSON = typer.Option(
    None,
    "--json",
    help="Also write every number and setting to this JSON file (written atomically; "
    "-: on stdout, in place of the table).",
)
QUIET = typer.Option(False, "--quiet", "-q", help="Print nothing on stdout.")
# an evaluation of a trained model: its checkpoint, where it runs, and the data it reads
WEIGHTS = typer.Option("best", "--weights", help="best | last checkpoint.")
DEVICE = typer.Option("auto", "--device", help="auto | cpu | cuda | cuda:N.")
DATA = typer.Option(..., "--data", "-d", help="Dataset directory (same vocabulary).")
SPLIT = typer.Option("test", "--split", help="train | valid | test.")


def format_option(choices: str, default: str = "table"):
    return typer.Option(default, "--format", "-f", help=f"What to print on stdout: {choices}.")


def check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    if fmt not in allowed:
        raise typer.BadParameter(f"--format must be one of {', '.join(allowed)}")
