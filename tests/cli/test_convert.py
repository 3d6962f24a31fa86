"""``induce convert``: distances/heights, head rules, tree and dependency formats; errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.conll import parse_deps
from induce.data.ptb import parse_trees
from tests.conftest import DATA, needs_shared

runner = CliRunner()

MRG = """
( (S
    (NP-SBJ-1 (DT The) (NN dog) )
    (, ,)
    (VP (MD will)
      (VP (VB bark)
        (S (NP-SBJ (-NONE- *-1) ) (VP (TO to) (VP (VB eat))))))
    (. .) ))
( (FRAG (`` ``) (NP (NNS Cats) ) ('' '') ))
"""
JSONL = (
    '{"words": ["the", "dog", "barked"], "distances": [1, 2], "heights": [0, 1, 2]}\n'
    '\n{"words": ["yes"], "distances": [], "heights": [0.5], "tags": ["UH"]}\n'
)


def run(*args: str, **kwargs):
    return runner.invoke(app, list(args), **kwargs)


def test_distances_to_trees_dependencies_and_both(write):
    source = write("in.jsonl", JSONL)
    ptb = run("convert", "distances", source)
    assert ptb.exit_code == 0, ptb.output
    assert ptb.stdout == "(X (X (X the) (X dog)) (X barked))\n(X (UH yes))\n"
    conllu = parse_deps(run("convert", "distances", source, "--to", "conllu").stdout, "o", "conllu")
    assert [t.heads for t in conllu.sentences] == [(2, 3, 0), (0,)]
    both = [
        json.loads(line)
        for line in run("convert", "distances", source, "--to", "both").stdout.splitlines()
    ]
    assert both[0] == {
        "words": ["the", "dog", "barked"],
        "tree": "(X (X (X the) (X dog)) (X barked))",
        "heads": [2, 3, 0],
        "root": 3,
        "root_height": 2,
    }
    ties = run(
        "convert",
        "distances",
        "-",
        "--ties",
        "right",
        input='{"words": ["a", "b", "c"], "distances": [1, 1]}\n',
    )
    assert ties.stdout == "(X (X (X a) (X b)) (X c))\n"


@pytest.mark.parametrize(
    "line, fragment",
    [
        ('{"words": ["a", "b"], "distances": [1, 2], "heights": [0, 1]}', "need 1 distances"),
        ('{"words": ["a", "b"], "distances": [NaN], "heights": [0, 1]}', "not a finite number"),
        ('{"words": ["a", "b"], "distances": [Infinity], "heights": [0, 1]}', "not a finite"),
        ('{"words": ["a", "b"], "distances": [1], "heights": [0]}', "need 2 heights"),
        ('{"words": ["a", "b"], "distances": [1]}', 'no "heights"'),
        ('{"words": [], "distances": [], "heights": []}', "empty sentence"),
        ('{"words": ["a b"], "distances": [], "heights": [1]}', "tokens cannot be empty"),
        ('{"words": ["a", "b"], "distances": [1], "heights": [0, 1', "not valid JSON"),
        ('["a", "b"]', "expected a JSON object"),
        (
            '{"words": ["a", "b"], "distances": [1' + "0" * 400 + '], "heights": [0, 1]}',
            "not a finite number",
        ),
        (
            '{"words": ["a", "b"], "distances": [' + "1" * 5000 + '], "heights": [0, 1]}',
            "not valid JSON",
        ),
        ('{"words": ' + "[" * 100000 + "]" * 100000 + "}", "nested too deeply"),
        ('{"words": ["\\ud800"], "distances": [], "heights": [0]}', "invalid Unicode"),
        ('{"words": ["a", "b"], "distances": [true], "heights": [0, 1]}', "not a finite"),
        ('{"words": ["a", "b"], "distances": ["1"], "heights": [0, 1]}', "not a finite"),
    ],
)
def test_bad_distance_lines(write, tmp_path, line, fragment):
    source = write("in.jsonl", JSONL + line + "\n")
    out = tmp_path / "out.conllu"
    result = run("convert", "distances", source, "--to", "conllu", "-o", str(out))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {source}:4: "), lines
    assert fragment in lines[0]
    assert not out.exists()


def test_headrules_formats(write, tmp_path):
    source = write("t.mrg", MRG)
    out = tmp_path / "deps.conllu"
    result = run("convert", "headrules", source, "-o", str(out))
    assert result.exit_code == 0 and result.stdout == ""
    deps = parse_deps(out.read_text(), str(out))
    first = deps.sentences[0]
    assert first.words == ("The", "dog", ",", "will", "bark", "to", "eat", ".")
    assert first.heads == (2, 4, 4, 0, 4, 7, 5, 4)  # "to" depends on its verb
    assert first.labels[1] == "SBJ" and first.tags[3] == "MD"
    malt = run("convert", "headrules", source, "--to", "malt", "-r", "collins").stdout
    assert malt.splitlines()[0] == "The\tDT\t2\tdep"
    conllx = run("convert", "headrules", source, "--to", "conllx").stdout
    assert conllx.splitlines()[0].split("\t")[3:5] == ["DT", "DT"]


def test_headrules_unknown_label(write, tmp_path):
    source = write("t.mrg", "(TOP (S (ZZP (NN a)) (VP (VB b))))\n")
    out = tmp_path / "o.conllu"
    result = run("convert", "headrules", source, "-o", str(out))
    assert result.exit_code == 2
    assert "t.mrg:1: the head table 'penn2malt' has no rule for the label 'ZZP'" in result.stderr
    assert not out.exists()


def test_trees_cleaning_and_binarizing(write):
    source = write("t.mrg", MRG)
    result = run(
        "convert", "trees", source, "--strip-traces", "--strip-function-tags", "--one-per-line"
    )
    assert "--one-per-line is ignored" in result.stderr
    assert result.stdout.splitlines()[0] == (
        "( (S (NP (DT The) (NN dog)) (, ,) (VP (MD will) (VP (VB bark) (S (VP (TO to) "
        "(VP (VB eat)))))) (. .)))"
    )
    words = run(
        "convert",
        "trees",
        source,
        "--strip-traces",
        "--keep-tags",
        "ptb_word_tags",
        "--unwrap",
        "--collapse-unary",
        "--lowercase",
    ).stdout.splitlines()
    assert (
        words[0] == "(S (NP-SBJ-1 (DT the) (NN dog)) (VP (MD will) (VP (VB bark) "
        "(S (TO to) (VP (VB eat))))))"
    )  # a unary chain keeps its top label
    assert words[1] == "(FRAG (NNS cats))"
    binary = run("convert", "trees", source, "--strip-traces", "--binarize", "right").stdout
    tree = parse_trees(binary).trees[0]
    assert all(len(n.children) <= 2 for n in tree.subtrees())
    back = run("convert", "trees", "-", "--unbinarize", input=binary).stdout
    assert back == run("convert", "trees", source, "--strip-traces").stdout
    nothing = run("convert", "trees", write("p.mrg", "(S (. .))\n(S (NN a))\n"), "--remove-punct")
    assert (
        nothing.stdout == "(S (NN a))\n"
        and "1 sentence(s) left without words were dropped" in nothing.stderr
    )


def test_blank_lines_between_one_line_trees_are_left_out_and_said_so(write, tmp_path):
    """A one-tree-per-line file with blank lines between its trees: ``headrules`` refused
    the first blank line ("empty sentence: no word to attach") and ``trees`` said it had
    dropped "sentence(s) left without words", while the same file in a folder (where blank
    lines separate) converted.  Both now leave the empty sentences out, aligned, and say
    what they were; the output is the folder's."""
    text = "(S (NP (DT the) (NN dog)) (VP (VBD ran)))\n\n(S (NN it) (VBD rained))\n\n"
    alone = write("one.mrg", text)
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "one.mrg").write_text(text)
    for command in ("headrules", "trees"):
        result = run("convert", command, alone)
        assert result.exit_code == 0, result.output
        assert result.stdout == run("convert", command, str(tmp_path / "folder")).stdout
        assert result.stderr.strip().splitlines()[0] == (
            "warning: 1 empty sentence(s) left out: the blank lines between the trees of a "
            "one-tree-per-line file (a parser's failed parses)"
        )
    assert run("convert", "trees", alone).stdout.count("\n") == 2


