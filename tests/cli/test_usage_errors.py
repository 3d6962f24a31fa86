"""Usage errors (an unknown option or subcommand, a bad choice, a missing argument) print the
one line ``error: ...`` with exit code 2 that every other error prints, not Typer's box;
help and the version still print in full."""

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


def test_help_and_version_still_print():
    assert "Usage:" in CliRunner().invoke(app, ["evaluate", "brackets", "--help"]).stdout
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("induce ")
