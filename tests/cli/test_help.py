"""``--help`` says what each option takes and what it defaults to, once per option."""

from __future__ import annotations

import inspect
import re

import pytest
from typer.models import OptionInfo
from typer.testing import CliRunner

from induce.cli.app import app
from induce.cli.helptext import _callbacks, metavar, reflow

COMMANDS = [
    ["train"],
    ["parse"],
    ["report"],
    ["sample"],
    *[
        ["evaluate", c]
        for c in ("brackets", "unsupervised", "deps", "baselines", "mlm", "likelihood", "pcc")
    ],
    *[["convert", c] for c in ("distances", "headrules", "trees", "deps", "checkpoint")],
    *[["preprocess", c] for c in ("ptb", "bllip", "mikolov", "text", "synthetic")],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_options_show_real_metavars_and_their_defaults(command):
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if re.match(r"[│|] +-", line)]
    assert rows, result.output
    for row in rows:
        assert not re.search(r"<(str|int|float|bool|path)>", row), row
    assert not re.search(r"<(str|int|float|bool|path)>", result.output)  # arguments too


def test_written_defaults_survive_the_formatter():
    result = CliRunner().invoke(app, ["parse", "--help"], env={"COLUMNS": "200"})
    assert "[default: the most recent run]" in result.output
    assert "RUN" in result.output and "[default: attach]" in result.output
    assert "eval_batch_tokens" in result.output  # --batch-tokens: the run's, unless given


def test_each_option_of_a_command_has_its_own_help():
    for callback in _callbacks(app):
        helps: dict[str, list[str]] = {}
        for name, parameter in inspect.signature(callback).parameters.items():
            if isinstance(parameter.default, OptionInfo):
                helps.setdefault(parameter.default.help or "", []).append(name)
        same = {text: names for text, names in helps.items() if len(names) > 1}
        assert not same, f"{callback.__module__}.{callback.__name__}: {same}"


def test_metavars_by_type_and_name():
    assert metavar("batch_tokens", int) == "N"
    assert metavar("mask_rate", float | None) == "RATE"
    assert metavar("json_path", str | None) == "PATH"
    assert metavar("model", str) == "RUN"
    assert metavar("quiet", bool) == ""
    assert metavar("gold_format", str | None) == "GOLD-FORMAT"
    assert metavar("label", list[str] | None) == "LABEL"


def test_a_command_help_flows_to_the_terminal_width():
    result = CliRunner().invoke(app, ["train", "--help"], env={"COLUMNS": "200"})
    lines = [line.strip() for line in result.output.splitlines()]
    assert any(line.startswith("Train a grammar") and "stops." in line for line in lines)
    wide = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    assert re.search(r"parse +Induced .* written as they are parsed", wide), wide


def test_reflow_joins_paragraph_lines_and_keeps_the_rest():
    text = "One\ntwo --flag\n\nThree\n  indented\n- item\n* item\nfour"
    assert reflow(text) == "One two --flag\n\nThree\n  indented\n- item\n* item four"
    assert reflow(reflow(text)) == reflow(text)


def test_brackets_in_a_commands_own_help_are_shown():
    """Rich read "[n-1 numbers]" in a command's docstring as markup and dropped it (option
    help texts were escaped, command help texts were not)."""
    result = CliRunner().invoke(app, ["convert", "distances", "--help"], env={"COLUMNS": "200"})
    assert '"distances": [n-1 numbers], "heights": [n numbers]' in result.stdout


@pytest.mark.parametrize("args", [["--help"], ["parse", "--help"], ["--version"]], ids=" ".join)
def test_help_into_a_closed_pipe_or_a_full_disk(args):
    """`induce --help | head -1` exited 1 (Rich's and Typer's handlers), which fails a
    `set -o pipefail` script; the version into a full disk was a traceback."""
    import os
    import subprocess
    import sys

    command = [sys.executable, "-m", "induce.cli.app", *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader went away before a byte was read
    assert (process.wait(timeout=60), process.stderr.read()) == (0, b"")
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            done = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True)
        assert done.returncode == 2
        assert done.stderr == "error: -: cannot write: No space left on device\n"
