"""CPU mixed precision (``train.cpu_bf16``): when it is on, what stays in fp32, and how close
the bf16 loss is to the fp32 one.  CPU autocast runs on any CPU (emulated where the hardware
has no bf16), so these tests do not need AMX, but for UDGN's: oneDNN has no bf16 LSTM on a
CPU without AVX512-BF16 or AMX (AVX2 only: "could not create a primitive descriptor for the
LSTM forward propagation primitive"), where ``train.cpu_bf16`` is ignored anyway."""

from __future__ import annotations

from contextlib import nullcontext

import pytest
import torch

from induce.models import build_model
from induce.runs import device as device_module
from induce.runs.batches import Specials, make_batch
from induce.runs.config import load_config
from induce.runs.device import autocast
from induce.runs.inference import masked_lm_training_loss
from induce.train.engine import build_optimizer

CPU = torch.device("cpu")
ARCHS = [
    "structformer",
    pytest.param(
        "udgn",
        marks=pytest.mark.skipif(
            not device_module.cpu_has_fast_bf16(), reason="no bf16 LSTM in oneDNN on this CPU"
        ),
    ),
    # the LSTM in fp32 under bf16 autocast (model.lstm_precision): the cast path that CUDA
    # takes in bf16, and a bf16 UDGN that needs no bf16 LSTM of oneDNN (runs on any CPU)
    "udgn-lstm-fp32",
]
VARIANTS = {"udgn-lstm-fp32": ("udgn", {"lstm_precision": "float32"})}
SIZES = {
    "structformer": {"d_model": 64, "n_layers": 2, "n_heads": 4, "d_ff": 128},
    "udgn": {"d_model": 64, "n_layers": 2, "n_heads": 4, "head_size": 16},
}


def test_cpu_autocast_only_when_asked_and_the_hardware_has_bf16(monkeypatch):
    monkeypatch.setattr(device_module, "cpu_has_fast_bf16", lambda: True)
    on = autocast(CPU, bf16=False, cpu_bf16=True)
    assert isinstance(on, torch.autocast) and on.fast_dtype == torch.bfloat16
    # train.bf16 alone is CUDA's switch: the demo configs (bf16: true) stay fp32 on CPUs
    assert isinstance(autocast(CPU, bf16=True), nullcontext)
    monkeypatch.setattr(device_module, "cpu_has_fast_bf16", lambda: False)
    assert isinstance(autocast(CPU, bf16=True, cpu_bf16=True), nullcontext)


def _model_and_batch(name: str):
    arch, extra = VARIANTS.get(name, (name, {}))
    torch.manual_seed(0)
    model = build_model(arch, dict(SIZES[arch], dropout=0.0, attn_dropout=0.0, **extra), 60, 1)
    sentences = [[(7 * i + j) % 57 + 3 for j in range(3 + i % 9)] for i in range(24)]
    batch = make_batch(
        sentences, list(range(24)), Specials(1, 0, 2), 0.3, torch.Generator().manual_seed(0)
    )
    return model, batch


@pytest.mark.parametrize("name", ARCHS)
def test_parser_scores_stay_fp32_under_bf16(name):
    model, batch = _model_and_batch(name)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        scores = model.structure(batch.ids, batch.keep)
    tensors = [v for v in vars(scores).values() if isinstance(v, torch.Tensor)]
    assert tensors and all(t.dtype == torch.float32 for t in tensors)
    exact = model.structure(batch.ids, batch.keep)
    for got, want in zip(tensors, [v for v in vars(exact).values() if isinstance(v, torch.Tensor)]):
        finite = torch.isfinite(want)
        assert torch.equal(finite, torch.isfinite(got))
        # only the bf16 layers below the fp32 heads differ: close, not equal
        assert (got[finite] - want[finite]).abs().max() < 0.05
    assert any(not torch.equal(g, w) for g, w in zip(tensors, vars(exact).values()))


@pytest.mark.parametrize("name", ARCHS)
def test_bf16_loss_and_update_close_to_fp32(name):
    model, batch = _model_and_batch(name)
    exact = masked_lm_training_loss(model, model, batch, nullcontext).detach()
    mixed = masked_lm_training_loss(
        model, model, batch, lambda: torch.autocast("cpu", dtype=torch.bfloat16)
    )
    assert mixed.dtype == torch.float32
    assert float(mixed.detach()) != float(exact)  # bf16 did run ...
    assert abs(float(mixed.detach()) - float(exact)) / float(exact) < 0.02  # ... and is close
    arch = VARIANTS.get(name, (name, {}))[0]
    config = load_config(arch, [f"model.{k}={v}" for k, v in SIZES[arch].items()])
    optimizer = build_optimizer(model, config.optim)[0]
    mixed.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)
    optimizer.step()
    assert all(p.dtype == torch.float32 for p in model.parameters())  # fp32 master weights
    after = masked_lm_training_loss(model, model, batch, nullcontext)
    assert torch.isfinite(after)
