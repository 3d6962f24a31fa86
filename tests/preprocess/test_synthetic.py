"""`induce preprocess synthetic`: a normal dataset, deterministic for a seed, whose gold
dependencies are what validation and `evaluate deps` score against."""

from __future__ import annotations

import json
import re

import yaml
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.conll import read_deps
from induce.data.dataset import load_dataset
from induce.evaluate.deps import evaluate_deps
from induce.evaluate.unsupervised import evaluate_unsupervised
from induce.metrics.validation import load_gold
from induce.reporting import baseline_rows


def make(tmp_path, name="syn", *extra):
    out = tmp_path / name
    result = synthetic(out, "300", "60", "40", *extra)
    assert result.exit_code == 0, result.output
    return out


def synthetic(out, sentences, valid, test, *extra):
    """``induce preprocess synthetic`` into ``out`` with that many sentences in the splits."""
    args = ["-o", str(out), "-n", sentences, "--valid", valid, "--test", test, *extra]
    return CliRunner().invoke(app, ["preprocess", "synthetic", *args])


def test_layout_and_determinism(tmp_path):
    a = make(tmp_path, "a", "--seed", "3")
    b = make(tmp_path, "b", "--seed", "3")
    c = make(tmp_path, "c", "--seed", "4")
    files = [
        "train.txt",
        "valid.txt",
        "test.txt",
        "valid.trees",
        "test.trees",
        "valid.conllu",
        "test.conllu",
        "vocab.json",
    ]
    for name in files:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert (a / "train.txt").read_bytes() != (c / "train.txt").read_bytes()
    manifest = yaml.safe_load((a / "manifest.yaml").read_text())
    assert manifest["kind"] == "synthetic" and manifest["source"]["seed"] == 3
    assert manifest["counts"]["valid"]["sentences"] == 60
    dataset = load_dataset(a)  # verifies every file against the manifest
    assert len(list(dataset.sentences("test"))) == 40


def test_validation_set_does_not_depend_on_the_training_size(tmp_path):
    a = make(tmp_path, "a")
    out = tmp_path / "big"
    result = CliRunner().invoke(
        app,
        ["preprocess", "synthetic", "-o", str(out), "-n", "500", "--valid", "60", "--test", "40"],
    )
    assert result.exit_code == 0
    assert (a / "valid.conllu").read_bytes() == (out / "valid.conllu").read_bytes()


def test_gold_dependencies_line_up_with_trees_and_words(tmp_path):
    out = make(tmp_path)
    deps = read_deps(out / "valid.conllu").sentences
    words = [line.split() for line in (out / "valid.txt").read_text().splitlines()]
    assert [list(d.words) for d in deps] == words  # the text is cased like the trees
    gold = load_gold(load_dataset(out), "valid")
    assert not gold.problem
    assert [g.heads for g in gold.sentences] == [list(d.heads) for d in deps]


def test_draws_without_words_leave_the_gold_dependencies_too(tmp_path):
    """A draw of punctuation alone was dropped from the text and the trees but kept in
    SPLIT.conllu: more gold dependencies than sentences, a dataset train refused."""
    grammar = tmp_path / "p.grammar"
    grammar.write_text("start S\nS -> NN* | 1\nS -> XX* | 1\nlexicon NN: dog cat\nlexicon XX: !\n")
    out = tmp_path / "syn"
    result = synthetic(out, "10", "6", "6", "--grammar", str(grammar), "--seed", "1")
    assert result.exit_code == 0, result.output
    for split in ("valid", "test"):
        deps = read_deps(out / f"{split}.conllu").sentences
        lines = (out / f"{split}.txt").read_text().splitlines()
        assert 0 < len(deps) == len(lines) < 6  # some draws were punctuation alone
        assert [list(d.words) for d in deps] == [line.split() for line in lines]
        assert not load_gold(load_dataset(out), split).problem


def test_text_reads_like_the_trees_and_is_normalised_on_read(tmp_path):
    """SPLIT.txt holds the trees' words as written (``Chicago``, not ``chicago``); the
    model sees them lower-cased: the vocabulary, ``Dataset.sentences`` and training ids."""
    out = make(tmp_path)
    texts = [line.split() for line in (out / "test.txt").read_text().splitlines()]
    trees = (out / "test.trees").read_text().splitlines()
    assert [re.findall(r"\(\S+ ([^()\s]+)\)", t) for t in trees] == texts
    assert any(w != w.lower() for words in texts for w in words)
    dataset = load_dataset(out)
    assert dataset.manifest["text_normalized"] is False and not dataset.text_normalized
    assert list(dataset.sentences("test")) == [[w.lower() for w in ws] for ws in texts]
    vocab = dataset.vocab
    assert vocab is not None and all(t == t.lower() for t in vocab.tokens)
    assert "<unk>" not in {t for ws in dataset.sentences("train") for t in ws}


