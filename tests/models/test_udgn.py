"""UDGN: the edge distribution, Kirchhoff marginals against enumeration, ablations, gradients."""

from __future__ import annotations

import itertools

import pytest
import torch

from induce.models import build_model
from induce.models.udgn import kirchhoff_marginals
from induce.runs.device import cpu_has_fast_bf16

SMALL = {"d_model": 32, "head_size": 8, "n_layers": 2, "n_heads": 4, "n_parser_layers": 2}


def _batch():
    torch.manual_seed(0)
    ids = torch.randint(3, 50, (3, 7))
    keep = torch.ones(3, 7, dtype=torch.bool)
    keep[1, 4:] = False
    ids[1, 4:] = 1
    return ids, keep


def _trees(n):
    for heads in itertools.product(range(n), repeat=n):  # heads[i] == i: the root
        if sum(h == i for i, h in enumerate(heads)) != 1:
            continue
        ok = True
        for start in range(n):
            seen, node = set(), start
            while heads[node] != node and ok:
                ok = node not in seen
                seen.add(node)
                node = heads[node]
        if ok:
            yield heads


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_kirchhoff_marginals_equal_enumeration(n):
    logits = torch.randn(1, n, n, dtype=torch.float64) * 2
    expected = torch.zeros(n, n, dtype=torch.float64)
    total = 0.0
    for heads in _trees(n):
        w = torch.exp(sum(logits[0, i, h] for i, h in enumerate(heads)))
        total = total + w
        for i, h in enumerate(heads):
            expected[i, h] += w
    got = kirchhoff_marginals(logits, torch.ones(1, n, dtype=torch.bool))[0]
    assert torch.allclose(got, expected / total, atol=1e-12)
    padded = torch.full((1, n + 2, n + 2), float("-inf"), dtype=torch.float64)
    padded[0, :n, :n] = logits[0]
    keep = torch.tensor([[True] * n + [False, False]])
    assert torch.allclose(kirchhoff_marginals(padded, keep)[0, :n, :n], got, atol=1e-12)


@pytest.mark.parametrize(
    "switch",
    [
        {},
        {"gates": False},
        {"competition": False},
        {"relative_bias": False, "position": "absolute"},
        {"edge_marginals": "kirchhoff"},
        {"n_tags": 5},
    ],
)
def test_forward_and_gradients(switch):
    model = build_model("udgn", {**SMALL, **switch}, 50, 1).train()
    ids, keep = _batch()
    out = model(ids, keep)
    rows = out.scores.parents.sum(-1) + out.scores.roots
    assert torch.allclose(rows[keep], torch.ones(int(keep.sum())), atol=1e-5)
    assert torch.all(torch.diagonal(out.scores.parents, dim1=1, dim2=2) == 0)
    model.logits(out.hidden[keep]).logsumexp(-1).sum().backward()
    for name, p in model.named_parameters():
        if name.startswith(("parser", "lstm", "tag_embed")):
            assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_padding_does_not_change_a_sentence():
    model = build_model("udgn", SMALL, 50, 1).eval()
    ids, keep = _batch()
    with torch.no_grad():
        batch = model(ids, keep)
        alone = model(ids[1:2, :4], keep[1:2, :4])
    assert torch.allclose(batch.scores.parents[1, :4, :4], alone.scores.parents[0], atol=1e-5)
    assert torch.allclose(batch.hidden[1, :4], alone.hidden[0], atol=1e-5)


def test_structure_gives_the_forward_passes_scores():
    model = build_model("udgn", SMALL, 50, 1).eval()
    ids, keep = _batch()
    with torch.no_grad():
        full, parser = model(ids, keep), model.structure(ids, keep)
    assert torch.equal(full.scores.parents, parser.parents)
    assert torch.equal(full.scores.roots, parser.roots)


@pytest.mark.parametrize("layers", [1, 3])
def test_padded_bilstm_equals_packed_sequences(layers):
    """The parser's BiLSTM runs each direction densely, the backward one on sentences
    reversed within their length: outputs and gradients are those of nn.LSTM on packed
    sequences, zero at padding."""
    from torch import nn

    from induce.models.bilstm import padded_bilstm
    from induce.models.layers import Dropout

    torch.manual_seed(0)
    lstm = nn.LSTM(6, 5, num_layers=layers, bidirectional=True, batch_first=True)
    lengths = torch.tensor([7, 3, 1, 5])
    keep = torch.arange(7)[None] < lengths[:, None]
    x = torch.randn(4, 7, 6)
    a_in, b_in = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    packed = nn.utils.rnn.pack_padded_sequence(
        a_in, lengths, batch_first=True, enforce_sorted=False
    )
    expected = nn.utils.rnn.pad_packed_sequence(lstm(packed)[0], batch_first=True)[0]
    got = padded_bilstm(lstm, b_in, keep, Dropout(0.0))
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    weight = torch.randn(4, 7, 10)
    grads_a = torch.autograd.grad((expected * weight).sum(), [a_in, *lstm.parameters()])
    grads_b = torch.autograd.grad((got * weight).sum(), [b_in, *lstm.parameters()])
    for ga, gb in zip(grads_a, grads_b):
        torch.testing.assert_close(gb, ga, rtol=1e-5, atol=1e-6)
    assert got[~keep].abs().sum() == 0


@pytest.mark.parametrize(
    ("settings", "kernel", "dtype"),
    [
        ({"lstm_precision": "float32"}, "padded_bilstm", torch.float32),
        ({"lstm_precision": "autocast"}, "padded_bilstm", None),
        ({"lstm_precision": "auto"}, "padded_bilstm", None),  # a CPU's autocast runs it bf16
        ({"lstm_precision": "float32", "lstm_kernel": "packed"}, "packed_bilstm", torch.float32),
    ],
)
def test_the_parser_runs_its_bilstm_in_the_configured_precision(
    monkeypatch, settings, kernel, dtype
):
    from induce.models import udgn

    seen = []
    call = getattr(udgn, kernel)

    def spy(*args):
        seen.append(args[-1])  # the dtype, last in both kernels' calls
        if args[-1] is None and not cpu_has_fast_bf16():  # oneDNN has no bf16 LSTM there
            return call(*args[:-1], torch.float32)
        return call(*args)

    monkeypatch.setattr(udgn, kernel, spy)
    model = build_model("udgn", {**SMALL, **settings}, 60, 1)
    ids, keep = _batch()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        model.structure(ids, keep)
    assert seen == [dtype]
