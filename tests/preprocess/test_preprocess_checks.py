"""``induce preprocess``: independent readings of what it writes, and its refusals."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.dataset import load_dataset
from induce.data.errors import InputError
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


def test_a_torn_manifest_is_named_at_its_line(tmp_path):
    """A manifest that is not YAML was "not valid YAML" with no line (a run's dataset.yaml:
    "the run's settings", not even the file)."""
    (tmp_path / "a.txt").write_text("the cat\n")
    out = tmp_path / "o"
    assert (
        run("preprocess", "text", "--train", str(tmp_path / "a.txt"), "-o", str(out)).exit_code == 0
    )
    manifest = out / "manifest.yaml"
    manifest.write_text(manifest.read_text() + "splits: [\n")
    with pytest.raises(InputError, match=rf"^{re.escape(str(manifest))}:\d+: not valid YAML: "):
        load_dataset(out)


def test_a_killed_writers_temporary_folder_goes_with_the_next_writer(tmp_path):
    """A preprocess killed with SIGKILL leaves its temporary folder (gigabytes for BLLIP);
    the next writer of that dataset, holding its lock, removes it, and no other's."""
    (tmp_path / "a.txt").write_text("the cat\n")
    stale = tmp_path / ".d.k3_x9q0z.tmp"
    others = [
        tmp_path / ".d.x.k3_x9q0z.tmp",
        tmp_path / ".dd.k3_x9q0z.tmp",
        tmp_path / ".d.notmine.tmp",
    ]
    for folder in (stale, *others):
        folder.mkdir()
        (folder / "train.txt").write_text("half\n")
    result = run(
        "preprocess", "text", "--train", str(tmp_path / "a.txt"), "-o", str(tmp_path / "d")
    )
    assert result.exit_code == 0, result.output
    assert not stale.exists() and all(folder.exists() for folder in others)


def test_force_never_replaces_a_folder_the_command_reads(tmp_path):
    """`--train DS/train.txt --out DS --force` rebuilt the dataset from its own training file
    and rewrote it ("N" became "n"); `--vocab DS --out DS --force` replaced the folder it
    read its vocabulary from."""
    (tmp_path / "a.txt").write_text("the cat sat 12\n")
    ds = tmp_path / "ds"
    assert (
        run("preprocess", "text", "--train", str(tmp_path / "a.txt"), "-o", str(ds)).exit_code == 0
    )
    before = {f.name: f.read_bytes() for f in ds.iterdir()}
    for args in (
        ["--train", str(ds / "train.txt")],
        ["--train", str(tmp_path / "a.txt"), "--vocab", str(ds)],
    ):
        result = run("preprocess", "text", *args, "-o", str(ds), "--force")
        assert result.exit_code == 2 and "--out would replace" in result.stderr, result.output
        assert {f.name: f.read_bytes() for f in ds.iterdir()} == before


def test_force_never_replaces_an_input_given_as_split_equals_file(tmp_path):
    """`--deps-file test=DS/test.deps.conllu --out DS --force` replaced the file it read: a
    value of the form SPLIT=FILE was not seen as an input."""
    tb = tmp_path / "tb"
    tb.mkdir()
    for section in ("02", "22", "23"):
        (tb / f"{section}.mrg").write_text("(S (NP (NN dog)) (VP (VBD ran)))\n")
    deps = tmp_path / "test.conllu"
    deps.write_text("1\tdog\t_\t_\tNN\t_\t2\tnsubj\t_\t_\n2\tran\t_\t_\tVBD\t_\t0\troot\t_\t_\n\n")
    ds = tmp_path / "ds"
    made = run("preprocess", "ptb", "-t", str(tb), "-o", str(ds), "--deps-file", f"test={deps}")
    assert made.exit_code == 0, made.output
    before = {f.name: f.read_bytes() for f in ds.iterdir()}
    again = ["-t", str(tb), "-o", str(ds), "--deps-file", f"test={ds / 'test.deps.conllu'}"]
    result = run("preprocess", "ptb", *again, "--force")
    assert result.exit_code == 2 and "--out would replace" in result.stderr, result.output
    assert {f.name: f.read_bytes() for f in ds.iterdir()} == before


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


