"""bench/step_flops.py: the LSTM's count from its weights against the products of an LSTM
written out step by step (what the counter sees when nothing is fused), and the script at a
tiny size without the official code."""

from __future__ import annotations

import json
import subprocess

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from tests.conftest import bench_module, run_bench

flops = bench_module("step_flops")
TINY = ["--set", "model.d_model=32", "--set", "model.n_layers=1", "--set", "model.n_heads=2"]


def written_out(lstm: torch.nn.LSTM, x: torch.Tensor) -> torch.Tensor:
    """``lstm`` over ``x [B, T, D]`` one position at a time with plain products; every
    initial state requires a gradient, as every input of a trained model's LSTM does."""
    b, t, _ = x.shape
    directions = 2 if lstm.bidirectional else 1
    layer_in = x
    for layer in range(lstm.num_layers):
        outputs = []
        for d, suffix in enumerate(("", "_reverse")[:directions]):
            w_ih, w_hh, b_ih, b_hh = (
                getattr(lstm, f"{name}_l{layer}{suffix}")
                for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
            )
            h = torch.zeros(b, lstm.hidden_size, requires_grad=True)
            c = torch.zeros(b, lstm.hidden_size)
            steps = range(t - 1, -1, -1) if d else range(t)
            out = [torch.empty(0)] * t
            for i in steps:
                gates = F.linear(layer_in[:, i], w_ih, b_ih) + F.linear(h, w_hh, b_hh)
                g_i, g_f, g_g, g_o = gates.chunk(4, -1)
                c = torch.sigmoid(g_f) * c + torch.sigmoid(g_i) * torch.tanh(g_g)
                h = torch.sigmoid(g_o) * torch.tanh(c)
                out[i] = h
            outputs.append(torch.stack(out, 1))
        layer_in = torch.cat(outputs, -1)
    return layer_in


@pytest.mark.parametrize(("layers", "bidirectional"), [(1, False), (2, True), (3, True)])
def test_the_lstm_count_is_what_its_products_cost_forward_and_backward(layers, bidirectional):
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(6, 5, num_layers=layers, bidirectional=bidirectional, batch_first=True)
    x = torch.randn(3, 4, 6, requires_grad=True)
    expected, _ = lstm(x)
    with FlopCounterMode(display=False) as counter:
        out = written_out(lstm, x)
        out.sum().backward()
    assert torch.allclose(out, expected, atol=1e-6)  # the same LSTM
    assert flops.lstm_flops(lstm, 3 * 4) == counter.get_total_flops()


def test_kinds_of_the_counters_operators():
    aten = torch.ops.aten
    assert flops.kind_of(aten.mm) == flops.kind_of(aten.addmm) == "matmul"
    assert flops.kind_of(aten.convolution_backward) == "conv"
    assert flops.kind_of(aten._scaled_dot_product_flash_attention) == "attention"


def _bench(*args: object) -> subprocess.CompletedProcess[str]:
    return run_bench("step_flops", *args, timeout=300)


def test_counts_both_models_at_a_tiny_size(tmp_path):
    out = tmp_path / "flops.json"
    done = _bench(
        "--size", "small", "--steps", 1, "--warmup", 0, "--threads", 1,
        "--shared", tmp_path / "none",
        "--json", out, *TINY,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert set(figures) == {"structformer/induce", "udgn/induce"}
    sf, udgn = figures["structformer/induce"], figures["udgn/induce"]
    assert set(sf["share"]) == {"matmul", "conv"} and set(udgn["share"]) == {"matmul", "lstm"}
    for found in (sf, udgn):
        assert found["gflop"] > 0 and sum(found["share"].values()) == pytest.approx(1.0)
    assert len(done.stdout.splitlines()) == 4  # the heading, the columns, a line a model


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--archs", "combiner"], "'combiner' is not one of structformer, udgn"),
        (["--steps", "0"], "--steps must be at least 1"),
        (["--warmup", "-1"], "--warmup at least 0"),
        (["--official", "{tmp}"], "no models.py"),
        (["--set", "model.lstm_kernel=dense"], "--set for structformer"),
    ],
)
def test_what_cannot_run_is_refused_in_one_line(tmp_path, args, says):
    done = _bench(*(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0]
