"""bench/lstm_precision.py on a CPU (a dry run of what a GPU times): every precision runs the
BiLSTM at the training step's bucketed shapes, ``float32`` under autocast computes exactly
what an fp32 run does, and what cannot run is refused in one line."""

from __future__ import annotations

import json
import subprocess

import pytest
import torch

from induce.runs.device import cpu_has_fast_bf16
from tests.conftest import bench_module, run_bench

precision = bench_module("lstm_precision")
TINY = ["--set", "model.d_model=16", "--set", "model.n_layers=1", "--set", "model.n_heads=2"]


def _bench(*args: object) -> subprocess.CompletedProcess[str]:
    return run_bench("lstm_precision", *args, timeout=300)


@pytest.mark.skipif(not cpu_has_fast_bf16(), reason="no bf16 LSTM in oneDNN on this CPU")
def test_each_precision_runs_the_bilstm_at_the_bucketed_shapes(tmp_path):
    out = tmp_path / "lstm.json"
    done = _bench(
        "--device", "cpu", "--size", "small", "--steps", 2, "--warmup", 0, "--rounds", 1,
        "--shared", tmp_path / "none", "--json", out, *TINY,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(out.read_text())
    assert found["batches"] == 2 and 0 <= found["persistent_batches"] <= 2
    figures = found["precisions"]
    assert list(figures) == ["auto", "autocast", "float32"]
    assert all(f["ms"] > 0 for f in figures.values())
    # a CPU's autocast runs the LSTM in bf16 (auto and autocast leave it there)
    assert figures["auto"]["dtype"] == figures["autocast"]["dtype"] == "bfloat16"
    assert figures["float32"]["dtype"] == "float32"
    assert figures["float32"]["max_diff_from_fp32"] == 0.0
    assert 0 < figures["auto"]["max_diff_from_fp32"] < 0.05
    assert len(done.stdout.splitlines()) == 5  # the heading, the columns, a line a precision


def test_float32_runs_on_any_cpu(tmp_path):
    out = tmp_path / "lstm.json"
    done = _bench(
        "--device", "cpu", "--size", "small", "--steps", 1, "--warmup", 0, "--rounds", 1,
        "--precisions", "float32", "--shared", tmp_path / "none", "--json", out, *TINY,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())["precisions"]
    assert figures["float32"]["dtype"] == "float32"
    assert figures["float32"]["max_diff_from_fp32"] == 0.0


@pytest.mark.parametrize("fast", [True, False])
def test_a_bf16_lstm_on_a_cpu_without_hardware_bf16_is_refused(monkeypatch, fast):
    from types import SimpleNamespace

    from induce.runs import device

    monkeypatch.setattr(device, "cpu_has_fast_bf16", lambda: fast)
    args = SimpleNamespace(
        steps=1, warmup=0, rounds=1, device="cpu", size="small", set=[], precisions="auto"
    )
    problem = precision.refusal(args)
    assert (problem is None) if fast else problem.startswith("--device cpu: this CPU has no")
    args.precisions = "float32"
    assert precision.refusal(args) is None


def test_the_persistent_kernels_sizes_are_pytorchs():
    assert [n for n in range(1, 300) if precision.persistent_shape(n)] == list(range(8, 129, 8))


def test_the_shapes_are_the_graphs_buckets():
    from types import SimpleNamespace

    from tests.conftest import SHARED

    args = SimpleNamespace(shared=str(SHARED), steps=3, warmup=1)
    masks = precision.shapes(args)
    assert len(masks) == 3
    for keep in masks:
        rows, length = keep.shape
        assert length % 2 == 0 and keep.dtype is torch.bool
        assert keep[:, 0].all()  # every row a sentence (the bucket's extra rows: one word)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--device", "cpu", "--precisions", "fp16"], "'fp16' is not one of auto"),
        (["--device", "cpu", "--steps", "0"], "--steps and --rounds must be at least 1"),
        (["--device", "cpu", "--set", "model.lstm_precision=half"], "--set: udgn model"),
    ],
)
def test_what_cannot_run_is_refused_in_one_line(args, says):
    done = _bench(*args)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0]


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_is_refused_where_there_is_none():
    done = _bench("--device", "cuda")
    assert done.returncode == 2 and "CUDA is not available" in done.stderr
