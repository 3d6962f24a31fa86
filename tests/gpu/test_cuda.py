"""The CUDA paths (marked ``gpu``: skipped where no CUDA device is available, CI included):
fp32 on the GPU equals the CPU, bf16 autocast stays close to fp32, a graph-captured training
step equals the eager one (which also proves the step never reads a value back on the host),
and the engine trains, stops and resumes on the GPU with its fused optimizer."""

from __future__ import annotations

import copy
import dataclasses
import math
import statistics
import warnings
from contextlib import nullcontext

import pytest
import torch
import torch.nn.functional as F

from induce.models import MODELS
from induce.models.bilstm import cudnn_runs_bf16_rnns, lstm_dtype, packed_bilstm, padded_bilstm
from induce.runs.batches import Batch, Specials, make_batch
from induce.runs.inference import masked_lm_training_loss, sentence_scores
from induce.train.engine import TrainOptions, train
from induce.train.graphs import GraphedLoss, compiled
from tests.train.helpers import MASKED_LMS, last_state, make_dataset, quiet_model, tiny

pytestmark = pytest.mark.gpu

VOCAB = 60
SPECIALS = Specials(pad=0, unk=1, mask=2)


def _model(arch: str) -> torch.nn.Module:
    return quiet_model(arch, 64, 4, VOCAB, SPECIALS.pad)


def _batch(lengths: tuple[int, ...] = (7, 12, 3, 20), seed: int = 1) -> Batch:
    """Sentences of different lengths (padding in every row but one), 30% masked."""
    g = torch.Generator().manual_seed(seed)
    sentences = [torch.randint(3, VOCAB, (n,), generator=g).tolist() for n in lengths]
    index = list(range(len(lengths)))
    return make_batch(sentences, index, SPECIALS, 0.3, torch.Generator().manual_seed(seed + 1))


def _loss(model: torch.nn.Module, batch: Batch) -> tuple[torch.Tensor, object]:
    out = model(batch.ids, batch.keep)
    logits = model.logits(batch.at_masked(out.hidden)).float()
    return F.cross_entropy(logits, batch.targets), out


def _tensors(scores: object) -> dict[str, torch.Tensor]:
    if scores is None:
        return {}
    return {
        f.name: getattr(scores, f.name).float().cpu()
        for f in dataclasses.fields(scores)  # type: ignore[arg-type]
        if isinstance(getattr(scores, f.name), torch.Tensor)
    }


def _relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    """The largest difference over the real entries (not the +-1e9 sentinels of padding),
    relative to the largest magnitude there."""
    real = (a.abs() < 1e8) & (b.abs() < 1e8)
    if not real.any():
        return 0.0
    scale = a[real].abs().max().clamp_min(1.0)
    return float((a[real] - b[real]).abs().max() / scale)


@pytest.mark.parametrize("arch", sorted(MASKED_LMS))
def test_fp32_on_cuda_equals_the_cpu(arch, strict_fp32):
    model, batch = _model(arch), _batch()
    with torch.no_grad():
        loss, out = _loss(model, batch)
        gpu_loss, gpu_out = _loss(copy.deepcopy(model).cuda(), batch.to(torch.device("cuda")))
    assert abs(float(gpu_loss) - float(loss)) < 1e-4
    assert _relative_error(out.hidden, gpu_out.hidden.cpu()) < 1e-4
    cpu_scores, gpu_scores = _tensors(out.scores), _tensors(gpu_out.scores)
    assert cpu_scores.keys() == gpu_scores.keys()
    for name, value in cpu_scores.items():
        assert _relative_error(value, gpu_scores[name]) < 1e-4, name


@pytest.mark.parametrize("arch", sorted(MASKED_LMS))
def test_bf16_autocast_stays_close_to_fp32(arch):
    """The parsers' scores are computed in fp32 inside a bf16 forward: they move by the
    rounding of the bf16 layers beneath them only; the loss by less than 2%."""
    cuda = torch.device("cuda")
    model, batch = _model(arch).to(cuda), _batch().to(cuda)
    with torch.no_grad():
        loss, out = _loss(model, batch)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            low_loss, low = _loss(model, batch)
    assert abs(float(low_loss) / float(loss) - 1) < 0.02
    fp32, bf16 = _tensors(out.scores), _tensors(low.scores)
    for name, value in fp32.items():
        assert bf16[name].dtype == torch.float32
        assert _relative_error(value, bf16[name]) < 0.05, name


