"""bench/kim_loop.py: the training data in ``preprocess.py``'s layout, and ``train.main``
driven for a number of updates with a validation every few (against a stand-in checkout
with the official interfaces: ``train.parser``, ``train.main``, ``train.eval``,
``models.CompPCFG``, batches read as ``data.Dataset`` reads them)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, bench_module

STAND_IN_MODELS = """
import torch
import torch.nn as nn


class CompPCFG(nn.Module):
    def __init__(self, vocab, state_dim, t_states, nt_states, h_dim, w_dim, z_dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, 4)
        self.out = nn.Linear(4, vocab)

    def forward(self, x, argmax=False):
        logp = self.out(self.emb(x)).log_softmax(-1)
        nll = -logp.gather(-1, x[..., None]).sum((1, 2))
        return nll, torch.zeros_like(nll), None, [[(0, x.shape[1] - 1, 0)]] * len(x)
"""

# train.py's flow: seeds, the model, Adam, epochs of batches in np.random.permutation order
# (each batch cut from `source` as data.Dataset cuts it), the curriculum's length filter,
# the update, then eval() at the end of the epoch
STAND_IN_TRAIN = """
import argparse, json, pickle
import numpy as np
import torch
from torch import cuda
from models import CompPCFG

parser = argparse.ArgumentParser()
for flag in ("train_file", "val_file", "save_path"):
    parser.add_argument("--" + flag)
for flag in ("z_dim", "t_states", "nt_states", "state_dim", "h_dim", "w_dim", "num_epochs",
             "len_incr", "final_max_length", "seed", "print_every"):
    parser.add_argument("--" + flag, type=int)
for flag in ("lr", "max_grad_norm", "max_length", "beta1", "beta2"):
    parser.add_argument("--" + flag, type=float)


def eval(data, model):
    raise AssertionError("replaced by the harness")


def main(args):
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    data = pickle.load(open(args.train_file, "rb"))
    cuda.set_device(0)
    model = CompPCFG(vocab=int(data["vocab_size"][0]), state_dim=args.state_dim,
                     t_states=args.t_states, nt_states=args.nt_states, h_dim=args.h_dim,
                     w_dim=args.w_dim, z_dim=args.z_dim)
    model.cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(args.beta1, args.beta2))
    seen = []
    for epoch in range(args.num_epochs):
        for i in np.random.permutation(len(data["batch_idx"])):
            start, size = data["batch_idx"][i], data["batch_l"][i]
            length = int(data["source_l"][i])
            sents = torch.from_numpy(data["source"][start:start + size, 1:length - 1]).cuda()
            if length - 2 > args.max_length or length - 2 == 1:
                continue
            optimizer.zero_grad()
            nll, kl, _, _ = model(sents, argmax=True)
            (nll + kl).mean().backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            seen.append(sents.tolist())
            with open(args.save_path + ".seen", "w") as f:
                json.dump(seen, f)
            optimizer.step()
        eval(None, model)
