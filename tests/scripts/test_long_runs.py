"""bench/long_runs.py on a CPU: both sides end to end on a tiny dataset (the official side
against a stand-in checkout with the official interfaces), and its helpers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, bench_module
from tests.preprocess.fixtures import sample_trees

# The official repository's interfaces (models.StructFormer/UDGN(...).forward(x, y, pos) ->
# (loss, {"head", "distance", "height"}), utils.batchify), with a model small enough for a
# test: the harness's plumbing is what is checked here; the GPU sitting runs the real code.
STAND_IN_MODELS = """
import torch
import torch.nn as nn


class StructFormer(nn.Module):
    def __init__(self, emb_size, nlayers, ntokens, nhead, dropout, dropatt, pos_emb, pad,
                 n_parser_layers, head_size=None, parser_dropout=None):
        super().__init__()
        self.pad = pad
        self.emb = nn.Embedding(ntokens, emb_size)
        self.out = nn.Linear(emb_size, ntokens)
        self.score = nn.Linear(emb_size, 2)

    def forward(self, x, y, pos, deps=None):
        h = self.emb(x)
        keep = y != self.pad
        loss = nn.functional.cross_entropy(self.out(h[keep]), y[keep]) if keep.any() else (
            h.sum() * 0)
        distance, height = self.score(h).unbind(-1)
        head = torch.softmax(h @ h.transpose(1, 2), -1)
        return loss, {"head": head, "distance": distance, "height": height}


UDGN = StructFormer
"""

STAND_IN_UTILS = """
import random
import torch


def batchify(idxs, heads, bsz, device, pad=0, shuffle=True):
    order = sorted(range(len(idxs)), key=lambda i: -len(idxs[i]))
    batches, heads_out, i = [], [], 0
    while i < len(order):
        chosen, total = [], 0
        while i < len(order) and total + len(idxs[order[i]]) < bsz:
            chosen.append(order[i]); total += len(idxs[order[i]]); i += 1
        if not chosen:
            chosen, i = [order[i]], i + 1
        width = max(len(idxs[k]) for k in chosen)
        batches.append(torch.tensor([idxs[k] + [pad] * (width - len(idxs[k])) for k in chosen]))
        heads_out.append(torch.tensor([heads[k] + [-1] * (width - len(heads[k])) for k in chosen]))
    if shuffle:
        random.shuffle(batches)
    return [b.to(device) for b in batches], heads_out
"""


def _induce(*args: str) -> None:
    command = [sys.executable, "-c", "import sys; from induce.cli.app import main; main()"]
    subprocess.run([*command, *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("long_runs")
    trees = sample_trees()
    words = [" ".join(w for w, _ in t.pos()) for t in trees]
    (root / "train.txt").write_text("\n".join(words * 3) + "\n")
    (root / "valid.trees").write_text("".join(t.to_string() + "\n" for t in trees[:12]))
    data = root / "data"
    _induce(
        "preprocess", "text", "--train", str(root / "train.txt"), "--format", "lines",
        "--valid-trees", str(root / "valid.trees"), "-o", str(data),
    )  # fmt: skip
    _induce("convert", "headrules", str(data / "valid.trees"), "--rules", "penn2malt",
            "-o", str(root / "gold.conllu"))  # fmt: skip
    (root / "official").mkdir()
    (root / "official" / "models.py").write_text(STAND_IN_MODELS)
    (root / "official" / "utils.py").write_text(STAND_IN_UTILS)
    return root


def test_both_sides_train_parse_and_score_the_same_sentences(dataset: Path) -> None:
    out = dataset / "out"
    command = [sys.executable, str(ROOT / "bench" / "long_runs.py"), "--official",
               str(dataset / "official"), "--data", str(dataset / "data"), "--gold",
               str(dataset / "gold.conllu"), "--out", str(out), "--archs", "structformer",
               "--seeds", "1", "--epochs", "structformer=2", "--device", "cpu", "--size",
               "tiny", "--set", "data.batch_tokens=256",
               "--no-induce-read-out"]  # fmt: skip  # the stand-in's weights do not import
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| structformer | official | 1 |" in done.stdout
    assert "| structformer | induce | 1 |" in done.stdout
    summary = json.loads((out / "long_runs.json").read_text())
    runs = {r["side"]: r for r in summary["runs"]}
    assert runs["official"]["epochs_run"] == runs["induce"]["epochs_run"] == 2
    for side, run in runs.items():
        assert 0 <= run["uf1"] <= 100 and 0 <= run["uas"] <= run["uuas"] <= 100, side
        assert run["valid_ppl"] > 1
        parsed = (out / f"{side}-structformer-1" / "valid.conllu").read_text()
        assert parsed.count("\n\n") == 12  # every validation sentence, one block each


def test_epochs_per_arch_and_the_output_formats() -> None:
    lr = bench_module("long_runs")
    assert lr.epochs_of("7", "udgn") == 7
    assert lr.epochs_of("structformer=17,udgn=14", "udgn") == 14
    with pytest.raises(SystemExit):
        lr.epochs_of("structformer=17", "udgn")
    assert lr.bracket(((0, 1), 2), ["a", "b", "c"]) == "(X (X (X a) (X b)) (X c))"
    rows = lr.conllu(["a", "b"], [0, 1]).split("\n")
    assert [r.split("\t")[:2] + r.split("\t")[6:7] for r in rows[:2]] == [
        ["1", "a", "0"],
        ["2", "b", "1"],
    ]
    assert rows[2:] == ["", ""]
    report = bench_module("long_report")
    assert report.mean_std([1.0, 3.0]) == "2.00 (1.41)" and report.mean_std([]) == "-"


def test_each_run_gets_threads_on_both_sides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--threads`` reaches the induce side's commands too (through ``OMP_NUM_THREADS``,
    which they inherit): runs sharing a CPU must not each take every core."""
    lr = bench_module("long_runs")
    seen: list[dict[str, str]] = []

    def popen(command: list[str], **kwargs: Any) -> None:
        seen.append(kwargs["env"])

    monkeypatch.setattr(lr.subprocess, "Popen", popen)
    monkeypatch.setenv("OMP_NUM_THREADS", "8")
    args = lr.argparse.Namespace(
        official="o", data="d", gold="g", out=str(tmp_path), epochs="1", device="cpu",
        size="tiny", threads=3, train_deadline=0, set=[], induce_read_out=True,
    )  # fmt: skip
    for side in ("official", "induce"):
        lr.child(args, side, "udgn", 1)
    assert [env["OMP_NUM_THREADS"] for env in seen] == ["3", "3"]


