"""File-level evaluation: pairing sentences and tokens, baselines, clear errors."""

from __future__ import annotations

import pytest

from induce.data.errors import ConfigError, InduceWarning, InputError
from induce.evaluate.baselines import builtin_treebank, score_baselines
from induce.evaluate.brackets import evaluate_brackets
from induce.evaluate.deps import evaluate_deps
from induce.evaluate.unsupervised import evaluate_unsupervised

GOLD = (
    "(TOP (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) "
    "(NN mat)))) (. .)))\n"
    "( (S (NP-SBJ (-NONE- *)) (VP (VB Go) (NP (NN home))) (. !)))\n"
    "(TOP (FRAG (`` ``) (NP (NNS Prices) (CD 12)) ('' '')))\n"
)


def test_prediction_over_all_tokens_or_over_words_scores_the_same(write):
    gold = write("gold.mrg", GOLD)
    full = write(
        "full.mrg",
        "(X (X (DT The) (NN cat)) (X (VBD sat) (X (IN on) (X (DT the) "
        "(X (NN mat) (. .))))))\n(X (VB Go) (X (NN home) (. !)))\n"
        "(X (`` ``) (X (NNS Prices) (X (CD 12) ('' ''))))\n",
    )
    words = write(
        "words.txt",
        "(X (X (X the) (X cat)) (X (X sat) (X (X on) (X (X the) "
        "(X mat)))))\n(X (X go) (X home))\n(X (X prices) (X N))\n",
    )
    a = evaluate_unsupervised(gold, full).to_dict()
    b = evaluate_unsupervised(gold, words).to_dict()
    assert a["sentence_f1"] == b["sentence_f1"] and a["overlap"] == b["overlap"] == 4
    bare = write("bare.txt", "((the cat) (sat (on (the mat))))\n(go home)\n(prices 12)\n")
    c = evaluate_unsupervised(gold, bare, unlabelled=True).to_dict()
    assert c["overlap"] == a["overlap"] and c["corpus_f1"] == a["corpus_f1"]


def test_token_mismatch_is_one_clear_line(write):
    gold = write("gold.mrg", GOLD)
    pred = write("pred.txt", "(X (X the) (X dog))\n(X (X go) (X home))\n(X (X p) (X 12))\n")
    with pytest.raises(InputError) as err:
        evaluate_unsupervised(gold, pred)
    message = str(err.value)
    assert "sentence 1 (gold" in message and "pred.txt:1" in message
    assert "first at token 2" in message and "[The cat sat on the mat]" in message
    assert "\n" not in message


def test_sentence_count_mismatch(write):
    gold = write("gold.mrg", GOLD)
    pred = write("pred.mrg", GOLD.split("\n", 1)[1])
    for run in (lambda: evaluate_unsupervised(gold, pred), lambda: evaluate_brackets(gold, pred)):
        with pytest.raises(
            InputError, match="3 sentences in the gold file .* but 2 in the prediction"
        ):
            run()


def test_a_count_mismatch_names_where_the_files_part(write):
    """A dropped sentence was said as two counts: which of 1,700 sentences was missing was
    left to the user to find."""
    gold = write("gold.mrg", GOLD)
    lines = GOLD.splitlines()
    dropped = write("dropped.mrg", f"{lines[0]}\n{lines[2]}\n")  # the second sentence lost
    words = write("words.txt", "(X (X go) (X home))\n(X (X prices) (X N))\n")  # kept words
    for run, pred, line in (
        (evaluate_brackets, dropped, 2),
        (evaluate_unsupervised, dropped, 2),
        (evaluate_unsupervised, words, 1),
    ):
        with pytest.raises(InputError) as err:
            run(gold, pred)
        sentence = 2 if pred == dropped else 1
        assert str(err.value).endswith(
            "; the first sentence with words its gold sentence lacks is sentence "
            f"{sentence} (line {line}; gold line {sentence})"
        )
    deps = write("gold.conll", DEPS_GOLD + DEPS_GOLD.replace("cat", "dog"))
    pred = write("pred.dp", "the\tX\t2\ndog\tX\t3\nsat\tX\t0\n\n")
    with pytest.raises(InputError, match=r"is sentence 1 \(line 1; gold line 1\)$"):
        evaluate_deps(deps, pred)
    # a prediction that is the gold's beginning, or runs past its end: where the shorter ends
    short = write("short.mrg", lines[0] + "\n")
    with pytest.raises(InputError) as err:
        evaluate_brackets(gold, short)
    assert str(err.value).endswith(
        "but 1 in the prediction; the prediction agrees with the gold's first 1, and gold "
        "sentences 2-3 (from gold line 2) have no prediction"
    )
    long = write("long.mrg", GOLD + lines[2] + "\n")
    with pytest.raises(InputError) as err:
        evaluate_unsupervised(gold, long)
    assert str(err.value).endswith(
        "; the prediction agrees with every gold sentence, and its sentence 4 (from line 4) "
        "has no gold sentence"
    )


