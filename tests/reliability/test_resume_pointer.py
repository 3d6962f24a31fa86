"""A resume whose ``checkpoint.json`` is wrong changes nothing on disk: exit 2, one line, every
file and folder of the run as it was (the trainers used to clear unnamed checkpoint folders
before they knew they could restore anything, deleting a run's only real checkpoint).  A run
whose pointer is missing resumes from its newest complete checkpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from induce.runs.directory import POINTER, read_pointer
from induce.train.engine import TrainOptions, train
from tests.reliability.test_bad_runs import _digest, _invoke, _one_error
from tests.train.helpers import make_dataset, tiny

ARCHS = ("udgn", "combiner", "chart")


def _settings(arch: str, steps: int, seed: int) -> list[str]:
    return [*tiny(arch), f"train.max_steps={steps}", "train.eval_every=2", f"train.seed={seed}"]


def _train(data: Path, out: Path, arch: str, steps: int, seed: int = 1) -> Path:
    sets = [x for s in _settings(arch, steps, seed) for x in ("--set", s)]
    result = _invoke("train", "--arch", arch, "--data", data, "--out", out, *sets)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Per architecture: a run of 4 updates and another run (another seed) of 2."""
    root = tmp_path_factory.mktemp("pointer")
    data = make_dataset(root)
    made = {}
    for arch in ARCHS:
        made[arch] = (
            _train(data, root / arch, arch, 4),
            _train(data, root / f"{arch}-other", arch, 2, seed=7),
        )
    return made


def _state(folder: Path) -> tuple[dict[str, str], set[str]]:
    return _digest(folder), {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_dir()}


def _pointer(run: Path) -> dict:
    found = read_pointer(run)
    assert found is not None
    return found


def _missing_folder(run: Path, other: Path) -> None:
    pointer = _pointer(run)
    shutil.rmtree(run / pointer["last"])  # the folder is gone; others (the best) remain
    if pointer["best"] == pointer["last"] or pointer["best"] is None:
        # keep a real checkpoint beside the dangling pointer: the one a deletion would lose
        shutil.copytree(other / _pointer(other)["last"], run / "checkpoints" / "00000002-aaaaaa")


def _torn_pointer(run: Path, other: Path) -> None:
    text = (run / POINTER).read_text()
    (run / POINTER).write_text(text[: len(text) // 2])


def _outside_pointer(run: Path, other: Path) -> None:
    pointer = _pointer(run)
    pointer["last"] = str(Path("..") / other.name / _pointer(other)["last"])
    (run / POINTER).write_text(json.dumps(pointer))


def _foreign_folder(run: Path, other: Path) -> None:
    """Another run's checkpoint copied in (step 2) and named as last, with this run's step."""
    pointer = _pointer(run)
    theirs = other / _pointer(other)["last"]
    shutil.copytree(theirs, run / "checkpoints" / theirs.name)
    pointer["last"] = f"checkpoints/{theirs.name}"
    (run / POINTER).write_text(json.dumps(pointer))


DAMAGES = {
    "missing folder": _missing_folder,
    "torn pointer": _torn_pointer,
    "pointer outside the run": _outside_pointer,
    "another run's folder": _foreign_folder,
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
@pytest.mark.parametrize("arch", ARCHS)
def test_a_resume_that_cannot_load_changes_nothing(runs, tmp_path, arch, damage):
    mine, other = runs[arch]
    run = tmp_path / mine.name
    shutil.copytree(mine, run)
    shutil.copytree(other, tmp_path / other.name)
    DAMAGES[damage](run, tmp_path / other.name)
    before = _state(run)
    _one_error(_invoke("train", "--resume", run, "--set", "train.max_steps=6"))
    assert _state(run) == before


@pytest.mark.parametrize("arch", ARCHS)
def test_a_run_without_its_pointer_resumes_from_its_newest_checkpoint(runs, tmp_path, arch):
    """Killed between a checkpoint's rename and its pointer (here: the pointer deleted): the
    newest complete checkpoint (step 4) is restored, named again, and training goes on."""
    mine, _ = runs[arch]
    run = tmp_path / mine.name
    shutil.copytree(mine, run)
    (run / POINTER).unlink()
    events: list[tuple[str, dict]] = []
    options = TrainOptions(str(run), overrides=["train.max_steps=6"], resume=True, device="cpu")
    assert train(options, lambda kind, record: events.append((kind, record))) == "done"
    assert [r["resumed_at"] for kind, r in events if kind == "start"] == [4]
    pointer = _pointer(run)
    assert pointer["step"] == 6
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [r["step"] for r in records if r["kind"] == "train"]
    assert steps == sorted(set(steps)) and steps[-1] == 6 and 5 in steps and 4 in steps


@pytest.mark.parametrize("arch", ARCHS)
def test_a_resume_under_another_architecture_is_refused(runs, tmp_path, arch):
    mine, _ = runs[arch]
    run = tmp_path / mine.name
    shutil.copytree(mine, run)
    before = _state(run)
    for other in ("udgn", "combiner", "chart"):
        if other != arch:
            _one_error(_invoke("train", "--resume", run, "--arch", other))
    assert _state(run) == before
