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
def test_dev_stdout_is_the_stream_itself(gold, tmp_path):
    """``-o /dev/stdout`` (or ``--json /dev/stdout``) was refused as a symbolic link with
    "name its target instead": a pipe has no name to give.  It is now written through the
    process's own stream, in order with what the command prints (a reopened /dev/stdout
    onto a file wrote from another position, over the JSON); a link to standard input and
    any other link are refused."""
    command = [sys.executable, "-m", "induce.cli.app"]
    convert = [*command, "convert", "trees", str(gold)]
    piped = subprocess.run([*convert, "-o", "/dev/stdout"], capture_output=True, text=True)
    assert piped.returncode == 0 and piped.stdout == TREES, piped.stderr
    out = tmp_path / "out.txt"
    with open(out, "w") as handle:
        handle.write("first\n")
        handle.flush()
        done = subprocess.run([*convert, "-o", "/dev/stdout"], stdout=handle, text=True)
    assert done.returncode == 0 and out.read_text() == "first\n" + TREES
    scored = [*command, "evaluate", "brackets", str(gold), str(gold), "--json", "/dev/stdout"]
    with open(out, "w") as handle:
        assert subprocess.run(scored, stdout=handle, stderr=subprocess.DEVNULL).returncode == 0
    report, end = json.JSONDecoder().raw_decode(out.read_text())
    assert report["all"]["f1"] == 100.0 and "Precision" in out.read_text()[end:]
    (tmp_path / "link").symlink_to(out)
    for target, message in ((tmp_path / "link", "will not replace a symbolic link"),
                            ("/dev/stdin", "will not write to standard input")):  # fmt: skip
        refused = subprocess.run([*convert, "-o", str(target)], capture_output=True, text=True)
        assert refused.returncode == 2 and message in refused.stderr
    assert (tmp_path / "link").is_symlink()
