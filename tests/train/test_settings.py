"""Settings a run would carry without effect are refused before anything is written: one
objective's settings given to another's run (``data.mask_rate`` to a grammar), and a length
curriculum whose settings cancel one another.  A resumed run refuses only what its overrides
bring."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.architectures import ARCHITECTURES
from induce.data.errors import ConfigError
from induce.runs.config import load_config, presets
from induce.train.settings import READ_BY, check_settings, setting_problems
from tests.train.helpers import make_dataset, tiny


def test_every_shipped_preset_and_demo_carries_no_setting_without_effect():
    for name in presets():
        assert setting_problems(load_config(None, preset=name)) == {}, name
    for arch in ARCHITECTURES:
        assert setting_problems(load_config(arch.name, preset="demo")) == {}, arch.name


def test_every_setting_of_the_table_exists_and_each_objective_reads_some():
    config = load_config("udgn", preset="demo")
    for key, readers in READ_BY.items():
        group, name = key.split(".")
        assert hasattr(getattr(config, group), name), key
        assert readers and readers < {"masked-lm", "hinge", "likelihood"}, key


@pytest.mark.parametrize(
    "arch, setting, message",
    [
        ("npcfg", "data.mask_rate=0.15", "the masked language models only, not by a npcfg run"),
        ("tnpcfg", "data.eval_runs=5", "the masked language models only"),
        ("npcfg", "data.batch_tokens=512", "the chart parser and the masked language models"),
        ("chart", "data.length_groups=shuffled", "the grammars only, not by a chart run"),
        ("udgn", "data.length_step=1", "the grammars only, not by a udgn run"),
        ("udgn", "data.batch_sentences=8", "the chart parser and the grammars only"),
        ("structformer", "train.evalb=labelled", "the chart parser only"),
        ("chart", "train.cuda_graphs=false", "the masked language models only"),
    ],
)
def test_another_objectives_setting_is_refused(arch, setting, message):
    config = load_config(arch, [setting], preset="demo")
    key = setting.split("=")[0]
    with pytest.raises(ConfigError) as err:
        check_settings(config)
    assert err.value.setting == key and message in err.value.reason
    assert err.value.reason.endswith(": leave it out")


@pytest.mark.parametrize(
    "settings, key, fragment",
    [
        (["data.max_length=0", "data.length_step=1"], "data.length_step", "which is 0"),
        (["data.max_length=0", "data.final_max_length=40"], "data.final_max_length", "is 0"),
        (["data.max_length=30", "data.final_max_length=40"], "data.final_max_length", "stays"),
        (
            ["data.max_length=30", "data.length_step=1", "data.final_max_length=20"],
            "data.final_max_length",
            "20 is below data.max_length 30",
        ),
    ],
)
def test_a_curriculum_whose_settings_cancel_is_refused(settings, key, fragment):
    problems = setting_problems(load_config("cpcfg", settings, preset="demo"))
    assert list(problems) == [key] and fragment in problems[key]


@pytest.mark.parametrize(
    "settings, key, fragment",
    [
        (["data.batch_sentences=32", "data.batch_tokens=2000"], "data.batch_tokens", "set that"),
        (["data.shuffle=batches", "data.subbatch_tokens=500"], "data.subbatch_tokens", "whole"),
    ],
)
def test_a_chart_batch_setting_another_switches_off_is_refused(settings, key, fragment):
    problems = setting_problems(load_config("chart", settings, preset="demo"))
    assert list(problems) == [key] and fragment in problems[key]
    fixed = {
        "data.batch_tokens": "data.batch_sentences=0",
        "data.subbatch_tokens": "data.shuffle=sentences",
    }
    assert setting_problems(load_config("chart", [*settings, fixed[key]], preset="demo")) == {}


def test_a_curriculum_that_grows_is_accepted():
    for settings in (
        ["data.max_length=30", "data.length_step=1", "data.final_max_length=40"],
        ["data.max_length=30", "data.length_step=1"],  # no end
        ["data.max_length=40"],  # a fixed limit
    ):
        assert setting_problems(load_config("cpcfg", settings, preset="demo")) == {}


def _train(*args: object):
    return CliRunner().invoke(app, ["train", *map(str, args), "--device", "cpu"])


def _sets(settings: list[str]) -> list[str]:
    return [x for s in settings for x in ("--set", s)]


def test_the_command_line_refuses_in_one_line_and_writes_nothing(tmp_path):
    data = make_dataset(tmp_path)
    run = tmp_path / "run"
    sets = _sets([*tiny("npcfg"), "train.max_steps=1", "data.mask_rate=0.15"])
    result = _train("--arch", "npcfg", "--data", data, "--out", run, *sets)
    assert result.exit_code == 2
    assert result.stderr == (
        "error: data.mask_rate is read by the masked language models only, not by a npcfg "
        "run: leave it out\n"
    )
    assert not run.exists()


def _recorded_with(run: Path, key: str, value: object) -> None:
    """A run recorded before the check, with a setting it ignored in its config.yaml."""
    config = yaml.safe_load((run / "config.yaml").read_text())
    group, name = key.split(".")
    config[group][name] = value
    (run / "config.yaml").write_text(yaml.safe_dump(config))


def test_a_resume_refuses_only_what_its_overrides_bring(tmp_path):
    data = make_dataset(tmp_path)
    run = tmp_path / "run"
    sets = _sets([*tiny("npcfg"), "train.max_steps=1", "train.epochs=1"])
    assert _train("--arch", "npcfg", "--data", data, "--out", run, *sets).exit_code == 0
    _recorded_with(run, "data.mask_rate", 0.15)
    result = _train("--resume", run, *_sets(["data.eval_runs=3"]))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: data.eval_runs is read by the masked language")
    for extra in ([], ["train.max_steps=2"]):  # the recorded setting resumes as it was
        result = _train("--resume", run, *_sets(extra))
        assert result.exit_code == 0, result.output


def test_a_resume_keeps_the_runs_seed_and_its_start(tmp_path):
    """``--resume RUN --seed N`` continued the run with another seed and recorded N as its
    seed (report then took a run of two seeds for one of N); ``train.init_from`` starts a
    new run only; ``--config`` was read for new runs only and ignored on a resume."""
    data = make_dataset(tmp_path)
    run = tmp_path / "run"
    sets = _sets([*tiny("npcfg"), "train.max_steps=1", "train.seed=5"])
    assert _train("--arch", "npcfg", "--data", data, "--out", run, *sets).exit_code == 0
    before = (run / "config.yaml").read_bytes()
    refused = {
        ("--seed", "9"): "error: train.seed is the run's own on a resume (5): a run continued",
        ("--set", "train.seed=9"): "error: train.seed is the run's own on a resume (5)",
        ("--set", "train.init_from=/tmp/bert"): "error: train.init_from is the run's own",
        ("--config", "npcfg-ptb-paper"): "error: --config is for a new run: a resumed run",
    }
    for args, said in refused.items():
        result = _train("--resume", run, *args)
        assert result.exit_code == 2 and result.stderr.startswith(said), result.output
        assert (run / "config.yaml").read_bytes() == before
    assert _train("--resume", run, "--seed", "5").exit_code == 0  # its own: nothing changes


def test_seed_given_twice_is_refused(tmp_path):
    result = _train(
        "--arch", "npcfg", "--out", tmp_path / "run", "--seed", "5", "--set", "train.seed=7"
    )
    assert result.exit_code == 2
    assert result.stderr == "error: --seed and --set train.seed= both set the seed: give one\n"
    assert not (tmp_path / "run").exists()
