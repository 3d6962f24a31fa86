"""The embedded default: `induce train` with no --data, the cache, `parse` without --model,
and `induce report`."""

from __future__ import annotations

import json
import statistics

import pytest
import yaml
from typer.testing import CliRunner

from induce.cli.app import app
from induce.preprocess import builtin as demo
from tests.train.helpers import tiny


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("INDUCE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(demo.BUILTIN, "sentences", 120)
    monkeypatch.setitem(demo.BUILTIN, "valid", 30)
    monkeypatch.setitem(demo.BUILTIN, "test", 20)
    return tmp_path / "cache"


def test_builtin_dataset_is_generated_once(cache):
    path, generated = demo.builtin_dataset()
    assert generated and (path / "valid.conllu").is_file() and path.parent.parent == cache
    again, generated = demo.builtin_dataset()
    assert again == path and not generated


def test_a_wrong_setting_without_data_is_refused_before_the_dataset_is_made(cache, tmp_path):
    for args in (["--set", "model.bogus=1"], ["--arch", "lstm"], ["--config", "nothing.yaml"]):
        result = CliRunner().invoke(app, ["train", *args, "--out", str(tmp_path / "r")])
        assert result.exit_code == 2, result.output
        assert "built-in dataset" not in result.output, args
        assert not cache.exists() and not (tmp_path / "r").exists()


def test_a_refusal_after_the_dataset_is_made_is_still_the_only_line(cache, tmp_path):
    """The built-in dataset's line is said when training starts: a trainer's refusal
    (after the dataset, before any update) stays the one line on stderr."""
    result = CliRunner().invoke(
        app, ["train", "--arch", "tnpcfg", "--set", "train.bf16=true", "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 2
    assert result.stderr == "error: train.bf16 is not for tnpcfg: it trains in float32 only\n"


@pytest.mark.parametrize("arch", ["udgn", "structformer"])
def test_train_without_data_then_parse_without_model(cache, tmp_path, monkeypatch, arch):
    monkeypatch.chdir(tmp_path)
    sets = [
        x for s in tiny(arch) + ["train.max_steps=4", "train.eval_every=2"] for x in ("--set", s)
    ]
    result = CliRunner().invoke(app, ["train", "--arch", arch, *sets])
    assert result.exit_code == 0, result.output
    assert "built-in dataset: generated" in result.output
    for row in (
        "this run, best",
        "right-branching",
        "left-branching",
        "random tree",
        "next word",
        "previous word",
        "random dependencies",
        "run directory: runs/",
    ):
        assert row in result.stdout, row  # on stdout: a pipeline captures it
    runs = list((tmp_path / "runs").iterdir())
    assert len(runs) == 1 and runs[0].name.startswith(f"{arch}-")
    config = yaml.safe_load((runs[0] / "config.yaml").read_text())
    demo_lr = {"udgn": 3e-3, "structformer": 1e-3}[arch]  # the demo preset
    assert config["train"]["max_steps"] == 4 and config["optim"]["lr"] == demo_lr
    assert (cache / "latest-run").read_text().strip() == str(runs[0].resolve())
    (tmp_path / "in.txt").write_text("the dog saw a cat .\n")
    parsed = CliRunner().invoke(app, ["parse", str(tmp_path / "in.txt")])
    assert parsed.exit_code == 0, parsed.output
    assert f"using the most recent run, {runs[0].resolve()}" in parsed.stderr
    tokens = [line for line in parsed.stdout.splitlines() if line[:1].isdigit()]
    assert [t.split("\t")[1] for t in tokens] == ["the", "dog", "saw", "a", "cat", "."]


def test_transformer_demo_has_no_structure_to_score(cache, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sets = [
        x
        for s in tiny("transformer") + ["train.max_steps=2", "train.eval_every=2"]
        for x in ("--set", s)
    ]
    result = CliRunner().invoke(app, ["train", "--arch", "transformer", "--out", "tf", *sets])
    assert result.exit_code == 0, result.output
    # a table all the same, on stdout: the perplexity of the best validation
    lines = result.stdout.splitlines()
    title = [line.strip() for line in lines].index("Validation")
    assert "PPL" in lines[title + 2] and "UF1" not in lines[title + 2]
    assert "this run, best (step 2)" in result.stdout and "run directory: tf" in lines[-1]
    assert "right-branching" not in result.output and "parse with" not in result.output
    (tmp_path / "in.txt").write_text("a b\n")
    parsed = CliRunner().invoke(app, ["parse", str(tmp_path / "in.txt")])
    assert parsed.exit_code == 2 and "induces no structure" in parsed.output


def test_parse_without_any_run(cache, tmp_path):
    (tmp_path / "in.txt").write_text("a b\n")
    result = CliRunner().invoke(app, ["parse", str(tmp_path / "in.txt")])
    assert result.exit_code == 2 and "no run yet" in result.output
    assert "or give --model RUN" in result.output
    # sample has no --model, and draws from a grammar only
    drawn = CliRunner().invoke(app, ["sample"])
    assert drawn.exit_code == 2 and "no run yet: train a grammar (induce train --arch npcfg)" in (
        drawn.output
    )


def test_unknown_config_preset(cache, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["train", "--arch", "udgn", "--config", "fast"])
    assert result.exit_code == 2 and "--config must be paper, demo, a preset" in result.output


def _fake_run(folder, seed, uf1, uas, ppl, lr=1e-3):
    (folder / "eval").mkdir(parents=True)
    (folder / "config.yaml").write_text(
        yaml.safe_dump({"arch": "udgn", "optim": {"lr": lr}, "train": {"seed": seed}})
    )
    (folder / "eval" / "uf1.json").write_text(
        json.dumps({"sentence_f1": uf1, "corpus_f1": uf1 - 5, "per_label_recall": {"NP": 50.0}})
    )
    (folder / "eval" / "deps-conll.json").write_text(json.dumps({"uas": uas, "uuas": uas + 9}))
    (folder / "eval" / "mlm.json").write_text(json.dumps({"perplexity": ppl}))


def test_report_means_and_sample_deviations(tmp_path):
    values = [(1, 40.0, 30.0, 60.0), (2, 44.0, 33.0, 58.0), (3, 45.5, 31.5, 59.0)]
    runs = []
    for seed, uf1, uas, ppl in values:
        _fake_run(tmp_path / f"s{seed}", seed, uf1, uas, ppl)
        runs.append(str(tmp_path / f"s{seed}"))
    _fake_run(tmp_path / "other", 1, 20.0, 10.0, 90.0, lr=5e-4)
    csv = tmp_path / "t.csv"
    result = CliRunner().invoke(app, ["report", *runs, str(tmp_path / "other"), "--csv", str(csv)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header[:5] == ["Model", "Protocol", "Runs", "UF1", "corpus UF1"]
    assert "UAS conll" in header and "PPL" in header and "NP recall" in header
    row = [c.strip() for c in lines[2].strip("|").split("|")]
    uf1 = [v[1] for v in values]
    # no protocol block: a custom setting; two settings of udgn are told apart by what differs
    assert row[:3] == ["udgn (optim.lr=0.001)", "custom", "3"]
    assert row[3] == f"{statistics.mean(uf1):.2f} ({statistics.stdev(uf1):.2f})"
    other = [c.strip() for c in lines[3].strip("|").split("|")]
    assert other[:4] == ["udgn (optim.lr=0.0005)", "custom", "1", "20.00"]
    assert "UF1 mean" in csv.read_text().splitlines()[0]


def test_report_of_a_folder_that_is_no_run(tmp_path):
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "not an induce run directory" in result.output


def test_config_file_that_is_not_a_config(cache, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text("model: [unclosed\n")
    result = CliRunner().invoke(
        app, ["train", "--arch", "udgn", "--config", "bad.yaml", "--out", "r"]
    )
    assert result.exit_code == 2 and "bad.yaml" in result.output and "YAML" in result.output
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    result = CliRunner().invoke(
        app, ["train", "--arch", "udgn", "--config", "list.yaml", "--out", "r"]
    )
    assert result.exit_code == 2 and "mapping" in result.output
    assert not (tmp_path / "r").exists()


def test_report_of_a_broken_result_file(tmp_path):
    _fake_run(tmp_path / "s1", 1, 40.0, 30.0, 60.0)
    (tmp_path / "s1" / "eval" / "uf1.json").write_text('{"sentence_f1": 4')
    out = tmp_path / "t.md"
    result = CliRunner().invoke(app, ["report", str(tmp_path / "s1"), "--markdown", str(out)])
    assert result.exit_code == 2 and "uf1.json:1: not JSON" in result.output
    assert not out.exists()
