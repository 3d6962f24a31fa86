"""The ``induce`` command: a thin Typer layer over the library.

Subcommand modules import their workflows lazily, so ``induce evaluate`` never loads torch.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperGroup

import induce
from induce.cli import convert, evaluate, parse, preprocess, report, sample, train
from induce.cli.helptext import polish

# Typer 0.29 carries its own copy of click: take the exception classes from where Typer's
# own BadParameter lives, whichever copy that is.
_CLICK = sys.modules[typer.BadParameter.__module__]
_NO_ARGS = getattr(_CLICK, "NoArgsIsHelpError", None)


class _OneLineErrors(TyperGroup):
    """Usage errors (an unknown option, a bad choice, a missing argument) as the one line
    ``error: ...`` and exit code 2 that every other error prints, instead of Typer's box."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        passed = (args, prog_name, complete_var, False, windows_expand_args)
        if not standalone_mode:
            return super().main(*passed, **extra)
        try:
            code = super().main(*passed, **extra)
        except _CLICK.ClickException as err:
            if _NO_ARGS is not None and isinstance(err, _NO_ARGS):
                err.show()  # the help text, as asked for by giving nothing
                sys.exit(err.exit_code)
            typer.echo(f"error: {' '.join(err.format_message().split())}", err=True)
            sys.exit(2)
        except typer.Abort:
            typer.echo("interrupted", err=True)
            sys.exit(130)
        except OSError as err:  # the help or the version into a full disk: no command ran
            typer.echo(f"error: -: cannot write: {err.strerror}", err=True)
            sys.exit(2)
        except SystemExit as done:
            if done.code == 1 and _closed_pipe(done):
                sys.exit(0)  # as a command's output into a closed pipe ends
            raise
        sys.exit(code if isinstance(code, int) else 0)


def _closed_pipe(done: SystemExit) -> bool:
    """Whether the help or the version ended with 1 because its reader went away (`induce
    --help | head`): Rich's console (the help) exits from ``on_broken_pipe``, Typer (plain
    text) after wrapping the streams to keep them quiet."""
    import traceback

    frames = traceback.extract_tb(done.__traceback__)
    pacified = type(sys.stdout).__name__ == "PacifyFlushWrapper"
    return pacified or (bool(frames) and frames[-1].name == "on_broken_pipe")


app = typer.Typer(
    cls=_OneLineErrors,
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
app.command("sample")(sample.sample)
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