def test_failed_parses_are_skipped_like_evalb(write):
    gold = write("gold.mrg", GOLD)
    lines = GOLD.splitlines()
    pred = write("pred.mrg", lines[0] + "\n\n\n")
    data = evaluate_brackets(gold, pred).to_dict()
    assert (data["all"]["sentences"], data["all"]["skip_sentences"]) == (3, 2)
    middle = write("middle.mrg", lines[0] + "\n\n" + lines[2] + "\n")
    data = evaluate_brackets(gold, middle).to_dict()
    assert (data["all"]["skip_sentences"], data["all"]["error_sentences"]) == (1, 0)


def test_unsupervised_prediction_may_leave_wordless_sentences_empty(write):
    gold = write("gold.mrg", GOLD + "( (FRAG (: --) (. .)) )\n")
    words = "(X (X the) (X (X cat) (X (X sat) (X (X on) (X (X the) (X mat))))))"
    pred = write("pred.txt", words + "\n(X (X go) (X home))\n(X (X prices) (X 12))\n\n")
    data = evaluate_unsupervised(gold, pred).to_dict()
    assert data["sentences"] == 3 and data["skipped_sentences"]["no_words"] == 1


def test_a_words_only_prediction_may_lack_the_wordless_sentences(write):
    """A prediction of the words alone has no sentence for ``--`` alone: dependency files
    cannot hold an empty sentence, so such a gold could not be scored at all."""
    dash = "( (FRAG (: --) (. .)) )\n"
    gold = write("gold.mrg", GOLD.replace("\n(TOP (FRAG", f"\n{dash}(TOP (FRAG", 1) + dash)
    words = "(X (X the) (X (X cat) (X (X sat) (X (X on) (X (X the) (X mat))))))"
    go, prices = "(X (X go) (X home))", "(X (X prices) (X 12))"
    blank = write("blank.txt", f"{words}\n{go}\n\n{prices}\n\n")  # a blank line each
    lacking = write("lacking.txt", f"{words}\n{go}\n{prices}\n")
    blank, lacking = (evaluate_unsupervised(gold, pred).to_dict() for pred in (blank, lacking))
    assert (
        lacking["skipped_sentences"]
        == blank["skipped_sentences"]
        == {"no_words": 2, "too_short": 0, "too_long": 0}
    )
    assert lacking["sentence_f1"] == blank["sentence_f1"] and lacking["sentences"] == 3
    # a sentence with words lost and a wordless one kept, as many as the wordless: the
    # pairing would put "prices" against "--"; the count error names where the files part
    odd = write("odd.txt", f"{words}\n(X (X --) (X .))\n{prices}\n")  # "go home" lost
    with pytest.raises(InputError, match="but 3 in the prediction.* is sentence 2 "):
        evaluate_unsupervised(gold, odd)
    # a sentence with words dropped as well: no pairing, the error names where
    short = write("short.txt", f"{words}\n{prices}\n")
    with pytest.raises(InputError, match="2 in the prediction; the first sentence with words"):
        evaluate_unsupervised(gold, short)
    deps = write("gold.conllu", DEPS_GOLD + "1\t--\t_\t:\t:\t_\t0\troot\t_\t_\n\n" + DEPS_GOLD)
    pred = write("pred.dp", "the\tX\t2\ncat\tX\t3\nsat\tX\t0\n\n" * 2)
    data = evaluate_deps(deps, pred).to_dict()
    assert (data["sentences"], data["skipped_sentences"], data["uas"]) == (2, 1, 100.0)
    with pytest.raises(InputError, match="3 sentences in the gold file .* but 1 in the"):
        evaluate_deps(deps, write("one.dp", "the\tX\t2\ncat\tX\t3\nsat\tX\t0\n\n"))


