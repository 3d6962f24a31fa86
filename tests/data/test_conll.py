"""Dependency files: CoNLL-U (via conllu), CoNLL-X, Malt-TAB; tree checks; writing back."""

from __future__ import annotations

import pytest

from induce.data.conll import detect_format, parse_deps, read_deps
from induce.data.conll_write import format_conllu_like, format_deps
from induce.data.errors import InputError
from induce.data.types import DepTree, dependency_problem

CONLLU = """# sent_id = 1
# text = Don't go home.
1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_
2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_
3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_
4\thome\thome\tADV\t_\t_\t3\tadvmod\t_\tSpaceAfter=No
4.1\tgone\t_\t_\t_\t_\t_\t_\t3:obj\t_
5\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

"""

CONLLX = """1\tThe\t_\tDT\tDT\t_\t2\tdet\t_\t_
2\tdog\t_\tNN\tNN\t_\t3\tnsubj\t_\t_
3\tbarked\t_\tVBD\tVBD\t_\t0\troot\t_\t_

1\tYes\t_\tUH\tUH\t_\t0\troot\t_\t_
"""

MALT = "The\tDT\t2\ndog\tNN\t3\nbarked\tVBD\t0\n.\t.\t3\n\n"


def test_conllu_keeps_words_only_and_raw_tokens():
    df = parse_deps(CONLLU, "a.conllu")
    tree = df.sentences[0]
    assert tree.words == ("Do", "n't", "go", "home", ".")
    assert tree.heads == (3, 3, 0, 3, 3)
    # XPOS preferred, UPOS where XPOS is "_"
    assert tree.tags == ("VBP", "RB", "VB", "ADV", ".")
    assert tree.labels[0] == "aux"
    raw = df.raw[0]
    assert raw.metadata["text"] == "Don't go home."
    assert [t["id"] for t in raw][0] == (1, "-", 2)
    assert df.lines == [1]


def test_conllx_with_head_in_column_6_like_the_structformer_wsj_files():
    text = (
        "1\tNo\tno\tRB\t_\t3\tintj\t_\t_\t_\n2\tit\tit\tPRP\t_\t3\tnsubj\t_\t_\t_\n"
        "3\twas\tbe\tVBD\tsyn=PRD\t0\troot\t_\t_\t_\n\n"
    )
    tree = parse_deps(text, "test.stanford").sentences[0]
    assert tree.heads == (3, 3, 0) and tree.tags == ("RB", "PRP", "VBD")
    assert tree.labels == ("intj", "nsubj", "root")


def test_conllx_and_malt():
    x = parse_deps(CONLLX, "a.conll")
    assert [t.words for t in x.sentences] == [("The", "dog", "barked"), ("Yes",)]
    assert x.lines == [1, 5]
    m = parse_deps(MALT, "a.dp")
    assert m.sentences[0].heads == (2, 3, 0, 3) and m.sentences[0].tags[3] == "."


@pytest.mark.parametrize(
    "name, text, fmt",
    [
        ("x.conllu", "", "conllu"),
        ("x.stanford", "", "conllx"),
        ("x.dp", "", "malt"),
        ("x", CONLLX, "conllx"),
        ("x", CONLLU, "conllu"),
        ("x", MALT, "malt"),
    ],
)
def test_detect_format(name, text, fmt):
    assert detect_format(name, text) == fmt


