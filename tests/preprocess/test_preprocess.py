"""``induce preprocess``: datasets from PTB-, BLLIP-, Mikolov- and text-shaped fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.dataset import load_dataset
from induce.data.errors import InputError
from induce.data.normalize import Normalization, load_tagset
from induce.data.ptb import parse_trees
from induce.data.reading import check_text
from induce.preprocess import treetext as tb
from induce.preprocess.treescan import scan_clean_file
from tests.conftest import DATA, needs_shared
from tests.preprocess.fixtures import make_bllip, make_ptb

runner = CliRunner()
WORD_TAGS = load_tagset("ptb_word_tags")


def run(*args: str):
    return runner.invoke(app, list(args))


@pytest.fixture
def ptb(tmp_path) -> Path:
    root = tmp_path / "treebank_3"
    make_ptb(
        root, {"02": range(0, 10), "03": range(10, 20), "22": range(20, 25), "23": range(25, 30)}
    )
    return root


def test_ptb_dataset_end_to_end(ptb, tmp_path):
    out = tmp_path / "ds"
    result = run("preprocess", "ptb", "--treebank", str(ptb), "--out", str(out), "--min-freq", "2")
    assert result.exit_code == 0, result.output
    assert "vocabulary:" in result.stdout and "train" in result.stdout
    ds = load_dataset(out)
    counts = ds.manifest["counts"]
    assert [counts[s]["sentences"] for s in ("train", "valid", "test")] == [20, 5, 5]
    assert ds.manifest["splits"]["train"]["sections"] == "02-21"
    assert ds.manifest["source"]["files"] == 16  # two trees per file
    # train.txt words are the word-tag leaves of the gold trees, normalised
    trees = [parse_trees(line).trees[0] for line in ds.lines("train.trees")]
    norm = Normalization(word_tags=WORD_TAGS)
    assert list(ds.sentences("train")) == [
        norm.tagged((t, w) for w, t in tree.pos()) for tree in trees
    ]
    assert any("N" in s for s in ds.sentences("train"))  # "3 %" -> N
    assert ds.vocab.tokens[:3] == ["<unk>", "<pad>", "<mask>"]
    assert all(ds.vocab.counts[t] >= 2 for t in ds.vocab.tokens[3:])
    assert ds.normalization.word_tags == WORD_TAGS


def test_ptb_layouts_and_presets(ptb, tmp_path):
    flat = tmp_path / "flat"
    flat.mkdir()
    for f in (ptb / "parsed" / "mrg" / "wsj").rglob("*.mrg"):
        (flat / f.name).write_text(f.read_text())
    out = tmp_path / "flat_ds"
    assert run("preprocess", "ptb", "-t", str(flat), "-o", str(out)).exit_code == 0
    assert load_dataset(out).manifest["counts"]["train"]["sentences"] == 20
    mik = run(
        "preprocess", "ptb", "-t", str(ptb), "-o", str(tmp_path / "m"), "--preset", "mikolov"
    )  # 00-20 / 21-22 / 23-24
    assert mik.exit_code == 0, mik.output
    assert load_dataset(tmp_path / "m").manifest["splits"]["valid"]["sections"] == "21-22"
    none = run("preprocess", "ptb", "-t", str(ptb), "-o", str(tmp_path / "n"), "--valid", "05")
    assert (
        none.exit_code == 2
        and "no files for the valid split (sections 05; the treebank has 02, 03, 22, 23)"
        in none.stderr
    )
    custom = tmp_path / "custom"
    assert (
        run(
            "preprocess",
            "ptb",
            "-t",
            str(ptb / "parsed" / "mrg" / "wsj"),
            "-o",
            str(custom),
            "--train",
            "02,03",
            "--valid",
            "22",
            "--test",
            "22-23",
            "--max-vocab",
            "50",
            "--tagset",
            "all",
            "--keep-case",
        ).exit_code
        == 0
    )
    ds = load_dataset(custom)
    assert len(ds.vocab) == 50 and ds.manifest["counts"]["test"]["sentences"] == 10
    assert any("," in s for s in ds.sentences("train"))  # punctuation kept
    assert any(w[0].isupper() for s in ds.sentences("train") for w in s)


def test_workers_give_the_same_dataset(ptb, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    assert run("preprocess", "ptb", "-t", str(ptb), "-o", str(one)).exit_code == 0
    assert run("preprocess", "ptb", "-t", str(ptb), "-o", str(two), "-j", "2").exit_code == 0
    a, b = load_dataset(one), load_dataset(two)
    assert a.files == b.files  # same files, line counts and SHA-256


def test_preprocess_does_not_import_torch(ptb, tmp_path):
    import subprocess
    import sys

    from tests.conftest import ROOT

    code = (
        "import sys\nfrom induce.cli.app import main\n"
        f"sys.argv = ['induce', 'preprocess', 'ptb', '-t', {str(ptb)!r}, '-o', "
        f"{str(tmp_path / 'o')!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "assert 'torch' not in sys.modules and 'nltk' not in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert done.returncode == 0, done.stderr


def test_existing_output_and_interrupted_runs(ptb, tmp_path, monkeypatch):
    out = tmp_path / "ds"
    assert run("preprocess", "ptb", "-t", str(ptb), "-o", str(out)).exit_code == 0
    again = run("preprocess", "ptb", "-t", str(ptb), "-o", str(out))
    assert again.exit_code == 2 and "already exists" in again.stderr
    assert run("preprocess", "ptb", "-t", str(ptb), "-o", str(out), "--force").exit_code == 0

    from induce.preprocess import common

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(common.SplitWriter, "check", boom)
    broken = tmp_path / "broken"
    result = run("preprocess", "ptb", "-t", str(ptb), "-o", str(broken))
    assert result.exit_code == 130
    assert not broken.exists()
    assert sorted(os.listdir(tmp_path)) == ["ds", "treebank_3"]  # no temporary left


def test_truncated_or_changed_dataset_is_refused(ptb, tmp_path):
    out = tmp_path / "ds"
    run("preprocess", "ptb", "-t", str(ptb), "-o", str(out))
    lines = (out / "valid.txt").read_text().splitlines()
    (out / "valid.txt").write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(InputError, match="valid.txt does not match the manifest"):
        load_dataset(out)
    (out / "manifest.yaml").unlink()
    with pytest.raises(InputError, match="not an induce dataset"):
        load_dataset(out)


@pytest.mark.parametrize(
    "make, fragment",
    [
        (lambda d: (d / "x.txt").write_text("hello"), "no treebank files found"),
        (lambda d: (d / "wsj_0201.mrg").write_text("( (S (NN a)\n"), "wsj_0201.mrg:1: unbalanced"),
        (lambda d: (d / "wsj_0201.mrg").write_bytes(b"( (S (NN \xff)))\n"), "not valid UTF-8"),
    ],
)
def test_bad_treebanks(tmp_path, make, fragment):
    folder = tmp_path / "tb"
    folder.mkdir()
    make(folder)
    result = run(
        "preprocess",
        "ptb",
        "-t",
        str(folder),
        "-o",
        str(tmp_path / "o"),
        "--train",
        "02",
        "--valid",
        "02",
        "--test",
        "02",
    )
    assert result.exit_code == 2 and fragment in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_skip_bad_trees(tmp_path):
    folder = tmp_path / "tb"
    folder.mkdir()
    (folder / "wsj_0201.mrg").write_text("( (S (NN a)))\n( (S a (NN b)))\n( (S (NN c)))\n")
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
        "--skip-bad",
        "--tagset",
        "all",
    )
    assert result.exit_code == 0, result.output
    assert "wsj_0201.mrg:2" in result.stderr
    assert load_dataset(out).manifest["counts"]["train"] == {
        "sentences": 2,
        "words": 2,
        "tokens": 2,
        "unknown_token_rate": 0.0,
        "dropped_without_words": 0,
        "skipped_bad_trees": 1,
        "source_files": 1,
    }


def test_empty_split(tmp_path):
    folder = tmp_path / "tb"
    folder.mkdir()
    (folder / "wsj_0201.mrg").write_text("( (S (NN a)))\n")
    (folder / "wsj_2201.mrg").write_text("( (S (, ,)))\n")
    result = run(
        "preprocess",
        "ptb",
        "-t",
        str(folder),
        "-o",
        str(tmp_path / "o"),
        "--train",
        "02",
        "--valid",
        "22",
        "--test",
        "02",
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {folder / 'wsj_2201.mrg'}: the valid split is empty")


def test_mikolov_and_text(tmp_path):
    mik = tmp_path / "mik"
    mik.mkdir()
    for split, text in {
        "train": " the cat sat <unk> \n a cat N \n",
        "valid": " the dog \n",
        "test": " a N \n",
    }.items():
        (mik / f"ptb.{split}.txt").write_text(text)
    assert run("preprocess", "mikolov", "-d", str(mik), "-o", str(tmp_path / "m")).exit_code == 0
    ds = load_dataset(tmp_path / "m")
    assert list(ds.sentences("train")) == [["the", "cat", "sat", "<unk>"], ["a", "cat", "N"]]
    assert ds.manifest["counts"]["valid"]["unknown_token_rate"] == 0.5
    # the text's own <unk> is unknown too (it counted as known: 0.00% of Mikolov's train)
    assert ds.manifest["counts"]["train"]["unknown_token_rate"] == round(1 / 7, 6)
    missing = run("preprocess", "mikolov", "-d", str(tmp_path), "-o", str(tmp_path / "x"))
    assert missing.exit_code == 2 and "ptb.train.txt" in missing.stderr

    columns = tmp_path / "train.chunks"
    columns.write_text(
        "The DT B-NP\ncat NN I-NP\n, , O\nsat VBD B-VP\n\nDogs NNS B-NP\n"
        "bark VBP B-VP\n12 CD B-NP\n\n"
    )
    conllu = tmp_path / "more.conllu"
    conllu.write_text(
        "# text = Hi !\n1\tHi\t_\tINTJ\tUH\t_\t0\troot\t_\t_\n"
        "2\t!\t_\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n"
    )
    plain = tmp_path / "plain.txt"
    plain.write_text("Some Text , here\n")
    trees = tmp_path / "valid.mrg"
    trees.write_text("(TOP (S (NP (DT The) (NN dog)) (VP (VBD ran)) (. .)))\n")
    out = tmp_path / "t"
    result = run(
        "preprocess",
        "text",
        "--train",
        str(columns),
        "--train",
        str(conllu),
        "--train",
        str(plain),
        "--valid-trees",
        str(trees),
        "-o",
        str(out),
    )
    assert result.exit_code == 0, result.output
    ds = load_dataset(out)
    assert list(ds.sentences("train")) == [
        ["the", "cat", "sat"],
        ["dogs", "bark", "N"],
        ["hi"],
        ["some", "text", ",", "here"],
    ]
    assert list(ds.sentences("valid")) == [["the", "dog", "ran"]]
    assert list(ds.lines("valid.trees")) == [trees.read_text().strip()]


def test_bllip_splits(tmp_path, monkeypatch):
    root = tmp_path / "LDC2000T43"
    make_bllip(root)
    out = tmp_path / "xs"
    result = run("preprocess", "bllip", "--root", str(root), "--split", "xs", "-o", str(out))
    assert result.exit_code == 0, result.output
    ds = load_dataset(out)
    counts = ds.manifest["counts"]
    # XS: 1987 sections 71 and 122, 1988 54 and 107, 1989 28 and 37: 2 files x 2 trees each
    assert counts["train"]["sentences"] == 6 * 4 and counts["train"]["source_files"] == 12
    assert counts["valid"]["sentences"] == 3 * 4 and counts["test"]["sentences"] == 3 * 4
    trees = list(ds.lines("train.trees"))
    assert all(t.startswith("(S1 ") for t in trees) and "#1" not in "".join(trees)
    assert "NP-SBJ" in "".join(trees)
    assert any(w == "will" for s in ds.sentences("train") for w in s)  # AUX is a word tag
    # dev / test take the first N sentences of each year
    from induce.preprocess import bllip

    definition = bllip.split_definition()
    definition["valid"]["sentences_per_year"] = 3
    monkeypatch.setattr(bllip, "split_definition", lambda: definition)
    small = tmp_path / "small"
    assert (
        run(
            "preprocess", "bllip", "-r", str(root), "-s", "XS", "-o", str(small), "--shared-vocab"
        ).exit_code
        == 0
    )
    ds = load_dataset(small)
    assert ds.manifest["counts"]["valid"]["sentences"] == 9
    assert "more than 27" in ds.manifest["vocabulary"]["shared_vocab"]
    bad = run("preprocess", "bllip", "-r", str(tmp_path), "-s", "xs", "-o", str(tmp_path / "n"))
    assert bad.exit_code == 2 and "no BLLIP sections found" in bad.stderr


def _tiny_bpe(folder: Path, words: list[str]) -> None:
    from tokenizers import ByteLevelBPETokenizer

    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator(
        [" ".join(words)] * 20, vocab_size=300, min_frequency=1, show_progress=False
    )
    folder.mkdir(parents=True, exist_ok=True)
    tok.save_model(str(folder))


def test_gpt2_subwords_keep_their_words(ptb, tmp_path):
    bpe = tmp_path / "bpe"
    _tiny_bpe(bpe, ["the", "cat", "sat", "on", "mat", "market", "prices"])
    out = tmp_path / "sub"
    result = run(
        "preprocess",
        "ptb",
        "-t",
        str(ptb),
        "-o",
        str(out),
        "--tokenizer",
        "gpt2",
        "--tokenizer-files",
        str(bpe),
        "--keep-case",
    )
    assert result.exit_code == 0, result.output
    ds = load_dataset(out)
    assert ds.has("tokenizer.json") and ds.manifest["tokens"]["kind"] == "gpt2-bpe"
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(out / "tokenizer.json"))
    checked = 0
    for pieces, words, align in zip(
        ds.sentences("valid"), ds.lines("valid.words"), ds.lines("valid.align")
    ):
        words = words.split()
        index = [int(a) for a in align.split()]
        assert len(index) == len(pieces) and index == sorted(index)
        assert set(index) == set(range(len(words)))
        for k, word in enumerate(words):  # the pieces of each word decode to it
            ids = [tok.token_to_id(p) for p, i in zip(pieces, index) if i == k]
            assert tok.decode(ids) == (word if k == 0 else " " + word)
            checked += 1
    assert checked == ds.manifest["counts"]["valid"]["words"]
    assert ds.vocab.tokens[-3:] == ["<unk>", "<pad>", "<mask>"]
    missing = run(
        "preprocess",
        "ptb",
        "-t",
        str(ptb),
        "-o",
        str(tmp_path / "x"),
        "--tokenizer",
        "gpt2",
        "--tokenizer-files",
        str(tmp_path),
    )
    assert missing.exit_code == 2 and "needs tokenizer.json" in missing.stderr
    assert (
        run(
            "preprocess", "ptb", "-t", str(ptb), "-o", str(tmp_path / "y"), "--tokenizer", "gpt2"
        ).exit_code
        == 2
    )


@pytest.mark.parametrize("option", [["--max-vocab", "10"], ["--min-freq", "2"]])
def test_subwords_refuse_the_settings_of_a_vocabulary_of_words(ptb, tmp_path, option):
    """A subword tokenizer's vocabulary is used whole: --max-vocab 10 wrote 273 entries."""
    bpe = tmp_path / "bpe"
    _tiny_bpe(bpe, ["the", "cat", "sat"])
    (tmp_path / "a.txt").write_text("the cat sat\n")
    subwords = ["--tokenizer", "gpt2", "--tokenizer-files", str(bpe), *option]
    for source in (["ptb", "-t", str(ptb)], ["text", "--train", str(tmp_path / "a.txt")]):
        result = run("preprocess", *source, "-o", str(tmp_path / "out"), *subwords)
        assert result.exit_code == 2, result.output
        assert result.stderr == (
            f"error: {option[0]} builds a vocabulary of words: a subword tokenizer's is used "
            "whole\n"
        )
        assert not (tmp_path / "out").exists()
    # a preset's own vocabulary settings (udgn's words seen 5 times, pcfg's 10,003 entries)
    # are for words: with subwords they are not the user's, and the tokenizer's is used
    for preset in ("udgn", "pcfg"):
        out = tmp_path / preset
        args = ["-t", str(ptb), "--preset", preset, "--train", "02", "--valid", "22"]
        args += ["--test", "23", "--parse-test", "23", "-o", str(out), *subwords[:4]]
        result = run("preprocess", "ptb", *args)
        assert result.exit_code == 0, result.output
        assert load_dataset(out).manifest["tokens"]["kind"] == "gpt2-bpe"


