"""One output guard for every command and every output flag (``cli.common.OUTPUT_FLAGS``):
an output may not be one of the command's inputs (the same file through a link or another
spelling of its path), nor the file of another output of the same command.  Each case stops
before any work with exit code 2 and one ``error:`` line, writes nothing and changes no
input.  The cases are generated from the app itself: every (subcommand, output flag) pair."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from induce.cli.app import app
from induce.cli.common import OUTPUT_FLAGS
from tests.reliability.test_bad_inputs import CONFIG, CONLLU, DISTANCES, EVAL, MALT, TEXT, TREES
from tests.reliability.test_bad_runs import _digest, _one_error
from tests.train.helpers import make_dataset, tiny

Args = Callable[[Path, Path, Path], list[str]]  # (case folder, run, dataset) -> arguments


def _flags_of_the_app() -> dict[str, list[str]]:
    """Every subcommand's output flags, read from the Typer app."""
    found: dict[str, list[str]] = {}

    def walk(command, prefix: str) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, f"{prefix} {name}".strip())
            return
        flags = [o for p in command.params for o in p.opts if o in OUTPUT_FLAGS]
        if flags:
            found[prefix] = flags

    walk(typer.main.get_command(app), "")
    return found


# per subcommand: its input files (name -> text; the first is the one outputs aim at) and
# its arguments without outputs
COMMANDS: dict[str, tuple[dict[str, str], Args]] = {
    "parse": (
        {"in.txt": TEXT},
        lambda d, run, data: ["parse", str(d / "in.txt"), "--model", str(run), "--device", "cpu"],
    ),
    "report": (
        {"run/eval/uf1.json": EVAL, "run/config.yaml": CONFIG},
        lambda d, run, data: ["report", str(d / "run")],
    ),
    "evaluate brackets": (
        {"gold.mrg": TREES, "pred.mrg": TREES},
        lambda d, run, data: ["evaluate", "brackets", str(d / "gold.mrg"), str(d / "pred.mrg")],
    ),
    "evaluate unsupervised": (
        {"gold.mrg": TREES, "pred.mrg": TREES},
        lambda d, run, data: ["evaluate", "unsupervised", str(d / "gold.mrg"), str(d / "pred.mrg")],
    ),
    "evaluate deps": (
        {"gold.conllu": CONLLU, "pred.dp": MALT},
        lambda d, run, data: ["evaluate", "deps", str(d / "gold.conllu"), str(d / "pred.dp")],
    ),
    "evaluate baselines": (
        {"gold.mrg": TREES},
        lambda d, run, data: ["evaluate", "baselines", str(d / "gold.mrg")],
    ),
    "evaluate mlm": (
        {},  # its inputs are folders: the outputs aim at the run's config.yaml, which it reads
        lambda d, run, data: [
            "evaluate",
            "mlm",
            "-m",
            str(run),
            "-d",
            str(data),
            "--device",
            "cpu",
        ],
    ),
    "evaluate likelihood": (
        {},  # as evaluate mlm: the guard refuses before the run is read
        lambda d, run, data: ["evaluate", "likelihood", "-m", str(run), "-d", str(data)],
    ),
    "sample": (
        {},
        lambda d, run, data: ["sample", str(run), "-n", "2"],
    ),
    "evaluate pcc": (
        {"gold.conllu": CONLLU.replace("\t2\tdep\t", "\t2\tdet\t", 1)},  # two labels
        lambda d, run, data: [
            "evaluate",
            "pcc",
            str(d / "gold.conllu"),
            "-m",
            str(run),
            "--device",
            "cpu",
        ],
    ),
    "convert trees": (
        {"in.mrg": TREES},
        lambda d, run, data: ["convert", "trees", str(d / "in.mrg"), "--strip-traces"],
    ),
    "convert deps": (
        {"in.conllu": CONLLU},
        lambda d, run, data: ["convert", "deps", str(d / "in.conllu"), "--to", "malt"],
    ),
    "convert distances": (
        {"in.jsonl": DISTANCES},
        lambda d, run, data: ["convert", "distances", str(d / "in.jsonl"), "--to", "both"],
    ),
    "convert headrules": (
        {"in.mrg": TREES},
        lambda d, run, data: ["convert", "headrules", str(d / "in.mrg")],
    ),
}
FLAGS = _flags_of_the_app()
PLACES = ("the input through a link", "the input by another path", "another output's file")
CASES = [
    pytest.param(command, flag, place, id=f"{command}|{flag}|{place}")
    for command, flags in sorted(FLAGS.items())
    for flag in flags
    for place in PLACES
    if place != "another output's file" or len(flags) > 1
]


def test_every_output_flag_of_every_subcommand_has_cases():
    assert set(FLAGS) == set(COMMANDS)
    assert sum(len(f) for f in FLAGS.values()) >= 20


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("guard")
    data = make_dataset(root)
    sets = [x for s in tiny("udgn") + ["train.max_steps=2"] for x in ("--set", s)]
    run = root / "run"
    args = ["train", "--arch", "udgn", "--data", str(data), "--out", str(run), *sets]
    result = CliRunner().invoke(app, [*args, "--device", "cpu"])
    assert result.exit_code == 0, result.output
    return run, data


