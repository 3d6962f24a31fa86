"""An output named ``-`` is stdout's whole output: ``evaluate ... --json -`` and ``report
--csv -`` (or ``--markdown -``, ``--latex -``) used to write their document and then the
table as well, two documents that no reader of the pipe could take apart."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from induce.cli.app import app

TREES = (
    "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))\n"
    "(TOP (S (NP (PRP It)) (VP (VBD rained) (ADVP (RB hard))) (. .)))\n"
)


@pytest.fixture
def gold(tmp_path):
    path = tmp_path / "gold.mrg"
    path.write_text(TREES)
    return path


@pytest.mark.parametrize("fmt", [[], ["-f", "json"], ["-f", "table"]])
def test_json_to_stdout_is_the_only_output(gold, fmt):
    args = ["evaluate", "unsupervised", str(gold), "--baseline", "right", "--json", "-", *fmt]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)  # one document: "Extra data" before
    assert report["settings"]["baseline"] == "right"


def _run(tmp_path):
    run = tmp_path / "run"
    (run / "eval").mkdir(parents=True)
    (run / "config.yaml").write_text("arch: udgn\ntrain:\n  seed: 1\n")
    (run / "eval" / "uf1.json").write_text('{"sentence_f1": 61.0, "corpus_f1": 60.0}')
    return run


def test_a_report_table_to_stdout_replaces_the_markdown(tmp_path):
    run = _run(tmp_path)
    result = CliRunner().invoke(app, ["report", str(run), "--csv", "-"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["UF1 mean"] for row in rows] == ["61.0"] and "|" not in result.stdout
    result = CliRunner().invoke(app, ["report", str(run), "--markdown", "-"])
    assert result.stdout.count("| udgn |") == 1  # once, not twice


def test_two_report_tables_to_stdout_are_refused(tmp_path):
    run = _run(tmp_path)
    result = CliRunner().invoke(app, ["report", str(run), "--markdown", "-", "--csv", "-"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "error: --markdown and --csv both name stdout (-): give one\n"


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="no /dev/stdout")
def test_dev_stdout_is_written_through(gold, tmp_path):
    """``-o /dev/stdout`` (or ``--csv /dev/stdout``) was refused as a symbolic link with
    "name its target instead": a pipe has no name to give.  A link to a pipe, terminal or
    device, or a descriptor link onto the file the shell opened, is written through (onto a
    file, after what was printed before); any other link is still refused."""
    command = [sys.executable, "-m", "induce.cli.app", "convert", "trees", str(gold)]
    piped = subprocess.run([*command, "-o", "/dev/stdout"], capture_output=True, text=True)
    assert piped.returncode == 0 and piped.stdout == TREES, piped.stderr
    out = tmp_path / "out.txt"
    with open(out, "w") as handle:
        handle.write("first\n")
        handle.flush()
        done = subprocess.run([*command, "-o", "/dev/stdout"], stdout=handle, text=True)
    assert done.returncode == 0 and out.read_text() == "first\n" + TREES
    (tmp_path / "link").symlink_to(out)
    linked = subprocess.run(
        [*command, "-o", str(tmp_path / "link")], capture_output=True, text=True
    )
    assert linked.returncode == 2 and "will not replace a symbolic link" in linked.stderr
    assert out.read_text() == "first\n" + TREES and (tmp_path / "link").is_symlink()