# The fast treebank reader accepts exactly what the full reader accepts in LDC mode (several
# trees on a line, trees over several lines, "*x*" header lines, wordless trees, "( word)"
# empty tags, whose reading depends on line breaks), and each tree it writes on one line
# reads back as the same leaves.
_pieces = st.lists(
    st.sampled_from(
        [
            "(",
            ")",
            "A",
            "b",
            "(c d)",
            " ",
            "\n",
            "\n  ",
            "*x*",
            "(é ü)",
            "( e)",
            "\t",
            "\r",
            "\n\n",
            "#2",
            "(X (Y z) (W v))",
        ]
    ),
    min_size=1,
    max_size=20,
)


@given(_pieces)
@example(pieces=["(", " ", "A", "\n", ")"])  # "( word" whose ")" is on the next line
@settings(max_examples=500, deadline=None)
def test_fast_reader_agrees_with_the_full_reader(tmp_path_factory, pieces):
    text = "".join(pieces)
    path = tmp_path_factory.mktemp("t") / "x.mrg"
    path.write_text(text + "\n", encoding="utf-8")
    try:
        read = list(tb.iter_trees(path, tb.ReadStats()))
        fast = [t.leaves for t in read]
    except InputError:
        read, fast = [], None
    try:
        check_text(text + "\n", str(path))  # what reading a file checks first (a CR alone)
        full = [
            [(t, w) for w, t in tree.pos()]
            for tree in parse_trees(text + "\n", blank_lines_are_sentences=False).trees
            if tree is not None
        ]
    except InputError:
        full = None
    assert fast == full
    for tree in read:
        again = parse_trees(tree.text).trees[0]
        assert [(t, w) for w, t in again.pos()] == tree.leaves


