"""Refusals speak the caller's language: library errors name arguments, the command line
names its flags."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.dataset import DatasetWriter, OutputExists
from induce.data.errors import ConfigError, InputError
from induce.preprocess.bllip import BllipOptions, preprocess_bllip
from induce.preprocess.common import SplitWriter
from induce.preprocess.synthetic import SyntheticOptions
from induce.preprocess.text import TextOptions, read_sentences
from induce.preprocess.treetext import ReadStats

runner = CliRunner()


def test_an_existing_output_names_force(tmp_path):
    out = tmp_path / "ds"
    out.mkdir()
    (out / "manifest.yaml").write_text("format: induce-dataset/1\nfiles: {}\n")
    with pytest.raises(OutputExists) as err:
        DatasetWriter(out)
    assert "force=True" in str(err.value) and "--" not in str(err.value)
    with DatasetWriter(out, force=True):
        pass
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not an induce dataset: only a dataset is replaced"):
        DatasetWriter(tmp_path / "file", force=True)
    result = runner.invoke(
        app, ["preprocess", "synthetic", "-o", str(out), "-n", "5", "--valid", "2", "--test", "2"]
    )
    assert result.exit_code == 2
    assert f"error: {out}: already exists (use --force to replace it)" in result.stderr


def test_force_replaces_only_what_the_manifest_lists(tmp_path):
    """``--force`` deletes the old dataset: a file or folder put in it since, which its
    manifest does not list, would go with it, so the replacement is refused; so it is when
    the manifest cannot be read (which files are the dataset's is then unknown)."""
    out = tmp_path / "ds"
    text = tmp_path / "in.txt"
    text.write_text("the cat sat\na dog ran\n")
    make = ["preprocess", "text", "--train", str(text), "-o", str(out), "--force"]
    assert runner.invoke(app, make).exit_code == 0
    (out / "NOTES.md").write_text("mine")
    (out / "run").mkdir()
    result = runner.invoke(app, make)
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {out}: holds NOTES.md, run/, which the dataset's manifest does not list: "
        "replacing the dataset would delete them; move them out first\n"
    )
    assert (out / "NOTES.md").read_text() == "mine" and (out / "run").is_dir()
    (out / "NOTES.md").unlink()
    (out / "run").rmdir()
    assert runner.invoke(app, make).exit_code == 0  # the dataset's own files alone: replaced
    manifest = out / "manifest.yaml"
    manifest.write_text(manifest.read_text() + "files: [\n")
    result = runner.invoke(app, make)
    assert result.exit_code == 2 and "manifest.yaml cannot be read" in result.stderr
    assert manifest.read_text().endswith("files: [\n")


def test_option_errors_name_the_setting():
    for name in ("sentences", "valid", "test"):
        with pytest.raises(ConfigError) as err:
            SyntheticOptions(**{name: 0}).check()
        assert err.value.setting == name and str(err.value) == f"{name} must be at least 1"
    with pytest.raises(ConfigError) as err:
        SyntheticOptions(max_words=1).check()
    assert str(err.value) == "max_words must be at least 2"
    with pytest.raises(ConfigError) as err:
        BllipOptions(split="xl")  # type: ignore[arg-type]
    assert err.value.setting == "split" and "got 'xl'" in str(err.value)
    with pytest.raises(ConfigError, match="text_format must be one of auto, columns"):
        TextOptions(text_format="xml")  # type: ignore[arg-type]


def test_shared_vocabulary_conflicts_name_no_flag(tmp_path):
    with pytest.raises(ConfigError) as err:
        preprocess_bllip(
            str(tmp_path), str(tmp_path / "x"), BllipOptions(shared_vocab=True, min_freq=2)
        )
    assert err.value.setting == "shared_vocab" and "--" not in str(err.value)
    assert "does not combine with a minimum frequency" in str(err.value)


def test_cli_flags_in_messages(tmp_path):
    synthetic = runner.invoke(
        app, ["preprocess", "synthetic", "-o", str(tmp_path / "x"), "-n", "0"]
    )
    assert synthetic.exit_code == 2
    assert "error: --sentences must be at least 1" in synthetic.stderr
    words = runner.invoke(
        app, ["preprocess", "synthetic", "-o", str(tmp_path / "x"), "--max-words", "1"]
    )
    assert "error: --max-words must be at least 2" in words.stderr
    bllip = runner.invoke(
        app, ["preprocess", "bllip", "-r", str(tmp_path), "-s", "xl", "-o", str(tmp_path / "b")]
    )
    assert bllip.exit_code == 2 and "error: --split must be one of lg, md, sm, xs" in bllip.stderr


def test_empty_split_suggests_the_all_tag_set(tmp_path):
    with DatasetWriter(tmp_path / "ds") as writer:
        splits = SplitWriter(writer)
        with pytest.raises(InputError, match="try the tag set 'all'") as err:
            splits.check(["train"])
    assert "--" not in str(err.value)


def test_unknown_reading_format(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b\n")
    with pytest.raises(ConfigError, match="fmt must be one of"):
        list(read_sentences(str(corpus), ReadStats(), "xml"))  # type: ignore[arg-type]
    assert list(read_sentences(str(corpus), ReadStats(), "lines")) == [(1, [("", "a"), ("", "b")])]


def test_an_empty_split_names_its_files(tmp_path):
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n")
    other = tmp_path / "other.conllu"
    other.write_text("# only a comment\n\n")
    words = tmp_path / "words.txt"
    words.write_text("a b\n")
    for args, named in (
        (["--train", str(blank)], str(blank)),
        (["--train", str(blank), "--train", str(other)], f"{blank}, {other}"),
        (["--train", str(words), "--valid", str(blank)], str(blank)),
    ):
        result = runner.invoke(app, ["preprocess", "text", *args, "-o", str(tmp_path / "ds")])
        assert result.exit_code == 2
        split = "valid" if "--valid" in args else "train"
        assert result.stderr.startswith(f"error: {named}: the {split} split is empty: ")
        assert len(result.stderr.splitlines()) == 1 and not (tmp_path / "ds").exists()
    mikolov = tmp_path / "mik"
    mikolov.mkdir()
    for split in ("train", "valid", "test"):
        (mikolov / f"ptb.{split}.txt").write_text("a b\n" if split != "test" else "\n")
    result = runner.invoke(
        app, ["preprocess", "mikolov", "-d", str(mikolov), "-o", str(tmp_path / "ds")]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {mikolov / 'ptb.test.txt'}: the test split is empty")
