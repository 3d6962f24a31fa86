"""Progress of long commands: reported by the library, shown on a terminal only."""

from __future__ import annotations

from typer.testing import CliRunner

from induce.cli import common
from induce.cli.app import app
from induce.data import progress
from tests.cli.test_cli import GOLD, PRED


def test_the_library_reports_to_a_listener_only_while_listening(write, tmp_path):
    from induce.evaluate.brackets import evaluate_brackets

    folder = tmp_path / "trees"
    for k in range(3):
        (folder / f"wsj_00{k}.mrg").parent.mkdir(exist_ok=True)
        (folder / f"wsj_00{k}.mrg").write_text(GOLD)
    seen: list[tuple[str, int, int]] = []
    with progress.listening(lambda *event: seen.append(event)):
        evaluate_brackets(str(folder), baseline="right")
    assert ("reading tree files", 3, 3) in seen
    assert seen[-1] == ("scoring sentences", 6, 6)
    seen.clear()
    evaluate_brackets(write("g.mrg", GOLD), write("p.mrg", PRED))
    assert seen == []


def test_commands_show_a_bar_on_a_terminal_and_nothing_elsewhere(write, monkeypatch):
    gold, pred = write("g.mrg", GOLD), write("p.mrg", PRED)
    shown: list[tuple[str, int, int]] = []
    piped = CliRunner().invoke(app, ["evaluate", "brackets", gold, pred])
    assert piped.exit_code == 0 and piped.stderr == ""

    class Bar:
        def __enter__(self):
            return lambda *event: shown.append(event)

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(common, "progress_bar", Bar)  # what a terminal gets
    result = CliRunner().invoke(app, ["convert", "trees", gold])
    assert result.exit_code == 0 and shown[-1] == ("converting trees", 2, 2)


def _start(**facts):
    record = {"device": "cpu", "world": 1, "parameters": 10, "steps_per_epoch": 3}
    return record | {"path": "RUN", "resumed_at": 0, "total_steps": 3} | facts


def test_training_says_why_its_first_updates_are_slow_when_compiled(capsys):
    from induce.cli.train import _Display

    _Display()("start", _start(compiled=False))
    assert capsys.readouterr().err.splitlines() == [
        "training on cpu x1: 10 parameters, 3 updates per epoch, run directory RUN"
    ]
    _Display()("start", _start(compiled=True))
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 2 and said[1].startswith("train.compile: the first batches compile")