CONLLU_TWO = (
    "# sent_id = 1\n"
    "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n"
    "2\tdog\tdog\tNOUN\tNN\t_\t0\troot\t_\t_\n\n"
)


@pytest.mark.parametrize("ident", ["one", "2x", "1.5.5", "01", "_"])
def test_conllu_ids_that_are_not_ids_are_errors(tmp_path, ident):
    """Only multiword tokens (N-M) and empty nodes (N.M) are skipped; any other ID that is not
    a number is the error convert and evaluate give, not a word silently left out."""
    bad = tmp_path / "bad.conllu"
    bad.write_text(CONLLU_TWO.replace("1\tThe", f"{ident}\tThe"))
    out = tmp_path / "o"
    result = run("preprocess", "text", "--train", str(bad), "-o", str(out))
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.startswith(f"error: {bad}:2: CoNLL-U: ID")
    assert result.stderr == run("convert", "deps", str(bad), "--to", "conllx").stderr
    assert len(result.stderr.splitlines()) == 1 and not out.exists()


@pytest.mark.parametrize(
    "first, second, got", [("0", "1", 0), ("1", "1", 1), ("1", "3", 3), ("2", "1", 2)]
)
def test_conllu_word_ids_out_of_place_are_errors(tmp_path, first, second, got):
    """Word IDs run 1, 2, 3, ... in each sentence: an ID 0, a repeat or a gap is a damaged
    or shuffled file, the error convert and evaluate give (it was read as it stood)."""
    bad = tmp_path / "bad.conllu"
    bad.write_text(
        CONLLU_TWO.replace("1\tThe", f"{first}\tThe").replace("2\tdog", f"{second}\tdog")
    )
    out = tmp_path / "o"
    result = run("preprocess", "text", "--train", str(bad), "-o", str(out))
    assert result.exit_code == 2 and not out.exists()
    line = 2 if first != "1" else 3
    assert result.stderr == f"error: {bad}:{line}: token IDs must run 1, 2, 3, ...; got {got}\n"
    assert result.stderr == run("convert", "deps", str(bad), "--to", "conllx").stderr


def test_conllu_multiword_tokens_and_empty_nodes_are_skipped(tmp_path):
    corpus = tmp_path / "mw.conllu"
    corpus.write_text(
        "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "1\tdo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_\n"
        "2\tn't\tnot\tPART\tRB\t_\t3\tneg\t_\t_\n"
        "3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_\n"
        "3.1\tgone\t_\tVERB\tVBN\t_\t_\t_\t3:conj\t_\n\n"
    )
    out = tmp_path / "o"
    assert run("preprocess", "text", "--train", str(corpus), "-o", str(out)).exit_code == 0
    assert list(load_dataset(out).sentences("train")) == [["do", "n't", "go"]]


@pytest.mark.parametrize(
    "text, expected",
    [
        # CoNLL-U with a broken row (7 columns), first a comment or a good row: CoNLL-U
        (
            "# sent_id = 1\n" + "1\tHi\t_\tINTJ\tUH\t_\t0\n" + "2\t!\t_\t_\t.\t_\t1\tp\t_\t_\n",
            "conllu",
        ),
        ("1\tHi\t_\tINTJ\tUH\t_\t0\troot\t_\t_\n2\t!\t_\t_\t.\t_\t1\n\n", "conllu"),
        # most rows are CoNLL rows, the first one is not
        ("1\tHi\n" + "2\t!\t_\t_\t.\t_\t1\tp\t_\t_\n" * 3, "conllu"),
        # every token row one column short: still CoNLL-U (its error names the line)
        ("# text = Hi\n1\tHi\t_\tINTJ\tUH\t_\t0\troot\t_\n\n", "conllu"),
        # plain text with tabs, a comment first, even a row of ten tab-separated fields
        ("# a title\nsome\ttext\there\nmore text\n", "lines"),
        ("a\tb\tc\td\te\tf\tg\th\ti\tj\n" + "plain words\n" * 3, "lines"),
        ("words\twith a tab\n1\t2\t3\t4\t5\t6\t7\t8\t9\t10\nand more\nand more\n", "lines"),
        # one row of a column file that does not fit: still columns (the row is an error)
        ("The DT B-NP\ncat NN I-NP\n\nDogs NNS B-NP\nbark VBP B-VP\n" * 3 + "oops\n\n", "columns"),
        # a column file with Windows line ends: its blank lines are blank too
        ("The DT B-NP\r\ncat NN I-NP\r\n\r\nDogs NNS B-NP\r\nbark VBP B-VP\r\n", "columns"),
        # CoNLL-U whose tabs became spaces: CoNLL-U, whose first row is then the error
        (
            "# text = a b c\n1 a _ X X _ 0 root _ _\n2 b _ X X _ 1 d _ _\n3 c _ X X _ 1 d _ _\n",
            "conllu",
        ),
        ("1 a a X X _ 0 root _ _\n2 b b X X _ 1 d _ _\n3 c c X X _ 1 d _ _\n\n", "conllu"),
        # numbered sentences of plain text are not that
        ("1 the cat sat on the mat\n2 a dog barked at the cat\n4 it ran off\n", "lines"),
    ],
)
def test_text_format_guess_keeps_to_a_mostly_fitting_format(text, expected):
    assert detect_text_format("corpus.txt", text) == expected