def test_trees_to_distances_and_back(write):
    source = write("t.mrg", MRG)
    records = run(
        "convert", "trees", source, "--strip-traces", "--remove-punct", "--to", "distances"
    ).stdout
    first = json.loads(records.splitlines()[0])
    assert first["words"] == ["The", "dog", "will", "bark", "to", "eat"]
    assert first["distances"] == [1, 6, 5, 4, 2]  # LCA heights: NP 1, S 6, VPs 5 4 2
    again = run("convert", "distances", "-", input=records).stdout.splitlines()[0]
    assert again == ("(X (X (DT The) (NN dog)) (X (MD will) (X (VB bark) (X (TO to) (VB eat)))))")


def test_distances_are_over_the_words_the_text_has(write):
    """Without --strip-traces the records counted traces (``*T*-1``, ``0``) as words, and
    no longer matched ``--to text``'s lines word for word."""
    source = write("t.mrg", MRG)
    records = run("convert", "trees", source, "--to", "distances").stdout.splitlines()
    text = run("convert", "trees", source, "--to", "text").stdout.splitlines()
    assert [json.loads(r)["words"] for r in records] == [line.split() for line in text]
    assert any("-NONE-" in line for line in MRG.splitlines())


@pytest.mark.parametrize("empty", ["(TOP)", "()", "(TOP (NP))", "(S (NP) (VP))"])
def test_trees_without_words_have_no_distances(write, tmp_path, empty):
    """A tree without a word has no distances: one line at its own line, as convert
    headrules says it (it used to be an IndexError in tree_distances)."""
    source = write("t.mrg", "(S (NN a) (VB b))\n" + empty + "\n")
    out = tmp_path / "d.jsonl"
    for command in ("trees", "headrules"):
        extra = ["--to", "distances"] if command == "trees" else []
        result = run("convert", command, source, *extra, "-o", str(out))
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert lines == [f"error: {source}:2: " + lines[0].split(":2: ", 1)[1]], lines
        assert "empty sentence: no word to" in lines[0]
        assert not out.exists()
    assert run("convert", "trees", source).stdout.splitlines()[1] == empty  # as it was


