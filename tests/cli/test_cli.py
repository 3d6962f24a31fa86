"""The ``induce`` command: options map to the library, errors are one line with exit code 2,
no partial output files, and ``induce evaluate`` never imports torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import induce
from induce.cli.app import app
from tests.conftest import ROOT

GOLD = (
    "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) "
    "(. .)))\n(TOP (S (NP (PRP It)) (VP (VBD rained)) (. .)))\n"
)
PRED = (
    "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (PP (IN on) (NP (DT the) (NN mat))) "
    "(. .)))\n(TOP (S (NP (PRP It)) (VP (VBD rained)) (. .)))\n"
)
DEPS = "The\tDT\t2\ncat\tNN\t3\nsat\tVBD\t0\n.\t.\t3\n\n"

runner = CliRunner()


def run(*args: str, **kwargs):
    return runner.invoke(app, list(args), **kwargs)


def test_help_and_version():
    result = run("--help")
    assert result.exit_code == 0 and "evaluate" in result.output
    result = run("--version")
    assert result.exit_code == 0 and result.output.strip() == f"induce {induce.__version__}"
    for command in ("brackets", "unsupervised", "deps", "baselines"):
        assert run("evaluate", command, "--help").exit_code == 0


def test_brackets_table_json_and_evalb_formats(write, tmp_path):
    gold, pred = write("gold.mrg", GOLD), write("pred.mrg", PRED)
    table = run("evaluate", "brackets", gold, pred)
    assert table.exit_code == 0, table.output
    assert "Recall" in table.output and "len<=40" in table.output
    out = tmp_path / "scores.json"
    quiet = run("evaluate", "brackets", gold, pred, "--json", str(out), "--quiet")
    assert quiet.exit_code == 0 and quiet.output == ""
    data = json.loads(out.read_text())
    assert set(data) == {"settings", "all", "len<=40", "errors"}
    assert data["settings"]["evalb"]["name"] == "collins"
    assert data["all"]["gold_brackets"] == 8 and data["all"]["matched"] == 7
    assert json.loads(run("evaluate", "brackets", gold, pred, "-f", "json").output) == data
    evalb = run("evaluate", "brackets", gold, pred, "--format", "evalb", "-p", "unlabeled")
    assert "=== Summary ===" in evalb.output and "Bracketing FMeasure" in evalb.output


def test_unsupervised_and_deps(write):
    gold = write("gold.mrg", GOLD)
    result = run(
        "evaluate",
        "unsupervised",
        gold,
        "--baseline",
        "right",
        "-f",
        "json",
        "-l",
        "NP",
        "-l",
        "VP",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["settings"]["convention"]["name"] == "structformer"
    assert list(data["per_label_recall"]) == ["NP", "VP"]
    cp = json.loads(
        run(
            "evaluate", "unsupervised", gold, "--baseline", "left", "-c", "cpcfg", "-f", "json"
        ).output
    )
    assert cp["settings"]["convention"]["max_words"] == 150
    deps = write("gold.dp", DEPS)
    result = run("evaluate", "deps", deps, "--baseline", "next", "-f", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["uas"] == 100.0  # next-word heads are the gold here
    table = run("evaluate", "deps", deps, deps, "-c", "structformer")
    assert table.exit_code == 0 and "UAS" in table.output


def test_baselines_command_uses_the_builtin_treebank():
    result = run("evaluate", "baselines", "-f", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [row["baseline"] for row in data["rows"]][:3] == ["right", "left", "balanced"]
    assert "built-in sample treebank" in result.stderr


def test_baselines_read_their_gold_once(write):
    """The gold was read twelve times (four baselines, three scorers): from standard input or
    a pipe the second reading found no sentences."""
    gold = write("gold.mrg", GOLD)
    from_file = json.loads(run("evaluate", "baselines", gold, "-f", "json").stdout)
    piped = run("evaluate", "baselines", "-", "-f", "json", input=GOLD)
    assert piped.exit_code == 0, piped.output
    assert json.loads(piped.stdout)["rows"] == from_file["rows"]


@pytest.mark.parametrize(
    "files, args, fragment",
    [
        (
            {"gold.mrg": GOLD, "pred.mrg": PRED.splitlines()[0] + "\n"},
            ["brackets"],
            "2 sentences in the gold file",
        ),
        # an empty file is no sentence, not one blank line (one failed parse)
        (
            {"gold.mrg": GOLD.splitlines()[0] + "\n", "pred.mrg": ""},
            ["brackets"],
            "1 sentences in the gold file",
        ),
        ({"gold.mrg": GOLD, "pred.mrg": "(S (NN a)\n"}, ["brackets"], "pred.mrg:1: unbalanced"),
        ({"gold.mrg": GOLD, "pred.mrg": b"(S (NN \xff))\n"}, ["brackets"], "not valid UTF-8"),
        (
            {"gold.mrg": GOLD, "pred.mrg": "(X (X the) (X dog))\n(X it rained)\n"},
            ["unsupervised"],
            "pred.mrg:2: bracket (X ...) holds the word",
        ),
        (
            {"gold.mrg": GOLD, "pred.mrg": "(X (X the) (X dog))\n(X (X it) (X rained))\n"},
            ["unsupervised"],
            "tokens differ from the gold",
        ),
        (
            {"gold.dp": "The\tDT\t2\ncat\tNN\t1\nsat\tVBD\t0\n.\t.\t3\n\n", "pred.dp": DEPS},
            ["deps"],
            "gold.dp:1: not a dependency tree: cycle",
        ),
        (
            {"gold.mrg": GOLD, "pred.mrg": PRED},
            ["brackets", "-p", "nonesuch"],
            "unknown EVALB parameters",
        ),
        (
            {"gold.mrg": GOLD, "pred.mrg": PRED},
            ["unsupervised", "-c", "nonesuch"],
            "unknown convention",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2_and_no_json(write, tmp_path, files, args, fragment):
    paths = [write(name, text) for name, text in files.items()]
    out = tmp_path / "out.json"
    result = run("evaluate", args[0], *paths, *args[1:], "--json", str(out))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], lines
    assert "Traceback" not in result.output
    assert not out.exists()


def test_usage_errors_exit_2(write):
    gold = write("gold.mrg", GOLD)
    both = run("evaluate", "brackets", gold, gold, "--baseline", "right")
    assert both.exit_code == 2 and "not both" in both.output
    assert run("evaluate", "brackets", gold).exit_code == 2
    assert run("evaluate", "brackets", gold, gold, "-f", "yaml").exit_code == 2
    assert run("evaluate", "brackets", write("g2.mrg", GOLD), "/no/such/pred").exit_code == 2


def test_stdin_gold(write):
    pred = write("pred.mrg", PRED)
    result = run("evaluate", "brackets", "-", pred, "-f", "json", input=GOLD)
    assert result.exit_code == 0 and json.loads(result.stdout)["all"]["sentences"] == 2


@pytest.mark.parametrize(
    "command, gold, pred",
    [("brackets", GOLD, PRED), ("unsupervised", GOLD, PRED), ("deps", DEPS, DEPS)],
)
def test_evaluate_does_not_import_torch(write, command, gold, pred):
    suffix = ".dp" if command == "deps" else ".mrg"
    gold, pred = write("gold" + suffix, gold), write("pred" + suffix, pred)
    code = (
        "import sys\nfrom induce.cli.app import main\n"
        f"sys.argv = ['induce', 'evaluate', {command!r}, {gold!r}, {pred!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "assert 'nltk' not in sys.modules, 'nltk was imported'\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr


def _induce(*args: str, stdout) -> subprocess.Popen:
    """``induce ARGS`` in a fresh process (standard output where the caller says)."""
    code = (
        f"import sys\nfrom induce.cli.app import main\nsys.argv = ['induce', *{args!r}]\nmain()\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=stdout, stderr=subprocess.PIPE, text=True, env=env
    )


OUTPUTS = [
    ["convert", "trees", "{gold}"],
    ["evaluate", "brackets", "{gold}", "{gold}"],  # a Rich table
    ["evaluate", "brackets", "{gold}", "{gold}", "-f", "json"],
]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", OUTPUTS, ids=lambda a: " ".join(a[:2] + a[4:]))
def test_a_full_standard_output_is_one_line(write, args):
    gold = write("gold.mrg", GOLD)
    with open("/dev/full", "w") as full:
        done = _induce(*(a.format(gold=gold) for a in args), stdout=full)
        _, err = done.communicate(timeout=120)
    assert done.returncode == 2, err  # as -o /dev/full
    assert err.splitlines() == ["error: -: cannot write: No space left on device"], err


@pytest.mark.parametrize(
    "args",
    [OUTPUTS[0], ["evaluate", "brackets", "{gold}", "{gold}", "-f", "evalb"]],
    ids=lambda a: " ".join(a[:2] + a[4:]),
)
def test_a_closed_pipe_ends_quietly(write, args):
    # more than a pipe holds (64 KiB), so that a write meets the closed end
    gold = write("gold.mrg", GOLD * 2000)
    done = _induce(*(a.format(gold=gold) for a in args), stdout=subprocess.PIPE)
    assert done.stdout is not None
    done.stdout.read(10)
    done.stdout.close()  # `induce ... | head -c 10`
    err = done.stderr.read() if done.stderr else ""
    assert done.wait(timeout=120) == 0 and err == "", err


def test_a_rich_table_into_a_closed_pipe_ends_quietly_too(write, tmp_path):
    """Rich's own handler of a closed pipe exits with 1; a table command ends as the others
    do (exit 0, nothing on stderr), after its work: the dataset is written."""
    gold = write("gold.mrg", GOLD)
    out = tmp_path / "data"
    for args in (
        ["evaluate", "brackets", gold, gold],
        ["preprocess", "text", "--train", gold, "-o", str(out)],
    ):
        read, written = os.pipe()
        os.close(read)  # `induce ... | true`: the reader is gone before the table is printed
        try:
            done = _induce(*args, stdout=written)
        finally:
            os.close(written)
        err = done.stderr.read() if done.stderr else ""
        assert done.wait(timeout=120) == 0 and err == "", (args, err)
    assert (out / "manifest.yaml").is_file()


def test_paths_are_not_read_as_markup(tmp_path):
    folder = tmp_path / "exp[lr=1e-3]" / "x[/bold]"
    folder.mkdir(parents=True)
    (folder / "gold.mrg").write_text(GOLD)
    result = run("evaluate", "brackets", str(folder / "gold.mrg"), str(folder / "gold.mrg"))
    assert result.exit_code == 0, result.output
    assert "exp[lr=1e-3]" in result.stdout.replace("\n", "")


def test_unwritable_json_target(write, tmp_path):
    gold = write("gold.mrg", GOLD)
    result = run("evaluate", "brackets", gold, gold, "--json", str(tmp_path))
    assert result.exit_code == 2 and "cannot write: is a directory" in result.stderr


def test_an_output_that_cannot_be_written_stops_the_others_too(write, tmp_path):
    """--html was written before --json into a missing folder failed: a failed command had
    replaced one of its outputs (every output is now checked before any work)."""
    gold = write("gold.mrg", GOLD)
    page = write("page.html", "the old page\n")
    for command in ("brackets", "deps"):
        source = gold if command == "brackets" else write("d.dp", "a\tDT\t2\nb\tNN\t0\n\n")
        args = [command, source, source, "--json", str(tmp_path / "nodir" / "x.json")]
        result = run("evaluate", *args, "--html", page, "-q")
        assert result.exit_code == 2 and "the folder does not exist" in result.stderr
        assert Path(page).read_text() == "the old page\n"


def test_json_to_stdout_with_a_dash(write):
    gold = write("gold.mrg", GOLD)
    result = run("evaluate", "brackets", gold, gold, "--json", "-", "-q")
    assert result.exit_code == 0 and json.loads(result.stdout)["all"]["f1"] == 100.0


def test_standard_input_for_two_inputs_is_refused(write):
    """`evaluate unsupervised - -` blamed "0 sentences in the prediction": the gold had read
    all of standard input."""
    result = run("evaluate", "unsupervised", "-", "-", input=GOLD)
    assert result.exit_code == 2
    assert result.stderr == "error: GOLD and PRED are both - (standard input): one at most may be\n"


def test_a_word_standard_outputs_encoding_lacks_is_one_line(write, monkeypatch):
    """With PYTHONIOENCODING=ascii (or a Latin-1 terminal) a word such as café ended in a
    UnicodeEncodeError traceback."""
    gold = write("gold.mrg", "(S (NN café) (NN b))\n")
    monkeypatch.setenv("PYTHONIOENCODING", "ascii")
    done = _induce("convert", "trees", gold, stdout=subprocess.PIPE)
    _, err = done.communicate(timeout=120)
    assert done.returncode == 2
    assert err.startswith("error: -: cannot write 'é' in standard output's encoding (ascii)")