def test_spaced_conllu_is_an_error_and_a_crlf_column_file_is_columns(tmp_path):
    """CoNLL-U with spaces for tabs was read as one sentence a line (its rows trained on as
    ten-word sentences); a column file with CRLF line ends was too (its blank lines hold a
    carriage return)."""
    spaced = tmp_path / "spaced.txt"
    spaced.write_text("# id 1\n1 a a X X _ 0 root _ _\n2 b b X X _ 1 d _ _\n3 c c X X _ 1 d _ _\n")
    result = run("preprocess", "text", "--train", str(spaced), "-o", str(tmp_path / "s"))
    assert result.exit_code == 2 and not (tmp_path / "s").exists()
    assert result.stderr == f"error: {spaced}:2: CoNLL-U needs 10 tab-separated columns, got 1\n"
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(b"The DT B-NP\r\ncat NN I-NP\r\n\r\nDogs NNS B-NP\r\nbark VBP B-VP\r\n\r\n")
    out = tmp_path / "c"
    assert run("preprocess", "text", "--train", str(crlf), "-o", str(out)).exit_code == 0
    assert list(load_dataset(out).sentences("train")) == [["the", "cat"], ["dogs", "bark"]]


def test_a_guessed_format_reports_the_row_that_does_not_fit(tmp_path):
    """A CoNLL-U or column file named .txt with one bad row is read as what it is, and the
    row is an error with its line: not read as plain lines, comments and all."""
    conllu = tmp_path / "mc.txt"
    rows = "".join(
        f"# sent_id = {k}\n1\tHi\t_\tINTJ\tUH\t_\t0\troot\t_\t_\n"
        "2\t!\t_\tPUNCT\t.\t_\t1\tp\t_\t_\n\n"
        for k in range(1, 4)
    )
    conllu.write_text(
        rows.replace("2\t!\t_\tPUNCT\t.\t_\t1\tp\t_\t_\n", "2\t!\t_\tPUNCT\t.\t_\t1\n", 1)
    )
    out = tmp_path / "o"
    result = run("preprocess", "text", "--train", str(conllu), "-o", str(out))
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr == f"error: {conllu}:3: CoNLL-U needs 10 tab-separated columns, got 7\n"
    conllu.write_text(rows)
    assert run("preprocess", "text", "--train", str(conllu), "-o", str(out)).exit_code == 0
    assert list(load_dataset(out).sentences("train")) == [["hi"]] * 3  # "!" is punctuation

    chunks = tmp_path / "chunks.txt"
    chunks.write_text("The DT B-NP\ncat NN I-NP\n\n" * 5 + "Dogs NNS B-NP\nbark\n\n")
    result = run("preprocess", "text", "--train", str(chunks), "-o", str(tmp_path / "c"))
    assert result.exit_code == 2 and not (tmp_path / "c").exists()
    assert result.stderr.startswith(f"error: {chunks}:17: ") and "1 field" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    named = run(
        "preprocess",
        "text",
        "--train",
        str(chunks),
        "-o",
        str(tmp_path / "c"),
        "--format",
        "columns",
    )
    assert named.exit_code == 0, named.output

    plain = tmp_path / "plain.txt"
    plain.write_text("# notes\nThe cat\tsat .\n\nA dog ran\n")
    out = tmp_path / "p"
    assert run("preprocess", "text", "--train", str(plain), "-o", str(out)).exit_code == 0
    assert list(load_dataset(out).sentences("train")) == [
        ["#", "notes"],
        ["the", "cat", "sat", "."],
        ["a", "dog", "ran"],
    ]