def test_deep_trees_and_long_sentences(write):
    n = 3000
    record = {
        "words": [f"w{i}" for i in range(n)],
        "distances": list(range(n - 1)),
        "heights": list(range(n)),
    }
    source = write("long.jsonl", json.dumps(record) + "\n")
    ptb = run("convert", "distances", source)
    assert ptb.exit_code == 0 and ptb.stdout.count("(X w") == n
    both = json.loads(run("convert", "distances", source, "--to", "both").stdout)
    assert both["root"] == n and both["heads"][0] == 2
    deep = write("deep.mrg", "(S " + "(VP (VB v) " * 2000 + "(NN n)" + ")" * 2000 + ")\n")
    out = run("convert", "trees", deep, "--binarize", "right", "--remove-punct")
    assert out.exit_code == 0 and out.stdout.count("(VP") == 2000


def test_punctuation_removed_consistently_from_trees_and_dependencies(write):
    source = write("t.mrg", MRG)
    deps = write("d.conllu", run("convert", "headrules", source).stdout)
    trees = parse_trees(run("convert", "trees", source, "--strip-traces", "--remove-punct").stdout)
    no_punct = parse_deps(run("convert", "deps", deps, "--remove-punct").stdout, "x", "conllu")
    assert [t.words() for t in trees.trees] == [list(d.words) for d in no_punct.sentences]
    assert no_punct.sentences[0].heads == (2, 3, 0, 3, 6, 4)


def test_conllu_keeps_its_columns(write):
    source = write(
        "in.conllu",
        "# sent_id = 1\n# text = Hi , you .\n"
        "1\tHi\thi\tINTJ\tUH\t_\t3\tdiscourse\t3:discourse\t_\n"
        "2\t,\t,\tPUNCT\t,\t_\t1\tpunct\t1:punct\t_\n"
        "3\tyou\tyou\tPRON\tPRP\tCase=Nom\t0\troot\t0:root\tSpaceAfter=No\n"
        "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t3:punct\t_\n\n",
    )
    same = run("convert", "deps", source, "-o", "-")
    assert same.stdout == open(source).read()
    reduced = run("convert", "deps", source, "--remove-punct").stdout
    assert reduced == (
        "# sent_id = 1\n1\tHi\thi\tINTJ\tUH\t_\t2\tdiscourse\t_\t_\n"
        "2\tyou\tyou\tPRON\tPRP\tCase=Nom\t0\troot\t_\tSpaceAfter=No\n\n"
    )


def test_removing_a_punctuation_root_keeps_one_tree(write):
    source = write("r.dp", "a\tDT\t2\tNMOD\nb\tNN\t3\tSBJ\n.\t.\t0\tROOT\nc\tNN\t3\tOBJ\n\n")
    out = run("convert", "deps", source, "--remove-punct", "--to", "malt").stdout
    assert out == "a\tDT\t2\tNMOD\nb\tNN\t0\tROOT\nc\tNN\t2\tOBJ\n\n"