def test_clean_files_take_the_whole_file_path():
    clean = "( (S (NP (DT The) (NN dog))\n    (VP (VBD barked))))\n\n( (S (NN x)))\n"
    trees = scan_clean_file(clean, tb.PRETERMINAL)
    assert [(line, leaves) for line, _, leaves in trees] == [
        (1, [("DT", "The"), ("NN", "dog"), ("VBD", "barked")]),
        (4, [("NN", "x")]),
    ]
    for unusual in [
        "*x* header\n" + clean,  # text between trees
        clean + "(S (NN x)",  # unbalanced
        clean + "(S (NN x) y)\n",  # a word beside other children
        clean + "(S ( x))\n",  # an empty tag
        clean + "(\nS (NN x))\n",  # a label on the next line
        clean + "(S (NN caf\u00e9))\n",
    ]:  # not ASCII
        assert scan_clean_file(unusual, tb.PRETERMINAL) is None, unusual


@needs_shared("data", "ptb-sample", "trees")
def test_real_ldc_sample_files():
    stats = tb.ReadStats()
    files = sorted((DATA / "ptb-sample" / "trees").glob("*.mrg"))
    words = sum(
        len(Normalization(word_tags=WORD_TAGS).tagged(t.leaves))
        for f in files
        for t in tb.iter_trees(f, stats)
    )
    assert stats.trees == 1921 and words == 40484


