"""What every subcommand shares: error handling, output of reports."""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any, TextIO, TypeVar

import typer

from induce.data.errors import ConfigError, InduceError, InduceWarning, InputError

if TYPE_CHECKING:
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])


# Library arguments whose flag is not simply ``--`` + the name with dashes.
_FLAGS = {
    "overrides": "--set",
    "run": "--model",
    "preset": "--config",
    "input_kind": "--input",
    "text_format": "--format",
    "dictionary": "--dict",
}


def flag(setting: str) -> str:
    """The command-line flag that sets the library argument ``setting``; a run setting
    (``train.log``: set with ``--set``, dotted) is named as it is."""
    if "." in setting:
        return setting
    return _FLAGS.get(setting, "--" + setting.replace("_", "-"))


def error_text(err: InduceError) -> str:
    """The one-line message, with a library argument named by its flag."""
    if isinstance(err, ConfigError) and err.setting:
        return f"{flag(err.setting)} {err.reason}"
    return str(err)


def fail(message: str, code: int = 2) -> None:
    """Print ``error: message`` on stderr and stop with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def handle_errors(command: F) -> F:
    """Turn :class:`InduceError` into a one-line message and exit code 2; Ctrl-C into 130.

    Anything else is a bug and keeps its traceback.
    """

    outputs = output_parameters(command)

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from induce.data.files import forget_inputs

        forget_inputs()  # each command protects its own inputs from its outputs
        _show_library_warnings()
        stdout = sys.stdout
        sys.stdout = _Stdout(stdout)
        try:
            with _terminate_as_interrupt():
                _guard_outputs(kwargs, outputs)
                result = command(*args, **kwargs)
                sys.stdout.flush()  # what is still buffered fails here, not as Python exits
            return result
        except InduceError as err:
            if isinstance(err, _StdoutError):
                _discard(stdout)
            fail(error_text(err))
        except Terminated:
            typer.echo("terminated", err=True)
            raise typer.Exit(128 + 15) from None
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(130) from None
        except BrokenPipeError:
            # `induce ... | head`: the reader went away; that is not an error of ours.
            sys.stderr.close()
            raise typer.Exit(0) from None
        finally:
            sys.stdout = stdout

    return wrapper  # type: ignore[return-value]


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a scheduler's time limit) while a command runs.  Raised as an
    interrupt, so that whatever undoes a Ctrl-C undoes it too: half-written outputs go, locks
    are released; Python's default for SIGTERM is to end at once, leaving them behind."""


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` in the block, when the process takes it as Python's
    default (ends at once) and this is the main thread; the handler before it is restored."""
    import signal

    def terminated(signum: int, frame: Any) -> None:
        raise Terminated

    installed = False
    # a handler someone else set (an embedding program) is theirs to keep
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        with contextlib.suppress(ValueError):  # not the main thread: signals are its own
            signal.signal(signal.SIGTERM, terminated)
            installed = True
    try:
        yield
    finally:
        if installed:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


class _StdoutError(InputError):
    """Standard output cannot be written (a full disk, a device error)."""


class _Stdout:
    """Standard output while a command runs: a write that fails is the one-line error that a
    failed ``--output`` gives (``-: cannot write: No space left on device``), not an
    ``OSError`` traceback; a closed pipe stays a ``BrokenPipeError`` (the command ends
    quietly).  Everything else is the stream's own."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as err:
            raise _StdoutError(f"cannot write: {err.strerror}", "-") from None
        except UnicodeEncodeError as err:  # PYTHONIOENCODING=ascii, a Latin-1 terminal
            bad = err.object[err.start : err.end]
            raise _StdoutError(
                f"cannot write {bad!r} in standard output's encoding ({err.encoding}): set "
                "PYTHONIOENCODING=utf-8 (files induce writes are always UTF-8)",
                "-",
            ) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as err:
            raise _StdoutError(f"cannot write: {err.strerror}", "-") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def stdout_console(**options: Any) -> Console:
    """A Rich console on standard output (user text never read as markup) whose closed pipe
    ends the command as every command's does, quietly with exit 0 (``induce ... | head``):
    Rich's own handler exits with 1."""
    from rich.console import Console

    class _PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

        def print(self, *objects: Any, **kwargs: Any) -> None:
            # A table wider than the terminal (or COLUMNS, in a pipe) is printed whole, at
            # its own width: Rich would fit it by cutting cells, numbers too ("63.…")
            need = max(map(self._table_width, objects), default=0)
            if need <= self.width:
                return super().print(*objects, **kwargs)
            width, self.width = self.width, need
            try:
                return super().print(*objects, **kwargs)
            finally:
                self.width = width

        def _table_width(self, item: Any) -> int:
            from rich.measure import Measurement
            from rich.table import Table

            if not isinstance(item, Table):
                return 0
            return Measurement.get(self, self.options.update_width(1 << 20), item).maximum

    return _PipeConsole(highlight=False, markup=False, **options)


def _discard(stream: TextIO) -> None:
    """Point the file descriptor under ``stream`` at the null device, so that the text still
    buffered is dropped as Python exits instead of failing again (with a second message)."""
    with contextlib.suppress(OSError, ValueError):  # no descriptor: a test's captured stream
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


# The options that name a file a command writes.  The run or dataset folder that --out
# creates (or, forced, replaces) has guards of its own (new or empty, or an induce dataset);
# here it is only refused when it holds one of the command's inputs.
OUTPUT_FLAGS = ("--output", "--json", "--html", "--csv", "--latex", "--markdown", "--plot")
FOLDER_FLAG = "--out"


def output_parameters(command: Callable[..., Any]) -> dict[str, str]:
    """The command function's parameters that name an output (a file, or the ``--out``
    folder), with their flag (read from the ``typer.Option`` defaults, so that a new output
    option is guarded by itself)."""
    found = {}
    for name, parameter in inspect.signature(command).parameters.items():
        decls = getattr(parameter.default, "param_decls", None) or ()
        flags = [d for d in decls if d in (*OUTPUT_FLAGS, FOLDER_FLAG)]
        if flags:
            found[name] = flags[0]
    return found


def _guard_outputs(values: dict[str, Any], outputs: dict[str, str]) -> None:
    """Refuse, before any work, an output that is one of the command's inputs or another
    output's file (every value of the command's other parameters that names an existing
    file or folder, alone or after ``KEY=``, counts as an input), or that cannot be written
    (a missing folder, a directory): a command with several outputs would otherwise write
    some of them before the one it cannot."""
    from induce.data.files import check_outputs, check_writable

    written: list[tuple[str, str]] = []
    folders: list[str] = []
    read: list[str] = []
    for name, value in values.items():
        given = value if isinstance(value, (list, tuple)) else [value]
        names = [str(v) for v in given if isinstance(v, (str, os.PathLike))]
        if outputs.get(name) == FOLDER_FLAG:
            folders += names
        elif name in outputs:
            written += [(outputs[name], path) for path in names]
        else:
            read += [path for path in map(_named_path, names) if path is not None]
    empty = next((flag for flag, path in written if not path), None)
    if empty is not None:  # "" was written to standard output, as if "-" had been given
        raise ConfigError(f"{empty}: an empty file name; give a file, or - for standard output")
    check_outputs(written, read)
    check_writable(path for _, path in written)
    for folder in folders:
        _check_folder_output(folder, read)
    stdin = [name for name, value in values.items() if name not in outputs and value == "-"]
    if len(stdin) > 1:  # the first would read it all, the second nothing
        named = " and ".join(name.upper() for name in stdin)
        every = "both" if len(stdin) == 2 else "all"
        raise InputError(f"{named} are {every} - (standard input): one at most may be")


def _named_path(value: str) -> str | None:
    """The existing file or folder an option's value names: the value itself, or the part
    after ``KEY=`` (``--deps-file test=FILE``), or for ``-`` the file on disk that standard
    input is (``< FILE``); ``None`` where it names none."""
    if value == "-":
        return _stdin_file()
    for path in (value, value.partition("=")[2]):
        if path and path != "-" and os.path.exists(path):
            return path
    return None


def _stdin_file() -> str | None:
    """The path of the file on disk that standard input is (``induce parse - -o FILE <
    FILE`` would otherwise replace its own input), read from ``/proc``, else ``/dev/stdin``
    (which the output guard compares by device and inode); ``None`` for a terminal or a
    pipe."""
    if not regular_file(sys.stdin):
        return None
    descriptor = sys.stdin.fileno()
    try:
        return os.readlink(f"/proc/self/fd/{descriptor}")
    except OSError:  # no /proc (macOS): /dev/stdin stats as the file itself
        return "/dev/stdin" if descriptor == 0 and os.path.exists("/dev/stdin") else None


def regular_file(stream: IO[Any]) -> bool:
    """Whether ``stream`` is a file on disk (all there, read at the disk's pace), not a
    terminal or a pipe whose lines come as they are written."""
    import stat

    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError):  # no descriptor: a test's stream
        return False


def _check_folder_output(folder: str, read: list[str]) -> None:
    """A folder the command would replace (``--force``) may not hold one of its inputs: the
    dataset rebuilt from its own ``train.txt`` rewrote it."""
    if not os.path.isdir(folder):
        return
    inside = os.path.realpath(folder)
    for path in read:
        real = os.path.realpath(path)
        if real == inside or real.startswith(inside + os.sep):
            raise InputError(
                f"{FOLDER_FLAG} would replace {path}, which this command reads: write the "
                "output elsewhere",
                folder,
            )


_python_showwarning = warnings.showwarning


def _show_library_warnings() -> None:
    """The library's :class:`InduceWarning` as ``warning: ...`` lines on stderr."""

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, InduceWarning):
            warn(str(message))
        else:
            _python_showwarning(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    warnings.simplefilter("always", InduceWarning)


def warn(message: str) -> None:
    typer.echo(f"warning: {message}", err=True)


def to_json(report: dict) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def emit_report(
    report: dict,
    json_path: str | None,
    fmt: str,
    quiet: bool,
    render_table: Callable[[], None],
    render_text: Callable[[], str] | None = None,
) -> None:
    """Write the JSON file (atomically) first, then the chosen stdout format; ``--json -``
    is stdout's output, in place of that format (two documents on stdout would be neither)."""
    from induce.data.files import atomic_write

    if json_path == "-":
        sys.stdout.write(to_json(report))
        sys.stdout.flush()
        return
    if json_path:
        atomic_write(json_path, to_json(report))
    if quiet:
        return
    if fmt == "json":
        sys.stdout.write(to_json(report))
    elif fmt == "table":
        render_table()
    elif render_text is not None:
        sys.stdout.write(render_text())
    sys.stdout.flush()


def check_weights(weights: str) -> None:
    """``--weights`` names a checkpoint that runs keep (checked before a model loads)."""
    from induce.data.config import check_choice
    from induce.runs.config import WEIGHT_CHOICES

    check_choice(weights, WEIGHT_CHOICES, "weights")


def one_of(pred: str | None, baseline: str | None) -> None:
    """A prediction file or a baseline, exactly one."""
    if pred is None and baseline is None:
        raise typer.BadParameter("give a prediction file PRED or --baseline NAME")
    if pred is not None and baseline is not None:
        raise typer.BadParameter("give a prediction file PRED or --baseline NAME, not both")


@contextlib.contextmanager
def progress_bar() -> Iterator[Callable[[str, int, int], None] | None]:
    """A Rich progress bar on stderr while the block runs, one task per stage, gone when it
    ends (``transient``): on a terminal only; in pipes and logs nothing (``None``)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, TaskID

    with Progress(console=Console(stderr=True), transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done)

        yield update


def with_progress(command: F) -> F:
    """Show the progress the library reports (:mod:`induce.data.progress`) while
    ``command`` runs: reading directories of files, scoring and converting sentences."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from induce.data.progress import listening

        with progress_bar() as bar, listening(bar):
            return command(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
