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


# -- no pointer, and nothing complete to resume from -----------------------------------------
# Such a run used to start again from scratch: metrics.jsonl emptied, the checkpoint folders
# deleted by the clean-up.  Only a run stopped before its first checkpoint may start again.


def _copy_without_pointer(runs, tmp_path: Path, arch: str = "udgn") -> tuple[Path, Path]:
    """A copy of the 4-update run without checkpoint.json, and its (last) checkpoint folder."""
    mine, _ = runs[arch]
    run = tmp_path / mine.name
    shutil.copytree(mine, run)
    folder = run / _pointer(run)["last"]
    (run / POINTER).unlink()
    return run, folder


@pytest.mark.parametrize("lost", ["trainer_state.pt", "model.safetensors"])
@pytest.mark.parametrize("arch", ARCHS)
def test_an_incomplete_checkpoint_without_pointer_changes_nothing(runs, tmp_path, arch, lost):
    run, folder = _copy_without_pointer(runs, tmp_path, arch)
    (folder / lost).unlink()
    before = _state(run)
    result = _invoke("train", "--resume", run, "--set", "train.max_steps=6")
    _one_error(result)
    assert result.stderr.strip() == (
        f"error: {folder}: incomplete checkpoint (no {lost}) and no checkpoint.json: nothing "
        "to resume from; put the missing file back, or train a new run in another folder"
    )
    assert _state(run) == before


def test_an_incomplete_checkpoint_newer_than_the_resumed_one_is_kept(runs, tmp_path):
    """The clean-up after a resume from the newest complete checkpoint would delete it."""
    run, folder = _copy_without_pointer(runs, tmp_path)
    newer = run / "checkpoints" / "00000006-bbbbbb"
    newer.mkdir()
    shutil.copy(folder / "model.safetensors", newer)
    before = _state(run)
    result = _invoke("train", "--resume", run, "--set", "train.max_steps=6")
    _one_error(result)
    assert f"error: {newer}: incomplete checkpoint (no trainer_state.pt)" in result.stderr
    assert f"a resume from the older {folder.name} would delete it" in result.stderr
    assert _state(run) == before


def test_a_run_whose_checkpoints_are_gone_is_not_started_again(runs, tmp_path):
    """Its history records validations, each followed by a checkpoint: they were lost."""
    run, folder = _copy_without_pointer(runs, tmp_path)
    shutil.rmtree(run / "checkpoints")
    before = _state(run)
    result = _invoke("train", "--resume", run, "--set", "train.max_steps=6")
    _one_error(result)
    assert result.stderr.strip() == (
        f"error: {run / 'metrics.jsonl'}: records the validation of update 2, but the run has "
        "no checkpoint and no checkpoint.json: nothing to resume from; put the checkpoint "
        "back, or train a new run in another folder"
    )
    assert _state(run) == before


def _killed_in_first_checkpoint(runs, tmp_path: Path) -> Path:
    """The run as a kill inside its first checkpoint's write leaves it: the records up to
    the first validation, the unfinished ``.tmp`` folder, no pointer."""
    run, folder = _copy_without_pointer(runs, tmp_path)
    metrics = run / "metrics.jsonl"
    lines = metrics.read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if '"eval"' in line)
    metrics.write_text("".join(lines[: first + 1]))
    unfinished = run / "checkpoints" / "00000002-cccccc.tmp"
    unfinished.mkdir()
    shutil.move(folder / "model.safetensors", unfinished)
    shutil.rmtree(folder)
    return run


def test_a_run_killed_in_its_first_checkpoint_write_starts_again(runs, tmp_path):
    run = _killed_in_first_checkpoint(runs, tmp_path)
    options = TrainOptions(str(run), overrides=["train.max_steps=2"], resume=True, device="cpu")
    with pytest.warns(UserWarning, match="starts again"):
        assert train(options) == "done"
    assert _pointer(run)["step"] == 2


