"""Every number of ``../shared/reference`` reproduced: EVALB to the byte, the StructFormer,
compound-PCFG and UDGN conventions to floating-point precision.  Skipped without ``../shared``."""

from __future__ import annotations

import csv
import json

import pytest

from induce.evaluate.brackets import evaluate_brackets
from induce.evaluate.deps import evaluate_deps
from induce.evaluate.unsupervised import evaluate_unsupervised
from induce.metrics.evalb_text import format_evalb
from tests.conftest import DATA, REFERENCE, needs_shared

pytestmark = needs_shared("reference")

FOLDERS = ["dev-sample", "dev22"]
PREDS = ["pred_rb", "pred_lb", "pred_flat", "pred_perturbed_s1", "pred_perturbed_s2"]
PRMS = {"COLLINS": "collins", "COLLINS_unlabeled": "unlabeled"}
RAW_GOLD = {"dev-sample": DATA / "ptb-sample" / "trees", "dev22": DATA / "wsj" / "dev22.trees"}


def approx(value):
    return pytest.approx(value, rel=1e-12, abs=1e-12)


def numbers(folder: str) -> dict:
    return json.loads((REFERENCE / folder / "numbers.json").read_text())


def _printed(value) -> str:
    return "-nan" if value is None else f"{value:.2f}"


def _check_evalb_blocks(data: dict, expected: dict) -> None:
    for section in ("all", "len<=40"):
        ours, ref = data[section], expected[section]
        for key, ref_key in [
            ("recall", "bracketing_recall"),
            ("precision", "bracketing_precision"),
            ("f1", "bracketing_fmeasure"),
            ("complete_match", "complete_match"),
            ("avg_crossing", "average_crossing"),
            ("no_crossing", "no_crossing"),
            ("two_or_less_crossing", "two_or_less_crossing"),
            ("tagging_accuracy", "tagging_accuracy"),
        ]:
            wanted = ref[ref_key]
            assert _printed(ours[key]) == (
                wanted if isinstance(wanted, str) else f"{wanted:.2f}"
            ), (section, key)
        for key, ref_key in [
            ("sentences", "number_of_sentences"),
            ("error_sentences", "number_of_error_sentences"),
            ("skip_sentences", "number_of_skip_sentences"),
            ("valid_sentences", "number_of_valid_sentences"),
            ("matched", "matched_brackets"),
            ("gold_brackets", "gold_brackets"),
            ("test_brackets", "test_brackets"),
            ("crossing_brackets", "crossing_brackets"),
            ("words", "words"),
            ("correct_tags", "correct_tags"),
        ]:
            assert ours[key] == ref[ref_key], (section, key)


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("pred", PREDS)
@pytest.mark.parametrize("prm", PRMS)
def test_evalb_reports_are_byte_identical(folder, pred, prm):
    base = REFERENCE / folder
    report = evaluate_brackets(str(base / "gold.mrg"), str(base / f"{pred}.mrg"), param=PRMS[prm])
    assert format_evalb(report.result) == (base / "evalb" / f"{prm}__{pred}.txt").read_text()
    _check_evalb_blocks(report.to_dict(), numbers(folder)["evalb"][pred][prm])


@pytest.mark.parametrize("baseline, pred", [("right", "pred_rb"), ("left", "pred_lb")])
def test_evalb_baselines_on_the_raw_dev_set(baseline, pred):
    """--baseline gives the numbers of the reference prediction files, from the raw WSJ 22
    file.  (The raw LDC sample files are not comparable: EVALB scores their unlabelled outer
    bracket, which the cleaned gold.mrg replaced by TOP.)"""
    for prm in PRMS:
        report = evaluate_brackets(str(RAW_GOLD["dev22"]), baseline=baseline, param=PRMS[prm])
        _check_evalb_blocks(report.to_dict(), numbers("dev22")["evalb"][pred][prm])


def _check_structformer(data: dict, ref: dict) -> None:
    sent, corpus = ref["sentence_level"], ref["corpus_level"]
    assert data["sentences"] == sent["n_sentences"]
    assert data["sentence_precision"] / 100 == approx(sent["mean_prec"])
    assert data["sentence_recall"] / 100 == approx(sent["mean_reca"])
    assert data["sentence_f1"] / 100 == approx(sent["mean_f1"])
    printed = (
        f"Mean Prec: {data['sentence_precision'] / 100:.4f}, Mean Reca: "
        f"{data['sentence_recall'] / 100:.4f}, Mean F1: {data['sentence_f1'] / 100:.4f}"
    )
    assert printed == sent["official_printed"]
    assert (data["overlap"], data["pred_spans"], data["gold_spans"]) == (
        corpus["overlap"],
        corpus["pred_spans"],
        corpus["gold_spans"],
    )
    assert data["corpus_f1"] / 100 == approx(corpus["f1"])
    assert data["corpus_precision"] / 100 == approx(corpus["prec"])
    labels = ref["label_recall"]["labels"]
    assert data["per_label_counts"] == {
        k: {"correct": v["correct"], "total": v["total"]} for k, v in labels.items()
    }
    for label, value in data["per_label_recall"].items():
        assert value / 100 == approx(labels[label]["recall"])


