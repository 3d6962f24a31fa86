"""The options every ``induce evaluate`` subcommand shares: its report as JSON, quiet,
and the format on stdout."""

from __future__ import annotations

import typer

JSON = typer.Option(
    None,
    "--json",
    help="Also write every number and setting to this JSON file (written atomically; "
    "-: on stdout, in place of the table).",
)
QUIET = typer.Option(False, "--quiet", "-q", help="Print nothing on stdout.")


def format_option(choices: str, default: str = "table"):
    return typer.Option(default, "--format", "-f", help=f"What to print on stdout: {choices}.")


def check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    if fmt not in allowed:
        raise typer.BadParameter(f"--format must be one of {', '.join(allowed)}")
