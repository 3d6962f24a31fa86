"""Kill safety: a run killed (SIGKILL) at any instant - between updates, inside a checkpoint's
writes, before the first checkpoint - and resumed ends with the same weights and the same
metrics as a run that was never stopped (CPU training is deterministic).

Inside the writes: the training process wraps every write step of
``induce.train.checkpoint`` (the weights, the trainer state, the folder rename (bracketed by
its fsyncs), the pointer, the clean-up) and kills itself just before or just after the n-th
step.  Between updates: a kill after a random delay.  ``INDUCE_KILL_TRIALS`` (default 6)
sets how many kill points of each kind are tried, ``INDUCE_KILL_ARCH`` (default structformer)
the model trained (``npcfg`` and the other grammars train on the other objective).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import torch
from safetensors.torch import load_file

from induce.runs.directory import read_metrics
from tests.train.helpers import make_dataset, tiny, weights_file

ARCH = os.environ.get("INDUCE_KILL_ARCH", "structformer")
# UDGN's five validation draws: the test data's validation split is mostly <unk>, which is
# never masked, and at UDGN's rate some draws mask nothing (refused: no validation loss)
MORE = {"udgn": ["data.mask_rate=0.9"]}
SETTINGS = (
    tiny(ARCH)
    + MORE.get(ARCH, [])
    + [
        "train.max_steps=10",
        "train.eval_every=4",
        "train.log_every=3",
        "train.checkpoint_every=1",
    ]
)
TRIALS = int(os.environ.get("INDUCE_KILL_TRIALS", "6"))

# A fresh interpreter that runs ``_train`` (the kills at random instants need a real process
# start: torch's import is part of what may be interrupted).
SCRIPT = (
    "import sys; from tests.train.test_kill import _train; _train(*sys.argv[1:5], sys.argv[5:])"
)

# The kills inside the writes run in processes forked from a server that has imported torch
# and the trainer once (a fresh interpreter per kill spent most of this test importing them).
_FORKS = multiprocessing.get_context("forkserver")
_FORKS.set_forkserver_preload(["torch", "induce.train.engine", "tests.train.test_kill"])


def _train(out: str, data: str, kill_at: str, resume: str, settings: list[str]) -> None:
    """Train (or resume, ``resume == "1"``), killing this process with SIGKILL just before or
    just after the ``kill_at``-th write step of ``induce.train.checkpoint`` (-1: never);
    prints the result and the number of write steps."""
    from induce.train import checkpoint as ck
    from induce.train.engine import TrainOptions, train

    torch.set_num_threads(1)
    count = [0]

    def tick() -> None:
        count[0] += 1
        if count[0] == int(kill_at):
            os.kill(os.getpid(), signal.SIGKILL)

    def hooked(function):
        def wrapped(*args, **kwargs):
            tick()
            result = function(*args, **kwargs)
            tick()
            return result

        return wrapped

    for name in ("save_weights", "save_state", "_fsync_dir", "atomic_write", "clean"):
        setattr(ck, name, hooked(getattr(ck, name)))
    arch = ARCH if resume != "1" else None
    options = TrainOptions(out, arch, data, settings, resume=resume == "1", device="cpu")
    print(train(options), count[0], flush=True)


def _forked(report: str, *args: Any) -> None:
    with open(report, "w") as out, contextlib.redirect_stdout(out):
        try:
            _train(*args)
        except BaseException:
            print(traceback.format_exc(), flush=True)
            raise


@dataclass(frozen=True)
class Done:
    returncode: int | None
    stdout: str


def _run(out: Path, data: Path, kill_at: int, resume: bool) -> Done:
    report = out.parent / f"{out.name}.{kill_at}.out"
    args = (str(out), str(data), str(kill_at), "1" if resume else "0", [] if resume else SETTINGS)
    process = _FORKS.Process(target=_forked, args=(str(report), *args))
    # The server (started by the first of these) must import torch as the fresh interpreters
    # do, with one OpenMP thread from the start: with more, then one, the weights of a run
    # differ in their last bits from those of a fresh process.
    with mock.patch.dict(os.environ, OMP_NUM_THREADS="1"):
        process.start()
    process.join(300)
    if process.is_alive():
        process.kill()
        process.join()
    text = report.read_text() if report.is_file() else ""
    report.unlink(missing_ok=True)
    return Done(process.exitcode, text)


def _finish(out: Path, data: Path) -> None:
    """Resume until the run is done (a kill may leave it with no checkpoint yet)."""
    done = _run(out, data, -1, resume=(out / "config.yaml").is_file())
    assert done.returncode == 0, done.stdout[-2000:]
    assert done.stdout.split()[0] == "done", done.stdout


TIMES = ("tokens_per_s", "elapsed_s", "eval_seconds")  # wall-clock figures, never equal


def _records(out: Path) -> list[dict]:
    return [
        {k: v for k, v in r.items() if k not in TIMES} for r in read_metrics(out / "metrics.jsonl")
    ]


def _same(a: Path, b: Path) -> None:
    for which in ("last", "best"):
        x, y = load_file(str(weights_file(a, which))), load_file(str(weights_file(b, which)))
        assert x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x), which
    assert _records(a) == _records(b)
    left = [p.name for p in b.rglob("*") if p.name.endswith(".tmp") or p.name == ".lock"]
    assert not left, left


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    root = tmp_path_factory.mktemp("kill")
    data = make_dataset(root / "data")
    whole = root / "whole"
    done = _run(whole, data, -1, resume=False)
    assert done.returncode == 0, done.stdout[-2000:]
    return data, whole, int(done.stdout.split()[1])  # the number of write steps


def test_kills_inside_checkpoint_writes(reference, tmp_path):
    data, whole, steps = reference
    rng = random.Random(7)
    points = sorted({1, 2, 3, steps - 1} | {rng.randrange(1, steps) for _ in range(TRIALS)})
    for point in points:
        out = tmp_path / f"k{point}"
        killed = _run(out, data, point, resume=False)
        assert killed.returncode == -signal.SIGKILL, (point, killed.stdout[-2000:])
        _finish(out, data)
        _same(whole, out)


def test_kills_at_random_instants_then_twice_in_one_run(reference, tmp_path):
    data, whole, _ = reference
    rng = random.Random(11)
    for trial in range(max(2, TRIALS // 3)):
        out = tmp_path / f"t{trial}"
        for _ in range(2):  # killed twice before it is let finish
            resume = (out / "config.yaml").is_file()
            args = [sys.executable, "-c", SCRIPT, str(out), str(data), "-1", "1" if resume else "0"]
            process = subprocess.Popen(
                args + ([] if resume else SETTINGS),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=dict(os.environ, OMP_NUM_THREADS="1"),
                cwd=Path(__file__).resolve().parents[2],  # where ``tests`` imports from
            )
            try:
                process.wait(timeout=rng.uniform(2.5, 6.0))  # torch import ~2 s, run ~3 s
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        _finish(out, data)
        _same(whole, out)
