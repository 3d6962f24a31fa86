"""The Python API as documented: the examples of docs/api.md, of ``induce.evaluate`` and the
README's five lines, run against small runs trained here."""

from __future__ import annotations

import contextlib
import doctest
import io
import re

import pytest

import induce
from induce.runs import remember_run
from induce.train.engine import TrainOptions, train
from tests.conftest import ROOT
from tests.train.helpers import make_dataset, tiny


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A folder with ``runs/udgn`` and ``runs/structformer`` (two updates each)."""
    root = tmp_path_factory.mktemp("api")
    data = make_dataset(root)
    for arch in ("udgn", "structformer"):
        options = TrainOptions(
            str(root / "runs" / arch), arch, str(data), tiny(arch) + ["train.max_steps=2"]
        )
        train(options)
    return root


def test_the_api_page_runs(folder, monkeypatch):
    monkeypatch.chdir(folder)
    result = doctest.testfile(
        str(ROOT / "docs" / "api.md"),
        module_relative=False,
        optionflags=doctest.ELLIPSIS,
        verbose=False,
    )
    assert result.attempted > 25 and result.failed == 0


def test_the_evaluate_examples_run():
    import induce.evaluate

    result = doctest.testmod(induce.evaluate, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0


def test_the_readme_python_example_runs(folder, monkeypatch, tmp_path):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(import induce\n.*?)```", text, re.S)
    assert block is not None, "the README's Python example is gone"
    code = block.group(1)
    assert len([line for line in code.splitlines() if line.strip()]) == 5
    monkeypatch.setenv("INDUCE_CACHE_DIR", str(tmp_path / "cache"))
    remember_run(str(folder / "runs" / "udgn"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed = out.getvalue()
    assert printed.startswith("(X ") and "udgn" in printed


def test_public_names():
    assert set(induce.__all__) == {"__version__", "evaluate", "load", "report"}
    assert set(induce.evaluate.__all__) == {"score_brackets", "score_deps", "score_unsupervised"}
    with pytest.raises(AttributeError):
        induce.no_such_name  # noqa: B018