@pytest.mark.parametrize(
    "table, fragment",
    [
        ("rules:\n  ON: [left]\n", "the label True is not text"),
        ("rules: {S: [left}\n", "t.yaml:1: not valid YAML"),
        ("rules:\n  S: [sideways VP]\n", "direction must be one of"),
        ("rules: {S: [left]}\nlabels: {root: [x]}\n", "root must be text"),
        ("rules: {S: [left]}\nlabels: {rules: 5}\n", "rules must be a list"),
        ("rules: {S: [left]}\nlabels: {rules: [{label: A, function: []}]}\n", "is empty"),
        ("rules: {S: [left]}\npunctuation: no_such_set\n", "t.yaml: punctuation: unknown tag set"),
    ],
)
def test_bad_head_tables(write, table, fragment):
    result = run("convert", "headrules", write("t.mrg", MRG), "-r", write("t.yaml", table))
    assert result.exit_code == 2 and fragment in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_deps_formats_and_heights(write):
    malt = write("d.dp", "The\tDT\t2\ndog\tNN\t3\nbarked\tVBD\t0\n.\t.\t3\n\n")
    conllu = run("convert", "deps", malt, "--to", "conllu").stdout
    assert conllu.splitlines()[0] == "1\tThe\t_\t_\tDT\t_\t2\t_\t_\t_"
    heights = json.loads(run("convert", "deps", malt, "--to", "heights").stdout)
    assert heights == {
        "words": ["The", "dog", "barked", "."],
        "heads": [2, 3, 0, 3],
        "heights": [0, 1, 2, 0],
    }
    bad = run("convert", "deps", write("c.dp", "a\tDT\t2\nb\tNN\t1\nc\tNN\t0\n"))
    assert bad.exit_code == 2 and "c.dp:1: not a dependency tree: cycle" in bad.stderr


def test_conllx_without_punctuation_keeps_each_kept_words_columns(write):
    """CoNLL-X to CoNLL-U wrote LEMMA, UPOS and FEATS as ``_``; with words removed the
    columns must follow the words that stay."""
    conllx = write(
        "d.conll",
        "1\tYes\tyes\tINTJ\tUH\t_\t4\tdiscourse\t_\t_\n"
        "2\t,\t,\tPUNCT\t,\t_\t4\tpunct\t_\t_\n"
        "3\tit\tit\tPRON\tPRP\tCase=Nom\t4\tnsubj\t_\t_\n"
        "4\tis\tbe\tAUX\tVBZ\tMood=Ind\t0\troot\t_\t_\n\n",
    )
    result = run("convert", "deps", conllx, "--to", "conllu", "--remove-punct")
    assert result.exit_code == 0, result.output
    assert [line.split("\t")[:6] for line in result.stdout.splitlines() if line] == [
        ["1", "Yes", "yes", "INTJ", "UH", "_"],
        ["2", "it", "it", "PRON", "PRP", "Case=Nom"],
        ["3", "is", "be", "AUX", "VBZ", "Mood=Ind"],
    ]