def test_a_root_root_is_a_wrapper_unless_named_otherwise(write):
    """The official readers drop TOP and keep a ROOT (or S1) root as a constituent: under
    cpcfg, whose gold keeps every span but the root's own, the S below it is then a gold
    span.  induce drops ROOT by default, which --wrappers TOP (the readers') names."""
    gold = write("gold.mrg", "(ROOT (S (NP (DT the) (NN dog)) (VP (VBD ran) (RB off))))\n")
    pred = write("pred.txt", "((the dog) (ran off))\n")
    ours = evaluate_unsupervised(gold, pred, convention="cpcfg", unlabelled=True).to_dict()
    theirs = evaluate_unsupervised(
        gold, pred, convention="cpcfg", unlabelled=True, wrappers=["TOP"]
    ).to_dict()
    assert ours["corpus_recall"] == 100.0  # the gold spans: NP, VP
    assert theirs["corpus_recall"] == pytest.approx(200 / 3)  # and S's whole sentence
    assert "wrappers" not in ours["settings"]["convention"]  # the default, as before
    assert theirs["settings"]["convention"]["wrappers"] == ["TOP"]
    from typer.testing import CliRunner

    from induce.cli.app import app

    args = ["evaluate", "unsupervised", gold, pred, "-c", "cpcfg", "--unlabelled", "-f", "json"]
    said = CliRunner().invoke(app, [*args, "--wrappers", "TOP"])
    assert said.exit_code == 0, said.output
    assert '"wrappers": [' in said.stdout and '"TOP"' in said.stdout
    bad = CliRunner().invoke(app, [*args, "--wrappers", "TOP,(S"])
    assert bad.exit_code == 2 and "wrappers" in bad.output


def test_a_tag_set_of_punctuation_marks_no_words(write):
    """``--tagset ptb_punctuation`` scored the punctuation alone, exit 0."""
    gold = write("gold.mrg", GOLD)
    with pytest.raises(ConfigError, match="ptb_punctuation lists no words' tags"):
        evaluate_unsupervised(gold, baseline="right", tagset="ptb_punctuation")
    deps = write("g.dp", "The\tDT\t2\ncat\tNN\t0\n.\t.\t2\n\n")
    with pytest.raises(ConfigError, match="ptb_punctuation lists no words' tags"):
        evaluate_deps(deps, baseline="next", tagset="ptb_punctuation")


def test_nothing_to_score_is_an_error(write):
    with pytest.raises(InputError, match="no sentences in the file"):
        evaluate_brackets(write("empty.mrg", ""), baseline="right")
    with pytest.raises(InputError, match="nothing to score: all 3 sentences were skipped"):
        evaluate_unsupervised(
            write("g.mrg", GOLD), baseline="right", convention="cpcfg", max_words=1
        )
    upos = write(
        "upos.conllu",
        "1\tThe\t_\tDET\t_\t_\t2\tdet\t_\t_\n2\tcat\t_\tNOUN\t_\t_\t0\troot\t_\t_\n\n",
    )
    with pytest.raises(InputError, match="tags seen: DET NOUN.*the tag set 'all' scores every"):
        evaluate_deps(upos, baseline="next")
    assert evaluate_deps(upos, baseline="next", tagset="all").to_dict()["uas"] == 100.0
    with pytest.raises(ConfigError, match="max_words") as err:
        evaluate_unsupervised(write("g2.mrg", GOLD), baseline="right", max_words=-1)
    assert err.value.setting == "max_words"


def test_brackets_baseline_keeps_the_gold_wrapper(write):
    gold = write("gold.mrg", GOLD)
    data = evaluate_brackets(gold, baseline="right", param="unlabeled").to_dict()
    assert data["all"]["sentences"] == 3 and data["settings"]["baseline"] == "right"
    # 6 X over 7 tokens; 2 X and the "( ...)" wrapper of sentence 2; 3 X over 4 tokens
    assert data["all"]["test_brackets"] == 6 + 3 + 3