def test_a_parse_of_the_text_scores_against_the_trees_word_for_word(tmp_path):
    """The README's tour: parse test.txt, score it with `evaluate brackets` and `evaluate
    deps` against test.trees / test.conllu; no sentence is skipped for differing words."""
    from induce.train.engine import TrainOptions, train
    from tests.train.helpers import tiny

    out = make(tmp_path)
    run = tmp_path / "run"
    train(TrainOptions(str(run), "udgn", str(out), tiny("udgn") + ["train.max_steps=2"]))
    runner = CliRunner()
    for fmt, gold, command in (
        ("ptb", "test.trees", "brackets"),
        ("conllu", "test.conllu", "deps"),
    ):
        pred = tmp_path / f"pred.{fmt}"
        args = ["parse", str(out / "test.txt"), "--pretokenized", "-m", str(run), "-f", fmt]
        parsed = runner.invoke(app, [*args, "-o", str(pred), "--device", "cpu"])
        assert parsed.exit_code == 0, parsed.output
        scored = runner.invoke(app, ["evaluate", command, str(out / gold), str(pred), "-f", "json"])
        assert scored.exit_code == 0, scored.output
        report = json.loads(scored.stdout)
        if command == "brackets":  # EVALB counts a sentence whose words differ as an error
            assert report["all"]["valid_sentences"] == 40 and report["all"]["error_sentences"] == 0
        else:
            assert report["sentences"] == 40 and report["skipped_sentences"] == 0


def test_baselines_match_the_evaluate_commands(tmp_path):
    """The demo's baseline rows and `induce evaluate` agree on the same gold files."""
    out = make(tmp_path)
    rows = {r.name: r for r in baseline_rows(load_dataset(out))}
    right = evaluate_unsupervised(str(out / "valid.trees"), baseline="right").to_dict()
    assert rows["right-branching"].uf1 == round(right["sentence_f1"], 2)
    left = evaluate_unsupervised(str(out / "valid.trees"), baseline="left").to_dict()
    assert rows["left-branching"].uf1 == round(left["sentence_f1"], 2)
    nxt = evaluate_deps(str(out / "valid.conllu"), baseline="next").to_dict()
    assert rows["next word"].uas == round(nxt["uas"], 2)
    assert rows["next word"].uuas == round(nxt["uuas"], 2)
    assert rows["random tree"].uf1 is not None and rows["random dependencies"].uas is not None


def test_bad_sizes_are_one_line_errors(tmp_path):
    result = CliRunner().invoke(
        app, ["preprocess", "synthetic", "-o", str(tmp_path / "x"), "-n", "0"]
    )
    assert result.exit_code == 2 and "at least 1" in result.output
    assert not (tmp_path / "x").exists()


def test_missing_parent_folders_are_made(tmp_path):
    out = tmp_path / "data" / "nested" / "syn"
    result = CliRunner().invoke(
        app, ["preprocess", "synthetic", "-o", str(out), "-n", "20", "--valid", "5", "--test", "5"]
    )
    assert result.exit_code == 0, result.output
    assert load_dataset(out).has("valid.conllu")


def test_grammars_and_limits_that_give_no_sentence(tmp_path):
    """A grammar that cannot terminate, or --max-words below its shortest sentence: one line,
    exit code 2, no dataset (it used to be a RuntimeError after 1,000 draws per sentence)."""
    loop = tmp_path / "loop.grammar"
    loop.write_text("S -> NN* S:x | 1\nlexicon NN: dog\n")
    four = tmp_path / "four.grammar"
    four.write_text(
        "S -> NP:nsubj VP* | 1\nNP -> DT:det NN* | 1\nVP -> VBZ* NP:dobj | 1\n"
        "lexicon DT: the\nlexicon NN: dog\nlexicon VBZ: sees\n"
    )
    out = tmp_path / "syn"
    for args, message in (
        (
            ["--grammar", str(loop)],
            f"{loop}:1: the grammar cannot terminate: every rule of S uses a symbol that never "
            "ends in words (S)",
        ),
        (
            ["--grammar", str(four), "--max-words", "4"],
            f"--max-words must be at least 5: the shortest sentence of {four} has 5 words",
        ),
    ):
        result = CliRunner().invoke(app, ["preprocess", "synthetic", "-o", str(out), *args])
        assert result.exit_code == 2
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert result.stderr == f"error: {message}\n"
        assert not out.exists()
    make(tmp_path, "five", "--grammar", str(four), "--max-words", "5")


def test_a_bracket_in_a_word_is_refused_before_anything_is_written(tmp_path):
    grammar = tmp_path / "g.grammar"
    grammar.write_text("start S\nS -> NN* NN:dep | 1\nlexicon NN:\n ( a\n")
    out = tmp_path / "dss2"
    result = synthetic(out, "5", "2", "2", "--grammar", str(grammar))
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.startswith(f"error: {grammar}:4: '(': ")
    assert len(result.stderr.splitlines()) == 1 and not out.exists()


def test_an_empty_split_names_the_grammar(tmp_path):
    grammar = tmp_path / "untagged.grammar"  # tags print empty: the tag filter drops every word
    grammar.write_text("S -> .x* .y:dep | 1\nlexicon .x: a\nlexicon .y: b\n")
    out = tmp_path / "syn"
    result = CliRunner().invoke(
        app, ["preprocess", "synthetic", "-o", str(out), "-n", "5", "--grammar", str(grammar)]
    )
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr.startswith(f"error: {grammar}: the train split is empty: ")
