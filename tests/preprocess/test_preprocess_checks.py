"""``induce preprocess``: independent readings of what it writes, and its refusals."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.dataset import load_dataset
from induce.data.normalize import load_tagset
from induce.preprocess.text import detect_text_format
from tests.conftest import DATA, needs_shared
from tests.preprocess.fixtures import make_bllip, make_ptb

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def _nltk_words(files: list[Path], tags: frozenset[str]) -> list[list[str]]:
    """The reference recipe, written with nltk: word-tag leaves, lower-cased, digits as N.
    (Each file is read as the children of one wrapping tree.)"""
    from nltk import Tree

    out = []
    for path in files:
        for tree in Tree.fromstring("(FILE " + path.read_text() + ")"):
            words = [re.sub("[0-9]+", "N", w.lower()) for w, t in tree.pos() if t in tags]
            if words:
                out.append(words)
    return out


@needs_shared("data", "ptb-sample", "trees")
def test_real_sample_matches_an_nltk_reading(tmp_path):
    files = sorted((DATA / "ptb-sample" / "trees").glob("wsj_*.mrg"))
    out = tmp_path / "ds"
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
        "-j",
        "2",
    )
    assert result.exit_code == 0, result.output
    expected = _nltk_words(files, load_tagset("ptb_word_tags"))
    ds = load_dataset(out)
    assert list(ds.sentences("train")) == expected
    assert ds.manifest["counts"]["train"]["sentences"] == len(expected) == 1921


def test_bllip_dev_takes_the_first_sentences_of_each_year(tmp_path, monkeypatch):
    root = tmp_path / "bllip"
    roles = make_bllip(root)
    from induce.preprocess import bllip

    definition = bllip.split_definition()
    definition["valid"]["sentences_per_year"] = 3
    definition["shared_vocab"]["min_count_exclusive"] = 1
    monkeypatch.setattr(bllip, "split_definition", lambda: definition)
    out = tmp_path / "ds"
    result = run(
        "preprocess", "bllip", "-r", str(root), "-s", "xs", "-o", str(out), "--shared-vocab"
    )
    assert result.exit_code == 0, result.output
    ds = load_dataset(out)
    tags = load_tagset("bllip_word_tags")

    def words_of(year: int, section: int) -> list[list[str]]:
        folder = root / str(year) / f"w{year % 10}_{section:03d}"
        return _nltk_words([folder / name for name in roles[f"{year}/{section}"]], tags)

    expected = [
        s for year, first in ((1987, 1), (1988, 1), (1989, 10)) for s in words_of(year, first)[:3]
    ]
    assert list(ds.sentences("valid")) == expected
    # the shared vocabulary: LG words (every section but the first two of a year) seen > 1
    counts = Counter(
        w
        for year, sections in ((1987, (71, 122, 3)), (1988, (54, 107)), (1989, (28, 37)))
        for s in sections
        for sent in words_of(year, s)
        for w in sent
    )
    assert set(ds.vocab.tokens[3:]) == {w for w, c in counts.items() if c > 1}
    conflict = run(
        "preprocess",
        "bllip",
        "-r",
        str(root),
        "-s",
        "xs",
        "-o",
        str(tmp_path / "x"),
        "--shared-vocab",
        "--min-freq",
        "3",
    )
    assert conflict.exit_code == 2 and "does not combine" in conflict.stderr


def test_missing_sections_are_reported(tmp_path):
    ptb = tmp_path / "tb"
    make_ptb(ptb, {"02": range(0, 4), "22": range(4, 6), "23": range(6, 8)})
    out = tmp_path / "ds"
    result = run("preprocess", "ptb", "-t", str(ptb), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "train: 19 section(s) not in the treebank: 03, 04" in result.stderr
    assert load_dataset(out).manifest["splits"]["train"]["missing_sections"][-1] == "21"
    root = tmp_path / "bllip"
    make_bllip(root)
    sm = run("preprocess", "bllip", "-r", str(root), "-s", "sm", "-o", str(tmp_path / "sm"))
    assert sm.exit_code == 0 and "1987/w7_035" in sm.stderr


def test_tagset_all_still_drops_empty_elements(tmp_path):
    folder = tmp_path / "tb"
    folder.mkdir()
    (folder / "wsj_0201.mrg").write_text(
        "( (S (NP-SBJ (-NONE- *T*-1)) (VP (VBD Ran) (NP (CD 42))) (. .)))\n"
    )
    out = tmp_path / "o"
    result = run(
        "preprocess",
        "ptb",
        "-t",
        str(folder),
        "-o",
        str(out),
        "--train",
        "02",
        "--valid",
        "02",
        "--test",
        "02",
        "--tagset",
        "all",
    )
    assert result.exit_code == 0, result.output
    assert list(load_dataset(out).sentences("train")) == [["ran", "N", "."]]


def test_text_datasets_have_no_empty_tree_files(tmp_path):
    (tmp_path / "a.txt").write_text("the cat\n")
    out = tmp_path / "o"
    assert (
        run(
            "preprocess",
            "text",
            "--train",
            str(tmp_path / "a.txt"),
            "--valid",
            str(tmp_path / "a.txt"),
            "-o",
            str(out),
        ).exit_code
        == 0
    )
    assert sorted(p.name for p in out.iterdir()) == [
        "manifest.yaml",
        "train.txt",
        "valid.txt",
        "vocab.json",
    ]


def test_force_and_unwritable_outputs(tmp_path):
    (tmp_path / "a.txt").write_text("the cat\n")
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "notes.txt").write_text("precious\n")
    result = run(
        "preprocess", "text", "--train", str(tmp_path / "a.txt"), "-o", str(keep), "--force"
    )
    assert result.exit_code == 2 and "not an induce dataset" in result.stderr
    assert (keep / "notes.txt").read_text() == "precious\n"
    below_a_file = tmp_path / "a.txt" / "ds"
    result = run("preprocess", "text", "--train", str(tmp_path / "a.txt"), "-o", str(below_a_file))
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    result = run(
        "preprocess",
        "text",
        "--train",
        str(tmp_path / "a.txt"),
        "-o",
        str(tmp_path / "b"),
        "--tokenizer",
        "gpt2",
    )
    assert result.exit_code == 2 and result.stderr.startswith("error: --tokenizer gpt2 needs")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The DT B-NP\ncat NN I-NP\n\nDogs NNS B-NP\nbark VBP B-VP\n\n", "columns"),
        ("a short line\nand another\n\nafter a blank line\n", "lines"),
        ("Two Words\n\nMore Words\n", "lines"),  # a second "column" with lower case
        ("1\tHi\t_\tINTJ\tUH\t_\t0\troot\t_\t_\n\n", "conllu"),
        ("", "lines"),
    ],
)
def test_text_format_detection(text, expected):
    assert detect_text_format("corpus.txt", text) == expected


def test_format_option_and_upos_tags(tmp_path):
    upos = tmp_path / "u.conllu"
    upos.write_text("1\tHi\t_\tINTJ\t_\t_\t0\troot\t_\t_\n2\t!\t_\tPUNCT\t_\t_\t1\tpunct\t_\t_\n\n")
    out = tmp_path / "u"
    assert (
        run(
            "preprocess", "text", "--train", str(upos), "-o", str(out), "--tagset", "ud_word_tags"
        ).exit_code
        == 0
    )
    assert list(load_dataset(out).sentences("train")) == [["hi"]]
    cols = tmp_path / "c.txt"
    cols.write_text("The DT\ncat NN\n\n")
    out = tmp_path / "c"
    assert (
        run(
            "preprocess",
            "text",
            "--train",
            str(cols),
            "-o",
            str(out),
            "--format",
            "lines",
            "--keep-case",
        ).exit_code
        == 0
    )
    assert list(load_dataset(out).sentences("train")) == [["The", "DT"], ["cat", "NN"]]
    bad = run(
        "preprocess", "text", "--train", str(cols), "-o", str(tmp_path / "x"), "--format", "xml"
    )
    assert (
        bad.exit_code == 2 and "--format must be one of auto, columns, conllu, lines" in bad.stderr
    )