@pytest.mark.parametrize("command, flag, place", CASES)
def test_an_output_that_is_an_input_or_another_output_is_refused(
    trained, tmp_path, command, flag, place
):
    run, data = trained
    files, args = COMMANDS[command]
    inputs, outputs = tmp_path / "in", tmp_path / "out"
    (inputs / "sub").mkdir(parents=True)
    outputs.mkdir()
    for name, text in files.items():
        (inputs / name).parent.mkdir(parents=True, exist_ok=True)
        (inputs / name).write_text(text)
    target = inputs / next(iter(files)) if files else run / "config.yaml"
    watched = [inputs, run, data]
    before = [_digest(folder) for folder in watched]
    extra: list[str] = []
    if place == "the input through a link":
        os.symlink(target, outputs / "link")
        path = str(outputs / "link")
    elif place == "the input by another path":
        path = os.path.relpath(target.parent / "sub" / ".." / target.name)
    else:
        path = str(outputs / "result")
        other = next(f for f in FLAGS[command] if f != flag)
        extra = [other, path]
    result = CliRunner().invoke(app, [*args(inputs, run, data), flag, path, *extra])
    _one_error(result)
    assert [_digest(folder) for folder in watched] == before
    left = sorted(p.name for p in outputs.iterdir())
    assert left == (["link"] if place == "the input through a link" else [])


@pytest.mark.parametrize("budget", ["0", "-5"])
def test_parse_refuses_a_batch_budget_below_one(trained, tmp_path, budget):
    run, _ = trained
    text = tmp_path / "in.txt"
    text.write_text(TEXT)
    out = tmp_path / "out.conllu"
    args = ["parse", str(text), "--model", str(run), "--batch-tokens", budget, "-o", str(out)]
    _one_error(CliRunner().invoke(app, [*args, "--device", "cpu"]))
    assert not out.exists()


def _run_file(run: Path, data: Path, name: str) -> Path:
    """A file of the trained run or its dataset, named by its role."""
    from induce.runs.directory import STATE, read_pointer

    pointer = read_pointer(run)
    assert pointer is not None
    return {
        "weights": run / pointer["best"] / "model.safetensors",
        "trainer state": run / pointer["last"] / STATE,
        "metrics": run / "metrics.jsonl",
        "test split": data / "test.txt",
        "training split": data / "train.txt",
    }[name]


# outputs aimed at a file that the command loads while it works (not a path on its command
# line: the guard before the work cannot see them): refused when the output is written,
# with nothing replaced
LOADED = [
    ("parse", "--output", "weights"),
    ("parse", "--output", "trainer state"),
    ("parse", "--output", "metrics"),
    ("report", "--csv", "weights"),
    ("report", "--latex", "metrics"),
    ("report", "--markdown", "trainer state"),
    ("evaluate pcc", "--json", "weights"),
    ("evaluate mlm", "--json", "test split"),
    ("evaluate mlm", "--json", "training split"),
    ("evaluate mlm", "--json", "weights"),
]


@pytest.mark.parametrize("command, flag, target", LOADED, ids=[" ".join(c) for c in LOADED])
def test_an_output_aimed_at_a_file_the_command_loads_is_refused(
    trained, tmp_path, command, flag, target
):
    run, data = trained
    files, args = COMMANDS[command]
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    if command == "report":  # the trained run, not the fixture's stand-in
        args = lambda d, run, data: ["report", str(run)]  # noqa: E731
    if command == "evaluate mlm":  # a test split of words the run knows: some get masked
        text, data = str(data / "train.txt"), tmp_path / "data"
        made = ["preprocess", "text", "--train", text, "--test", text, "--vocab", str(run)]
        assert CliRunner().invoke(app, [*made, "-o", str(data)]).exit_code == 0
    path = _run_file(run, data, target)
    before = [_digest(run), _digest(data)]
    result = CliRunner().invoke(app, [*args(tmp_path, run, data), flag, str(path)])
    _one_error(result)
    assert "will not overwrite a file this command reads" in result.stderr
    assert [_digest(run), _digest(data)] == before
    assert result.stdout == ""  # no half of the output printed before the refusal


@pytest.mark.parametrize(
    "args",
    [
        ["convert", "trees", "{trees}", "-o", ""],
        ["evaluate", "brackets", "{trees}", "{trees}", "--json", ""],
    ],
)
def test_an_empty_output_name_is_refused(tmp_path, args):
    """``-o ''`` wrote to standard output, as ``-`` does, without a word."""
    trees = tmp_path / "t.mrg"
    trees.write_text(TREES)
    result = CliRunner().invoke(app, [a.format(trees=trees) for a in args])
    _one_error(result)
    assert "an empty file name; give a file, or - for standard output" in result.stderr
