"""SIGTERM (``kill PID``, a cluster scheduler's time limit) ends a command as Ctrl-C does: one
line (``terminated``), exit code 143 (128 + 15), the half-written output removed and the file
it would have replaced untouched.  Python's default for SIGTERM ended the process at once,
leaving the temporary file (or a dataset's temporary folder and its lock) behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import typer
from typer.testing import CliRunner

from induce.cli.app import app
from induce.cli.common import handle_errors
from induce.data.files import open_output
from tests.train.helpers import make_dataset, tiny


def test_a_terminated_command_leaves_its_output_as_it_was(tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("the old results\n")
    small = typer.Typer()

    @small.command()
    @handle_errors
    def write(path: str) -> None:
        with open_output(path) as handle:
            handle.write("half of the new ones\n")
            handle.flush()
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)  # the handler raises in here

    before = signal.getsignal(signal.SIGTERM)
    result = CliRunner().invoke(small, [str(out)])
    assert (result.exit_code, result.stderr) == (143, "terminated\n")
    assert out.read_text() == "the old results\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    assert signal.getsignal(signal.SIGTERM) is before  # the default again, once it ended


def test_a_handler_set_before_is_left_alone(tmp_path):
    """A program that runs induce's commands and handles SIGTERM itself keeps its handler."""
    seen = []
    previous = signal.signal(signal.SIGTERM, lambda *_: seen.append("theirs"))
    small = typer.Typer()

    @small.command()
    @handle_errors
    def wait() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.1)

    try:
        result = CliRunner().invoke(small, [])
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert result.exit_code == 0 and seen == ["theirs"]


def test_parse_terminated_while_it_streams(tmp_path):
    """A real command in its own process: parse reading standard input, its output's
    temporary file open, is terminated."""
    data = make_dataset(tmp_path)
    run = tmp_path / "run"
    sets = [x for s in tiny("udgn") + ["train.max_steps=2"] for x in ("--set", s)]
    trained = CliRunner().invoke(
        app, ["train", "--arch", "udgn", "--data", str(data), "--out", str(run), *sets]
    )
    assert trained.exit_code == 0, trained.output
    folder = tmp_path / "parses"
    folder.mkdir()
    (folder / "out.ptb").write_text("(S (X old))\n")
    command = [sys.executable, "-m", "induce.cli.app", "parse", "-", "-m", str(run)]
    command += ["-f", "ptb", "-o", str(folder / "out.ptb"), "--device", "cpu"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert process.stdin is not None
    process.stdin.write("the cat sat\n")
    process.stdin.flush()
    deadline = time.monotonic() + 120
    while len(list(folder.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # until the output's temporary file is open
    assert len(list(folder.iterdir())) == 2, "parse opened no temporary output"
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143 and stderr.splitlines()[-1:] == ["terminated"], stderr
    assert [p.name for p in folder.iterdir()] == ["out.ptb"]
    assert (folder / "out.ptb").read_text() == "(S (X old))\n"


def test_dataset_workers_end_at_the_pools_sigterm():
    """Forked preprocessing workers inherit the command's handler: the pool ends them with
    SIGTERM, which must end them, not raise in them (a traceback per worker)."""
    from induce.preprocess.common import _ignore_interrupts

    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGTERM, lambda *_: None)  # as a command's handler would be
    try:
        _ignore_interrupts()  # the pool's initializer, in each worker
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
