"""Shared layers: the inverted dropout's rate, scale and gradient."""

from __future__ import annotations

import pytest
import torch

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
