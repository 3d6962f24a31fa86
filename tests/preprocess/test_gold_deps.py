"""``preprocess ptb --deps/--deps-file``: an existing dependency conversion as the gold,
aligned with the trees and checked word by word; the UDGN preset's parsing split."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.conll import read_deps
from induce.data.dataset import load_dataset
from induce.data.normalize import Normalization, load_tagset
from induce.evaluate.deps import evaluate_deps
from tests.conftest import DATA, needs_shared
from tests.preprocess.fixtures import make_ptb

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


@pytest.fixture
def ptb(tmp_path) -> Path:
    """Sections 00, 21, 23 and 24 with a CoNLL-X conversion beside every .mrg file."""
    root = tmp_path / "treebank_3"
    make_ptb(
        root, {"00": range(0, 8), "21": range(8, 12), "23": range(12, 16), "24": range(16, 20)}
    )
    for mrg in sorted(root.rglob("*.mrg")):
        result = run(
            "convert",
            "headrules",
            str(mrg),
            "--rules",
            "collins",
            "--to",
            "conllx",
            "-o",
            f"{mrg}.dep",
        )
        assert result.exit_code == 0, result.output
    return root


def test_per_file_conversions_become_the_gold_of_every_split(ptb, tmp_path):
    out = tmp_path / "ds"
    result = run(
        "preprocess",
        "ptb",
        "-t",
        str(ptb),
        "-o",
        str(out),
        "--preset",
        "udgn",
        "--train",
        "00",
        "--valid",
        "21",
        "--deps",
        "next",
        "--deps-scheme",
        "collins-test",
    )
    assert result.exit_code == 0, result.output
    ds = load_dataset(out)
    norm = Normalization(word_tags=load_tagset("ptb_word_tags"))
    assert ds.manifest["dependencies"] == {"scheme": "collins-test", "per_file": "next"}
    assert ds.manifest["splits"]["parse"]["sections"] == "23"  # UDGN: parsing on 23 only
    assert ds.manifest["splits"]["test"]["sections"] == "23-24"
    assert ds.manifest["vocabulary"]["min_freq"] == 5
    for split in ("train", "valid", "test", "parse"):
        gold = read_deps(str(out / f"{split}.deps.conllu"))
        words = list(ds.sentences(split))
        assert len(gold) == len(words)
        # the conversion's word-tag tokens, normalised, are the dataset's words
        assert [norm.tagged(zip(g.tags, g.words)) for g in gold.sentences] == words
        assert any(len(g) > len(w) for g, w in zip(gold.sentences, words))  # punctuation kept
    # the gold scores the dataset's own words (the prediction may be over words only)
    report = evaluate_deps(str(out / "parse.deps.conllu"), baseline="next")
    assert report.counts["sentences"] == len(list(ds.sentences("parse")))


def test_a_folder_of_conversions_and_one_file_per_split(ptb, tmp_path):
    folder = tmp_path / "deps"
    for dep in ptb.rglob("*.dep"):
        (folder / dep.parent.name).mkdir(parents=True, exist_ok=True)
        dep.rename(folder / dep.parent.name / dep.name.replace(".mrg.dep", ".conll"))
    out = tmp_path / "a"
    args = ["preprocess", "ptb", "-t", str(ptb), "--train", "00", "--valid", "21", "--test", "23"]
    assert run(*args, "-o", str(out), "--deps", str(folder)).exit_code == 0
    whole = tmp_path / "test.conll"
    whole.write_text("".join(p.read_text() for p in sorted((folder / "23").iterdir())))
    single = tmp_path / "b"
    result = run(*args, "-o", str(single), "--deps-file", f"test={whole}")
    assert result.exit_code == 0, result.output
    assert (single / "test.deps.conllu").read_text() == (out / "test.deps.conllu").read_text()
    assert not (single / "train.deps.conllu").exists()


def test_a_flat_treebank_finds_its_conversions_in_section_folders(ptb, tmp_path):
    """Section folders of conversions were looked for by the tree file's folder, so a flat
    treebank of wsj_NNxx.mrg files found none of them."""
    flat, folder = tmp_path / "flat", tmp_path / "deps"
    flat.mkdir()
    for mrg in ptb.rglob("*.mrg"):
        mrg.rename(flat / mrg.name)
        (folder / mrg.parent.name).mkdir(parents=True, exist_ok=True)
        Path(f"{mrg}.dep").rename(folder / mrg.parent.name / f"{mrg.name}.dep")
    args = ["--train", "00", "--valid", "21", "--test", "23", "--deps", str(folder)]
    result = run("preprocess", "ptb", "-t", str(flat), "-o", str(tmp_path / "b"), *args)
    assert result.exit_code == 0, result.output
    found = read_deps(str(tmp_path / "b" / "test.deps.conllu"))
    assert len(found) == len(list(load_dataset(tmp_path / "b").sentences("test"))) > 0


def test_conversions_that_do_not_match_are_refused(ptb, tmp_path):
    args = ["preprocess", "ptb", "-t", str(ptb), "--train", "00", "--valid", "21", "--test", "23"]
    first = sorted(ptb.rglob("wsj_2300.mrg.dep"))[0]
    lines = first.read_text().split("\n")
    cells = lines[0].split("\t")
    lines[0] = "\t".join([cells[0], "Walrus", *cells[2:]])
    first.write_text("\n".join(lines))
    bad = run(*args, "-o", str(tmp_path / "x"), "--deps", "next")
    assert bad.exit_code == 2 and f"{first}:1" in bad.stderr and "walrus" in bad.stderr
    assert bad.stderr.count("\n") == 1 and not (tmp_path / "x").exists()
    first.write_text("\n\n".join(first.read_text().split("\n\n")[:1]) + "\n")  # one sentence
    short = run(*args, "-o", str(tmp_path / "y"), "--deps", "next")
    assert short.exit_code == 2 and "1 sentences, but 2 trees" in short.stderr
    first.unlink()
    missing = run(*args, "-o", str(tmp_path / "z"), "--deps", "next")
    assert missing.exit_code == 2 and "no dependency conversion of wsj_2300.mrg" in missing.stderr
    both = run(*args, "-o", str(tmp_path / "w"), "--deps", "next", "--skip-bad")
    assert both.exit_code == 2 and "--skip-bad" in both.stderr
    other = run(*args, "-o", str(tmp_path / "v"), "--deps-file", "parse=x.conll")
    assert other.exit_code == 2 and "--deps-file" in other.stderr
    form = run(*args, "-o", str(tmp_path / "u"), "--deps-file", "test")
    assert form.exit_code == 2 and "SPLIT=FILE" in form.stderr


@needs_shared("data")
def test_the_shared_sample_with_its_penn2malt_conversion(tmp_path):
    out = tmp_path / "sample"
    result = run(
        "preprocess",
        "ptb",
        "-t",
        str(DATA / "ptb-sample" / "trees"),
        "-o",
        str(out),
        "--train",
        "00",
        "--valid",
        "00",
        "--test",
        "00",
        "--deps",
        str(DATA / "ptb-sample" / "dependencies"),
        "--deps-scheme",
        "penn2malt",
    )
    assert result.exit_code == 0, result.output
    assert len(read_deps(str(out / "test.deps.conllu"))) == 1921