def test_a_section_named_twice_is_refused_and_shared_sections_are_said(ptb, tmp_path):
    """``--train 02,02`` read section 02 twice (its sentences weighing double) and a test
    section inside training passed in silence: the first is refused before anything is
    written, the second said once the trees are read (a small sample may serve every split)."""
    base = ["preprocess", "ptb", "-t", str(ptb), "--valid", "22", "--test", "23"]
    twice = run(*base, "-o", str(tmp_path / "a"), "--train", "02,03,02-03")
    assert twice.exit_code == 2 and not (tmp_path / "a").exists()
    assert twice.stderr == "error: sections '02,03,02-03' name section 02, 03 more than once\n"
    shared = run(*base, "-o", str(tmp_path / "b"), "--train", "02,03,22,23")
    assert shared.exit_code == 0, shared.output
    assert shared.stderr.splitlines() == [
        "warning: the train and valid splits share section 22: their sentences are in both",
        "warning: the train and test splits share section 23: their sentences are in both",
    ]
    alone = run(*base, "-o", str(tmp_path / "c"), "--train", "02-03", "--parse-test", "23")
    assert alone.exit_code == 0 and alone.stderr == ""  # parse inside test: by design
    parse = run(*base, "-o", str(tmp_path / "d"), "--train", "02-03", "--parse-test", "02")
    assert parse.exit_code == 0 and parse.stderr.splitlines() == [
        "warning: the train and parse splits share section 02: their sentences are in both"
    ]


