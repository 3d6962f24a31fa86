"""Shape buckets for CUDA graphs (``induce.train.graphs``): a bucketed batch has the loss and
gradients of the batch as it came (checked here on the CPU; the graphs themselves in
tests/gpu)."""

from __future__ import annotations

from contextlib import nullcontext

import pytest
import torch

from induce.models import build_model
from induce.runs.batches import Specials, make_batch
from induce.runs.inference import masked_lm_training_loss
from induce.train.graphs import Buckets, GraphedLoss, bucket, round_rows
from tests.train.helpers import MASKED_LMS, quiet_model

SPECIALS = Specials(pad=0, unk=1, mask=2)


def test_rows_round_up_to_eight_sizes_an_octave():
    assert [round_rows(n, 8) for n in (1, 15, 16, 17, 18, 31, 33, 66, 700)] == [
        1,
        15,
        16,
        18,
        18,
        32,
        36,
        72,
        704,
    ]
    for n in range(1, 2000):
        r = round_rows(n, 8)
        assert n <= r <= n * 1.125 + 1


def test_a_bucketed_batch_has_the_shape_of_its_bucket_and_the_same_targets():
    g = torch.Generator().manual_seed(0)
    sentences = [torch.randint(3, 50, (n,), generator=g).tolist() for n in (5, 9, 3)]
    batch = make_batch(sentences, [0, 1, 2], SPECIALS, 0.4, torch.Generator().manual_seed(1))
    padded = bucket(batch, Buckets(length=8, rows=2, targets=16), SPECIALS)
    assert padded.ids.shape == (3, 16) and padded.targets.shape == (16,)
    m = batch.targets.numel()
    assert torch.equal(padded.targets[:m], batch.targets)
    assert (padded.targets[m:] == -100).all()
    hidden = torch.arange(3 * 16).view(3, 16, 1)
    original = torch.arange(3 * 9).view(3, 9, 1)
    # the same (sentence, position) pairs, read through the new row numbering
    assert torch.equal(padded.at_masked(hidden)[:m] // 16, batch.at_masked(original) // 9)
    assert torch.equal(padded.at_masked(hidden)[:m] % 16, batch.at_masked(original) % 9)
    more = bucket(batch, Buckets(length=4, rows=1, targets=4), SPECIALS)
    assert more.ids.shape == (4, 12)  # a one-word sentence added as the fourth row
    assert more.keep[3].tolist() == [True] + [False] * 11 and not more.masked[3].any()


# UDGN's parser BiLSTM also as CUDA runs it (dense: sentences reversed within their length),
# which the padded rows and columns of a bucket reach on a GPU only
@pytest.mark.parametrize(
    "arch, settings",
    [pytest.param(arch, {}, id=arch) for arch in sorted(MASKED_LMS)]
    + [pytest.param("udgn", {"lstm_kernel": "dense"}, id="udgn-dense")],
)
def test_padding_to_the_bucket_changes_neither_loss_nor_gradients(arch, settings):
    model = quiet_model(arch, 32, 2, 50, SPECIALS.pad, settings=settings).train()
    g = torch.Generator().manual_seed(3)
    sentences = [torch.randint(3, 50, (n,), generator=g).tolist() for n in (7, 12, 3, 10, 1)]
    batch = make_batch(sentences, [0, 1, 2, 3, 4], SPECIALS, 0.3, torch.Generator().manual_seed(4))
    padded = bucket(batch, Buckets(length=8, rows=2, targets=64), SPECIALS)
    assert padded.ids.shape == (6, 16)
    results = []
    for b in (batch, padded):
        model.zero_grad(set_to_none=True)
        loss = masked_lm_training_loss(model, model, b, nullcontext)
        loss.backward()
        results.append((loss.detach(), [p.grad.clone() for p in model.parameters()]))
    (loss, grads), (padded_loss, padded_grads) = results
    assert torch.allclose(loss, padded_loss, rtol=1e-5, atol=1e-6)
    for a, b in zip(grads, padded_grads, strict=True):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-6)


def test_graphs_need_a_cuda_device():
    model = build_model("transformer", {"d_model": 16, "n_layers": 1, "n_heads": 2}, 20, 0)
    with pytest.raises(ValueError, match="CUDA"):
        GraphedLoss(model, model, nullcontext, SPECIALS, torch.device("cpu"))


def test_cuda_graphs_are_ignored_on_the_cpu(tmp_path):
    """As ``train.bf16``: the setting is accepted and a CPU run trains exactly as without it."""
    from induce.train.engine import TrainOptions, train
    from tests.train.helpers import make_dataset, tiny, weights_file

    data = make_dataset(tmp_path / "data")
    runs, events = [], []
    for graphs in ("false", "true"):
        out = tmp_path / f"run-{graphs}"
        settings = [*tiny("udgn"), "train.max_steps=3", f"train.cuda_graphs={graphs}"]
        options = TrainOptions(str(out), "udgn", str(data), settings, device="cpu")
        assert train(options, lambda kind, record: events.append((kind, record))) == "done"
        runs.append(weights_file(out, "last").read_bytes())
    used = [record["cuda_graphs"] for kind, record in events if kind == "start"]
    assert runs[0] == runs[1]
    assert used == [False, False]  # the start event says what the run does
