"""The terminal tables: they fit the terminal, name things once, and order relations by
how often they occur."""

from __future__ import annotations

from typer.testing import CliRunner

from induce.cli.app import app
from tests.cli.test_cli import GOLD, PRED

RELATIONS = ["det", "amod", "nsubj", *[f"r{k:02d}" for k in range(11)]]


def _conllu(counts: dict[str, int]) -> str:
    """One sentence per relation occurrence: a word with that relation under a root verb."""
    blocks = []
    for label, count in counts.items():
        for _ in range(count):
            blocks.append(
                f"1\tw\tw\tNOUN\tNN\t_\t2\t{label}\t_\t_\n2\tv\tv\tVERB\tVB\t_\t0\troot\t_\t_\n"
            )
    return "\n".join(blocks) + "\n"


def test_relations_by_frequency_and_all(write):
    counts = {label: 1 for label in RELATIONS} | {"det": 5, "amod": 3, "nsubj": 2}
    gold = write("gold.conllu", _conllu(counts))
    result = CliRunner().invoke(app, ["evaluate", "deps", gold, gold], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    out = result.stdout
    rows = [line.split("│")[1].strip() for line in out.splitlines()[-20:] if line.count("│") == 4]
    assert rows[:4] == ["root", "det", "amod", "nsubj"]  # 15 roots, then by count
    assert len(rows) == 12 and "the 12 most frequent of 15 (--all for every one)" in out
    every = CliRunner().invoke(app, ["evaluate", "deps", gold, gold, "--all"])
    table = every.stdout.split("Per-relation recall")[1]
    assert all(f" {label} " in table for label in RELATIONS) and "--all" not in table


def test_long_paths_are_cut_to_the_terminal_and_whole_with_wide(tmp_path):
    folder = tmp_path / ("a-rather-long-folder-name-" * 4)
    folder.mkdir()
    gold, pred = folder / "gold.mrg", folder / "pred.mrg"
    gold.write_text(GOLD)
    pred.write_text(PRED)
    args = ["evaluate", "brackets", str(gold), str(pred)]
    narrow = CliRunner().invoke(app, args, env={"COLUMNS": "70"})
    assert narrow.exit_code == 0, narrow.output
    lines = narrow.stdout.splitlines()
    assert all(len(line) <= 70 for line in lines), lines
    gold_line = next(line for line in lines if line.startswith("gold: "))
    assert gold_line.startswith("gold: …") and gold_line.endswith("/gold.mrg")
    wide = CliRunner().invoke(app, [*args, "--wide"], env={"COLUMNS": "70"})
    assert f"gold: {gold}" in wide.stdout.splitlines()


def test_the_evalb_title_names_the_mode_once(write):
    gold, pred = write("g.mrg", GOLD), write("p.mrg", PRED)
    unlabeled = CliRunner().invoke(app, ["evaluate", "brackets", gold, pred, "-p", "unlabeled"])
    assert unlabeled.stdout.splitlines()[0].strip() == "EVALB (unlabeled)"
    collins = CliRunner().invoke(app, ["evaluate", "brackets", gold, pred])
    assert collins.stdout.splitlines()[0].strip() == "EVALB (collins, labelled)"


def test_the_baselines_table_names_its_gold_under_it(tmp_path):
    folder = tmp_path / ("another-long-folder-name-" * 4)
    folder.mkdir()
    gold = folder / "gold.mrg"
    gold.write_text(GOLD)
    result = CliRunner().invoke(app, ["evaluate", "baselines", str(gold)], env={"COLUMNS": "70"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].strip() == "Baselines"
    assert lines[-1].startswith("gold: …") and lines[-1].endswith("/gold.mrg")
    assert len(lines[-1]) <= 70
    wide = CliRunner().invoke(app, ["evaluate", "baselines", str(gold), "--wide"])
    assert wide.stdout.splitlines()[-1] == f"gold: {gold}"


def test_a_narrow_terminal_gets_every_digit(write):
    """At COLUMNS=20 Rich fitted the tables by cutting cells: "63.…" for a number, "Precisi…"
    for a row; a table wider than the terminal is now printed whole, at its own width."""
    gold, pred = write("gold.mrg", GOLD), write("pred.mrg", PRED)
    args = ["evaluate", "unsupervised", gold, pred]
    wide = CliRunner().invoke(app, args, env={"COLUMNS": "200"}).stdout
    narrow = CliRunner().invoke(app, args, env={"COLUMNS": "20"})
    cells = [line for line in wide.splitlines() if "│" in line]
    assert narrow.exit_code == 0 and cells and "…" not in "".join(cells)
    assert cells == [line for line in narrow.stdout.splitlines() if "│" in line]
    # (the paths under a table are still cut at their start to the terminal: --wide)
    baselines = CliRunner().invoke(app, ["evaluate", "baselines"], env={"COLUMNS": "30"})
    assert baselines.exit_code == 0 and "…" not in baselines.stdout.split("gold:")[0]
