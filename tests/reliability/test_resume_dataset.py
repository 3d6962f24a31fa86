"""A resume trains on the data the run was trained on: the same dataset moved or copied is
accepted (and ``dataset.yaml`` then records where it lies), another one whose vocabulary
happens to be the same is refused, changing nothing (it used to train on it without a word,
``dataset.yaml`` still naming the first)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from induce.data.config import parse_yaml
from tests.reliability.test_bad_runs import _digest, _invoke, _one_error
from tests.reliability.test_resume_pointer import _train
from tests.train.helpers import make_dataset

ARCHS = ("udgn", "chart")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Per architecture: a run of 2 updates, and its dataset."""
    root = tmp_path_factory.mktemp("resume-dataset")
    data = make_dataset(root)
    return {arch: _train(data, root / arch, arch, 2) for arch in ARCHS}, data


def _copies(runs, tmp_path: Path, arch: str) -> tuple[Path, Path]:
    made, data = runs
    run, moved = tmp_path / "run", tmp_path / "moved"
    shutil.copytree(made[arch], run)
    shutil.copytree(data, moved)
    return run, moved


def _recorded_path(run: Path) -> str:
    return parse_yaml((run / "dataset.yaml").read_text(), "dataset.yaml")["path"]


@pytest.mark.parametrize("arch", ARCHS)
def test_a_resume_on_its_dataset_moved_trains_and_records_where_it_lies(runs, tmp_path, arch):
    run, moved = _copies(runs, tmp_path, arch)
    result = _invoke("train", "--resume", run, "--data", moved)  # no setting changed
    assert result.exit_code == 0, result.output
    assert _recorded_path(run) == str(moved.resolve())


@pytest.mark.parametrize("arch", ARCHS)
def test_a_resume_on_another_dataset_of_the_same_vocabulary_changes_nothing(runs, tmp_path, arch):
    run, other = _copies(runs, tmp_path, arch)
    manifest = other / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace("lowercase: true", "lowercase: false"))
    before = _digest(run)
    result = _invoke("train", "--resume", run, "--data", other, "--set", "train.max_steps=3")
    _one_error(result)
    assert result.stderr.strip() == (
        f"error: {other}: not the dataset the run was trained on: its normalization differs "
        "from the run's dataset.yaml; resume on that data (moved or copied, it is the same)"
    )
    assert _digest(run) == before
