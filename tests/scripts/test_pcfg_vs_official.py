"""bench/pcfg_vs_official.py's timing: a training epoch's mix of batch lengths drawn from a
dataset (``--epoch``), and both sides timed on it in fresh processes, against a stand-in
checkout whose ``models.CompPCFG`` has the official constructor and call (built on our own
module, so the weights load by name)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from tests.conftest import ROOT, bench_module
from tests.train.helpers import make_dataset

STAND_IN_MODELS = """
import torch
from induce.models.pcfg import CompoundPCFG, PCFGConfig


class CompPCFG(CompoundPCFG):
    def __init__(self, vocab, h_dim, w_dim, z_dim, state_dim, t_states, nt_states):
        config = PCFGConfig(z_dim=z_dim, nt=nt_states, t=t_states, s_dim=state_dim,
                            h_dim=h_dim, w_dim=w_dim)
        super().__init__(config, vocab, 0)

    def forward(self, x, lengths=None, argmax=False, use_mean=False):
        if lengths is not None:  # our own calls
            return super().forward(x, lengths)
        return super().forward(x, torch.full((x.shape[0],), x.shape[1]))
"""


def test_an_epochs_mix_is_drawn_from_the_training_batches(tmp_path):
    data = make_dataset(tmp_path)
    bench = bench_module("pcfg_vs_official")
    args = argparse.Namespace(epoch=str(data), batch=2, max_words=12, batches=5)
    drawn = bench.epoch_lengths(args)
    from induce.data.dataset import load_dataset
    from induce.runs.grammar import equal_length_batches

    lengths = [len(s) for s in load_dataset(data).sentences("train")]
    possible = [lengths[b[0]] for b in equal_length_batches(lengths, 2, 12)]
    assert len(drawn) == 5 and all(2 <= n <= 12 for n in drawn)
    assert all(drawn.count(n) <= possible.count(n) for n in set(drawn))  # without replacement
    assert bench.epoch_lengths(args) == drawn  # seed 0: the same mix for both sides, every run
    args.batches = 10_000
    assert sorted(bench.epoch_lengths(args)) == sorted(possible)  # at most the whole epoch

    official = tmp_path / "compound-pcfg"
    official.mkdir()
    (official / "models.py").write_text(STAND_IN_MODELS)
    out = tmp_path / "figures.json"
    command = [sys.executable, str(ROOT / "bench" / "pcfg_vs_official.py"), "--official",
               str(official), "--epoch", str(data), "--batches", "2", "--max-words", "6",
               "--batch", "2", "--rounds", "1", "--warmup", "0", "--threads", "1",
               "--vocab", "40", "--lengths", "", "--json", str(out)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "epoch mix (2 batches" in done.stdout
    (runs,) = json.loads(out.read_text())["train"].values()
    assert all(r[0]["tokens_per_s"] > 0 and r[0]["step_s"] > 0 for r in runs.values()), runs
