"""The PCFG family on CUDA (marked ``gpu``: skipped where no CUDA device is available, CI
included): in float64 the GPU computes what the CPU does, each grammar's loss and its
gradients (the rank-space chart's own backward among them), the span marginals and both
decoders' trees."""

from __future__ import annotations

import pytest
import torch

from induce.models import build_model
from induce.models.grammar import GrammarModel, WordBatch
from induce.runs.config import load_config
from induce.structs.pcfg import inside_low_rank
from tests.train.helpers import tiny

pytestmark = pytest.mark.gpu

GRAMMARS = ["npcfg", "cpcfg", "tnpcfg", "simplepcfg", "scpcfg"]
VOCAB = 11
IDS = torch.tensor([[3, 4, 5, 6, 7, 8], [2, 5, 9, 0, 0, 0], [6, 6, 3, 10, 4, 0]])
LENGTHS = torch.tensor([6, 3, 5])


def _grammar(arch: str) -> GrammarModel:
    torch.manual_seed(0)
    model = build_model(arch, load_config(arch, tiny(arch), preset="demo").model, VOCAB, 0)
    assert isinstance(model, GrammarModel)
    return model.double().eval()  # eval: a compound grammar's z at its mean, no draw


def _loss_and_gradients(model: GrammarModel, device: str) -> tuple[float, dict[str, torch.Tensor]]:
    model = model.to(device)
    model.zero_grad()
    loss = model.loss(WordBatch(IDS.to(device), LENGTHS.to(device))).value
    loss.backward()
    grads = {name: p.grad.cpu() for name, p in model.named_parameters() if p.grad is not None}
    return float(loss.detach()), grads


@pytest.mark.parametrize("arch", GRAMMARS)
def test_a_grammars_loss_and_gradients_on_cuda_equal_the_cpus(arch):
    model = _grammar(arch)
    cpu_loss, cpu_grads = _loss_and_gradients(model, "cpu")
    gpu_loss, gpu_grads = _loss_and_gradients(model, "cuda")
    assert gpu_loss == pytest.approx(cpu_loss, rel=1e-12)
    assert cpu_grads.keys() == gpu_grads.keys() and cpu_grads
    for name, grad in cpu_grads.items():
        torch.testing.assert_close(gpu_grads[name], grad, atol=1e-10, rtol=1e-9, msg=name)


@pytest.mark.parametrize("arch", GRAMMARS)
def test_a_grammars_marginals_and_trees_on_cuda_equal_the_cpus(arch):
    model = _grammar(arch)
    keep = torch.arange(IDS.shape[1])[None, :] < LENGTHS[:, None]
    cpu = model.structure(IDS, keep)
    cpu_trees = {d: model.parse(IDS, LENGTHS, d) for d in ("mbr", "viterbi")}
    model = model.cuda()
    gpu = model.structure(IDS.cuda(), keep.cuda())
    torch.testing.assert_close(gpu.marginals.cpu(), cpu.marginals, atol=1e-10, rtol=0)
    for decoder, trees in cpu_trees.items():
        assert model.parse(IDS.cuda(), LENGTHS.cuda(), decoder) == trees, decoder


def test_the_rank_space_inside_backward_on_cuda_twice_through_one_graph():
    g = torch.Generator().manual_seed(0)
    shapes = [(3, 6, 4), (3, 3), (3, 3, 5), (3, 5, 7), (3, 5, 7)]  # terms, roots, head, L, R
    scores = [torch.randn(*s, generator=g, dtype=torch.float64).log_softmax(-1) for s in shapes]
    found = []
    for device in ("cpu", "cuda"):
        leaves = [s.to(device).requires_grad_(True) for s in scores]
        total = (
            inside_low_rank(*leaves, LENGTHS.to(device)) * torch.arange(1.0, 4.0).to(leaves[0])
        ).sum()
        first = torch.autograd.grad(total, leaves, retain_graph=True)
        again = torch.autograd.grad(total, leaves)
        for a, b in zip(first, again, strict=True):
            torch.testing.assert_close(a, b, atol=0, rtol=0)
        found.append([x.cpu() for x in first])
    for cpu, gpu in zip(*found, strict=True):
        torch.testing.assert_close(gpu, cpu, atol=1e-12, rtol=0)