STRUCTFORMER_CASES = [  # (prediction file or baseline, reference key)
    ("mpred_rb.txt", "rb"),
    ("pred_rb.mrg", "rb"),
    ("baseline:right", "rb"),
    ("pred_lb.mrg", "lb"),
    ("baseline:left", "lb"),
    ("mpred_perturbed_s1.txt", "mpred_perturbed_s1"),
]


def _run_unsupervised(gold: str, pred: str, **kwargs):
    if pred.startswith("baseline:"):
        return evaluate_unsupervised(gold, baseline=pred.split(":", 1)[1], **kwargs)
    return evaluate_unsupervised(gold, pred, **kwargs)


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("pred, key", STRUCTFORMER_CASES)
def test_structformer_convention(folder, pred, key):
    base = REFERENCE / folder
    pred_path = pred if pred.startswith("baseline:") else str(base / pred)
    report = _run_unsupervised(str(base / "gold.mrg"), pred_path, labels=["all"])
    _check_structformer(report.to_dict(), numbers(folder)["unsupervised_structformer"][key])
    ref_rows = list(csv.DictReader((base / "unsup_per_sentence.tsv").open(), delimiter="\t"))
    rows = report.scorer.sentences
    assert len(rows) == len(ref_rows)
    for ours, ref in zip(rows, ref_rows):
        assert (ours.index, ours.words, ours.gold_spans) == (
            int(ref["sent"]),
            int(ref["n_words"]),
            int(ref["gold_spans"]),
        )
        assert (ours.pred_spans, ours.overlap) == (
            int(ref[f"{key}_pred_spans"]),
            int(ref[f"{key}_overlap"]),
        )
        assert (repr(ours.precision), repr(ours.recall), repr(ours.f1)) == (
            ref[f"{key}_prec"],
            ref[f"{key}_reca"],
            ref[f"{key}_f1"],
        )


@pytest.mark.parametrize("folder", FOLDERS)
def test_structformer_convention_on_raw_treebank(folder):
    report = evaluate_unsupervised(str(RAW_GOLD[folder]), baseline="right", labels=["all"])
    _check_structformer(report.to_dict(), numbers(folder)["unsupervised_structformer"]["rb"])


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize(
    "pred, key",
    [
        ("mpred_rb.txt", "rb"),
        ("baseline:right", "rb"),
        ("baseline:left", "lb"),
        ("mpred_perturbed_s1.txt", "mpred_perturbed_s1"),
    ],
)
@pytest.mark.parametrize("cutoff, max_words", [("cutoff150", None), ("no_cutoff", 100000)])
def test_compound_pcfg_convention(folder, pred, key, cutoff, max_words):
    base = REFERENCE / folder
    pred_path = pred if pred.startswith("baseline:") else str(base / pred)
    data = _run_unsupervised(
        str(base / "gold.mrg"), pred_path, convention="cpcfg", max_words=max_words
    ).to_dict()
    ref = numbers(folder)["unsupervised_compound_pcfg"][key][cutoff]
    assert data["sentences"] == ref["n_sentences_scored"]
    assert (
        data["overlap"],
        data["pred_spans"] - data["overlap"],
        data["gold_spans"] - data["overlap"],
    ) == (ref["tp"], ref["fp"], ref["fn"])
    assert data["corpus_f1"] / 100 == approx(ref["corpus_f1"])
    assert data["sentence_f1"] / 100 == approx(ref["sentence_f1"])
    printed = f"Corpus F1: {data['corpus_f1']:.2f}, Sentence F1: {data['sentence_f1']:.2f}"
    assert printed == ref["official_printed"]


@needs_shared("data", "ptb-sample", "dependencies")
@pytest.mark.parametrize("baseline", ["next", "prev"])
def test_dependency_conventions(baseline):
    gold = str(DATA / "ptb-sample" / "dependencies")
    ref = numbers("dev-sample")["dependency"]
    position = evaluate_deps(gold, baseline=baseline).to_dict()
    udgn = ref["udgn_positional"]
    assert (position["tokens"], position["sentences"]) == (udgn["n_words"], udgn["n_sentences"])
    assert (position["correct"], position["undirected_correct"]) == (
        udgn[baseline]["correct"],
        udgn[baseline]["undirected_correct"],
    )
    assert position["uas"] / 100 == approx(udgn[baseline]["DDA"])
    assert position["uuas"] / 100 == approx(udgn[baseline]["UDA"])
    strings = evaluate_deps(gold, baseline=baseline, convention="structformer").to_dict()
    sf = ref["structformer_evald"][baseline]["test.conll"]
    assert strings["uas"] / 100 == approx(sf["directed"])
    assert strings["uuas"] / 100 == approx(sf["undirected"])


@pytest.mark.parametrize("folder", FOLDERS)
def test_counts(folder):
    from induce.data.ptb import read_trees

    counts = numbers(folder)["counts"]
    gold = read_trees(REFERENCE / folder / "gold.mrg")
    assert len(gold) == counts["sentences"]
    assert sum(len(t.preterminals()) for t in gold.trees) == counts["tokens"]
    words = (REFERENCE / folder / "words_nopunct.txt").read_text().split()
    assert len(words) == counts["words_nopunct"]
