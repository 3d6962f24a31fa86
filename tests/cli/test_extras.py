"""Optional extras are checked before a command works, with the extra to install named."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data import extras
from induce.data.errors import ConfigError


def test_a_missing_extra_is_one_line_naming_the_extra(monkeypatch):
    monkeypatch.setattr(extras, "available", lambda module: False)
    with pytest.raises(ConfigError, match=r"needs matplotlib.*pip install 'induce\[plot\]'"):
        extras.require("matplotlib", "plot")


def test_pcc_plot_checks_matplotlib_before_loading_the_model(monkeypatch, write, tmp_path):
    monkeypatch.setattr(extras, "available", lambda module: module != "matplotlib")
    gold = write("g.conllu", "1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n\n")
    out = tmp_path / "pcc.json"
    args = ["evaluate", "pcc", gold, "--model", str(tmp_path / "no-run"), "--plot", "p.png"]
    result = CliRunner().invoke(app, [*args, "--json", str(out)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --plot needs matplotlib, which is not installed: pip install 'induce[plot]'"
    ]
    assert not out.exists()


def test_installed_modules_are_available():
    assert extras.available("json") and not extras.available("no_such_module_here")