def test_cutoffs_and_skips(write):
    gold = write("gold.mrg", GOLD + "(TOP (S (NN a)))\n(TOP (. .))\n")
    sf = evaluate_unsupervised(gold, baseline="right").to_dict()
    assert sf["sentences"] == 4 and sf["skipped_sentences"]["no_words"] == 1
    cp = evaluate_unsupervised(gold, baseline="right", convention="cpcfg").to_dict()
    assert cp["sentences"] == 3 and cp["skipped_sentences"]["too_short"] == 1
    short = evaluate_unsupervised(gold, baseline="right", convention="cpcfg", max_words=2).to_dict()
    assert short["skipped_sentences"]["too_long"] == 1
    assert evaluate_unsupervised(gold, baseline="right", tagset="all").to_dict()["sentences"] == 5


def test_per_label_recall_labels(write):
    gold = write("gold.mrg", GOLD)
    data = evaluate_unsupervised(gold, baseline="right", labels=["NP", "QP"]).to_dict()
    assert list(data["per_label_recall"]) == ["NP", "QP"]
    assert data["per_label_recall"]["QP"] is None
    assert (
        "FRAG"
        in evaluate_unsupervised(gold, baseline="right", labels=["all"]).to_dict()[
            "per_label_recall"
        ]
    )


DEPS_GOLD = (
    "1\tThe\t_\tDT\tDT\t_\t2\tdet\t_\t_\n2\tcat\t_\tNN\tNN\t_\t3\tnsubj\t_\t_\n"
    "3\tsat\t_\tVBD\tVBD\t_\t0\troot\t_\t_\n4\t.\t_\t.\t.\t_\t3\tpunct\t_\t_\n\n"
)


def test_deps_with_mixed_formats(write):
    gold = write("gold.conll", DEPS_GOLD)
    pred_all = write(
        "pred.conllu",
        "1\tThe\t_\t_\t_\t_\t2\t_\t_\t_\n2\tcat\t_\t_\t_\t_\t3\t_\t_"
        "\t_\n3\tsat\t_\t_\t_\t_\t0\t_\t_\t_\n4\t.\t_\t_\t_\t_\t2\t_"
        "\t_\t_\n\n",
    )
    pred_words = write("pred.dp", "the\tX\t3\ncat\tX\t3\nsat\tX\t0\n\n")
    a = evaluate_deps(gold, pred_all).to_dict()
    assert (a["uas"], a["tokens"], a["root_accuracy"]) == (100.0, 3, 100.0)
    b = evaluate_deps(gold, pred_words).to_dict()
    assert b["correct"] == 2 and b["per_relation_recall"]["det"] == 0.0
    assert b["uuas"] == pytest.approx(100 * 2 / 3)


def test_predicted_heads_that_are_not_trees_are_scored_with_a_warning(write):
    gold = write("gold.conll", DEPS_GOLD)
    cycle = write("cycle.dp", "the\tX\t2\ncat\tX\t1\nsat\tX\t0\n\n")  # the <-> cat
    with pytest.warns(InduceWarning, match="1 predicted sentences are not trees .*cycle"):
        report = evaluate_deps(gold, cycle).to_dict()
    assert report["correct"] == 2  # "the" and "sat"; UDGN's argmax heads are scored so
    roots = write("roots.dp", "the\tX\t0\ncat\tX\t3\nsat\tX\t0\n\n")
    with pytest.warns(InduceWarning, match="2 roots"):
        assert evaluate_deps(gold, roots).to_dict()["root_accuracy"] == 100.0
    with pytest.raises(InputError, match="not a dependency tree: 2 roots"):
        evaluate_deps(roots, gold)  # a gold file must be trees


def test_bad_baseline_names():
    with pytest.raises(ConfigError, match="unknown baseline"):
        evaluate_unsupervised(builtin_treebank(), baseline="next")


def test_builtin_sample_baselines():
    rows = score_baselines(builtin_treebank(), seed=1)
    assert [r["baseline"] for r in rows] == ["right", "left", "balanced", "random:1"]
    right, left = rows[0], rows[1]
    assert right["structformer_sentence_f1"] > left["structformer_sentence_f1"]
