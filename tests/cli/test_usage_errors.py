"""Usage errors (an unknown option or subcommand, a bad choice, a missing argument, a value
out of range, a config file that is not YAML) print the one line ``error: ...`` with exit
code 2 that every other error prints, not Typer's box nor a traceback; help and the version
still print in full."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from induce.cli.app import app

TREES = "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat))))\n"


@pytest.mark.parametrize(
    "args",
    [
        ["evaluate", "brackets", "{g}", "{g}", "--format", "xml"],
        ["evaluate", "brackets", "{g}", "{g}", "--no-such-option"],
        ["evaluate", "brackets"],
        ["evaluate", "no-such-command"],
        ["convert", "checkpoint", "--arch", "nosuch", "{g}", "-o", "{out}"],
        ["train", "--arch", "nosuch", "--data", "{g}", "--out", "{out}"],
        ["parse", "{g}", "--punct", "sometimes"],
        ["preprocess", "ptb"],
    ],
    ids=lambda args: " ".join(a for a in args if not a.startswith("{")),
)
def test_a_usage_error_is_one_line(tmp_path, args):
    gold = tmp_path / "g.mrg"
    gold.write_text(TREES)
    args = [a.format(g=gold, out=tmp_path / "out") for a in args]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "╭" not in result.stderr and "Usage:" not in result.stderr
    assert not (tmp_path / "out").exists()


# Values a command can never use, refused before any run, model or dataset is opened (the
# run and dataset named here do not exist: the error must be about the value, not them).
NEVER = [
    # a grammar's root rewrites to two symbols: no sentence of one word is ever drawn
    (["sample", "{run}", "-n", "2", "--max-words", "1"], "--max-words must be 2 or more"),
    (["sample", "{run}", "--seed", "99999999999999999999999"], "--seed must be in [0, 1844"),
    (["sample", "{run}", "--seed", "-1"], "--seed must be in [0, 1844"),
    (["sample", "{run}", "--weights", "middle"], "--weights must be one of best, last"),
    (["parse", "{g}", "-m", "{run}", "--weights", "middle"], "--weights must be one of best"),
    (
        ["evaluate", "mlm", "-m", "{run}", "-d", "{data}", "--weights", "middle"],
        "--weights must be one of best, last",
    ),
    (
        ["evaluate", "likelihood", "-m", "{run}", "-d", "{data}", "--weights", "middle"],
        "--weights must be one of best, last",
    ),
    (["evaluate", "pcc", "{g}", "-m", "{run}", "--weights", "last1"], "--weights must be one"),
    (["evaluate", "pcc", "{g}", "-m", "{run}", "--top", "0"], "'--top'"),
    (["evaluate", "pcc", "{g}", "-m", "{run}", "--top", "-1"], "'--top'"),
]


@pytest.mark.parametrize(
    "args, fragment",
    NEVER,
    ids=[" ".join(a for a in args if not a.startswith("{")) for args, _ in NEVER],
)
def test_a_value_a_command_can_never_use_is_one_line(tmp_path, args, fragment):
    gold = tmp_path / "g.mrg"
    gold.write_text(TREES)
    names = {"g": gold, "run": tmp_path / "run", "data": tmp_path / "data"}
    result = CliRunner().invoke(app, [a.format(**names) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert fragment in lines[0], lines[0]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    from tests.train.helpers import make_dataset

    return make_dataset(tmp_path_factory.mktemp("ranges"))


@pytest.mark.parametrize(
    "seed",
    [["--seed", "99999999999999999999999"], ["--set", f"train.seed={2**64}"]],
    ids=["--seed", "--set"],
)
def test_a_seed_torch_cannot_take_is_a_settings_error(tmp_path, dataset, seed):
    out = tmp_path / "run"
    args = ["train", "--arch", "udgn", "--data", str(dataset), "--out", str(out), *seed]
    result = CliRunner().invoke(app, [*args, "--device", "cpu"])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "seed: must be in [0, 18446744073709551615]" in lines[0], lines
    assert not out.exists()


def test_a_config_file_that_is_not_yaml_names_its_line(tmp_path, dataset):
    bad = tmp_path / "bad.yaml"
    bad.write_text("arch: udgn\nmodel: [1, 2\n")
    out = tmp_path / "run"
    args = ["train", "-c", str(bad), "--data", str(dataset), "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--device", "cpu"])
    assert result.exit_code == 2, result.output
    # PyYAML's own message spans lines and says where in "<unicode string>"
    expected = f"error: {bad}:3: not valid YAML: expected ',' or ']', but got '<stream end>'"
    assert result.stderr.strip().splitlines() == [expected]
    assert not out.exists()


def test_help_and_version_still_print():
    assert "Usage:" in CliRunner().invoke(app, ["evaluate", "brackets", "--help"]).stdout
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("induce ")