def test_a_first_validation_without_the_unfinished_write_is_not_started_again(runs, tmp_path):
    """Without the ``.tmp`` folder, its checkpoint was saved and is lost (deleted)."""
    run = _killed_in_first_checkpoint(runs, tmp_path)
    shutil.rmtree(run / "checkpoints")
    before = _state(run)
    _one_error(_invoke("train", "--resume", run, "--set", "train.max_steps=2"))
    assert _state(run) == before


class _Killed(Exception):
    """Stands for a kill -9: raised from the event of a record, it ends training there."""


def test_a_run_stopped_right_after_its_first_validation_record_starts_again(tmp_path):
    """The record of the first validation is written after its checkpoint's ``.tmp``
    folder is made: stopped between record and checkpoint, the run starts again (it used to
    be refused: a validation record without a checkpoint or an unfinished write)."""
    data, run = make_dataset(tmp_path), tmp_path / "run"

    def kill(kind: str, record: dict) -> None:
        if kind == "eval":
            assert [p.suffix for p in (run / "checkpoints").iterdir()] == [".tmp"]
            raise _Killed

    settings = _settings("udgn", 4, 1)
    with pytest.raises(_Killed):
        train(TrainOptions(str(run), "udgn", str(data), settings, device="cpu"), kill)
    assert read_pointer(run) is None
    resumed = TrainOptions(str(run), overrides=settings, resume=True, device="cpu")
    with pytest.warns(UserWarning, match="starts again"):
        assert train(resumed) == "done"
    assert _pointer(run)["step"] == 4


def _agree_with_the_history(state_file: Path, metrics: Path) -> None:
    """The checkpoint's digest of ``metrics.jsonl`` made that of the edited history (as if
    the run had written it so)."""
    import hashlib

    import torch

    state = torch.load(state_file, weights_only=True)
    seen = metrics.read_bytes()[: state["progress"]["metrics_bytes"]]
    state["progress"]["metrics_sha256"] = hashlib.sha256(seen).hexdigest()
    torch.save(state, state_file)


def test_a_run_without_its_pointer_keeps_its_best_weights(runs, tmp_path):
    """The best of the history (here step 2's, an older folder holding weights only) is
    named again: the clean-up used to delete it with the pointer gone."""
    run, folder = _copy_without_pointer(runs, tmp_path)
    metrics = run / "metrics.jsonl"  # step 4 is no longer a new best; the same byte count
    text = metrics.read_text()
    last_eval = text.rindex('"kind": "eval"')
    assert '"best": true' in text[last_eval:]
    metrics.write_text(text[:last_eval] + text[last_eval:].replace('"best": true', '"best": null'))
    _agree_with_the_history(folder / "trainer_state.pt", metrics)
    best = run / "checkpoints" / "00000002-dddddd"
    best.mkdir()
    shutil.copy(folder / "model.safetensors", best)
    options = TrainOptions(str(run), overrides=["train.max_steps=4"], resume=True, device="cpu")
    assert train(options) == "done"
    assert _pointer(run)["best"] == f"checkpoints/{best.name}"
    assert (best / "model.safetensors").is_file()


def test_a_run_without_a_best_or_any_checkpoint_says_so(runs, tmp_path):
    """parse of a run not validated yet named RUN/best/model.safetensors, a folder of the
    earlier layout that this run never had; a run with no checkpoint, the same."""
    from induce.data.errors import InputError
    from induce.runs.directory import open_run

    mine, _ = runs["udgn"]
    run = tmp_path / "run"
    shutil.copytree(mine, run)
    pointer = _pointer(run)
    (run / POINTER).write_text(json.dumps({**pointer, "best": None}))
    assert open_run(run).weights("last") == run / pointer["last"] / "model.safetensors"
    with pytest.raises(InputError, match="no best checkpoint yet .*--weights last"):
        open_run(run).weights("best")
    (run / POINTER).unlink()
    shutil.rmtree(run / "checkpoints")
    with pytest.raises(InputError, match="no checkpoint yet: the run has saved no weights"):
        open_run(run).weights("best")