def test_a_fault_inside_a_multi_line_tree_is_named_at_its_own_line(tmp_path):
    """preprocess named the line where the tree opened (2) for a misplaced word or an extra
    ")" on line 6, where convert and evaluate name the line itself."""
    from induce.preprocess.treetext import ReadStats, iter_trees

    tree = "\n( (S \n    (NP (DT the) (NN cat) )\n    (VP (VBD sat) \n      (PP (IN on) \n"
    for fault in ("(NP (DT the) (NN x mat) ) ) ) ) )\n", "(NP (DT the) (NN mat) ) ) ) ) ) )\n"):
        path = tmp_path / "t.mrg"
        path.write_text(tree + "        " + fault)
        with pytest.raises(InputError) as err:
            list(iter_trees(path, ReadStats()))
        assert err.value.line == 6, str(err.value)
        stats = ReadStats()
        assert list(iter_trees(path, stats, skip_bad=True)) == []
        assert stats.first_problem.startswith(f"{path}:6: ")


def test_a_upos_tag_set_filters_conllu_by_its_upos_column(tmp_path):
    """``--tagset ud_word_tags`` on CoNLL-U with PTB tags in XPOS checked the PTB tags
    against UPOS names: every word but a few symbols was dropped, with exit 0."""
    rows = [
        ("The", "DET", "DT"),
        ("dog", "NOUN", "NN"),
        ("barked", "VERB", "VBD"),
        (".", "PUNCT", "."),
    ]
    conllu = tmp_path / "t.conllu"
    conllu.write_text(
        "".join(f"{k}\t{w}\t_\t{u}\t{x}\t_\t0\tdep\t_\t_\n" for k, (w, u, x) in enumerate(rows, 1))
        + "\n"
    )
    for tagset in ("ud_word_tags", "ptb_word_tags"):
        out = tmp_path / tagset
        result = CliRunner().invoke(
            app, ["preprocess", "text", "--train", str(conllu), "--tagset", tagset, "-o", str(out)]
        )
        assert result.exit_code == 0, result.output
        assert (out / "train.txt").read_text() == "the dog barked\n"


@pytest.mark.parametrize(
    "args, said",
    [
        # empty values fell back to the preset's in silence
        (["--train", ""], "error: sections must look like 02-21 or 0-20,24; got ''"),
        (["--tagset", ""], "error: unknown tag set ''"),
        (["--numbers", ""], "error: --numbers must be one of runs, whole, mikolov, not ''"),
        # options that did nothing
        (["--deps-scheme", "stanford"], "error: --deps-scheme names the gold conversion, and"),
        (["--space-first-word"], "error: --space-first-word is for --tokenizer gpt2, not words"),
        # the last of two conversions for one split won in silence
        (
            ["--deps-file", "test=A", "--deps-file", "test=B"],
            "error: --deps-file gives the test split two conversions (A, B)",
        ),
    ],
)
def test_options_that_would_be_ignored_are_refused(tmp_path, args, said):
    tb = tmp_path / "tb"
    tb.mkdir()
    for section in ("02", "22", "23"):
        (tb / f"{section}.mrg").write_text("(S (NP (NN dog)) (VP (VBD ran)))\n")
    result = run("preprocess", "ptb", "-t", str(tb), "-o", str(tmp_path / "ds"), *args)
    assert result.exit_code == 2 and result.stderr.startswith(said), result.output
    assert result.stderr.count("\n") == 1 and not (tmp_path / "ds").exists()
    if args[0] in ("--numbers", "--space-first-word"):  # text reads them alike
        (tmp_path / "a.txt").write_text("the dog ran\n")
        text = ["preprocess", "text", "--train", str(tmp_path / "a.txt")]
        result = run(*text, "-o", str(tmp_path / "ds"), *args)
        assert result.exit_code == 2 and result.stderr.startswith(said), result.output
