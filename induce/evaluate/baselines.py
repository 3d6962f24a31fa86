"""Trivial baselines scored under every bracket convention at once."""

from __future__ import annotations

from induce.data.config import resource
from induce.data.ptb import read_trees_twice
from induce.evaluate.brackets import evaluate_brackets
from induce.evaluate.unsupervised import evaluate_unsupervised

SAMPLE_TREEBANK = ("treebanks", "sample.mrg")


def builtin_treebank() -> str:
    """Path of the small PTB-style treebank shipped with induce (written for the project)."""
    return str(resource(*SAMPLE_TREEBANK))


def score_baselines(gold: str, seed: int = 0) -> list[dict]:
    """One row per tree baseline: EVALB unlabelled F1 and the unsupervised sentence/corpus F1
    (StructFormer and compound-PCFG conventions), on a 0-100 scale."""
    trees, as_evalb = read_trees_twice(gold)  # EVALB reads "(NP )" as a word
    rows = []
    for name in ("right", "left", "balanced", f"random:{seed}"):
        evalb = evaluate_brackets(as_evalb, param="unlabeled", baseline=name).to_dict()
        sf = evaluate_unsupervised(trees, baseline=name).to_dict()
        cp = evaluate_unsupervised(trees, baseline=name, convention="cpcfg").to_dict()
        rows.append(
            {
                "baseline": name,
                "evalb_unlabeled_f1": evalb["all"]["f1"],
                "structformer_sentence_f1": sf["sentence_f1"],
                "structformer_corpus_f1": sf["corpus_f1"],
                "cpcfg_sentence_f1": cp["sentence_f1"],
                "cpcfg_corpus_f1": cp["corpus_f1"],
            }
        )
    return rows