"""


SENTENCES = [[5, 6, 7], [8], [9, 10], [11, 12, 13], [5, 5, 5], [6, 7], [7, 8, 9, 10], [12, 13]]


def _pickled_batches(path: Path) -> list[list[list[int]]]:
    """The batches of a training pickle in file order, each sentence cut from ``source`` as
    ``data.Dataset`` cuts it (``<s>`` and ``</s>`` dropped)."""
    with open(path, "rb") as f:
        data = pickle.load(f)
    spans = zip(data["batch_idx"], data["batch_l"], data["source_l"], strict=True)
    return [[r[1 : w - 1].tolist() for r in data["source"][a : a + n]] for a, n, w in spans]


def test_the_training_data_is_laid_out_as_preprocess_writes_it(tmp_path: Path) -> None:
    path = tmp_path / "train.pkl"
    bench_module("kim_loop").write_dataset(SENTENCES, 20, 2, path)
    with open(path, "rb") as f:
        data = pickle.load(f)
    found = []
    batches = zip(data["batch_idx"], data["batch_l"], data["source_l"], strict=True)
    for start, size, width in batches:
        rows = data["source"][start : start + size]
        assert 1 <= size <= 2
        assert all(int((row != 0).sum()) == width for row in rows)  # one length a batch
        found += [row[1 : width - 1].tolist() for row in rows]  # <s> and </s> cut, as there
    assert sorted(found) == sorted(SENTENCES)
    assert [len(s) for s in found] == sorted(len(s) for s in SENTENCES)  # shortest first
    assert list(data["batch_idx"]) == [0, 1, 3, 4, 6, 7]  # cut at each new length and at 2


def test_shuffle_before_the_sort_changes_who_shares_a_batch(tmp_path: Path) -> None:
    """``preprocess.py --shuffle 1``: the same sentences, still shortest first in batches of
    one length, but which sentences of one length share a batch follows the seed."""
    kim_loop = bench_module("kim_loop")
    sentences = [[k % 7 + 4] * (2 + k % 2) for k in range(40)]  # 20 of 2 words, 20 of 3

    def batches(shuffle: int | None) -> list[list[list[int]]]:
        path = tmp_path / f"{shuffle}.pkl"
        kim_loop.write_dataset(sentences, 20, 4, path, shuffle)
        return _pickled_batches(path)

    plain, mixed, again = batches(None), batches(1), batches(1)
    assert mixed == again != plain != batches(2)
    assert sorted(map(sorted, plain)) != sorted(map(sorted, mixed))  # other groups
    assert sorted(s for b in mixed for s in b) == sorted(sentences)
    assert all(len({len(s) for s in b}) == 1 for b in mixed)


def test_induces_argsort_groups_are_the_batches_preprocess_writes(tmp_path: Path) -> None:
    """``data.length_groups: argsort``: the batches of ``preprocess.py``'s layout (numpy's
    argsort of the lengths), not the text's consecutive ones, for any seed."""
    from induce.runs.config import DataConfig
    from induce.train.grammar import epoch_plan

    sentences = [[k % 7 + 4] * (2 + k % 3) + [k] for k in range(60)]  # each one different
    path = tmp_path / "train.pkl"
    bench_module("kim_loop").write_dataset(sentences, 80, 4, path)
    kim = {tuple(map(tuple, batch)) for batch in _pickled_batches(path)}
    lengths = [len(s) for s in sentences]

    def batches(groups: str, seed: int) -> set[tuple[tuple[int, ...], ...]]:
        plan = epoch_plan(lengths, DataConfig(batch_sentences=4, length_groups=groups), seed, 0)
        return {tuple(tuple(sentences[k]) for k in batch) for batch in plan}

    assert batches("argsort", 1) == kim == batches("argsort", 2)
    assert batches("text", 1) != kim


def test_a_plan_gives_its_batches_in_its_order(tmp_path: Path) -> None:
    path = tmp_path / "train.pkl"
    plan = [[6], [0, 3], [2, 5, 7], [4]]  # 4 words; 3; 2; 3
    bench_module("kim_loop").write_plan(SENTENCES, plan, 20, path)
    assert _pickled_batches(path) == [[SENTENCES[k] for k in batch] for batch in plan]


def test_train_main_runs_until_the_last_update_validating_on_the_way(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "models.py").write_text(STAND_IN_MODELS)
    (checkout / "train.py").write_text(STAND_IN_TRAIN)
    driver = f"""
import json, sys, types
sys.path.insert(0, {str(ROOT / "bench")!r})
sys.path.insert(0, {str(ROOT)!r})
import kim_loop
config = types.SimpleNamespace(
    model={{"nt": 3, "t": 4, "s_dim": 8, "z_dim": 2, "h_dim": 8, "w_dim": 8}},
    data=types.SimpleNamespace(batch_sentences=2, max_length=3, length_step=1,
                               final_max_length=3),
    optim=types.SimpleNamespace(lr=0.1, betas=(0.75, 0.999), clip=3.0),
)
states = []
def validate(state):
    states.append(sorted(state))
    return {{"valid_ppl": float(len(states))}}
found = kim_loop.run({str(checkout)!r}, config, {SENTENCES!r}, 20, 7, 5, 2,
                     __import__("pathlib").Path({str(tmp_path)!r}), validate)
print(json.dumps({{"found": found, "states": states}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", driver], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert [p["step"] for p in out["found"]["curve"]] == [2, 4, 5]  # then it stops
    assert out["states"] == [["emb.weight", "out.bias", "out.weight"]] * 3
    seen = json.loads((tmp_path / "kim.pt.seen").read_text())
    assert len(seen) == 5  # five updates: more than one epoch of 4 batches (1-word, 4-word out)
    assert all(1 < len(row) <= 3 for batch in seen for row in batch)  # the length filter
