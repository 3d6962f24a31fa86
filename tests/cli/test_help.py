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
