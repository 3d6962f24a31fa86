"""The Python API's inputs as a notebook gives them: what is not a sentence, a tree or a head
list is an ``InduceError`` naming the item, never a character per sentence, a malformed tree
written out, or a bare ``ValueError``/``IndexError``."""

from __future__ import annotations

import pytest

import induce
from induce import evaluate as ev
from induce.data.errors import ConfigError, InputError
from induce.train.engine import TrainOptions, train
from tests.train.helpers import make_dataset, tiny


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    root = tmp_path_factory.mktemp("apiinputs")
    run = root / "run"
    train(
        TrainOptions(
            str(run), "udgn", str(make_dataset(root)), [*tiny("udgn"), "train.max_steps=2"]
        )
    )
    return induce.load(str(run), device="cpu")


@pytest.mark.parametrize(
    "sentences, tags, error, message",
    [
        # a string is iterated a character at a time: 14 sentences of one letter
        (
            "The dog barked",
            None,
            ConfigError,
            "sentences takes a list of sentences: a sentence alone is [sentence]",
        ),
        (["a b", "c"], [["DT", "NN"]], ConfigError, "tags gives 1 tag lists for 2 sentences"),
        (["a b"], [["DT"]], InputError, "<python>:1: 1 tags for 2 tokens"),
        # an empty token was written as "(X )" and an empty CoNLL-U FORM
        (["the cat", ["", "dog"]], None, InputError, "<python>:2: an empty token"),
        ([["the", None]], None, InputError, "<python>:1: a token that is not text"),
        # None and numbers were bare TypeErrors
        (None, None, ConfigError, "sentences takes a list, got NoneType"),
        (["a b"], 5, ConfigError, "tags takes a list, got int"),
        (
            ["a", None],
            None,
            InputError,
            "<python>:2: a sentence that is neither text nor a list of tokens",
        ),
        ([5], None, InputError, "<python>:1: a sentence that is neither text nor a list of tokens"),
        # a tab or a line break in a token broke every output (11 CoNLL-U columns)
        (
            [["a\tb", "c"]],
            None,
            InputError,
            "<python>:1: a token holding a tab or a line break, which no output can hold",
        ),
        (
            [["a\u2028b"]],
            None,
            InputError,
            "<python>:1: a token holding a tab or a line break, which no output can hold",
        ),
        # a tag that is no text was written as "None", or a TypeError deep in the head rules
        (["a b"], [["DT", None]], InputError, "<python>:1: a tag that is not a word of text"),
        (["a b"], [[1, 2]], InputError, "<python>:1: a tag that is not a word of text"),
        (["a b"], [5], InputError, "<python>:1: tags that are not a list of tags"),
    ],
)
def test_what_is_not_a_sentence_is_refused(model, sentences, tags, error, message):
    with pytest.raises(error) as err:
        model.parse(sentences, tags=tags)
    assert str(err.value) == message


@pytest.mark.parametrize("device", [None, 0, "cuda:x"])
def test_a_device_that_is_no_device_is_a_config_error(model, device):
    with pytest.raises(ConfigError, match="^device must be auto, cpu, cuda or cuda:N, got"):
        induce.load(model.path, device=device)


def test_words_and_tags_with_spaces_or_brackets_read_back(model):
    """A no-break space in a word (a CoNLL-U form may hold one) read back as two words, and
    a chart parser's input tag ``$(`` (STTS) left the tree unbalanced."""
    from induce.data.ptb import leaf_token, parse_trees

    (parse,) = model.parse([["1\u00a0000", "New York", "(x)"]])
    tree = parse_trees(parse.to_ptb() + "\n", "p").trees[0]
    assert tree is not None and tree.words() == ["1_000", "New_York", "-LRB-x-RRB-"]
    assert leaf_token("$(") == "$-LRB-" and leaf_token("A B") == "A_B"


def test_tags_may_come_from_any_iterable_and_reprs_are_short(model):
    (parse,) = model.parse(["a b"], tags=(t for t in [["DT", "NN"]]))
    assert parse.words == ["a", "b"]
    assert repr(model) == f"LoadedRun({model.path!r}, arch='udgn')"
    long = model.parse([" ".join(["the", "dog", "saw", "a", "cat"] * 8)])[0]
    assert len(repr(long)) < 2000  # the 40 x 40 parents matrix is not in it


@pytest.mark.parametrize(
    "gold, pred, message",
    [
        ([(["a", "b"], [2, 0])], [[5, 0]], "<prediction> item 1: word 1 has head 5, outside 0..2"),
        ([(["a", "b"], [2, 1])], [[2, 0]], "<gold> item 1: no word has head 0 (no root)"),
        ([(["a", "b"], [2, 0])], [[2, 0, 1]], "<prediction> item 1: 2 words but 3 heads"),
        ([[2, 0]], [[2, 0]], "<gold> item 1: give a DepTree or (words, heads)"),
        ([([], [])], [[]], "<gold> item 1: empty sentence"),
    ],
)
def test_head_lists_that_are_no_trees_are_input_errors(gold, pred, message):
    with pytest.raises(InputError) as err:
        ev.score_deps(gold, pred)
    assert str(err.value) == message


def test_a_generator_of_gold_sentences_is_read_once():
    gold = (item for item in [(["a", "b"], [2, 0])])  # half spent by a first look, before
    assert ev.score_deps(gold, [[2, 0]])["uas"] == 100.0


def test_what_is_no_tree_is_an_input_error():
    with pytest.raises(InputError, match=r"^<gold> item 1: give a tree \(PTB text or a Tree\)"):
        ev.score_brackets([1], ["(S (X a))"])
    with pytest.raises(InputError, match=r"^<prediction> item 1: one tree per item, got 2"):
        ev.score_brackets(["(S (X a))"], ["(S (X a))\n(S (X a))"])


def test_a_page_of_a_report_without_views_is_refused(write, tmp_path):
    from induce.evaluate.brackets import evaluate_brackets
    from induce.evaluate.deps import evaluate_deps

    trees = write("g.mrg", "(S (NP (DT a) (NN b)) (VP (VB c)))\n")
    deps = write("g.dp", "a\tDT\t2\nb\tNN\t0\n\n")
    for report in (evaluate_brackets(trees, trees), evaluate_deps(deps, deps)):
        with pytest.raises(ConfigError, match="views=True"):
            report.write_html(str(tmp_path / "page.html"))
    assert not (tmp_path / "page.html").exists()
