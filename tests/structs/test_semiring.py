"""The semirings' products: the untracked max-plus product (column by column, ``amax``)
equals the tracked one (a broadcast whose gradient goes to the first of ties), and both
equal the definition; the log product equals logsumexp over the broadcast."""

from __future__ import annotations

import pytest
import torch

from induce.structs import LOG, MAX


def _scores(*shape: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-4, 1, shape, generator=g).double()  # whole numbers: ties everywhere
    return x.masked_fill(torch.rand(shape, generator=g) < 0.2, float("-inf"))


def test_max_product_is_the_same_with_and_without_a_gradient():
    x, y = _scores(3, 4, 9, seed=1), _scores(3, 9, 5, seed=2)
    want = torch.stack([(x[b, :, :, None] + y[b]).amax(1) for b in range(3)])
    untracked = MAX.matmul(x, y)
    tracked_x = x.clone().requires_grad_(True)
    tracked = MAX.matmul(tracked_x, y)
    assert not untracked.requires_grad and tracked.requires_grad
    assert torch.equal(untracked, want) and torch.equal(tracked.detach(), want)
    # the tracked product's gradient goes whole to one k per output (amax's would be split
    # among the tied maxima)
    (grad,) = torch.autograd.grad(tracked[torch.isfinite(tracked)].sum(), tracked_x)
    assert grad.sum() == torch.isfinite(want).sum() and torch.equal(grad, grad.round())


def test_max_sum_sends_the_gradient_to_the_first_of_ties():
    x = torch.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    assert torch.equal(MAX.sum(x, 1), torch.tensor([3.0, 2.0]))
    tracked = x.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(MAX.sum(tracked, 1).sum(), tracked)
    assert torch.equal(grad, torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]))


def test_log_product_is_logsumexp_over_the_broadcast():
    x, y = _scores(2, 3, 6, seed=3), _scores(2, 6, 4, seed=4)
    want = torch.logsumexp(x[..., :, :, None] + y[..., None, :, :], -2)
    torch.testing.assert_close(LOG.matmul(x, y), want, atol=1e-12, rtol=0)


def test_an_operand_exponentiated_once_gives_the_same_products():
    x, y = _scores(2, 3, 6, seed=5), _scores(2, 6, 4, seed=6)
    assert torch.equal(LOG.matmul(x, LOG.operand(y)), LOG.matmul(x, y))
    assert MAX.operand(y) is y
    with pytest.raises(TypeError, match="log semiring"):
        MAX.matmul(x, LOG.operand(y))