@pytest.mark.parametrize(
    "text, fmt, line, fragment",
    [
        ("a\tDT\t2\nb\tNN\t1\nc\tNN\t0\n", "malt", 1, "cycle"),
        ("a\tDT\t0\nb\tNN\t0\n", "malt", 1, "2 roots"),
        ("a\tDT\t0\n\nb\tNN\t5\n", "malt", 3, "outside 0..1"),
        ("a\tDT\tx\n", "malt", 1, "head must be an integer"),
        ("a\tDT\n", "malt", 1, "3 or 4"),
        (
            CONLLX.replace("2\tdog\t_\tNN\tNN\t_\t3", "2\tdog\t_\tNN\tNN\t_\t2"),
            "conllx",
            2,  # a word's head: that word's line
            "word 2 is its own head",
        ),
        ("a\tDT\t0\nb\tNN\t7\n", "malt", 2, "word 2 has head 7, outside 0..2"),
        ("1\ta\t_\tDT\n", "conllx", 1, "10 columns"),
        (
            "1\ta\t_\tDT\tDT\t_\t0\troot\t_\t_\n3\tb\t_\tNN\tNN\t_\t1\tdep\t_\t_\n",
            "conllx",
            2,
            "IDs must run",
        ),
        (
            CONLLU.replace("3\tgo\tgo\tVERB\tVB\t_\t0", "3\tgo\tgo\tVERB\tVB\t_\tZ"),
            "conllu",
            6,
            "CoNLL-U",
        ),
        (  # the word's own line, not the sentence's first (its # sent_id comment)
            CONLLU.replace("4\thome\thome\tADV\t_\t_\t3", "4\thome\thome\tADV\t_\t_\t9"),
            "conllu",
            7,
            "word 4 has head 9, outside 0..5",
        ),
        (
            CONLLU.replace("2\tn't\tnot\tPART\tRB\t_\t3", "2\tn't\tnot\tPART\tRB\t_\t2"),
            "conllu",
            5,
            "word 2 is its own head",
        ),
        (
            CONLLU.replace("3\tgo\tgo\tVERB\tVB\t_\t0", "3\tgo\tgo\tVERB\tVB\t_\tx"),
            "conllu",
            6,
            "CoNLL-U: HEAD must be an integer, got 'x'",
        ),
        (
            CONLLU.replace("3\tgo\tgo\tVERB\tVB\t_\t0", "3\tgo\tgo\tVERB\tVB\t_\t1"),
            "conllu",
            1,  # a cycle or no root is the sentence's: its first line
            "no root",
        ),
        (
            CONLLU.replace("3\tgo\tgo\tVERB\tVB\t_\t0", "9\tgo\tgo\tVERB\tVB\t_\t0"),
            "conllu",
            6,
            "IDs must run",
        ),
        (
            CONLLU.replace("\t_\t3\tadvmod\t_\tSpaceAfter", "\t_\t_\tadvmod\t_\tSpaceAfter"),
            "conllu",
            7,
            "has no HEAD",
        ),
    ],
)
def test_bad_dependency_input(text, fmt, line, fragment):
    with pytest.raises(InputError) as err:
        parse_deps(text, "bad.dep", fmt)
    assert str(err.value).startswith(f"bad.dep:{line}: ")
    assert fragment in str(err.value)


def test_write_and_read_back(write):
    trees = parse_deps(CONLLX, "a.conll").sentences
    for fmt in ("conllu", "conllx", "malt"):
        again = parse_deps(format_deps(trees, fmt), "b", fmt).sentences
        assert [(t.words, t.heads, t.tags) for t in again] == [
            (t.words, t.heads, t.tags) for t in trees
        ]


def test_conllu_written_back_with_its_columns():
    df = parse_deps(CONLLU, "a.conllu")
    tree = df.sentences[0]
    new = DepTree(tree.words, (2, 0, 2, 2, 2), tree.tags, ("a", "root", "b", "c", "d"))
    text = format_conllu_like(df, [new])
    assert text.startswith("# sent_id = 1\n# text = Don't go home.\n1-2\tDon't")
    assert "4.1\tgone" in text and "SpaceAfter=No" in text
    again = parse_deps(text, "b.conllu").sentences[0]
    assert again.heads == (2, 0, 2, 2, 2) and again.labels[1] == "root"


def _columns(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines() if line]


def test_conllu_to_conllx_and_back_keeps_lemma_upos_and_feats():
    """They were written ``_``, and CPOSTAG repeated the XPOS: a round trip lost every
    column but FORM, XPOS, HEAD and DEPREL."""
    source = CONLLU.replace("home\tADV\t_\t_", "home\tADV\t_\tDegree=Pos")
    df = parse_deps(source, "a.conllu")
    conllx = format_deps(df.sentences, "conllx", df.word_columns())
    assert _columns(conllx)[0] == ["1", "Do", "do", "AUX", "VBP", "_", "3", "aux", "_", "_"]
    back = parse_deps(conllx, "b.conll")
    assert back.columns is not None and back.columns[0].feats[3] == "Degree=Pos"
    conllu = format_deps(back.sentences, "conllu", back.word_columns())
    words = [c for c in _columns(source) if c[0].isdigit()]  # no multiword token, empty node
    words[3][9] = "_"  # DEPS and MISC have no place in CoNLL-X; XPOS "_" stays "_"
    assert [c[:10] for c in _columns(conllu)] == words


