"""PTB bracket reading: file shapes, blank-line semantics, errors with file:line, nltk parity."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from induce.data.errors import InputError
from induce.data.ptb import format_trees, parse_trees, read_trees
from induce.data.types import Tree

MULTI = """
( (S\x20
    (NP-SBJ (DT The) (NN dog) )
    (VP (VBD barked) ))
)
( (S (NP (PRP It))
    (VP (VBD rained) )))
"""


def test_multi_line_file_with_outer_bracket():
    tf = parse_trees(MULTI, "x.mrg")
    assert len(tf) == 2
    first = tf.trees[0]
    assert first.label == "" and first.children[0].label == "S"
    assert first.words() == ["The", "dog", "barked"]
    assert tf.lines == [2, 6]


def test_one_tree_per_line_with_top_root():
    tf = parse_trees("(TOP (S (NP (NN a)) (VP (VB b))))\n(ROOT (NP (NN c)))\n")
    assert [t.label for t in tf.trees] == ["TOP", "ROOT"]
    assert tf.lines == [1, 2]


def test_blank_line_between_one_line_trees_is_an_empty_sentence():
    tf = parse_trees("(S (A a))\n\n(S (B b))\n(S (C c))\n")
    assert [None if t is None else t.words() for t in tf.trees] == [["a"], None, ["b"], ["c"]]
    assert tf.lines == [1, 2, 3, 4]


def test_every_blank_line_of_a_line_file_is_a_sentence_as_in_evalb():
    tf = parse_trees("(S (A a))\n\n(S (B b))\n\n(S (C c))\n\n")
    assert [None if t is None else t.words() for t in tf.trees] == [["a"], None, ["b"], None, ["c"]]
    assert tf.trailing_blank_lines == 1
    tf.pad_to(6)
    assert tf.trees[-1] is None and tf.lines == [1, 2, 3, 4, 5, 6]


def test_word_with_empty_tag_as_in_evalb():
    tree = parse_trees("(S (NP (DT the) ( cat)) (VP (VBD sat)) (X))").trees[0]
    assert tree.pos() == [("the", "DT"), ("cat", ""), ("sat", "VBD")]
    assert tree.children[2] == Tree("X", [])  # "(X)" is an empty bracket
    assert parse_trees(tree.to_string()).trees[0] == tree


def test_leading_blank_line_of_a_line_file_is_an_empty_sentence():
    tf = parse_trees("\n(S (A a))\n(S (B b))\n")
    assert tf.trees[0] is None and len(tf) == 3


def test_trailing_blank_lines_are_counted_not_kept():
    tf = parse_trees("(S (A a))\n(S (B b))\n\n\n")
    assert len(tf) == 2 and tf.trailing_blank_lines == 2
    assert parse_trees("(S (A a))\n").trailing_blank_lines == 0


def test_an_empty_file_has_no_line_at_all():
    # not one blank line (a failed parse that would pad a one-sentence prediction)
    empty = parse_trees("")
    assert len(empty) == 0 and empty.trailing_blank_lines == 0
    assert parse_trees("\n").trailing_blank_lines == 1  # one blank line is one


def test_preterminal_split_over_lines_and_spaces_inside_brackets():
    tf = parse_trees("(S (NN\n dog) ( VB  runs ) )")
    assert tf.trees[0] == Tree("S", [Tree("NN", ["dog"]), Tree("VB", ["runs"])])


def test_unlabelled_bracketing():
    tf = parse_trees("((the cat) (sat (down)))", labelled=False)
    tree = tf.trees[0]
    assert tree.words() == ["the", "cat", "sat", "down"]
    assert {p.label for p in tree.preterminals()} == {""}


def test_a_bare_word_is_a_one_word_unlabelled_sentence():
    """StructFormer's mrg() and Kim et al.'s get_tree write a one-word sentence as the word
    alone: it was refused ("text outside brackets").  Two bare words stay refused (which
    bracketing?), and a bare word is no labelled tree."""
    tf = parse_trees("((a b) c)\nhello \n(d e)\n", labelled=False)
    assert [t.words() for t in tf.trees] == [["a", "b", "c"], ["hello"], ["d", "e"]]
    assert [tf.where(k)[1] for k in range(3)] == [1, 2, 3]
    assert tf.trees[1] == parse_trees("( hello )", labelled=False).trees[0]
    for text, labelled in (("(a b)\nhello world\n", False), ("(S (A a))\nhello\n", True)):
        with pytest.raises(InputError, match="2: text outside brackets: 'hello'"):
            parse_trees(text, "p.txt", labelled=labelled)


def test_treebank2_header_lines_are_skipped():
    tf = parse_trees("*x*  Copyright  *x*\n*x*\n( (S (NN a)) )\n")
    assert len(tf) == 1


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("(S (A a)\n", 1, "unbalanced '('"),
        ("(S (A a)))\n", 1, "unbalanced ')'"),
        ("(S (A a))\n(S a (B b))\n", 2, "beside other children"),
        ("(S (A a))\nword\n", 2, "text outside brackets"),
        ("(S (A a)) (S (B b))\n(S (C c))\n", 1, "several trees on one line"),
        ("\n( (S\n  (A a)\n  (B b)) ))\n", 4, "unbalanced ')'"),
        # a misplaced word in a multi-line tree: its own line, not the tree's first
        ("(S (A a))\n\n( (S\n  (A a)\n  (VP (V v) oops (B b))\n  (. .)))\n", 5, "'oops'"),
        ("(S (A a)\n word) (B b))\n", 2, "(S ...) holds the word 'word'"),
        ("(S (A a)) (S (B\n first\n (C c)) (D d))\n", 2, "(B ...) holds the word 'first'"),
        ("(S (A a)) (S (B b) (C c) w)\n", 1, "(S ...) holds the word 'w'"),
    ],
)
def test_errors_name_file_and_line(text, line, fragment):
    with pytest.raises(InputError) as err:
        parse_trees(text, "bad.mrg")
    assert str(err.value).startswith(f"bad.mrg:{line}: ")
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)


def test_non_utf8_file(write):
    path = write("latin.mrg", b"(S (NN caf" + b"\xe9))\n")
    with pytest.raises(InputError, match=r"latin\.mrg:1: not valid UTF-8 \(byte 0xe9"):
        read_trees(path)


def test_missing_file():
    with pytest.raises(InputError, match="no such file"):
        read_trees("/nonexistent/trees.mrg")


def test_directory_of_ldc_files(tmp_path):
    (tmp_path / "wsj_0002.mrg").write_text("\n( (S (NN b)) )\n")
    (tmp_path / "wsj_0001.mrg").write_text("\n( (S (NN a)) )\n( (S (NN c)) )\n")
    (tmp_path / "notes.log").write_text("not a tree")
    tf = read_trees(tmp_path)
    assert [t.words() for t in tf.trees] == [["a"], ["c"], ["b"]]
    assert tf.where(2) == (str(tmp_path / "wsj_0002.mrg"), 2)


def test_format_and_parse_round_trip():
    tf = parse_trees(MULTI)
    again = parse_trees(format_trees(tf.trees + [None, tf.trees[0]]))
    assert again.trees == tf.trees + [None, tf.trees[0]]


# Random trees: labels and words are runs of non-space, non-parenthesis characters.
_symbol = st.text(
    st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc"), blacklist_characters="()"),
    min_size=1,
    max_size=4,
)


def _trees(depth: int = 3):
    pre = st.builds(lambda tag, word: Tree(tag, [word]), _symbol, _symbol)
    if depth == 0:
        return pre
    return st.one_of(
        pre,
        st.builds(
            lambda label, kids: Tree(label, kids),
            st.one_of(st.just(""), _symbol),
            st.lists(_trees(depth - 1), min_size=1, max_size=4),
        ),
    )


@given(st.lists(_trees(), min_size=1, max_size=5))
@settings(max_examples=150, deadline=None)
def test_written_trees_read_back_identically(trees):
    assert parse_trees(format_trees(trees)).trees == trees


@given(_trees())
@settings(max_examples=150, deadline=None)
def test_same_trees_as_nltk(tree):
    from nltk import Tree as NltkTree

    text = tree.to_string()
    assume("\\" not in text)  # nltk's reader mishandles a backslash before ")"
    assert parse_trees(text).trees[0] == Tree.from_nltk(NltkTree.fromstring(text))


def test_unescape_token_reads_the_treebank_escapes_as_their_text():
    from induce.data.ptb import unescape_token

    cases = {
        "-LRB-": "(",
        "-RCB-": "}",
        "-LSB-": "[",
        "``": '"',
        "''": '"',
        "`": "'",
        "1\\/2": "1/2",
        "a\\*b": "a*b",
        "x-RRB-y": "x)y",
        "plain": "plain",
        "--": "--",
    }
    assert {token: unescape_token(token) for token in cases} == cases
