"""Bad settings, bad run directories and bad models for ``train``, ``parse`` and ``evaluate
mlm``: exit code 2, one ``error:`` line on stderr, no traceback, and the run or input left as
it was."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from induce.cli.app import app
from tests.train.helpers import make_dataset, tiny


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("badruns")
    data = make_dataset(root)
    runs = {}
    for arch in ("udgn", "transformer"):
        sets = [x for s in tiny(arch) + ["train.max_steps=2"] for x in ("--set", s)]
        out = root / arch
        result = _invoke("train", "--arch", arch, "--data", data, "--out", out, *sets)
        assert result.exit_code == 0, result.output
        runs[arch] = out
    return root, data, runs


def _invoke(*args: object):
    return CliRunner().invoke(app, [*map(str, args), "--device", "cpu"])


def _one_error(result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    errors = [line for line in lines if not line.startswith("warning: ")]
    assert len(errors) == 1 and errors[0].startswith("error: "), lines


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


SETTINGS = [
    "optim.lr=nan",
    "optim.lr=0",
    "optim.lr=inf",
    "optim.eps=-1",
    "optim.weight_decay=-0.5",
    "optim.betas=[0.9, 1.5]",
    "optim.betas=[0.9]",
    "optim.clip=-1",
    "optim.plateau_factor=1.5",
    "model.dropout=1.5",
    "model.attn_dropout=-0.1",
    "model.parser_dropout=1",
    "model.d_model=0",
    "data.mask_rate=1.5",
    "data.mask_rate=0",
    "data.batch_tokens=0",
    "train.max_steps=-1",
    "train.patience=-2",
    "train.unknown=1",
    "nosuchgroup.x=1",
    "model=3",
    "optim.lr=fast",
    "optim.lr",
]


@pytest.mark.parametrize("setting", SETTINGS)
def test_bad_settings(setup, tmp_path, setting):
    _, data, _ = setup
    result = _invoke(
        "train", "--arch", "udgn", "--data", data, "--out", tmp_path / "r", "--set", setting
    )
    _one_error(result)
    assert not (tmp_path / "r").exists()


def test_run_folders_that_cannot_be(setup, tmp_path):
    _, data, _ = setup
    (tmp_path / "file").write_text("x")
    for out in (tmp_path / "file", tmp_path / "file" / "run"):
        _one_error(_invoke("train", "--data", data, "--out", out))
    assert (tmp_path / "file").read_text() == "x"


def _copy(run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    return copy


def test_resume_with_another_architecture_or_shape(setup, tmp_path):
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    before = _digest(run)
    _one_error(_invoke("train", "--resume", run, "--arch", "structformer"))
    _one_error(_invoke("train", "--resume", run, "--set", "model.d_model=48"))
    assert _digest(run) == before


def test_resume_with_another_runs_trainer_state(setup, tmp_path):
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    other = runs["transformer"]
    from induce.runs.directory import STATE, read_pointer

    mine, theirs = read_pointer(run), read_pointer(other)
    assert mine is not None and theirs is not None
    shutil.copy(other / theirs["last"] / STATE, run / mine["last"] / STATE)
    _one_error(_invoke("train", "--resume", run))


def test_resume_without_a_checkpoint_file(setup, tmp_path):
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    (run / "checkpoint.json").write_text('{"last": 3')
    _one_error(_invoke("train", "--resume", run))


def test_parse_with_weights_of_another_shape(setup, tmp_path):
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    config = (run / "config.yaml").read_text().replace("d_model: 32", "d_model: 48")
    (run / "config.yaml").write_text(config)
    (tmp_path / "in.txt").write_text("the bill passed\n")
    result = _invoke("parse", tmp_path / "in.txt", "-m", run, "-o", tmp_path / "out")
    _one_error(result)
    assert "differ in shape" in result.stderr and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "old, new, fragment",
    [
        ("arch: udgn", "arch: nope", "unknown architecture 'nope'"),
        ("d_model: 32", "d_model: abc", "d_model: expected an integer"),
        ("d_model: 32", "d_model: 32\n  bogus: 1", "bogus"),
    ],
)
def test_a_runs_bad_settings_name_its_config_file(setup, tmp_path, old, new, fragment):
    """A fault in the run's own ``config.yaml`` is the file's: the message names it (an
    override's fault names the flag, as before)."""
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    config = (run / "config.yaml").read_text()
    assert old in config
    (run / "config.yaml").write_text(config.replace(old, new, 1))
    (tmp_path / "in.txt").write_text("the bill passed\n")
    result = _invoke("parse", tmp_path / "in.txt", "-m", run)
    _one_error(result)
    assert result.stderr.startswith(f"error: {run / 'config.yaml'}: ") and fragment in result.stderr


def test_weights_other_than_best_or_last_are_refused_by_the_library(setup):
    from induce.data.errors import ConfigError
    from induce.runs.directory import open_run

    _, _, runs = setup
    with pytest.raises(ConfigError, match="weights must be one of best, last"):
        open_run(runs["udgn"]).weights("middle")


def test_parse_a_transformer_run(setup, tmp_path):
    _, _, runs = setup
    (tmp_path / "in.txt").write_text("the bill passed\n")
    _one_error(_invoke("parse", tmp_path / "in.txt", "-m", runs["transformer"]))


def test_parse_a_thousand_word_line(setup, tmp_path):
    _, _, runs = setup
    (tmp_path / "in.txt").write_text(" ".join(["the", "bill"] * 500) + "\n")
    result = _invoke("parse", tmp_path / "in.txt", "-m", runs["udgn"], "-f", "ptb")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("(X ") >= 1000


def test_parse_an_empty_input_and_a_missing_model(setup, tmp_path):
    _, _, runs = setup
    (tmp_path / "empty.txt").write_text("")
    result = _invoke("parse", tmp_path / "empty.txt", "-m", runs["udgn"])
    assert result.exit_code == 0 and result.stdout == ""
    _one_error(_invoke("parse", tmp_path / "empty.txt", "-m", tmp_path / "nothing"))


def test_evaluate_mlm_mask_rate(setup):
    root, data, runs = setup
    _one_error(_invoke("evaluate", "mlm", "-m", runs["udgn"], "-d", data, "--mask-rate", "1.5"))


def test_a_weights_file_that_is_not_one(setup, tmp_path):
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    from induce.runs.directory import open_run

    open_run(run).weights("best").write_bytes(b"\x00garbage")
    (tmp_path / "in.txt").write_text("the bill passed\n")
    _one_error(_invoke("parse", tmp_path / "in.txt", "-m", run))


def _renamed(tokens: list, old: str, new: object) -> list:
    return [new if t == old else t for t in tokens]


@pytest.mark.parametrize(
    "change, fragment",
    [
        (lambda v: {**v, "tokens": []}, "no <unk> token"),
        (lambda v: {**v, "tokens": _renamed(v["tokens"], "<unk>", "<UNK>")}, "no <unk> token"),
        (lambda v: {**v, "tokens": _renamed(v["tokens"], "<pad>", "<PAD>")}, "no <pad> token"),
        (lambda v: {**v, "tokens": _renamed(v["tokens"], "<mask>", "m")}, "no <mask> token"),
        (lambda v: {**v, "tokens": _renamed(v["tokens"], "the", 7)}, "list of strings"),
        (lambda v: {**v, "tokens": "the bill"}, "list of strings"),
        (lambda v: {**v, "tokens": v["tokens"] + ["the"]}, "'the' twice"),
        (lambda v: {**v, "specials": [1]}, "list of strings"),
        (lambda v: {**v, "counts": []}, '"counts" must be an object'),
        (lambda v: v["tokens"], 'an object with "tokens"'),
    ],
    ids=["empty", "no-unk", "no-pad", "no-mask", "int-token", "text", "twice", "specials"]
    + ["counts", "list"],
)
def test_parse_with_a_bad_vocabulary(setup, tmp_path, change, fragment):
    """A run's vocab.json without the specials batching needs, or not a vocabulary: one line
    naming the file (it used to be a KeyError '<unk>' in Vocabulary.id)."""
    import json

    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    vocab = json.loads((run / "vocab.json").read_text())
    assert "the" in vocab["tokens"]
    (run / "vocab.json").write_text(json.dumps(change(vocab)))
    before = _digest(run)
    (tmp_path / "in.txt").write_text("the bill passed\n")
    result = _invoke("parse", tmp_path / "in.txt", "-m", run, "-o", tmp_path / "out")
    _one_error(result)
    assert f"{run / 'vocab.json'}: " in result.stderr and fragment in result.stderr
    assert not (tmp_path / "out").exists() and _digest(run) == before