@pytest.mark.parametrize("arch", sorted(MASKED_LMS))
def test_a_graph_captured_step_equals_the_eager_step(arch):
    """Forward, loss and backward captured in a CUDA graph and replayed give the eager loss
    and gradients: no step of it synchronises with the host (capture would fail)."""
    cuda = torch.device("cuda")
    model, batch = _model(arch).to(cuda).train(), _batch().to(cuda)
    params = [p for p in model.parameters() if p.requires_grad]

    def step() -> torch.Tensor:
        loss = _loss(model, batch)[0]
        loss.backward()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the default stream, as capture requires
        for _ in range(3):
            model.zero_grad(set_to_none=True)
            eager = step().detach().clone()
    torch.cuda.current_stream().wait_stream(side)
    eager_grads = [p.grad.clone() if p.grad is not None else None for p in params]
    graph = torch.cuda.CUDAGraph()
    model.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        captured = step()
    graph.replay()
    torch.cuda.synchronize()
    assert torch.allclose(captured, eager, rtol=1e-5, atol=1e-6)
    for p, g in zip(params, eager_grads, strict=True):
        if g is None:
            assert p.grad is None or not p.grad.any()
        else:
            assert torch.allclose(p.grad, g, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("arch", sorted(MASKED_LMS))
def test_graphed_loss_replays_the_eager_step_of_each_batch(arch, strict_fp32):
    """Two batches of one bucket: the first runs eagerly and is captured, the second is a
    replay; each gives the loss and gradients of the plain engine step on the batch as it
    came (no padding)."""
    cuda = torch.device("cuda")
    model = _model(arch).to(cuda).train()
    plain = copy.deepcopy(model)  # the same weights; its gradients are the eager step's
    graphed = GraphedLoss(model, model, nullcontext, SPECIALS, cuda)
    for lengths, seed in (((7, 12, 3, 20), 1), ((6, 11, 4, 19), 5)):
        batch = _batch(lengths, seed)
        model.zero_grad(set_to_none=False)  # the graphs accumulate into these tensors
        loss = graphed(batch)
        plain.zero_grad(set_to_none=True)
        expected = masked_lm_training_loss(plain, plain, batch.to(cuda), nullcontext)
        expected.backward()
        assert torch.allclose(loss, expected.detach(), rtol=1e-5, atol=1e-6)
        for p, q in zip(model.parameters(), plain.parameters(), strict=True):
            assert (p.grad is None) == (q.grad is None)
            if q.grad is not None:
                assert torch.allclose(p.grad, q.grad, rtol=1e-4, atol=1e-6)
    assert len(graphed.graphs) == 1


@pytest.mark.parametrize(
    ("arch", "compile_step"), [("structformer", False), ("udgn", False), ("structformer", True)]
)
def test_graph_replays_draw_fresh_dropout_masks(arch, compile_step):
    """With dropout on, every replay of a captured step draws new masks (a graph replays its
    kernels, and the random offsets must move with each replay, or every batch of a bucket
    would train under one frozen mask; compiled, inductor draws its own seeds inside the
    graph): the replays of one batch give different losses, distributed as the eager
    step's."""
    cuda = torch.device("cuda")
    fields = {f.name for f in dataclasses.fields(MODELS[arch].config_class)}
    drops = {name: 0.2 for name in fields if "dropout" in name}
    model = quiet_model(arch, 64, 4, VOCAB, SPECIALS.pad, settings=drops).to(cuda).train()
    torch._dynamo.reset()
    # compiled by layers: the dropouts' draws are the same question, the compilation shorter
    net = compiled(model, model.compile_regions("layers")) if compile_step else model
    graphed = GraphedLoss(net, model, nullcontext, SPECIALS, cuda)
    batch = _batch()
    draws = 60
    replayed, eager = [], []
    for _ in range(draws + 1):  # the first call runs eagerly and captures
        model.zero_grad(set_to_none=False)
        replayed.append(float(graphed(batch)))
    with torch.no_grad():
        for _ in range(draws):
            eager.append(float(masked_lm_training_loss(model, model, batch.to(cuda), nullcontext)))
    replayed = replayed[1:]
    assert len(graphed.graphs) == 1
    assert len(set(replayed)) > draws // 2  # fresh masks, not one mask replayed
    (mean_e, sd_e), (mean_r, sd_r) = (
        (statistics.fmean(x), statistics.stdev(x)) for x in (eager, replayed)
    )
    z = (mean_r - mean_e) / math.sqrt((sd_e**2 + sd_r**2) / draws)
    assert abs(z) < 4, (mean_e, mean_r)  # the same distribution (|z| > 4: 1 in 15,000)
    assert 0.5 < sd_r / sd_e < 2


@pytest.mark.parametrize(
    ("arch", "scope"), [("structformer", "model"), ("udgn", "model"), ("udgn", "regions")]
)
def test_a_compiled_graphed_loss_replays_the_eager_step_compiling_once(arch, scope, strict_fp32):
    """``train.compile`` with the CUDA graphs: the compiled forward captured in each bucket's
    graph gives the eager loss and gradients, and batches of new lengths (new buckets) are
    captured without compiling again (dynamic shapes); by regions too
    (``train.compile_scope``: UDGN's layers, and its parser around the two-stream BiLSTM)."""
    torch._dynamo.reset()
    cuda = torch.device("cuda")
    model = _model(arch).to(cuda).train()
    plain = copy.deepcopy(model)
    net = compiled(model, model.compile_regions(scope))
    graphed = GraphedLoss(net, model, nullcontext, SPECIALS, cuda)
    runs = [((7, 12, 3, 20), 1), ((6, 11, 4, 19), 5), ((9, 30, 2), 7), ((5, 5, 8, 13, 2), 9)]
    try:
        for k, (lengths, seed) in enumerate(runs):
            if k == 1:
                torch.compiler.set_stance("fail_on_recompile")
            batch = _batch(lengths, seed)
            model.zero_grad(set_to_none=False)
            loss = graphed(batch)
            plain.zero_grad(set_to_none=True)
            expected = masked_lm_training_loss(plain, plain, batch.to(cuda), nullcontext)
            expected.backward()
            assert torch.allclose(loss, expected.detach(), rtol=1e-5, atol=1e-6), k
            for p, q in zip(model.parameters(), plain.parameters(), strict=True):
                if q.grad is not None:
                    assert torch.allclose(p.grad, q.grad, rtol=1e-4, atol=1e-6), k
    finally:
        torch.compiler.set_stance("default")
    assert len(graphed.graphs) == 3  # the first two batches share a bucket


def test_graphed_loss_of_a_batch_that_masks_nothing_is_the_engines_zero():
    """No target: the engine's zero loss and zero gradients (IGNORE padding alone would make
    the mean over no target NaN)."""
    cuda = torch.device("cuda")
    model = _model("udgn").to(cuda).train()
    graphed = GraphedLoss(model, model, nullcontext, SPECIALS, cuda)
    g = torch.Generator().manual_seed(3)
    sentences = [torch.randint(3, VOCAB, (n,), generator=g).tolist() for n in (5, 8)]
    batch = make_batch(sentences, [0, 1], SPECIALS, 0.0, torch.Generator().manual_seed(4))
    assert not batch.targets.numel()
    model.zero_grad(set_to_none=False)
    assert float(graphed(batch)) == 0.0
    assert all(not p.grad.any() for p in model.parameters() if p.grad is not None)
    assert not graphed.graphs


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("gpu"))


