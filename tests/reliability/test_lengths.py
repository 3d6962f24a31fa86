"""Sentences longer than the model reads are found when the dataset is read, before any
training and before the run folder is made: one ``error:`` line naming ``SPLIT.txt:LINE``
(masked LMs with a position table) or ``valid.trees:LINE`` (the chart parser), exit 2.
Training sentences can be dropped on purpose: ``data.max_length`` for a masked LM; the chart
parser skips them with a warning naming the first."""

from __future__ import annotations

import pytest

from induce.data.ptb import read_trees
from induce.structure.chart import clean_tree
from tests.reliability.test_bad_runs import _invoke, _one_error
from tests.train.helpers import make_dataset, tiny


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("lengths"))


def _first_longer(lines: list[str], limit: int) -> int:
    return next(k + 1 for k, line in enumerate(lines) if len(line.split()) > limit)


def _train(data, out, arch, settings):
    sets = [x for s in settings for x in ("--set", s)]
    return _invoke("train", "--arch", arch, "--data", data, "--out", out, *sets)


def test_a_masked_lm_names_the_first_training_sentence_too_long(data, tmp_path):
    line = _first_longer((data / "train.txt").read_text().splitlines(), 6)
    result = _train(
        data, tmp_path / "r", "transformer", [*tiny("transformer"), "model.max_length=6"]
    )
    _one_error(result)
    assert f"train.txt:{line}: " in result.stderr and "data.max_length" in result.stderr
    assert not (tmp_path / "r").exists()


def test_skipping_long_training_sentences_still_checks_validation(data, tmp_path):
    line = _first_longer((data / "valid.txt").read_text().splitlines(), 6)
    settings = [*tiny("transformer"), "model.max_length=6", "data.max_length=6"]
    result = _train(data, tmp_path / "r", "transformer", settings)
    _one_error(result)
    assert f"valid.txt:{line}: " in result.stderr
    assert not (tmp_path / "r").exists()


def test_the_chart_parser_names_the_first_dev_sentence_too_long(data, tmp_path):
    found = read_trees(data / "valid.trees")
    line = next(
        found.lines[k]
        for k, tree in enumerate(found.trees)
        if tree is not None and len(clean_tree(tree).words()) > 8
    )
    result = _train(data, tmp_path / "r", "chart", [*tiny("chart"), "model.max_length=10"])
    _one_error(result)
    assert f"valid.trees:{line}: " in result.stderr
    assert not (tmp_path / "r").exists()


def test_the_chart_parser_refuses_a_data_max_length_beyond_the_model(data, tmp_path):
    result = _train(data, tmp_path / "r", "chart", [*tiny("chart"), "data.max_length=900"])
    _one_error(result)
    assert "data.max_length" in result.stderr