def test_a_word_wordpiece_normalises_away_is_the_unknown_word(tmp_path):
    """BERT's normaliser deletes U+FFFD and zero-width characters: a word of only those got
    no piece, valid.align skipped it (0 2 3 3) and training stopped on the alignment."""
    from induce.preprocess.subwords import SubwordTokenizer

    bert = tmp_path / "bert"
    bert.mkdir()
    (bert / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ndog\n##s\nbarks\n")
    tok = SubwordTokenizer(bert, kind="wordpiece")
    assert tok.encode(["the", "\ufffd", "dogs", "\u200b"]) == (
        ["the", "<unk>", "dog", "##s", "<unk>"],
        [0, 1, 2, 2, 3],
    )
    assert tok.encode(["the", "dog"]) == (["the", "dog"], [0, 1])


def test_a_wordpiece_vocabulary_listing_a_token_twice_is_refused_at_its_line(tmp_path):
    """BERT's vocab.txt gives each token its line's number as id: a token listed twice took
    the later one, and the dataset's vocabulary put every later token one row off."""
    from induce.preprocess.subwords import SubwordTokenizer

    bert = tmp_path / "bert"
    bert.mkdir()
    vocab = bert / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ndog\nthe \nran\n")
    with pytest.raises(InputError) as err:
        SubwordTokenizer(bert, kind="wordpiece")
    assert str(err.value) == f"{vocab}:8: the WordPiece vocabulary lists 'the' twice"
    # a tokenizer.json whose ids leave a gap: refused as it is read, before any corpus
    from tokenizers import Tokenizer
    from tokenizers.models import WordPiece

    ids = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "the": 5, "dog": 7}
    vocab.unlink()
    Tokenizer(WordPiece(ids, unk_token="[UNK]")).save(str(bert / "tokenizer.json"))
    with pytest.raises(InputError, match=r"tokenizer.json: the tokenizer's ids do not run 0"):
        SubwordTokenizer(bert, kind="wordpiece")


def test_a_word_holding_another_space_is_counted_as_the_readers_read_it(tmp_path):
    """A CoNLL-U form with a no-break space was one word in the manifest and the vocabulary
    and two words to every reader (``str.split``): both unknown."""
    conllu = tmp_path / "nb.conllu"
    conllu.write_text(
        "1\tfoo\u00a0bar\t_\tNOUN\tNN\t_\t0\troot\t_\t_\n2\tbaz\u2003qux\t_\tNOUN\tNN\t_\t1\tdep\t_\t_\n"
        "\n1\tthe\t_\tDET\tDT\t_\t2\tdet\t_\t_\n2\tend\t_\tNOUN\tNN\t_\t0\troot\t_\t_\n\n"
    )
    out = tmp_path / "ds"
    assert run("preprocess", "text", "--train", str(conllu), "-o", str(out)).exit_code == 0
    ds = load_dataset(out)
    words = list(ds.sentences("train"))
    assert words == [["foo", "bar", "baz", "qux"], ["the", "end"]]
    assert ds.manifest["counts"]["train"]["tokens"] == 6
    assert all(w in ds.vocab for sentence in words for w in sentence)
    assert (out / "train.txt").read_text() == "foo bar baz qux\nthe end\n"