@pytest.mark.parametrize("arch", ["structformer", "udgn"])
@pytest.mark.parametrize("bf16", [False, True])
@pytest.mark.parametrize("graphs", [False, True])
def test_the_engine_trains_and_resumes_on_cuda(data, tmp_path, arch, bf16, graphs):
    """A run on the GPU (fused Adam, page-locked batches, CUDA graphs or not) stops, resumes
    where it stopped and ends with the step count and the optimizer state on the device."""
    out = tmp_path / "run"
    settings = tiny(arch) + [
        f"train.bf16={str(bf16).lower()}",
        f"train.cuda_graphs={str(graphs).lower()}",
        "train.eval_every=4",
    ]
    first = TrainOptions(str(out), arch, str(data), [*settings, "train.max_steps=4"], device="cuda")
    assert train(first) == "done"
    again = TrainOptions(str(out), overrides=["train.max_steps=8"], resume=True, device="cuda")
    assert train(again) == "done"
    state = last_state(out)
    assert state["progress"]["step"] == 8
    groups = state["optimizer"]["param_groups"]
    assert all(group["fused"] for group in groups)


@pytest.mark.parametrize("arch", ["structformer", "udgn"])
def test_the_engine_trains_compiled_in_graphs_with_dropout(data, tmp_path, arch):
    """``train.compile`` in a real run: bf16, dropout on (the compiled ``F.dropout`` inside
    the captured graphs), validation eager; the losses stay finite."""
    torch._dynamo.reset()
    out = tmp_path / "run"
    settings = tiny(arch) + ["train.bf16=true", "train.compile=true", "train.max_steps=6"]
    events: list[tuple[str, dict]] = []
    extra = [*settings, "train.eval_every=3"]
    options = TrainOptions(str(out), arch, str(data), extra, device="cuda")
    assert train(options, lambda kind, record: events.append((kind, record))) == "done"
    start = next(record for kind, record in events if kind == "start")
    assert start["compiled"] and start["cuda_graphs"]
    losses = [record["loss"] for kind, record in events if kind == "train"]
    assert losses and all(math.isfinite(x) for x in losses)