def test_the_official_weights_read_by_induce_give_the_official_heads(tmp_path: Path) -> None:
    """An official run's weights (the UDGN fixture made by the official code) imported and
    parsed by ``induce``: the heads the official test decoder finds in the official model's
    own outputs, so ``same_heads`` is 100 and the scores are the official file's."""
    import gzip

    import numpy
    import torch
    from safetensors.torch import load

    from induce.decode.dependencies import arc_scores, mst_uniform_root

    lr = bench_module("long_runs")
    fixtures = ROOT / "tests" / "runs" / "fixtures"
    tensors = load(gzip.decompress((fixtures / "udgn.safetensors.gz").read_bytes()))
    expected = json.loads(gzip.decompress((fixtures / "udgn.json.gz").read_bytes()))
    words = expected["words"]
    out, data = tmp_path / "official-udgn-1", tmp_path / "data"
    out.mkdir()
    torch.save(tensors, out / "official.pt")
    (out / "words.txt").write_text((fixtures / "words.txt").read_text())
    sentences = [[words[i] for i in ids] for ids in expected["sentences"]]
    # a dataset of the official vocabulary whose valid.txt holds these sentences (raw: a
    # number for N, which preprocessing writes N again)
    raw = "".join(" ".join("5" if w == "N" else w for w in s) + "\n" for s in sentences)
    (tmp_path / "raw.txt").write_text(raw)
    text = str(tmp_path / "raw.txt")
    _induce("preprocess", "text", "--train", text, "--valid", text, "--vocab",
            str(out / "words.txt"), "-o", str(data))  # fmt: skip
    assert (data / "valid.txt").read_text().split() == [w for s in sentences for w in s]
    official, chain = [], []
    for sentence, result in zip(sentences, expected["results"], strict=True):
        head = numpy.asarray(result["head"])
        heads = mst_uniform_root(arc_scores(head, numpy.ones(len(sentence))))
        official.append(lr.conllu(sentence, heads))
        gold = lr.conllu(sentence, list(range(len(sentence))))  # a chain, tagged as words
        chain.append(gold.replace("\t_\t_\t_\t_\t", "\t_\tNN\tNN\t_\t"))
    (out / "valid.conllu").write_text("".join(official))
    (tmp_path / "gold.conllu").write_text("".join(chain))
    args = lr.argparse.Namespace(data=str(data), gold=str(tmp_path / "gold.conllu"), device="cpu")
    found = lr.imported_read_out(args, "udgn", out)
    assert found["same_heads"] == 100.0
    assert found["uas_induce_read_out"] == lr.score(args, out)["uas"]
    assert found["valid_ppl_induce_read_out"] > 1
    # a head moved in the official file shows
    first, rest = (out / "valid.conllu").read_text().split("\n", 1)
    cells = first.split("\t")
    cells[6] = "2" if cells[6] != "2" else "3"
    moved = "\t".join(cells) + "\n" + rest
    (out / "valid.conllu").write_text(moved)
    assert lr.same_heads(out / "valid.conllu", out / "imported" / "valid.conllu") < 100.0
    run = {"arch": "udgn", "side": "official", "uas": 1.0, "uuas": 2.0} | found
    rows = bench_module("long_report").table([run], {("udgn", "official"): 5.0}, {})
    assert any(row.startswith("| udgn | official, induce read-out | 1 |") for row in rows)
