"""``induce parse`` with tiny trained runs: formats, punctuation, CoNLL-U round trip, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.types import dependency_problem
from induce.train.engine import TrainOptions, train
from tests.conftest import SHARED, needs_shared
from tests.train.helpers import make_dataset, tiny

TEXT = "The bill passed easily .\n\nProfits rose 5 % , analysts said\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("parse")
    data = make_dataset(root)
    out = {}
    for arch in ("structformer", "udgn", "transformer", "combiner"):
        out[arch] = root / arch
        train(
            TrainOptions(
                str(out[arch]), arch, str(data), tiny(arch) + ["train.max_steps=2"], device="cpu"
            )
        )
    out["constituent"] = root / "constituent"
    settings = tiny("combiner") + ["train.max_steps=2", "model.hierarchy=constituent"]
    train(TrainOptions(str(out["constituent"]), "combiner", str(data), settings, device="cpu"))
    return out


def _run(*args):
    return CliRunner().invoke(app, ["parse", *map(str, args), "--device", "cpu"])


@pytest.mark.parametrize(
    "arch,decoder",
    [
        ("structformer", "argmax"),
        ("structformer", "algorithm3"),
        ("udgn", "mst"),
        ("udgn", "eisner"),
        ("udgn", "argmax"),
        ("udgn", "mst-uniform-root"),
    ],
)
def test_jsonl_keeps_tokens_and_gives_trees(runs, tmp_path, arch, decoder):
    src = tmp_path / "in.txt"
    src.write_text(TEXT)
    result = _run(
        src, "-m", runs[arch], "-f", "jsonl", "--pretokenized", "--decoder", decoder, "--scores"
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["words"] for r in records] == [line.split() for line in TEXT.splitlines()]
    first = records[0]
    assert first["labels"][-1] == "punct" and first["heads"][-1] == 4  # "." -> "easily"
    if decoder in ("mst", "eisner", "algorithm3"):
        assert dependency_problem(first["heads"]) is None
    assert "scores" in first and records[1]["tree"] == ""


@pytest.mark.parametrize("decoder", ["mst-uniform-root", "mst", "argmax", "eisner"])
def test_conllu_has_the_heads_of_jsonl_without_the_constituency_read_out(
    runs, tmp_path, decoder, monkeypatch
):
    """CoNLL-U shows no tree, so UDGN's parse skips the Eisner pass that only the tree needs
    (the decoder's own Eisner excepted); the heads are those the other formats give."""
    import induce.decode.scores as scores_module

    src = tmp_path / "in.txt"
    src.write_text(TEXT)
    common = [src, "-m", runs["udgn"], "--pretokenized", "--decoder", decoder]
    whole = _run(*common, "-f", "jsonl")
    assert whole.exit_code == 0, whole.output
    heads = [json.loads(line)["heads"] for line in whole.stdout.splitlines()]
    real, calls = scores_module.eisner_batch, []
    monkeypatch.setattr(scores_module, "eisner_batch", lambda *a: calls.append(1) or real(*a))
    conllu = _run(*common, "-f", "conllu")
    assert conllu.exit_code == 0, conllu.output
    rows = [line.split("\t") for line in conllu.stdout.splitlines() if line[:1].isdigit()]
    assert [int(r[6]) for r in rows] == [h for sentence in heads for h in sentence]
    assert len(calls) == (1 if decoder == "eisner" else 0)


@pytest.mark.parametrize("decoder", ["merge", "divergence"])
def test_combiner_parses_constituency_trees_only(runs, tmp_path, decoder):
    src = tmp_path / "in.txt"
    src.write_text(TEXT)
    ptb = _run(src, "-m", runs["combiner"], "-f", "ptb", "--decoder", decoder)
    assert ptb.exit_code == 0, ptb.output
    assert ptb.stdout.split("\n")[0].count("(X ") >= 5
    jsonl = _run(src, "-m", runs["combiner"], "-f", "jsonl", "--scores")
    assert jsonl.exit_code == 0, jsonl.output
    first = json.loads(jsonl.stdout.splitlines()[0])
    assert len(first["scores"]["distances"]) == 3  # between the 4 words (punctuation out)
    assert first["heads"] is None
    conllu = _run(src, "-m", runs["combiner"], "-f", "conllu")
    assert conllu.exit_code == 2
    assert "--format conllu needs dependencies" in conllu.stderr and "ptb or jsonl" in conllu.stderr


def test_combiner_levels_need_neighbour_links(runs, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text(TEXT)
    ptb = _run(src, "-m", runs["constituent"], "-f", "ptb", "--decoder", "levels")
    assert ptb.exit_code == 0, ptb.output
    assert ptb.stdout.split("\n")[0].count("(X ") >= 5
    jsonl = _run(src, "-m", runs["constituent"], "-f", "jsonl", "--scores")
    first = json.loads(jsonl.stdout.splitlines()[0])
    assert len(first["scores"]["levels"]) == 3
    out = tmp_path / "out.ptb"
    refused = _run(src, "-m", runs["combiner"], "-f", "ptb", "--decoder", "levels", "-o", out)
    assert refused.exit_code == 2 and "hierarchy: constituent" in refused.stderr
    assert "Traceback" not in refused.output and not out.exists()


def test_ptb_and_drop(runs, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text(TEXT)
    ptb = _run(src, "-m", runs["structformer"], "-f", "ptb")
    assert ptb.exit_code == 0
    lines = ptb.stdout.split("\n")
    assert lines[0].count("(X ") >= 5 and lines[1] == "" and "(X .)" in lines[0]
    dropped = _run(src, "-m", runs["udgn"], "-f", "jsonl", "--punct", "drop")
    words = json.loads(dropped.stdout.splitlines()[2])["words"]
    assert "," not in words and "%" in words or "%" not in words  # % is a word if in vocab


def test_conllu_round_trip_keeps_other_columns(runs, tmp_path):
    src = tmp_path / "in.conllu"
    src.write_text(
        "# sent_id = a\n# text = The bill passed .\n"
        "1\tThe\tthe\tDET\tDT\tDefinite=Def\t_\t_\t_\tSpaceAfter=No|X=1\n"
        "2-3\tbillpassed\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "2\tbill\tbill\tNOUN\tNN\t_\t_\t_\t_\t_\n"
        "3\tpassed\tpass\tVERB\tVBD\tMood=Ind|Tense=Past\t_\t_\t_\t_\n"
        "4\t.\t.\tPUNCT\t.\t_\t_\t_\t_\t_\n\n"
    )
    out = tmp_path / "out.conllu"
    result = _run(src, "-m", runs["udgn"], "-o", out)
    assert result.exit_code == 0, result.output
    got = [line.split("\t") for line in out.read_text().splitlines() if "\t" in line]
    want = [line.split("\t") for line in src.read_text().splitlines() if "\t" in line]
    for g, w in zip(got, want, strict=True):
        assert g[:6] + g[8:] == w[:6] + w[8:]
    assert got[-1][7] == "punct"
    assert _run(src, "-m", runs["udgn"], "--punct", "drop").exit_code == 2


def test_bad_inputs(runs, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine line\nbad \xff byte\n")
    result = _run(bad, "-m", runs["structformer"])
    assert result.exit_code == 2 and "bad.txt:2" in result.stderr
    long = tmp_path / "long.txt"
    long.write_text(" ".join(["the"] * 250) + "\n")
    assert _run(long, "-m", runs["structformer"], "-f", "jsonl").exit_code == 0
    assert _run(long, "-m", runs["transformer"]).exit_code == 2
    assert _run(long, "-m", runs["udgn"], "--decoder", "algorithm3").exit_code == 2
    assert _run(long, "-m", tmp_path / "none").exit_code == 2


@pytest.mark.parametrize("arch", ["udgn", "structformer", "transformer"])
def test_head_label_correlation(runs, tmp_path, arch):
    gold = tmp_path / "gold.conllu"
    gold.write_text(
        "1\tthe\t_\tDET\tDT\t_\t2\tdet\t_\t_\n2\tbill\t_\tNOUN\tNN\t_\t3\tnsubj\t_\t_\n"
        "3\tpassed\t_\tVERB\tVBD\t_\t0\troot\t_\t_\n4\t.\t_\tPUNCT\t.\t_\t3\tpunct\t_\t_\n"
        "\n1\tprofits\t_\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n2\trose\t_\tVERB\tVBD\t_\t0\troot\t_\t_\n"
        "3\tsharply\t_\tADV\tRB\t_\t2\tadvmod:emph\t_\t_\n\n"
    )
    out = tmp_path / "pcc.json"
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            "pcc",
            str(gold),
            "-m",
            str(runs[arch]),
            "--json",
            str(out),
            "--device",
            "cpu",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    # the official statistic counts the two roots as edges to themselves
    assert report["edges"] == 6 and report["labels"][:2] == ["nsubj", "root"]
    assert "advmod" in report["labels"]  # subtypes cut by default
    assert len(report["matrix"]) == len(report["heads"]) == 2 * 2
    assert report["settings"]["statistic"] == "official" and "mean" in report["best"][0]
    pearson = CliRunner().invoke(
        app, ["evaluate", "pcc", str(gold), "-m", str(runs[arch]), "--statistic", "pearson"]
    )
    assert pearson.exit_code == 0 and "(child-to-parent, 4 edges)" in pearson.stdout
    bogus = CliRunner().invoke(
        app, ["evaluate", "pcc", str(gold), "-m", str(runs[arch]), "--statistic", "bogus"]
    )
    lines = bogus.stderr.strip().splitlines()
    assert bogus.exit_code == 2 and len(lines) == 1 and "--statistic" in lines[0], bogus.stderr
    assert "official" in lines[0] and "pearson" in lines[0]


def test_head_label_statistic_is_the_official_scripts(runs, tmp_path):
    """UDGN's test_phrase_grammar.py, written again here: for every word read, the weight
    of each head from the word to its gold head (climbed past words not read; a root to
    itself), summed per label and divided by the label's count (sum_xy / sum_y)."""
    from induce.evaluate.pcc import _kept_words, head_label_correlation
    from induce.runs.directory import open_run
    from induce.runs.inference import attention_maps

    gold = tmp_path / "gold.conllu"
    rows = [  # "today" hangs from the comma, which the model does not read
        ("the", 2, "det"), ("bill", 4, "nsubj"), (",", 4, "punct"), ("passed", 0, "root"),
        ("today", 3, "obl:tmod"),
    ]  # fmt: skip
    gold.write_text(
        "".join(f"{k}\t{w}\t_\tX\tX\t_\t{h}\t{r}\t_\t_\n" for k, (w, h, r) in enumerate(rows, 1))
        + "\n1\tprices\t_\tX\tX\t_\t2\tnsubj\t_\t_\n2\tfell\t_\tX\tX\t_\t0\troot\t_\t_\n\n"
        + "1\tyes\t_\tX\tX\t_\t0\troot\t_\t_\n2\t.\t_\tX\tX\t_\t1\tpunct\t_\t_\n\n"
    )  # the last sentence has one word read: the script counts its root too
    report = head_label_correlation(str(runs["udgn"]), str(gold), device="cpu")
    run = open_run(str(runs["udgn"]))
    from induce.data.conll import read_deps

    trees = read_deps(str(gold)).sentences
    kept = [_kept_words(tree, run) for tree in trees]
    model = run.load_language_model("best", "cpu")
    sums: dict[str, np.ndarray] = {}
    counts: dict[str, int] = {}
    for index, layers in attention_maps(
        model, [ids for _, ids in kept], run.specials, 8192, torch.device("cpu")
    ):
        tree, words = trees[index], kept[index][0]
        weights = layers.reshape(-1, *layers.shape[-2:])  # [layers * heads, L, L]
        for i, token in enumerate(words):
            head = tree.heads[token] - 1
            while head >= 0 and head not in words:
                head = tree.heads[head] - 1
            j = words.index(head) if head >= 0 else i
            label = tree.labels[token].split(":")[0]
            sums[label] = sums.get(label, 0) + weights[:, i, j]
            counts[label] = counts.get(label, 0) + 1
    assert report["edges"] == sum(counts.values()) == 7
    assert counts == {"det": 1, "nsubj": 2, "root": 3, "obl": 1}
    for j, label in enumerate(report["labels"]):
        expected = sums[label] / counts[label]
        got = [row[j] for row in report["matrix"]]
        assert np.allclose(got, expected, atol=1e-6), label


def test_scores_outside_jsonl_are_refused_not_ignored(runs, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text(TEXT)
    for fmt in ("conllu", "ptb"):
        result = _run(src, "-m", runs["udgn"], "-f", fmt, "--scores")
        assert result.exit_code == 2
        assert result.stderr == f"error: --scores adds the scores to jsonl output, not to {fmt}\n"


def test_options_that_contradict_the_input_are_refused_not_ignored(runs, tmp_path):
    src = tmp_path / "in.conllu"
    src.write_text("1\tw\t_\tX\tX\t_\t0\troot\t_\t_\n\n")
    for args, message in (
        (["--pretokenized"], "--pretokenized is for text input, not CoNLL-U or trees"),
        (["--conllu", "--trees"], "--conllu and --trees name two formats: give one"),
    ):
        result = _run(src, "-m", runs["udgn"], *args)
        assert result.exit_code == 2 and result.stderr == f"error: {message}\n"


def test_a_conllu_word_id_out_of_place_is_reported_at_its_own_line(runs, tmp_path):
    """parse named the sentence's first line; convert, evaluate and preprocess the row's."""
    bad = tmp_path / "bad.conllu"
    rows = [f"{k}\tw{k}\t_\tX\tX\t_\t{h}\tdep\t_\t_" for k, h in ((1, 2), (2, 0), (3, 2))]
    second = ["# sent_id = 2", rows[0], rows[1], rows[2].replace("3\t", "7\t", 1)]
    bad.write_text("\n".join(["# sent_id = 1", *rows, "", *second, ""]) + "\n")
    result = _run(bad, "-m", runs["udgn"])
    assert result.exit_code == 2
    assert result.stderr == f"error: {bad}:9: token IDs must run 1, 2, 3, ...; got 7\n"
    converted = CliRunner().invoke(app, ["convert", "deps", str(bad), "--to", "conllx"])
    assert converted.stderr == result.stderr


def test_head_label_correlation_refuses_what_it_cannot_use_before_any_output(runs, tmp_path):
    """A gold without labels (Malt-TAB's three columns) gave an empty table and exit 0; a
    plot into a folder printed the table, then failed: both refused before any output.  An
    empty gold was said to carry no labels."""
    empty = tmp_path / "empty.conllu"
    empty.write_text("")
    unlabelled = tmp_path / "gold.malt"
    unlabelled.write_text("the\tDT\t2\nbill\tNN\t3\npassed\tVBD\t0\n\n")
    labelled = tmp_path / "gold.conllu"
    labelled.write_text(
        "1\tthe\t_\tDET\tDT\t_\t2\tdet\t_\t_\n2\tbill\t_\tNOUN\tNN\t_\t0\troot\t_\t_\n\n"
    )
    common = ["evaluate", "pcc", "-m", str(runs["udgn"]), "--device", "cpu"]
    for args, message in (
        ([str(unlabelled)], f"error: {unlabelled}: the gold dependencies carry no labels"),
        ([str(empty)], f"error: {empty}: no sentences in the file"),
        ([str(labelled), "--plot", str(tmp_path)], f"error: {tmp_path}: cannot write: is a"),
    ):
        result = CliRunner().invoke(app, [*common, *args])
        assert result.exit_code == 2 and result.stdout == "", result.output
        assert result.stderr.startswith(message) and result.stderr.count("\n") == 1


def test_head_label_correlation_refuses_a_gold_of_one_label(runs, tmp_path):
    """Edges of one label: every correlation was nan, the table empty, and exit 0 (Pearson's
    r; the official statistic counts the root's edge to itself, and a mean needs no other
    label)."""
    gold = tmp_path / "gold.conllu"
    words = [("the", 3, "dep"), ("big", 3, "dep"), ("bill", 4, "dep"), ("passed", 0, "root")]
    rows = [f"{k}\t{w}\t_\tX\tX\t_\t{h}\t{label}\t_\t_" for k, (w, h, label) in enumerate(words, 1)]
    gold.write_text("\n".join(rows) + "\n\n")
    args = ["evaluate", "pcc", "-m", str(runs["udgn"]), "--device", "cpu", str(gold)]
    assert CliRunner().invoke(app, args).exit_code == 0
    result = CliRunner().invoke(app, [*args, "--statistic", "pearson"])
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr == (
        f"error: {gold}: the gold edges between words the model reads carry one label (dep): "
        "a head is correlated with a label against the others\n"
    )


@pytest.mark.parametrize("top", [0, -1])
def test_head_label_correlation_refuses_a_top_below_one(runs, top):
    """The library's own check (the command line has ``--top`` ``min=1``): a slice by 0 or
    less would give an empty table or drop the last label without a word."""
    from induce.data.errors import ConfigError
    from induce.evaluate.pcc import head_label_correlation

    with pytest.raises(ConfigError, match=f"^top must be 1 or more, got {top}$"):
        head_label_correlation(str(runs["udgn"]), "unread.conllu", top=top)


@needs_shared("reference", "dev-sample", "words_nopunct.txt")
def test_parse_then_evaluate_on_the_reference_words(runs, tmp_path):
    folder = SHARED / "reference" / "dev-sample"
    out = tmp_path / "pred.ptb"
    result = _run(
        folder / "words_nopunct.txt",
        "-m",
        runs["structformer"],
        "--pretokenized",
        "-f",
        "ptb",
        "-o",
        out,
    )
    assert result.exit_code == 0, result.output
    scored = CliRunner().invoke(
        app, ["evaluate", "unsupervised", str(folder / "gold.mrg"), str(out), "-f", "json"]
    )
    assert scored.exit_code == 0, scored.output
    report = json.loads(scored.stdout)
    assert report["sentences"] == 1921 and 0 < report["sentence_f1"] < 100


def test_results_stream_before_the_input_ends(runs):
    """The first window is parsed and given back before the rest of the input is read."""
    from induce.parse import Parser, Sentence

    parser = Parser(str(runs["udgn"]), "cpu")

    def sentences():
        for k in range(1, 40):
            yield Sentence(["the", "bill", "passed"], k)
        raise RuntimeError("the input broke off")

    stream = parser.parse_stream(sentences(), batch_tokens=16)
    first = next(stream)
    assert first.sentence.line == 1 and len(first.heads) == 3
    with pytest.raises(RuntimeError, match="broke off"):
        list(stream)


def test_stdin_text_whose_first_line_begins_with_a_hash_is_text(runs):
    """``#1 hit song`` was taken for a CoNLL-U comment, and the next line refused as a token
    line of 1 column; the line after the comments tells."""
    args = ["parse", "-", "-m", str(runs["udgn"]), "-f", "ptb", "--device", "cpu"]
    result = CliRunner().invoke(app, args, input="#1 hit song\n# 2 more\nthe dog\n")
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 3 and "(X hit)" in result.stdout
    # CoNLL-U whose metadata has no space after its "#" is still CoNLL-U
    row = "1\tThe\t_\tDET\tDT\t_\t0\t_\t_\t_\n2\tbill\t_\tNOUN\tNN\t_\t0\t_\t_\t_\n\n"
    for comment in ("#sent_id=1", "#newdoc"):
        result = CliRunner().invoke(app, args, input=f"{comment}\n{row}")
        assert result.exit_code == 0 and result.stdout.split() == [
            "(X",
            "(X",
            "The)",
            "(X",
            "bill))",
        ]


def test_stdin_conllu_is_recognised_and_brackets_are_escaped(runs):
    conllu = (
        "# sent_id = a\n1\tThe\t_\tDET\tDT\t_\t0\t_\t_\t_\n2\tbill\t_\tNOUN\tNN\t_\t0\t_\t_\t_\n\n"
    )
    result = CliRunner().invoke(
        app, ["parse", "-", "-m", str(runs["udgn"]), "--device", "cpu"], input=conllu
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# sent_id = a\n1\tThe\t_\tDET")
    brackets = CliRunner().invoke(
        app,
        ["parse", "-", "-m", str(runs["udgn"]), "-f", "ptb", "--device", "cpu", "--pretokenized"],
        input="a ( b ) c\n",
    )
    assert brackets.exit_code == 0, brackets.output
    from induce.data.ptb import parse_trees

    tree = parse_trees(brackets.stdout).trees[0]
    assert tree is not None and tree.words() == ["a", "-LRB-", "b", "-RRB-", "c"]


def test_stdin_text_keeps_its_leading_blank_lines(runs, tmp_path):
    """Telling CoNLL-U from text on standard input swallowed the blank lines before the first
    text line: the output no longer lined up with the input (``paste``), unlike the same
    text read from a file."""
    text = "\n\nthe dog ran\n\nthe cat\n"
    (tmp_path / "in.txt").write_text(text)
    args = ["parse", "-m", str(runs["udgn"]), "-f", "ptb", "--device", "cpu"]
    piped = CliRunner().invoke(app, [*args, "-"], input=text)
    from_file = CliRunner().invoke(app, [*args, str(tmp_path / "in.txt")])
    assert piped.exit_code == 0, piped.output
    assert piped.stdout == from_file.stdout and piped.stdout.count("\n") == 5
    jsonl = ["parse", "-", "-m", str(runs["udgn"]), "-f", "jsonl", "--device", "cpu"]
    blank = CliRunner().invoke(app, jsonl, input="\n\n")
    assert blank.exit_code == 0 and blank.stdout.count('"words": []') == 2


@pytest.mark.parametrize(
    "kind, first, second",
    [
        ("--pretokenized", "the bill passed\n", "it rained\n"),
        # a tree over two lines, then a blank line: read_trees read all the input first
        ("--trees", "(S (NP (DT the) (NN bill))\n (VP (VBD passed)))\n\n", "(S (NN it))\n"),
        # text, which may be CoNLL-U: a first line that is blank or a '#' before a word waited
        # for the next line to tell
        ("", "#metoo bill passed\n", "it rained\n"),
        ("", "\n", "it rained\n"),
    ],
)
def test_a_line_typed_into_a_pipe_is_answered_before_the_next(runs, kind, first, second):
    """From a terminal or a pipe, parse waited for a whole batch of tokens (8,192 for the
    demo runs) or the end of the input: a line typed, or written by a program waiting for
    its answer, got none.  Trees too: ``--trees -`` read its whole input before the first."""
    import os
    import select
    import subprocess
    import sys

    command = [sys.executable, "-m", "induce.cli.app", "parse", "-", "-m", str(runs["udgn"])]
    command += ["-f", "ptb", *([kind] if kind else []), "--device", "cpu"]
    command += ["--batch-tokens", "4096"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(first)
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 120)
        assert ready, "no tree for the first line while the input stayed open"
        answer = process.stdout.readline()
        if first.strip():
            assert answer.startswith("(") and answer.split()[-1].startswith("passed")
        else:  # an empty sentence: an empty line
            assert answer == "\n"
        process.stdin.write(second)
        process.stdin.close()
        assert process.stdout.read().count("\n") == 1 and process.wait(60) == 0
    finally:
        process.kill()


def test_read_ahead_stops_with_its_reader(tmp_path):
    """Prefetched (parse's read-ahead of a pipe) kept reading after its consumer stopped:
    the thread blocked for good, holding the input file open; a second pass hung, and
    ahead=0 set no limit.  One dropped unread polled its queue until the process ended."""
    import threading
    import time

    from induce.data.errors import ConfigError, InputError
    from induce.parse import Prefetched, Sentence, iter_sentences

    text = tmp_path / "in.txt"
    text.write_text("a b\n" * 1000)
    before = threading.active_count()
    for _ in range(3):
        ahead = Prefetched(iter_sentences(str(text), "pretokenized"), ahead=4)
        for k, _sentence in enumerate(ahead):
            if k == 2:
                break
    with Prefetched(iter_sentences(str(text), "pretokenized"), ahead=4) as ahead:
        next(iter(ahead))
    Prefetched(iter_sentences(str(text), "pretokenized"), ahead=4)  # dropped unread
    deadline = time.monotonic() + 10
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() == before  # the readers ended (their files closed)
    once = Prefetched(iter([Sentence(["a"], 1)]))
    assert (len(list(once)), len(list(once))) == (1, 0)
    with pytest.raises(ConfigError, match="ahead must be 1 or more"):
        Prefetched(iter([]), ahead=0)

    def broken():
        yield Sentence(["a"], 1)
        raise InputError("bad line", "in.txt", 2)

    got = []
    with pytest.raises(InputError, match="in.txt:2"):
        got.extend(Prefetched(broken()))
    assert len(got) == 1  # what came before the error, in order


def test_a_bad_line_late_in_the_input_leaves_no_output_file(runs, tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"the bill passed\n" * 50 + b"bad \xff byte\n")
    out = tmp_path / "out.conllu"
    result = _run(src, "-m", runs["udgn"], "-o", out)
    assert result.exit_code == 2 and "in.txt:51: not valid UTF-8" in result.stderr
    assert not out.exists() and not list(tmp_path.glob(".induce-*"))


def test_a_bad_line_of_normalised_text_leaves_no_output_file(runs, tmp_path):
    """``--normalized`` reads its lines as the other text inputs do: a bad one is an error at
    its line, exit 2, and no output."""
    src = tmp_path / "in.txt"
    src.write_bytes(b"the bill cost N\n" * 50 + b"bad \xff byte\n")
    out = tmp_path / "out.conllu"
    result = _run(src, "--normalized", "-m", runs["udgn"], "-o", out)
    assert result.exit_code == 2 and "in.txt:51: not valid UTF-8" in result.stderr
    assert "Traceback" not in result.output
    assert not out.exists() and not list(tmp_path.glob(".induce-*"))


def test_predictions_clear_the_gold_enhanced_graph(runs, tmp_path):
    src = tmp_path / "in.conllu"
    src.write_text(
        "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t2:det\t_\n"
        "2\tbill\tbill\tNOUN\tNN\t_\t3\tnsubj\t3:nsubj\t_\n"
        "3\tpassed\tpass\tVERB\tVBD\t_\t0\troot\t0:root\tSpaceAfter=No\n"
        "3.1\tgone\tgo\tVERB\tVBN\t_\t_\t_\t3:conj\t_\n\n"  # an empty node kept its DEPS
    )
    result = _run(src, "-m", runs["udgn"])
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in result.stdout.splitlines() if "\t" in line]
    assert [row[8] for row in rows] == ["_", "_", "_", "_"]
    assert rows[2][9] == "SpaceAfter=No" and rows[3][:2] == ["3.1", "gone"]


def test_tree_format_draws_arcs_over_the_words_and_brackets_under_them(runs, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text(TEXT)
    result = _run(src, "-m", runs["udgn"], "-f", "tree", "--pretokenized")
    assert result.exit_code == 0, result.output
    first, empty, second = result.stdout.split("\n\n")[:3]
    lines = first.splitlines()
    words = next(k for k, line in enumerate(lines) if line.split() == TEXT.split("\n")[0].split())
    assert lines[words - 1].count("▼") == 5  # an arc into every token, "." included
    assert "●" in first and "└" in lines[words + 1]
    assert empty.startswith("# 2") and "(empty)" in empty
    assert lines[0] == "# 1" and second.startswith("# 3")
    combiner = _run(src, "-m", runs["combiner"], "-f", "tree", "--pretokenized")
    assert combiner.exit_code == 0 and "▼" not in combiner.stdout and "└" in combiner.stdout


def test_html_format_is_one_page_with_an_arc_per_token(runs, tmp_path):
    import re

    src = tmp_path / "in.txt"
    src.write_text(TEXT)
    out = tmp_path / "parse.html"
    result = _run(src, "-m", runs["structformer"], "-f", "html", "--pretokenized", "-o", out)
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>\n")
    sections = page.split('<section class="sentence"')[1:]
    assert len(sections) == 3
    for section, line in zip(sections, TEXT.split("\n")):
        assert len(re.findall(r'<path class="arc[ "]', section)) == len(line.split())
    assert "(empty sentence)" in sections[1]


def test_batches_are_the_runs_evaluation_batches_unless_given(runs):
    """``batch_tokens=None`` takes the run's ``data.eval_batch_tokens`` (the PCFG presets set
    a small one); a number given wins."""
    from induce.parse import Parser, Sentence

    parser = Parser(str(runs["udgn"]), "cpu")
    asked: list[int] = []
    scores = parser.reader.scores
    parser.reader.scores = lambda s, w, tokens: asked.append(tokens) or scores(s, w, tokens)
    sentence = [Sentence(["the", "bill", "passed"], 1)]
    parser.parse(sentence)
    parser.parse(sentence, batch_tokens=16)
    assert asked == [parser.run.config.data.eval_batch_tokens, 16]


def test_a_datasets_own_text_is_read_as_the_dataset_reads_it(runs):
    """Normalised text (a dataset's own ``SPLIT.txt``): the model reads the words the
    dataset gives it.  Normalised again, its numbers (``N``) would be lower-cased to ``n``;
    raw words are still normalised (``5`` and ``The`` read as ``N`` and ``the``)."""
    from induce.data.dataset import load_dataset
    from induce.parse import Parser, Sentence

    parser = Parser(str(runs["structformer"]), "cpu")
    dataset = load_dataset(runs["structformer"].parent / "data")
    numbers = 0
    for split in ("train", "valid", "test"):
        lines = list(dataset.lines(f"{split}.txt"))
        for k, (line, words) in enumerate(zip(lines, dataset.sentences(split), strict=True)):
            given = Sentence(line.split(), k + 1, line, normalized=True)
            assert parser.reader.words(given) == words, split
            numbers += words.count("N")
    assert numbers  # the case that matters is there
    assert parser.reader.words(Sentence(["N", "rose"], 1, "")) == ["n", "rose"]  # raw
    raw = parser.reader.words(Sentence(["The", "bill", "cost", "5", "Nations"], 1, ""))
    assert raw == ["the", "bill", "cost", "N", "nations"]


def test_a_datasets_split_text_is_read_as_normalised_unless_raw_is_asked(runs, tmp_path):
    """``induce parse DATA/valid.txt`` reads the dataset's words as they stand, as does
    ``--normalized`` on a copy elsewhere; ``--raw`` (the default elsewhere) normalises them
    again, and reads the numbers' ``N`` as ``n``."""
    data = runs["structformer"].parent / "data"
    copy = tmp_path / "valid.txt"
    copy.write_text((data / "valid.txt").read_text())
    assert " N " in f" {copy.read_text()} "
    outputs = {}
    for name, args in {
        "dataset": [data / "valid.txt"],
        "copy, --normalized": [copy, "--normalized"],
        "dataset, --raw": [data / "valid.txt", "--raw"],
        "copy": [copy],
    }.items():
        result = _run(*args, "-m", runs["structformer"], "-f", "jsonl", "--scores")
        assert result.exit_code == 0, result.output
        outputs[name] = result.stdout
    assert outputs["dataset"] == outputs["copy, --normalized"]
    assert outputs["dataset, --raw"] == outputs["copy"] != outputs["dataset"]
    refused = _run(copy, "--conllu", "--normalized", "-m", runs["structformer"])
    assert refused.exit_code == 2 and "--normalized is for text input" in refused.output


@pytest.mark.parametrize(
    ("arch", "fmt"), [("udgn", "conllu"), ("structformer", "jsonl"), ("combiner", "ptb")]
)
def test_weights_of_nan_are_one_error_naming_them(runs, tmp_path, arch, fmt):
    """They wrote CoNLL-U with every word a root and JSON holding NaN, with exit 0."""
    import shutil

    from safetensors import safe_open
    from safetensors.torch import save_file

    from induce.runs.directory import open_run

    run = tmp_path / arch
    shutil.copytree(runs[arch], run)
    weights = open_run(run).weights("best")
    with safe_open(str(weights), framework="pt") as handle:
        metadata = handle.metadata()
        tensors = {k: handle.get_tensor(k) for k in handle.keys()}
    save_file({k: torch.full_like(v, float("nan")) for k, v in tensors.items()}, weights, metadata)
    (tmp_path / "in.txt").write_text("the bill passed the house\n")
    out = tmp_path / "out"
    args = ["parse", tmp_path / "in.txt", "-m", run, "-f", fmt, "-o", out, "--device", "cpu"]
    result = CliRunner().invoke(app, [*map(str, args)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        f"error: {weights}: the model's scores are not numbers (NaN): its weights are damaged, "
        "or its training diverged"
    )
    assert not out.exists()


def test_output_never_replaces_the_input_it_reads_as_standard_input_or_the_run_record(
    runs, tmp_path, monkeypatch
):
    """``parse - -o FILE < FILE`` replaced its input with its trees, exit 0 (the same file
    named was refused); ``-o`` over the latest-run record it had just read lost the record."""
    import subprocess
    import sys

    text = tmp_path / "s.txt"
    text.write_text("the dog barked\ncats sleep\n")
    command = [sys.executable, "-m", "induce.cli.app", "parse", "-", "-m", str(runs["udgn"])]
    with text.open("rb") as stdin:
        done = subprocess.run(
            [*command, "-f", "ptb", "-o", str(text), "--device", "cpu"],
            stdin=stdin, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr
        == f"error: {text}: --output would replace the input {text}: write the output elsewhere\n"
    )
    assert text.read_text() == "the dog barked\ncats sleep\n"
    from induce.runs import remember_run

    monkeypatch.setenv("INDUCE_CACHE_DIR", str(tmp_path / "cache"))
    remember_run(str(runs["udgn"]))
    record = tmp_path / "cache" / "latest-run"
    before = record.read_bytes()
    result = CliRunner().invoke(app, ["parse", str(text), "-f", "ptb", "-o", str(record)])
    assert result.exit_code == 2 and "will not overwrite a file this command reads" in result.stderr
    assert record.read_bytes() == before
    # the library's latest_run reads it without holding it: a script may record another run
    from induce.data.files import forget_inputs
    from induce.runs import latest_run

    forget_inputs()
    assert latest_run() == runs["udgn"]
    remember_run(str(runs["structformer"]))
    assert latest_run() == runs["structformer"]


def test_running_out_of_memory_names_the_longest_sentence(runs, tmp_path, monkeypatch):
    """A grammar has no length limit, and a 2,000-word line ended in the allocator's
    traceback (a chart grows with the cube of the length): one line naming it now."""
    import induce
    from induce.data.errors import InputError

    loaded = induce.load(str(runs["udgn"]), device="cpu")

    def exhausted(*args, **kwargs):
        raise RuntimeError(
            "[enforce fail at alloc_cpu.cpp:127] . DefaultCPUAllocator: "
            "can't allocate memory: you tried to allocate 64000000000 bytes."
        )
        yield  # a generator, as the readers' scores are

    monkeypatch.setattr(loaded.parser.reader, "scores", exhausted)
    with pytest.raises(InputError) as err:
        loaded.parse(["a b", "a b c d e", "c"])
    assert str(err.value).startswith("<python>:2: out of memory parsing sentences of up to 5")

    def broken(*args, **kwargs):
        raise RuntimeError("x")
        yield

    monkeypatch.setattr(loaded.parser.reader, "scores", broken)
    with pytest.raises(RuntimeError, match="^x$"):  # any other error is no input's fault
        loaded.parse(["a b"])


def test_progress_is_never_written_in_place_among_the_trees(monkeypatch, capsys):
    """On a terminal showing the trees too, the progress line updated in place (no line end)
    ran into the next tree: ``\\rparsed 4 sentences, 20 sentences/s(X (X x))``."""
    import sys

    from induce.cli.parse import _Progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    shared = _Progress(quiet=False, shared=True)
    shared.update(4)  # a log line every 30 s, each ended: none yet
    shared.logged -= 31
    shared.update(8)
    shared.close()
    alone = _Progress(quiet=False)
    alone.update(4)
    alone.close()
    err = capsys.readouterr().err
    first, second = err.split("\n", 1)
    assert first.startswith("parsed 8 sentences") and "\r" not in first
    assert second.startswith("\rparsed 4 sentences") and second.endswith("\n")