def test_convert_does_not_import_torch(write):
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    source = write("in.jsonl", JSONL)
    code = (
        "import sys\nfrom induce.cli.app import main\n"
        f"sys.argv = ['induce', 'convert', 'distances', {source!r}, '--to', 'both']\n"
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


@needs_shared("data", "ptb-sample")
def test_penn2malt_reproduces_the_sample_dependencies():
    """The Penn2Malt table gives the heads of every .dp file of the sample (46,451 tokens)."""
    from induce.convert.headrules import convert_headrules
    from induce.data.conll import read_deps

    ours = convert_headrules(str(DATA / "ptb-sample" / "trees"), "penn2malt").sentences
    gold = read_deps(str(DATA / "ptb-sample" / "dependencies")).sentences
    assert len(ours) == len(gold) == 1921
    agree = sum(a == b for o, g in zip(ours, gold) for a, b in zip(o.heads, g.heads))
    assert [o.words for o in ours] == [g.words for g in gold]
    assert agree == sum(len(g) for g in gold) == 46451


def test_trees_to_text_gives_the_words_evalb_scores(write, tmp_path):
    gold = write(
        "g.mrg",
        "( (S (NP-SBJ (NNP Mr.) (NNP Vinken)) (VP (VBZ is) (NP (NN chairman)) "
        "(S (NP (-NONE- *-1)))) (. .)))\n(TOP (S (NP (PRP It)) (VP (VBD Rained))))\n",
    )
    result = CliRunner().invoke(app, ["convert", "trees", gold, "--to", "text"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "Mr. Vinken is chairman .\nIt Rained\n"  # case kept, no traces
    # a tagging parser's trees over exactly these tokens are scored with no error sentence
    tags = [["NNP", "NNP", "VBZ", "NN", "."], ["PRP", "VBD"]]
    flat = "".join(
        "(S " + " ".join(f"({t} {w})" for t, w in zip(tag, line.split())) + ")\n"
        for tag, line in zip(tags, result.stdout.splitlines())
    )
    scored = CliRunner().invoke(
        app, ["evaluate", "brackets", gold, write("p.mrg", flat), "-f", "json"]
    )
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["all"]["error_sentences"] == 0


UD = (
    "1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_\n2\tcat\tcat\tNOUN\t_\t_\t3\tnsubj\t_\t_\n"
    "3\tsat\tsit\tVERB\t_\t_\t0\troot\t_\t_\n4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_\n\n"
)
UD_TREES = "(TOP (S (NP (DET The) (NOUN cat)) (VP (VERB sat)) (PUNCT .)))\n"


@pytest.mark.parametrize(
    "kind, text, flags, said",
    [
        ("deps", UD, ["--remove-punct"], "punctuation is removed by its Penn Treebank tags"),
        ("trees", UD_TREES, ["--remove-punct"], "no word of the file has a Penn Treebank tag"),
        ("deps", UD, ["--keep-tags", "ptb_word_tags"], "no word of the file has a tag to keep"),
        ("trees", UD_TREES, ["--keep-tags", "ptb_word_tags"], "every sentence would go"),
    ],
)
def test_a_tag_filter_that_matches_no_tag_of_the_file_is_refused(tmp_path, kind, text, flags, said):
    """Universal Dependencies tags (PUNCT) under --remove-punct, which removes Penn Treebank
    punctuation tags, wrote the input unchanged; --keep-tags of a tag set the file has none
    of wrote an empty file, each with exit 0."""
    source = tmp_path / ("in.conllu" if kind == "deps" else "in.mrg")
    source.write_text(text)
    out = tmp_path / "out"
    result = runner.invoke(app, ["convert", kind, str(source), *flags, "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr.startswith(f"error: {source}: ") and said in result.stderr
    assert "(its tags: DET, NOUN, PUNCT, VERB)" in result.stderr


UD_WITH_XPOS = (
    "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t_\t_\n"
    "3\tsat\tsit\tVERB\tVBD\t_\t0\troot\t_\t_\n4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_\n\n"
)


def test_a_ud_tag_set_keeps_words_by_the_upos_column(tmp_path):
    """English treebanks hold PTB tags in XPOS, which the reader takes: --keep-tags
    ud_word_tags dropped almost every sentence of EWT (exit 0).  The output keeps its tags."""
    source = tmp_path / "in.conllu"
    source.write_text(UD_WITH_XPOS)
    args = ["convert", "deps", str(source), "--keep-tags", "ud_word_tags"]
    malt = runner.invoke(app, [*args, "--to", "malt"])
    assert malt.exit_code == 0, malt.output
    assert malt.stdout == "The\tDT\t2\tdet\ncat\tNN\t3\tnsubj\nsat\tVBD\t0\troot\n\n"
    conllu = runner.invoke(app, args)
    assert conllu.exit_code == 0 and "3\tsat\tsit\tVERB\tVBD\t" in conllu.stdout
    assert "PUNCT" not in conllu.stdout


def test_a_file_of_penn_tags_without_punctuation_converts(tmp_path):
    source = tmp_path / "in.mrg"
    source.write_text("(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat))))\n")
    result = runner.invoke(app, ["convert", "trees", str(source), "--remove-punct"])
    assert result.exit_code == 0 and result.stdout.startswith("(TOP (S (NP (DT The)")


@pytest.mark.parametrize(
    "flags, flag",
    [
        (["--binarize", "right"], "--binarize"),
        (["--collapse-unary"], "--collapse-unary"),
        (["--unwrap"], "--unwrap"),
        (["--strip-function-tags"], "--strip-function-tags"),
    ],
)
def test_a_tree_option_of_no_effect_on_the_words_is_refused_with_text(tmp_path, flags, flag):
    """``--to text`` writes the words: an option that changes only the trees was accepted
    and did nothing."""
    source = tmp_path / "in.mrg"
    source.write_text("(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat))))\n")
    result = runner.invoke(app, ["convert", "trees", str(source), "--to", "text", *flags])
    assert result.exit_code == 2
    assert (
        result.stderr
        == f"error: {flag} changes the trees, not their words, which --to text writes\n"
    )
    kept = runner.invoke(app, ["convert", "trees", str(source), "--to", "text", "--lowercase"])
    assert kept.exit_code == 0 and kept.stdout == "the cat sat\n"
