"""Shared layers: the inverted dropout's rate, scale and gradient; softmax attention fused
and written out."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from induce.models.layers import Dropout


@pytest.mark.parametrize("p", [0.1, 0.2, 0.5])
def test_dropout_zeroes_at_its_rate_and_scales_the_rest(p):
    torch.manual_seed(0)
    drop = Dropout(p)
    x = torch.rand(200, 500) + 0.5  # no zeros of its own
    x.requires_grad_(True)
    y = drop(x)
    zeroed = y == 0
    assert abs(zeroed.float().mean().item() - p) < 0.01
    torch.testing.assert_close(y[~zeroed], x[~zeroed] / (1 - p))
    (grad,) = torch.autograd.grad((y * 3).sum(), x)
    torch.testing.assert_close(grad, torch.where(zeroed, 0.0, 3 / (1 - p)))
    assert x.grad is None and not torch.equal(y, drop(x))  # a fresh mask per call


def test_dropout_is_the_identity_when_evaluating_or_off():
    x = torch.randn(4, 5)
    assert Dropout(0.0)(x) is x
    drop = Dropout(0.3).eval()
    assert drop(x) is x
    with pytest.raises(ValueError):
        Dropout(1.0)


def _softmax_attention_by_hand(att, x, keep):
    """Multi-head softmax attention in float64, masked keys excluded."""
    b, n, d = x.shape
    h = att.n_heads
    w, bias = att.qkv.weight.double(), att.qkv.bias.double()
    q, k, v = (x.double() @ w.T + bias).view(b, n, 3, h, d // h).permute(2, 0, 3, 1, 4)
    logits = q @ k.transpose(-1, -2) / (d // h) ** 0.5
    if att.relative is not None:
        logits = logits + att.relative(n).double()[None]
    logits = logits.masked_fill(~keep[:, None, None, :], float("-inf"))
    y = (torch.softmax(logits, -1) @ v).transpose(1, 2).reshape(b, n, d)
    return y @ att.out.weight.double().T + att.out.bias.double()


@pytest.mark.parametrize("relative", [0, 3])
def test_softmax_attention_is_the_same_fused_or_written_out(relative, monkeypatch):
    from induce.models import layers

    torch.manual_seed(0)
    att = layers.SelfAttention(
        32, 4, 0.0, layers.RelativeBias(4, relative) if relative else None
    ).train()
    x = torch.randn(3, 7, 32)
    keep = torch.tensor([[True] * 7, [True] * 5 + [False] * 2, [True] + [False] * 6])
    expected = _softmax_attention_by_hand(att, x, keep).float()
    fused = F.scaled_dot_product_attention
    calls: list[bool] = []

    def counted(*args, **kwargs):
        calls.append(True)
        return fused(*args, **kwargs)

    monkeypatch.setattr(layers.F, "scaled_dot_product_attention", counted)
    assert torch.allclose(att(x, keep), expected, atol=1e-5)  # fp32 training: fused
    assert len(calls) == 1
    with torch.autocast("cpu", dtype=torch.bfloat16):
        written = att(x, keep)  # bf16 training on a CPU: written out
        assert len(calls) == 1
        written.float().sum().backward()
        with torch.no_grad():
            inferred = att(x, keep)  # parsing: fused
        assert len(calls) == 2
    for got in (written, inferred):
        assert got.dtype == torch.bfloat16
        assert torch.allclose(got.float()[keep], expected[keep], atol=0.03)
    assert att.qkv.weight.grad is not None and att.qkv.weight.grad.abs().sum() > 0


def test_written_out_attention_drops_weights_when_training():
    from induce.models.layers import SelfAttention

    torch.manual_seed(0)
    att = SelfAttention(32, 4, 0.5).train()
    x = torch.randn(2, 6, 32)
    keep = torch.ones(2, 6, dtype=torch.bool)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert not torch.equal(att(x, keep), att(x, keep))
        att.eval()
        assert torch.equal(att(x, keep), att(x, keep))