def test_a_folder_of_conllu_and_conllx_files_keeps_every_sentence(tmp_path):
    """Columns were kept only when the first file was CoNLL-X, and zipped with the sentences
    without a check: the sentences after the last column were lost, exit 0."""
    (tmp_path / "b.conllu").write_text(CONLLU)
    (tmp_path / "c.conll").write_text(CONLLX)
    both = read_deps(tmp_path)
    assert both.raw is None and both.columns is not None and len(both.columns) == len(both) == 3
    conllx = format_deps(both.sentences, "conllx", both.word_columns())
    assert conllx.count("\n\n") == 3 and _columns(conllx)[0][2:5] == ["do", "AUX", "VBP"]
    with pytest.raises(ValueError):  # a tree without its columns is a bug, not a dropped line
        format_deps(both.sentences, "conllx", both.word_columns()[:2])


def test_conllx_written_from_conllu_is_filtered_by_its_upos_too():
    """``--keep-tags ud_word_tags`` read CoNLL-U's UPOS but not the CPOSTAG that carries it
    in the CoNLL-X written from it; a CPOSTAG of PTB tags is no UPOS column."""
    from induce.data.conll import with_upos

    df = parse_deps(CONLLU, "a.conllu")
    conllx = parse_deps(format_deps(df.sentences, "conllx", df.word_columns()), "b.conll")
    assert with_upos(conllx).sentences[0].tags == ("AUX", "PART", "VERB", "ADV", "PUNCT")
    ptb = parse_deps(CONLLX, "c.conll")
    assert with_upos(ptb).sentences == ptb.sentences


def test_a_conllx_coarse_tag_that_is_no_upos_is_left_out_of_conllu():
    """Files converted from PTB trees carry PTB tags in CPOSTAG: no UPOS."""
    df = parse_deps(CONLLX.replace("1\tYes\t_\tUH", "1\tYes\tyes\tINTJ"), "a.conll")
    rows = _columns(format_deps(df.sentences, "conllu", df.word_columns()))
    assert [r[2:6] for r in rows] == [
        ["_", "_", "DT", "_"], ["_", "_", "NN", "_"], ["_", "_", "VBD", "_"],
        ["yes", "INTJ", "UH", "_"],
    ]  # fmt: skip


def test_the_early_head_layout_has_no_coarse_tag():
    text = "1\tNo\tno\tRB\tsyn=X\t0\tintj\t_\t_\t_\n\n"
    df = parse_deps(text, "test.stanford")
    assert _columns(format_deps(df.sentences, "conllx", df.word_columns()))[0][2:6] == [
        "no", "RB", "RB", "syn=X",
    ]  # fmt: skip


def test_directory(tmp_path):
    (tmp_path / "b.dp").write_text("x\tNN\t0\n")
    (tmp_path / "a.dp").write_text(MALT)
    df = read_deps(tmp_path)
    assert [t.words[0] for t in df.sentences] == ["The", "x"]
    assert df.where(1) == (str(tmp_path / "b.dp"), 1)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "c.conll").write_text(CONLLX.replace("The\t_", "The\tthe"))
    (tmp_path / "x" / "d.conll").write_text(CONLLX)
    conllx = read_deps(tmp_path / "x")
    assert conllx.columns is not None and len(conllx.columns) == len(conllx) == 4
    assert conllx.columns[0].lemmas[0] == "the" and conllx.columns[2].lemmas[0] == "_"


def test_deptree_checks():
    assert dependency_problem([2, 0, 2]) is None
    assert "cycle" in dependency_problem([2, 3, 1, 0])
    assert "no root" in dependency_problem([2, 1])
    with pytest.raises(ValueError):
        DepTree(("a", "b"), (0, 0))
    assert DepTree(("a", "b"), (2, 0)).root == 2


