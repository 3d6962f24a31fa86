"""Two writers of one output: the second is refused (exit 2, naming the first one's pid); a
lock left by a killed process is taken over with a warning."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from induce.cli.app import app
from tests.train.helpers import make_dataset, tiny

HOLD = """
import sys, time
from induce.data.locks import FileLock
FileLock(sys.argv[1], "x").acquire()
print("held", flush=True)
time.sleep(60)
"""


def _holder(lock: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    return process


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("lock"))


def _train(*args: str):
    return CliRunner().invoke(app, ["train", "--device", "cpu", *args])


def test_a_second_trainer_of_a_run_is_refused(data, tmp_path):
    out = tmp_path / "run"
    sets = [x for s in tiny("transformer") + ["train.max_steps=2"] for x in ("--set", s)]
    assert (
        _train("--arch", "transformer", "--data", str(data), "--out", str(out), *sets).exit_code
        == 0
    )
    holder = _holder(out / ".lock")  # a trainer of the run that is still alive
    try:
        second = _train("--resume", str(out))
    finally:
        holder.kill()
        holder.wait()
    assert second.exit_code == 2
    assert second.stderr.strip() == (
        f"error: {out / '.lock'}: the run directory is in use by process {holder.pid}"
    )


def test_a_killed_trainers_lock_is_taken_over(data, tmp_path):
    out = tmp_path / "run"
    sets = [x for s in tiny("transformer") + ["train.max_steps=2"] for x in ("--set", s)]
    assert (
        _train("--arch", "transformer", "--data", str(data), "--out", str(out), *sets).exit_code
        == 0
    )
    pid = _dead_pid()
    (out / ".lock").write_text(f"{pid}\n")
    again = _train("--resume", str(out), "--set", "train.max_steps=3")
    assert again.exit_code == 0, again.output
    assert f"taking over the lock of process {pid}" in again.stderr
    assert not (out / ".lock").exists()


def test_two_writers_of_one_dataset(tmp_path):
    out = tmp_path / "synthetic"
    holder = _holder(tmp_path / ".synthetic.lock")
    try:
        second = CliRunner().invoke(app, ["preprocess", "synthetic", "-n", "20", "-o", str(out)])
    finally:
        holder.kill()
        holder.wait()
    assert second.exit_code == 2 and f"in use by process {holder.pid}" in second.stderr
    assert not out.exists()
    first = CliRunner().invoke(app, ["preprocess", "synthetic", "-n", "20", "-o", str(out)])
    assert first.exit_code == 0, first.output
    assert not (tmp_path / ".synthetic.lock").exists()


def test_two_trainers_started_together(data, tmp_path):
    """Two processes racing for one new run: exactly one trains it."""
    out = tmp_path / "race"
    sets = [x for s in tiny("transformer") + ["train.max_steps=3"] for x in ("--set", s)]
    command = [sys.executable, "-m", "induce.cli.app", "train", "--arch", "transformer"]
    command += ["--data", str(data), "--out", str(out), "--device", "cpu", *sets]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    runs = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env) for _ in (1, 2)]
    codes, errors = [], []
    for process in runs:
        _, stderr = process.communicate(timeout=300)
        codes.append(process.returncode)
        errors.append(stderr)
    assert sorted(codes) == [0, 2], errors
    loser = errors[codes.index(2)].strip().splitlines()
    assert len(loser) == 1 and loser[0].startswith("error: "), loser
    time.sleep(0)  # (both are done: the winner's metrics are whole)
    steps = [line for line in (out / "metrics.jsonl").read_text().splitlines() if '"train"' in line]
    assert len(steps) == 3


def test_a_lock_file_holds_its_pid_from_the_moment_it_exists(tmp_path, monkeypatch):
    """Linked into place already written: a racing process never reads it empty (which it
    would take for a stale lock and remove); no file of the creation is left behind."""
    from induce.data.locks import FileLock

    seen = []
    link = os.link

    def spying_link(source, target):
        seen.append(Path(source).read_text())
        link(source, target)

    monkeypatch.setattr(os, "link", spying_link)
    lock = FileLock(tmp_path / ".lock", "the run").acquire()
    assert seen == [_own_line()]
    assert (tmp_path / ".lock").read_text() == _own_line()
    assert [p.name for p in tmp_path.iterdir()] == [".lock"]
    lock.release()
    assert not any(tmp_path.iterdir())


def test_without_hard_links_the_lock_is_still_taken_and_refused(tmp_path, monkeypatch):
    import errno

    from induce.data.locks import FileLock, LockedError

    def no_links(source, target):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    FileLock(tmp_path / ".lock", "the run").acquire()
    assert (tmp_path / ".lock").read_text() == _own_line()
    assert [p.name for p in tmp_path.iterdir()] == [".lock"]
    holder = _holder(tmp_path / "other.lock")
    try:
        with pytest.raises(LockedError, match=f"in use by process {holder.pid}"):
            FileLock(tmp_path / "other.lock", "the run").acquire()
    finally:
        holder.kill()
        holder.wait()


def test_a_rivals_attempt_at_the_lock_does_not_make_the_new_run_lose(data, tmp_path, monkeypatch):
    """The race of ``test_two_trainers_started_together`` made deterministic: the winner holds
    the run's lock and looks whether the folder is still empty just as the loser tries the
    lock, whose temporary file lies in the folder for that instant (both exited 2, seen in
    CI). The winner trains; a file of another kind still makes it lose."""
    from induce.data.locks import FileLock

    acquire = FileLock.acquire
    stray = {"name": ".lock-rival.pid"}

    def acquire_as_a_rival_tries(self):
        held = acquire(self)
        (self.path.parent / stray["name"]).write_text("99999\n")  # the rival's attempt
        return held

    monkeypatch.setattr(FileLock, "acquire", acquire_as_a_rival_tries)
    sets = [x for s in tiny("transformer") + ["train.max_steps=2"] for x in ("--set", s)]
    won = _train("--arch", "transformer", "--data", str(data), "--out", str(tmp_path / "a"), *sets)
    assert won.exit_code == 0, won.output
    stray["name"] = "checkpoint.pt"  # a file of a run: the race was lost
    lost = _train("--arch", "transformer", "--data", str(data), "--out", str(tmp_path / "b"), *sets)
    assert lost.exit_code == 2
    assert "the run directory exists and is not empty" in lost.stderr


def test_a_lock_owns_itself_and_the_temporaries_of_its_takers(tmp_path):
    from induce.data.locks import FileLock

    lock = FileLock(tmp_path / ".lock", "the run")
    owned = [".lock", ".lock-k2j3.pid"]
    foreign = ["lock", ".lock.pid", ".lock-k2j3.tmp", ".locked-1.pid", "metrics.jsonl"]
    assert [lock.owns(tmp_path / name) for name in owned + foreign] == [True] * 2 + [False] * 5


@pytest.mark.parametrize("content", ["99999999999999999999\n", "-7\n", "garbage\n", "\xff\n"])
def test_a_lock_holding_no_process_id_is_taken_over(tmp_path, content):
    """A number no process can have (os.kill overflowed on it), or garbage: a stale lock of
    no process, taken over with a warning."""
    from induce.data.errors import InduceWarning
    from induce.data.locks import FileLock

    (tmp_path / ".lock").write_text(content, encoding="latin-1")
    with pytest.warns(InduceWarning, match="taking over the lock of no process"):
        lock = FileLock(tmp_path / ".lock", "the run").acquire()
    assert (tmp_path / ".lock").read_text() == _own_line()
    lock.release()


def _lock_cases(tmp_path: Path, data: Path) -> list[tuple[Path, list[str]]]:
    """(lock path, command) of a resumed run and of a dataset to write."""
    run = tmp_path / "run"
    sets = [x for s in tiny("transformer") + ["train.max_steps=2"] for x in ("--set", s)]
    made = _train("--arch", "transformer", "--data", str(data), "--out", str(run), *sets)
    assert made.exit_code == 0, made.output
    (tmp_path / "in.txt").write_text("the cat sat\nit rained\n")
    text = ["preprocess", "text", "--train", str(tmp_path / "in.txt"), "-o", str(tmp_path / "q")]
    resume = ["train", "--device", "cpu", "--resume", str(run), "--set", "train.max_steps=3"]
    return [(run / ".lock", resume), (tmp_path / ".q.lock", text)]


def test_a_lock_path_that_is_a_folder_is_refused(data, tmp_path):
    """Not taken over (it used to be an IsADirectoryError): one line, the folder kept."""
    from tests.reliability.test_bad_runs import _digest

    for lock, command in _lock_cases(tmp_path, data):
        lock.mkdir()
        (lock / "kept").write_text("x")
        before = _digest(tmp_path)
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 2, result.output
        assert result.stderr == f"error: {lock}: cannot lock: is a directory\n"
        assert _digest(tmp_path) == before and not (tmp_path / "q").exists()


def test_a_lock_holding_a_huge_number_is_taken_over(data, tmp_path):
    """It used to be an OverflowError from os.kill."""
    for lock, command in _lock_cases(tmp_path, data):
        lock.write_text("99999999999999999999\n")
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 0, result.output
        assert f"warning: {lock}: taking over the lock of no process" in result.stderr
        assert not lock.exists()


def _own_line() -> str:
    """What a lock file of this process holds: ``PID HOST START``."""
    import socket

    with open(f"/proc/{os.getpid()}/stat", "rb") as handle:
        stat = handle.read()
    started = stat[stat.rindex(b")") + 2 :].split()[19].decode()
    return f"{os.getpid()} {socket.gethostname()} {started}\n"


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="no /proc")
def test_a_lock_whose_pid_now_names_another_process_is_taken_over(tmp_path):
    """The killed holder's pid was given to a later process: alive, but not the holder (its
    start time differs), so the lock is stale; it used to block the folder."""
    import socket

    from induce.data.errors import InduceWarning
    from induce.data.locks import FileLock

    holder = _holder(tmp_path / "other.lock")  # a live process of this host
    try:
        (tmp_path / ".lock").write_text(f"{holder.pid} {socket.gethostname()} 1\n")
        with pytest.warns(InduceWarning, match=f"taking over the lock of process {holder.pid}"):
            lock = FileLock(tmp_path / ".lock", "the run").acquire()
        lock.release()
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_of_another_host_is_refused_naming_it(tmp_path):
    """A folder shared between machines: a pid of another host says nothing of this one's
    processes; its lock was taken over when no local process had that pid."""
    from induce.data.locks import FileLock, LockedError

    (tmp_path / ".lock").write_text(f"{_dead_pid()} elsewhere.example 12345\n")
    with pytest.raises(LockedError, match="in use by process .* on elsewhere.example \\(if"):
        FileLock(tmp_path / ".lock", "the run").acquire()
    assert (tmp_path / ".lock").read_text().endswith(" elsewhere.example 12345\n")
