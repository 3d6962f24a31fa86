"""EVALB semantics: pinned outputs of the C program, brute force, parameter files."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from induce.data.errors import ConfigError, InputError
from induce.data.ptb import parse_trees, read_trees
from induce.data.types import Tree
from induce.metrics.evalb import ERROR, OK, SKIP, Evalb, EvalbStopped, score_corpus
from induce.metrics.evalb_params import EvalbParams, load_params, parse_params
from induce.metrics.evalb_text import format_evalb
from tests.strategies import sentence, tree_over

CASES = Path(__file__).parent / "evalb_cases"


@pytest.mark.parametrize("preset", ["collins", "nk"])
def test_same_report_as_c_evalb(preset):
    gold = read_trees(CASES / "gold.txt")
    test = read_trees(CASES / "test.txt")
    assert len(test) == len(gold) == 8  # the empty third line is a sentence
    result = score_corpus(gold.trees, test.trees, load_params(preset))
    assert format_evalb(result) == (CASES / f"{preset}.expected").read_text()


def _one(gold: str, test: str | None, params: EvalbParams | None = None):
    scorer = Evalb(params or load_params("collins"))
    g = parse_trees(gold).trees[0]
    t = parse_trees(test).trees[0] if test else None
    return scorer.add(g, t)


def test_deleted_words_and_empty_brackets():
    s = _one("(TOP (S (NP (-NONE- *)) (VP (VB go) (, ,)) (. .)))", "(TOP (S (VP (VB go)) (. .)))")
    # S and VP remain; NP is empty; TOP is a delete label
    assert (s.status, s.gold, s.test, s.matched, s.words, s.length) == (OK, 2, 2, 2, 1, 3)


def test_labels_cut_even_at_position_zero_and_eq_label():
    s = _one("(TOP (S (ADVP-TMP (RB now)) (VP (VB go))))", "(TOP (S (PRT (RB now)) (VP (VB go))))")
    assert s.matched == 3
    params = EvalbParams(eq_labels=(("NN", "NNS"),), delete_labels=("TOP",))
    s = _one("(TOP (NP (NN a) (NN b)))", "(TOP (NP (NNS a) (VB b)))", params)
    assert s.correct_tags == 1  # EQ_LABEL applies to tags too


def test_repeated_brackets_match_once_each():
    s = _one("(TOP (S (NP (NP (NN a)) (NN b))))", "(TOP (S (NP (NN a) (NN b))))")
    assert (s.gold, s.test, s.matched) == (3, 2, 2)
    s = _one("(TOP (S (NP (NN a) (NN b))))", "(TOP (S (NP (NP (NN a) (NN b)))))")
    assert (s.gold, s.test, s.matched) == (2, 3, 2)


def test_skip_and_error_sentences():
    assert _one("(TOP (S (NN a)))", None).status == SKIP
    assert _one("(TOP (S (NN a)))", "(TOP (S (. .)))").status == SKIP  # no word left
    s = _one("(TOP (S (NN a)))", "(TOP (S (NN b)))")
    assert s.status == ERROR and "word 1 differs" in s.message
    assert _one("(TOP (S (NN a)))", "(TOP (S (NN a) (NN b)))").status == ERROR


def test_too_many_errors_stop_like_evalb():
    params = EvalbParams(max_error=1)
    scorer = Evalb(params)
    g, t = parse_trees("(S (NN a))").trees[0], parse_trees("(S (NN b))").trees[0]
    scorer.add(g, t)
    scorer.add(g, t)  # MAX_ERROR + 1 errors are tolerated
    with pytest.raises(EvalbStopped, match="first: sentence 1"):
        scorer.add(g, t)


def test_nan_f_measure_prints_like_glibc():
    result = score_corpus(
        parse_trees("(TOP (S (NN a) (NN b)))").trees,
        parse_trees("(TOP (X (NN a) (NN b)))").trees,
        load_params("collins"),
    )
    assert math.isnan(result.all.f1)
    assert "Bracketing FMeasure       =   -nan" in format_evalb(result)
    assert result.all.to_dict()["f1"] is None


def test_sentences_beyond_evalb_limits():
    n = 600
    words = " ".join(f"(NN w{i})" for i in range(n))
    rb = (
        "(TOP "
        + "".join(f"(X (NN w{i}) " for i in range(n - 1))
        + f"(NN w{n - 1})"
        + ")" * (n - 1)
        + ")"
    )
    result = score_corpus(
        parse_trees(f"(TOP (S {words}))").trees, parse_trees(rb).trees, load_params("unlabeled")
    )
    assert (result.all.matched, result.all.test_brackets, result.short.sentences) == (1, 599, 0)


def test_parameter_files(write):
    params = parse_params(
        "# comment\nLABELED 0\nCUTOFF_LEN 10\nDELETE_LABEL TOP\n"
        "EQ_LABEL ADVP PRT\nQUOTE_LABEL POS\nx\n",
        "my.prm",
    )
    assert params == EvalbParams(
        name="my",
        labeled=False,
        cutoff_len=10,
        delete_labels=("TOP",),
        eq_labels=(("ADVP", "PRT"),),
        quote_labels=("POS",),
    )
    with pytest.raises(InputError, match=r"my\.prm:2: unknown keyword 'LABELLED'"):
        parse_params("DEBUG 0\nLABELLED 1\n", "my.prm")
    with pytest.raises(InputError, match="EQ_LABEL needs two values"):
        parse_params("EQ_LABEL ADVP\n", "my.prm")
    with pytest.raises(InputError, match="keyword must start the line"):
        parse_params("DEBUG 0\n  LABELED 0\n", "my.prm")
    with pytest.raises(InputError, match="MAX_ERROR needs an integer"):
        parse_params("MAX_ERROR ten\n", "my.prm")
    assert load_params(write("x.prm", "LABELED 0\n")).labeled is False
    assert load_params("unlabeled").labeled is False and load_params("nk").max_error == 10000
    with pytest.raises(ConfigError, match="unknown EVALB parameters"):
        load_params("collinz")


def _brute(gold: Tree, test: Tree, delete: set[str], labeled: bool):
    """EVALB without EQ_LABEL, written from its definition."""

    def extract(tree):
        words, tags, brackets = [], [], []

        def walk(node):
            if node.is_preterminal:
                if node.label not in delete:
                    words.append(node.children[0])
                    tags.append(node.label)
                return
            start = len(words)
            for child in node.children:
                walk(child)
            brackets.append((start, len(words), re.split("[-=]", node.label)[0]))

        walk(tree)
        kept = [
            (s, e, lab if labeled else "") for s, e, lab in brackets if e > s and lab not in delete
        ]
        return words, tags, kept

    gw, gt, gb = extract(gold)
    tw, tt, tb = extract(test)
    matched = sum((Counter(gb) & Counter(tb)).values())
    crossing = sum(1 for a, b, _ in tb if any(s < a < e < b or a < s < b < e for s, e, _ in gb))
    tags = sum(x == y for x, y in zip(gt, tt))
    return len(gb), len(tb), matched, crossing, tags


@given(st.data(), st.booleans())
@settings(max_examples=300, deadline=None)
def test_matches_brute_force(data, labeled):
    leaves = data.draw(sentence())
    gold = Tree("TOP", [data.draw(tree_over(leaves))])
    test_leaves = [
        Tree(
            data.draw(st.sampled_from([p.label, "NN"]))
            if p.label not in {",", ".", "-NONE-"}
            else p.label,
            list(p.children),
        )
        for p in leaves
    ]
    test = Tree("TOP", [data.draw(tree_over(test_leaves))])
    params = EvalbParams(labeled=labeled, delete_labels=("TOP", "-NONE-", ",", "."))
    score = Evalb(params).add(gold, test)
    if score.status == SKIP:
        assert all(p.label in {",", ".", "-NONE-"} for p in leaves)
        return
    expected = _brute(gold, test, set(params.delete_labels), labeled)
    assert (score.gold, score.test, score.matched, score.crossing, score.correct_tags) == expected


def test_a_label_with_a_space_and_no_child_is_an_empty_word(tmp_path):
    """C EVALB reads ``(NP )`` as the word "" tagged NP: a gold with one left by a naive
    trace removal mismatches a test without it ("Length unmatch (4|3)"), where it was
    scored 100; ``(NP)`` stays an empty bracket, and the other readers keep both as empty
    brackets (as NLTK does)."""
    from induce.data.ptb import parse_trees
    from induce.evaluate.brackets import evaluate_brackets

    test = tmp_path / "test.mrg"
    test.write_text("(TOP (S (NP (NN a) (NN b)) (VP (VBD c))))\n")
    for bracket, status, length in (("(NP )", ERROR, 4), ("(NP)", OK, 3)):
        gold = tmp_path / "gold.mrg"
        gold.write_text(f"(TOP (S (NP (NN a) (NN b)) {bracket} (VP (VBD c))))\n")
        report = evaluate_brackets(str(gold), str(test))
        [sentence] = report.result.sentences
        assert (sentence.status, sentence.length) == (status, length), bracket
        same = evaluate_brackets(str(gold), str(gold)).result.sentences[0]
        assert (same.status, same.length) == (OK, length)
    tree = parse_trees("(S (NP ) (NN a))", evalb=True).trees[0]
    assert tree.words() == ["", "a"] and tree.to_string() == "(S (NP ) (NN a))"
    assert parse_trees("(S (NP ) (NN a))").trees[0].words() == ["a"]


def test_only_ascii_whitespace_separates_evalb_tokens(tmp_path):
    """C's isspace is ASCII: ``(CD 1<NBSP>000)`` is one word to EVALB, and the file was
    refused ("holds the word '000' beside other children"); other readers split as NLTK."""
    from induce.evaluate.brackets import evaluate_brackets

    gold = tmp_path / "gold.mrg"
    gold.write_text("(S (CD 1\u00a0000) (NN a))\n(S (NN b) (NN c))\n", encoding="utf-8")
    report = evaluate_brackets(str(gold), str(gold))
    assert [s.length for s in report.result.sentences] == [2, 2]
    assert parse_trees(gold.read_text(), evalb=True).trees[0].words() == ["1\u00a0000", "a"]
    with pytest.raises(InputError, match="beside other children"):
        parse_trees(gold.read_text())
    # all ASCII, but \x1f is no C space either
    assert parse_trees("(S (NN a\x1fb) (NN c))", evalb=True).trees[0].words() == ["a\x1fb", "c"]


def test_the_api_and_the_baselines_read_as_evalb_does(tmp_path):
    """score_brackets (the API) and evaluate baselines read "(NP )" as the command does:
    the API scored F1 100 where the command found a length mismatch."""
    from induce.evaluate import score_brackets
    from induce.evaluate.baselines import score_baselines
    from induce.evaluate.brackets import evaluate_brackets

    gold = "(TOP (S (NP (NN a) (NN b)) (NP ) (VP (VBD c))))"
    report = score_brackets([gold], ["(TOP (S (NP (NN a) (NN b)) (VP (VBD c))))"])
    assert report["all"]["error_sentences"] == 1 and report["all"]["f1"] is None
    path = tmp_path / "gold.mrg"
    path.write_text(gold + "\n(TOP (S (NP (DT the) (NN cat)) (VP (VBD sat))))\n")
    right = score_baselines(str(path))[0]
    command = evaluate_brackets(str(path), param="unlabeled", baseline="right").to_dict()
    assert right["baseline"] == "right"
    assert right["evalb_unlabeled_f1"] == command["all"]["f1"] != 100.0