SHORT_ROWS = "1\tThe\tDT\n2\tdog\tNN\n"


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        (SHORT_ROWS, 1, "10 tab-separated columns, got 3"),
        (CONLLU.replace("\tSpaceAfter=No", ""), 7, "got 9"),  # one row short
        (CONLLU.replace("\t0\troot", "\t0\troot\t_"), 6, "got 11"),
        (CONLLU.replace("2\tn't\tnot\t", "2\tn't\t\t"), 5, "LEMMA column is empty"),
        (CONLLU.replace("5\t.\t.", "_\t.\t."), 9, "ID must be a number"),
        (CONLLU.replace("5\t.\t.", "x\t.\t."), 9, "ID"),
        (CONLLU.replace("\t_\t3\tpunct", "\t_\t-\tpunct"), 9, "HEAD"),
        # the conllu library also splits at two spaces: columns are tabs only here
        ("1  The  _  DT  DT  _  0  root  _  _\n", 1, "got 1"),
    ],
)
def test_conllu_rows_are_read_strictly(text, line, fragment):
    from induce.data.conll import conllu_blocks

    for read in (
        lambda: parse_deps(text, "bad.conllu"),
        lambda: list(conllu_blocks(text, "bad.conllu")),
    ):
        with pytest.raises(InputError) as err:
            read()
        assert str(err.value).startswith(f"bad.conllu:{line}: ")
        assert err.value.line == line and fragment in str(err.value)


def test_conllu_block_keeps_every_column():
    from induce.data.conll import parse_conllu_block

    block = [line for line in CONLLU.split("\n") if line]
    tokens = parse_conllu_block(block, 1, "a.conllu")
    assert tokens.metadata["sent_id"] == "1"
    assert [t["id"] for t in tokens] == [(1, "-", 2), 1, 2, 3, 4, (4, ".", 1), 5]
    assert tokens[4]["misc"] == "SpaceAfter=No" and tokens[5]["deps"] == "3:obj"
    assert tokens[1]["lemma"] == "do" and tokens[1]["xpos"] == "VBP"


def test_parse_input_with_short_conllu_rows_is_an_error(write):
    """``induce parse --input conllu`` reads with the same strict reader (it used to take a
    3-column row and shift the tag into LEMMA)."""
    from induce.parse import read_sentences

    with pytest.raises(InputError) as err:
        read_sentences(write("short.conllu", SHORT_ROWS), "conllu")
    assert err.value.line == 1 and "10 tab-separated columns, got 3" in str(err.value)
    good = read_sentences(write("good.conllu", CONLLU), "conllu")
    assert [good[0].tokens, good[0].line] == [["Do", "n't", "go", "home", "."], 1]


def test_evaluate_and_convert_short_conllu_rows(write, tmp_path):
    from typer.testing import CliRunner

    from induce.cli.app import app

    short = write("short.conllu", SHORT_ROWS)
    good = write("good.conllu", CONLLU)
    out = tmp_path / "out.json"
    for args in (
        ["evaluate", "deps", short, good, "--json", str(out)],
        ["evaluate", "deps", good, short, "--json", str(out)],
        ["convert", "deps", short, "-o", str(out)],
    ):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert result.stderr == f"error: {short}:1: CoNLL-U needs 10 tab-separated columns, got 3\n"
        assert not out.exists()


def test_a_predicted_head_out_of_range_is_found_at_its_line():
    """Predictions (head assignments, not necessarily trees) name the word's line too."""
    text = "# sent_id = 1\n1\ta\t_\tDT\tDT\t_\t2\t_\t_\t_\n2\tb\t_\tNN\tNN\t_\t3\t_\t_\t_\n"
    with pytest.raises(InputError) as err:
        parse_deps(text, "p.conllu", "conllu", trees=False)
    assert str(err.value) == "p.conllu:3: not a head assignment: word 2 has head 3, outside 0..2"


def test_rows_of_no_format_are_refused_without_a_useless_hint(write):
    """A file whose first row has neither 10 nor 3-4 columns is read by none of the formats
    (each says so when named), so the refusal names none to try: it used to advise "name
    the format explicitly", even in ``evaluate pcc`` and ``preprocess``, which take none."""
    five = write("five.txt", "1\tthe\tDT\t2\tdet\n2\tdog\tNN\t0\troot\n")
    with pytest.raises(InputError) as err:
        read_deps(five)
    assert (err.value.line, err.value.reason) == (
        1,
        "not a dependency file: 5 tab-separated columns (10 for CoNLL-U/X, 3 or 4 for Malt-TAB)",
    )
    for fmt in ("conllu", "conllx", "malt"):
        with pytest.raises(InputError, match="columns, got 5"):
            read_deps(five, fmt)
