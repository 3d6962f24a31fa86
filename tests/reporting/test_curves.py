"""``induce report --plot/--latex`` and ``induce.report``: curves of seeds as mean and
band, the table as LaTeX and as a DataFrame."""

from __future__ import annotations

import json
import statistics

import pytest
import yaml
from typer.testing import CliRunner

import induce
from induce.cli.app import app
from induce.data import extras
from induce.reporting.curves import curves

LOSSES = {1: [5.0, 4.0, 3.0], 2: [5.2, 4.4, 3.3], 3: [4.9, 4.1, 2.8]}


def _run(folder, seed, lr=1e-3, steps=(10, 20, 30)):
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(
        yaml.safe_dump({"arch": "udgn", "optim": {"lr": lr}, "train": {"seed": seed}})
    )
    losses = LOSSES.get(seed, [6.0, 5.5, 5.0])
    lines = [{"kind": "train", "step": step, "loss": loss} for step, loss in zip(steps, losses)] + [
        {"kind": "eval", "step": 30, "valid_ppl": 50.0 + seed, "uf1": 40.0 + seed, "best": True}
    ]
    (folder / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(folder)


@pytest.fixture
def runs(tmp_path):
    seeds = [_run(tmp_path / f"s{seed}", seed) for seed in (1, 2, 3)]
    return seeds + [_run(tmp_path / "other", 1, lr=5e-4, steps=(10, 20))]


def test_seeds_are_averaged_with_their_deviation(runs):
    found = {(c.setting, c.metric): c for c in curves(runs)}
    loss = found[("udgn (optim.lr=0.001)", "loss")]
    assert loss.steps == [10, 20, 30] and loss.runs == 3
    assert loss.mean[0] == pytest.approx(statistics.fmean([5.0, 5.2, 4.9]))
    assert loss.std[2] == pytest.approx(statistics.stdev([3.0, 3.3, 2.8]))
    other = found[("udgn (optim.lr=0.0005)", "loss")]
    assert other.steps == [10, 20] and other.std == [None, None]
    assert found[("udgn (optim.lr=0.001)", "uf1")].mean == [pytest.approx(42.0)]
    assert not any(c.metric == "uas" for c in found.values())


@pytest.mark.skipif(not extras.available("matplotlib"), reason="matplotlib is not installed")
@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_report_plot_draws_the_curves(runs, tmp_path, suffix):
    out = tmp_path / f"curves{suffix}"
    result = CliRunner().invoke(app, ["report", *runs, "--plot", str(out)])
    assert result.exit_code == 0, result.output
    data = out.read_bytes()
    if suffix == ".png":
        assert data.startswith(b"\x89PNG")
    else:
        text = data.decode()
        assert "<svg" in text and "validation perplexity" in text and "training loss" in text
        assert "udgn (optim.lr=0.001) (3 runs)" in text


@pytest.mark.skipif(not extras.available("matplotlib"), reason="matplotlib is not installed")
def test_curves_that_cannot_be_drawn_leave_no_output(runs, tmp_path):
    """The tables were written and printed before the curves were read: a run whose
    metrics.jsonl could not be drawn left --csv/--latex/--markdown files behind, exit 2."""
    empty = tmp_path / "empty"
    _run(empty, 4)
    (empty / "metrics.jsonl").write_text("")
    (empty / "eval").mkdir()
    (empty / "eval" / "unsupervised.json").write_text(
        json.dumps({"sentence_f1": 40.0, "corpus_f1": 38.0})
    )
    outs = {name: tmp_path / f"t.{name}" for name in ("csv", "latex", "markdown")}
    args = ["report", str(empty), *(x for n, p in outs.items() for x in (f"--{n}", str(p)))]
    result = CliRunner().invoke(app, [*args, "--plot", str(tmp_path / "c.png")])
    assert result.exit_code == 2, result.output
    assert "logged nothing to draw: no records in metrics.jsonl" in result.stderr
    assert result.stdout == "" and not any(p.exists() for p in outs.values())


@pytest.mark.skipif(not extras.available("matplotlib"), reason="matplotlib is not installed")
def test_a_dollar_in_a_setting_is_drawn_as_text(tmp_path):
    """Settings name the run's data folder: "d$\\frac$" was read as mathtext, a matplotlib
    traceback with exit 1."""
    run = _run(tmp_path / "r", 1)
    config = yaml.safe_load((tmp_path / "r" / "config.yaml").read_text())
    (tmp_path / "r" / "config.yaml").write_text(yaml.safe_dump({**config, "data": "d$\\frac$"}))
    other = _run(tmp_path / "o", 1, lr=5e-4)
    out = tmp_path / "c.svg"
    result = CliRunner().invoke(app, ["report", run, other, "--plot", str(out)])
    assert result.exit_code == 0, result.output
    assert "<svg" in out.read_text()


def test_report_plot_is_checked_before_the_runs_are_read(tmp_path, monkeypatch):
    missing = str(tmp_path / "no-run")
    bad = CliRunner().invoke(app, ["report", missing, "--plot", str(tmp_path / "c.jpg")])
    assert bad.exit_code == 2 and "--plot must end in .png, .svg, .pdf" in bad.stderr
    monkeypatch.setattr(extras, "available", lambda module: False)
    out = tmp_path / "c.png"
    result = CliRunner().invoke(app, ["report", missing, "--plot", str(out)])
    assert result.exit_code == 2 and "pip install 'induce[plot]'" in result.stderr
    assert result.stdout == "" and not out.exists()


def test_latex_table_and_the_python_api(runs, tmp_path):
    out = tmp_path / "t.tex"
    result = CliRunner().invoke(app, ["report", *runs, "--latex", str(out)])
    assert result.exit_code == 0, result.output
    tex = out.read_text().splitlines()
    assert tex[0] == r"\begin{tabular}{llrrr}" and tex[-1] == r"\end{tabular}"
    assert tex[2] == r"Model & Protocol & Runs & valid UF1 & valid PPL \\"
    assert tex[4].startswith(r"udgn (optim.lr=0.001) & custom & 3 & 42.00 (1.00) & 52.00")
    table = induce.report(runs)
    assert list(table["runs"]) == [3, 1]
    assert table[("valid UF1", "mean")].iloc[0] == pytest.approx(42.0)
