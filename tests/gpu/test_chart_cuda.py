"""The chart parser on CUDA (marked ``gpu``: skipped where no CUDA device is available, CI
included): its attention through ``scaled_dot_product_attention`` on the GPU computes what the
CPU computes written out (span scores and gradients in float32), bf16 autocast
stays close to float32 with the loss in float32, and the trainer trains, validates and parses
on the GPU in both precisions."""

from __future__ import annotations

import copy
import math
import random

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from induce.models.chart import ChartInput, ChartParser
from induce.runs.directory import open_run
from induce.train.engine import TrainOptions, train
from tests.models.test_chart import build
from tests.train.helpers import CHART_TINY, make_dataset

pytestmark = pytest.mark.gpu

CUDA = torch.device("cuda")
NO_DROPOUT = {
    f"{kind}_dropout": 0.0 for kind in ("attn", "relu", "residual", "char", "word", "tag")
}
FUSED = [SDPBackend.EFFICIENT_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION]


def _scores_and_grads(
    model: ChartParser, batch: ChartInput, device: torch.device
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Span scores with gradients on (training mode, every dropout 0: cuDNN's LSTM takes
    a backward pass in training mode only) and the gradients of a fixed random weighting
    of them (smooth, where the hinge loss's best tree could flip on a rounding
    difference), on ``device``."""
    model = model.to(device).train()
    model.zero_grad()
    scores, _ = model(batch.to(device))
    weights = torch.randn(scores.shape, generator=torch.Generator().manual_seed(0))
    (scores * weights.to(device)).sum().backward()
    grads = {n: p.grad.cpu() for n, p in model.named_parameters() if p.grad is not None}
    return scores.detach().cpu(), grads


@pytest.mark.parametrize("factored", [True, False])
def test_the_gpu_computes_what_the_cpu_computes(factored, strict_fp32):
    """Scores without gradients (the fused kernels on both devices), then with them (the
    GPU's fused kernel against the CPU's written-out attention) and their gradients."""
    model, encoder, exs = build(factored=factored, **NO_DROPOUT)
    batch = encoder.batch([ex.words for ex in exs])
    gpu = copy.deepcopy(model)
    with torch.no_grad():
        assert torch.allclose(gpu.to(CUDA)(batch.to(CUDA))[0].cpu(), model(batch)[0], atol=1e-4)
    scores, grads = _scores_and_grads(model, batch, torch.device("cpu"))
    gpu_scores, gpu_grads = _scores_and_grads(gpu, batch, CUDA)
    assert torch.allclose(gpu_scores, scores, atol=1e-4)
    assert grads.keys() == gpu_grads.keys() and grads
    for name, grad in grads.items():
        assert torch.allclose(gpu_grads[name], grad, rtol=1e-3, atol=1e-4), name


@pytest.mark.parametrize("bf16", [False, True])
def test_the_attention_runs_a_fused_kernel_forward_and_backward(bf16):
    """At the paper's attention sizes (8 heads, d_kv 64; padded keys masked; dropout while
    training), with the math kernel ruled out: a fused kernel takes the mask and the
    dropout, or this fails ("no available kernel") where the GPU would fall back."""
    model, encoder, exs = build(n_heads=8, d_kv=64, d_model=256, d_position=128)
    model = model.to(CUDA).train()
    batch = encoder.batch([ex.words for ex in exs]).to(CUDA)
    with sdpa_kernel(FUSED), torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
        scores, _ = model(batch)
        scores.float().sum().backward()
    assert torch.isfinite(scores).all()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_bf16_autocast_stays_close_to_fp32():
    model, encoder, exs = build()
    model = model.to(CUDA)
    batch = encoder.batch([ex.words for ex in exs]).to(CUDA)
    with torch.no_grad():
        scores, _ = model(batch)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            low, _ = model(batch)
    assert (low.float() - scores).abs().max() <= 0.05 * scores.abs().max().clamp_min(1.0)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        training = encoder.training_batch(exs, random.Random(0), len(exs), 1).to(CUDA)
        loss = model.loss(training).value
    assert loss.dtype == torch.float32 and torch.isfinite(loss)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("chart-gpu"))


@pytest.mark.parametrize("bf16", [False, True])
def test_the_chart_trainer_trains_validates_and_parses_on_cuda(data, tmp_path, bf16):
    """Six updates on the GPU, dev F1 by parsing the dev trees there at updates 3 and 6."""
    out = tmp_path / "run"
    settings = [*CHART_TINY, "train.max_steps=6", "train.eval_every=3", f"train.bf16={bf16}"]
    assert train(TrainOptions(str(out), "chart", str(data), settings, device="cuda")) == "done"
    history = open_run(out).history()
    evals = [r for r in history if r.get("kind") == "eval"]
    assert [r["step"] for r in evals] == [3, 6]
    assert all(0.0 <= r["f1"] <= 100.0 and r["sentences"] > 0 for r in evals)
    losses = [r["loss"] for r in history if r.get("kind") == "train" and "loss" in r]
    assert losses and all(math.isfinite(x) for x in losses)