def test_the_two_stream_bilstm_equals_the_packed_one(strict_fp32):
    """On CUDA the dense BiLSTM runs its backward direction on a side stream: outputs and
    gradients are those of the packed LSTM (to float rounding), and a CUDA graph captures it."""
    cuda = torch.device("cuda")
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(16, 8, num_layers=2, bidirectional=True, batch_first=True).to(cuda)
    x = torch.randn(4, 9, 16, device=cuda, requires_grad=True)
    keep = torch.arange(9, device=cuda)[None, :] < torch.tensor([9, 4, 1, 6], device=cuda)[:, None]

    def run(kernel):
        x.grad = None
        lstm.zero_grad(set_to_none=True)
        out = kernel()
        (out * torch.linspace(-1, 1, out.numel(), device=cuda).view_as(out)).sum().backward()
        return out.detach(), x.grad.clone(), [p.grad.clone() for p in lstm.parameters()]

    dense = run(lambda: padded_bilstm(lstm, x, keep, torch.nn.Identity()))
    packed = run(lambda: packed_bilstm(lstm, x, keep))
    assert torch.allclose(dense[0], packed[0], atol=1e-5)
    assert torch.allclose(dense[1], packed[1], atol=1e-5)
    for a, b in zip(dense[2], packed[2], strict=True):
        assert torch.allclose(a, b, atol=1e-5)
    static = torch.zeros_like(dense[0])
    for p in lstm.parameters():
        p.grad = torch.zeros_like(p)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the graph, as capture asks
        padded_bilstm(lstm, x, keep, torch.nn.Identity()).sum().backward()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static.copy_(padded_bilstm(lstm, x, keep, torch.nn.Identity()))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.allclose(static, dense[0], atol=1e-5)


