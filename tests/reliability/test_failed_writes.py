"""Training's writes that fail.  A checkpoint that the disk cannot hold is one ``error:``
line with exit 2 (it was a traceback: safetensors' and ``torch.save``'s own errors, which
name no cause), and the run then resumes.  A new run whose files cannot all be written, or
that a signal stops while they are, leaves no folder that neither ``--resume`` nor a new run
would take.  The full disk is a file size limit (``RLIMIT_FSIZE``, its signal ignored):
writes past it fail with ``EFBIG`` as they would with ``ENOSPC``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from induce.runs import directory
from induce.runs.directory import read_pointer
from induce.train.engine import TrainOptions, train
from tests.train.helpers import make_dataset, tiny

resource = pytest.importorskip("resource")  # POSIX only

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = [*tiny("udgn"), "train.max_steps=4", "train.eval_every=2"]


def _induce(*args: object, limit: int | None = None) -> subprocess.CompletedProcess:
    """``induce ARGS`` in a fresh process whose files may not grow past ``limit`` bytes."""

    def limited() -> None:
        if limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails instead
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    code = "import sys\nfrom induce.cli.app import main\nsys.argv[0] = 'induce'\nmain()\n"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=limited,
        timeout=300,
    )


def _train(data: Path, run: Path) -> tuple[object, ...]:
    sets = [x for s in SETTINGS for x in ("--set", s)]
    return ("train", "--arch", "udgn", "--data", data, "--out", run, "--device", "cpu", *sets)


# the tiny model's weights are 133 KiB, its trainer state 293 KiB
@pytest.mark.parametrize(("limit", "file"), [(64, "model.safetensors"), (200, "trainer_state.pt")])
def test_a_checkpoint_the_disk_cannot_hold_is_one_line_and_the_run_resumes(tmp_path, limit, file):
    data, run = make_dataset(tmp_path), tmp_path / "run"
    done = _induce(*_train(data, run), limit=limit * 1024)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    assert errors[0].endswith(f"{file}: cannot write: File too large"), errors
    assert read_pointer(run) is None  # the first checkpoint was never finished
    resumed = _induce("train", "--resume", run, "--device", "cpu")
    assert resumed.returncode == 0, resumed.stderr
    assert "starts again" in resumed.stderr
    pointer = read_pointer(run)
    assert pointer is not None and pointer["step"] == 4


def test_a_new_run_whose_files_the_disk_cannot_hold_leaves_no_folder(tmp_path):
    """``config.yaml`` (1.6 KiB) is written, ``vocab.json`` (2.4 KiB) is not: the first is
    taken back and the folders the run made removed; the same command then trains."""
    data, run = make_dataset(tmp_path), tmp_path / "runs" / "run"
    done = _induce(*_train(data, run), limit=2 * 1024)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().endswith("vocab.json: cannot write: File too large"), done.stderr
    assert not (tmp_path / "runs").exists()  # the folders the run made, parents too
    assert _induce(*_train(data, run)).returncode == 0


@pytest.mark.parametrize("made", [True, False])
def test_a_new_run_stopped_while_its_files_are_written_leaves_its_folder_as_it_was(
    tmp_path, monkeypatch, made
):
    """Stopped (a signal is a ``KeyboardInterrupt`` by then) at ``dataset.yaml``: the files
    go, and the folder too if the run made it; an empty folder given to it stays."""
    data, run = make_dataset(tmp_path), tmp_path / "run"
    if not made:
        run.mkdir()
    write = directory.atomic_write

    def stopped(path, *args, **kwargs):
        if Path(path).name == directory.DATASET:
            raise KeyboardInterrupt
        return write(path, *args, **kwargs)

    monkeypatch.setattr(directory, "atomic_write", stopped)
    options = TrainOptions(str(run), "udgn", str(data), SETTINGS, device="cpu")
    with pytest.raises(KeyboardInterrupt):
        train(options)
    assert run.exists() is not made and (made or not any(run.iterdir()))
    monkeypatch.undo()
    assert train(options) == "done"


def test_a_record_the_disk_cannot_hold_is_one_line(tmp_path, monkeypatch):
    """``metrics.jsonl`` past a full disk was an ``OSError`` traceback."""
    import errno

    from induce.data.errors import InputError
    from induce.train import bookkeeping

    def full(path, mode="r", **kwargs):
        if "a" in mode:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return open(path, mode, **kwargs)

    monkeypatch.setattr(bookkeeping, "open", full, raising=False)
    data, run = make_dataset(tmp_path), tmp_path / "run"
    options = TrainOptions(str(run), "udgn", str(data), SETTINGS, device="cpu")
    with pytest.raises(InputError, match=r"metrics.jsonl: cannot write: No space left on device"):
        train(options)