def test_bf16_autocast_runs_the_bilstm_in_bf16_not_the_fp16_pytorch_picks(strict_fp32):
    """A bf16 run has no loss scaling, so no part of it may run in fp16, whose range is far
    narrower.  PyTorch's autocast wrapper for cuDNN's RNNs (``_cudnn_rnn_cast_reflatten``)
    casts them to fp16 whatever the autocast dtype (``lstm_precision: autocast`` shows it:
    should that assertion fail, PyTorch has changed and ``auto`` could leave the LSTM to it).
    ``auto`` runs it in bf16 on these GPUs, through cuDNN (not PyTorch's slow loop), close
    to fp32, with fp32 gradients for the fp32 weights, packed too, and a CUDA graph captures
    it."""
    cuda = torch.device("cuda")
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(16, 8, num_layers=2, bidirectional=True, batch_first=True).to(cuda)
    reference = copy.deepcopy(lstm)
    x = torch.randn(4, 9, 16, device=cuda)
    keep = torch.arange(9, device=cuda)[None, :] < torch.tensor([9, 4, 1, 6], device=cuda)[:, None]
    want = padded_bilstm(reference, x, keep, torch.nn.Identity())
    want.pow(2).sum().backward()

    def bilstm(precision: str) -> torch.Tensor:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return padded_bilstm(lstm, x, keep, torch.nn.Identity(), lstm_dtype(precision, cuda))

    assert bilstm("autocast").dtype is torch.float16  # PyTorch's choice: why auto exists
    assert cudnn_runs_bf16_rnns(cuda)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        got = bilstm("auto")
    ops = {event.key for event in prof.key_averages()}
    assert "aten::_cudnn_rnn" in ops and "aten::_thnn_fused_lstm_cell" not in ops, ops
    assert got.dtype is torch.bfloat16
    torch.testing.assert_close(got.float(), want, atol=0.03, rtol=0.05)
    got.float().pow(2).sum().backward()
    for (name, p), q in zip(lstm.named_parameters(), reference.parameters(), strict=True):
        assert p.grad is not None and p.grad.dtype is torch.float32, name
        torch.testing.assert_close(p.grad, q.grad, atol=0.05, rtol=0.1, msg=name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autocast("cuda", dtype=torch.bfloat16):  # the packed kernel (the chart's)
            packed = packed_bilstm(lstm, x, keep, lstm_dtype("auto", cuda))
    # the cast weights lie as cuDNN reads a flattened LSTM: it copies them no more
    assert not [w for w in caught if "single contiguous" in str(w.message)]
    assert packed.dtype is torch.bfloat16
    torch.testing.assert_close(packed.float(), want, atol=0.03, rtol=0.05)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the graph, as capture asks
        bilstm("auto").float().sum().backward()
    torch.cuda.current_stream().wait_stream(side)
    static = torch.zeros_like(got)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static.copy_(bilstm("auto"))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(static, got.detach(), atol=1e-2, rtol=1e-2)


def test_the_dense_bilstm_reads_its_weights_where_they_lie(strict_fp32):
    """Once a direction's weights lie in a buffer of their own as cuDNN reads them
    (``own_buffer``, which the GPU path arranges before its first call), a call keeps no copy
    of them for its backward pass: its peak memory is below that of weights held apart (as
    ``.to(device)`` leaves them, which cuDNN copies at every call) by at least their size.
    Fails, without harm to training, if cuDNN wants them laid out otherwise."""
    from induce.models.bilstm import _direction, own_buffer

    cuda = torch.device("cuda")
    torch.manual_seed(0)
    apart = torch.nn.LSTM(256, 256, batch_first=True).to(cuda)
    arranged = copy.deepcopy(apart)
    own_buffer(arranged, 0, "")
    x = torch.randn(8, 20, 256, device=cuda, requires_grad=True)
    zeros = x.new_zeros(1, 8, 256)
    weights = sum(p.numel() * p.element_size() for p in apart.parameters())

    def peak(lstm: torch.nn.LSTM) -> int:
        x.grad = None
        lstm.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        _direction(lstm, 0, "", x, None, zeros).sum().backward()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base

    peak(apart), peak(arranged)  # cuDNN's set-up and workspaces first
    assert peak(apart) - peak(arranged) >= 0.9 * weights


@pytest.mark.parametrize("arch", sorted(MASKED_LMS))
def test_scores_cut_from_the_gpu_equal_the_cpu_ones(arch, strict_fp32):
    """A batch's scores move to the host once; every sentence's scores then equal those of
    the same batch run on the CPU."""
    model, batch = _model(arch).eval(), _batch()
    lengths = batch.keep.sum(1).tolist()
    with torch.no_grad():
        cpu = model.structure(batch.ids, batch.keep)
        gpu = copy.deepcopy(model).cuda().structure(batch.ids.cuda(), batch.keep.cuda())
    if cpu is None:
        return
    for mine, theirs in zip(cpu.sentences(lengths), gpu.sentences(lengths), strict=True):
        a, b = _tensors(mine), _tensors(theirs)
        assert all(t.device.type == "cpu" for t in b.values())
        for name, value in a.items():
            assert _relative_error(value, b[name]) < 1e-4, name


@pytest.mark.parametrize("arch", ["structformer", "udgn"])
def test_the_pipelined_parse_on_the_gpu_gives_the_cpus_scores(arch, strict_fp32):
    """``sentence_scores`` on CUDA gives a batch's rows while the next batch's forward pass
    runs: every sentence's scores still equal the CPU's, none read before its copy landed."""
    model = _model(arch).eval()
    g = torch.Generator().manual_seed(3)
    sentences = [
        torch.randint(3, VOCAB, (int(n),), generator=g).tolist()
        for n in torch.randint(1, 30, (90,), generator=g)
    ]
    cpu = dict(sentence_scores(model, sentences, SPECIALS, 120, torch.device("cpu")))
    gpu_model = copy.deepcopy(model).cuda()
    gpu = dict(sentence_scores(gpu_model, sentences, SPECIALS, 120, torch.device("cuda")))
    assert sorted(gpu) == sorted(cpu) == list(range(len(sentences)))
    for index, mine in cpu.items():
        a, b = _tensors(mine), _tensors(gpu[index])
        assert all(t.device.type == "cpu" for t in b.values())
        for name, value in a.items():
            assert _relative_error(value, b[name]) < 1e-4, (index, name)


@pytest.fixture
def matmul_precision():
    saved = torch.get_float32_matmul_precision()
    yield
    torch.set_float32_matmul_precision(saved)


def test_train_tf32_sets_the_matmul_precision(data, tmp_path, matmul_precision):
    settings = tiny("structformer") + ["train.tf32=true", "train.max_steps=2"]
    assert (
        train(
            TrainOptions(str(tmp_path / "run"), "structformer", str(data), settings, device="cuda")
        )
        == "done"
    )
    assert torch.get_float32_matmul_precision() == "high"
    settings[-2] = "train.tf32=false"
    assert (
        train(
            TrainOptions(
                str(tmp_path / "again"), "structformer", str(data), settings, device="cuda"
            )
        )
        == "done"
    )
    assert torch.get_float32_matmul_precision() == "highest"
