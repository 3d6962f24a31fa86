"""``train.compile``: the masked LMs' forward under ``torch.compile(dynamic=True)`` computes
the eager loss and gradients, and one compilation serves batches of every length for every
masked LM (the convolutions of StructFormer's parser and the Combiner's gate are products
over windows when compiled: the lowering of a convolution's backward fixed the length, a
recompilation per padded length); the engine trains with it and its checkpoints load
eagerly; other objectives refuse it."""

from __future__ import annotations

import shutil
from contextlib import nullcontext
from functools import partial
from unittest.mock import patch

import pytest
import torch

from induce.data.errors import ConfigError
from induce.models.layers import conv_windows
from induce.models.structformer import _Conv
from induce.runs.batches import Specials, make_batch
from induce.runs.directory import open_run
from induce.runs.inference import masked_lm_training_loss
from induce.train.engine import TrainOptions, train
from induce.train.graphs import compiled
from tests.train.helpers import make_dataset, quiet_model, tiny

VOCAB = 40
SPECIALS = Specials(pad=0, unk=1, mask=2)
# inductor's CPU code is C++ compiled at run time; fail_on_recompile came in torch 2.6
pytestmark = pytest.mark.skipif(
    not any(shutil.which(c) for c in ("g++", "c++", "clang++"))
    or not hasattr(torch.compiler, "set_stance"),
    reason="torch.compile on the CPU needs a C++ compiler and torch >= 2.6",
)


def _batch(lengths: tuple[int, ...], seed: int):
    g = torch.Generator().manual_seed(seed)
    sentences = [torch.randint(3, VOCAB, (n,), generator=g).tolist() for n in lengths]
    index = list(range(len(lengths)))
    return make_batch(sentences, index, SPECIALS, 0.3, torch.Generator().manual_seed(seed + 1))


def _loss_and_grads(net, model, batch, cast=nullcontext):
    model.zero_grad(set_to_none=True)
    loss = masked_lm_training_loss(net, model, batch, cast)
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]


@pytest.mark.parametrize("width", [9, 2])
def test_the_unfolded_convolution_is_the_convolution(width):
    torch.manual_seed(width)
    conv = _Conv(8, width)
    x = torch.randn(3, 11, 8)
    with patch.object(torch.compiler, "is_compiling", return_value=True):
        unfolded = conv(x)
    assert torch.allclose(unfolded, conv(x), atol=1e-6)


@pytest.mark.parametrize("width", [1, 2, 3, 4])
@pytest.mark.parametrize("padding", ["same", "valid", 0, 1])
def test_a_convolution_is_a_product_over_windows(width, padding):
    """Channels last in and out, as :func:`conv_windows` gives them; ``same`` pads the odd
    one out on the right, as torch does."""
    torch.manual_seed(width)
    conv = torch.nn.Conv1d(3, 5, width, padding=padding)
    x = torch.randn(2, 3, 7)
    expected = conv(x).transpose(1, 2)
    assert torch.allclose(conv_windows(x.transpose(1, 2), conv), expected, atol=1e-6)


def _compiled_once(net, model, batches):
    """The loss and gradients of ``net`` on each batch: the first compiles, no later one may
    compile again."""
    got = [_loss_and_grads(net, model, batches[0])]
    torch.compiler.set_stance("fail_on_recompile")
    try:
        return got + [_loss_and_grads(net, model, batch) for batch in batches[1:]]
    finally:
        torch.compiler.set_stance("default")


def _assert_eager(got, expected):
    for k, ((loss, grads), (got_loss, compiled_grads)) in enumerate(zip(expected, got)):
        assert torch.allclose(got_loss, loss, rtol=1e-5), k
        for a, b in zip(compiled_grads, grads, strict=True):
            assert torch.allclose(a, b, rtol=1e-4, atol=1e-5), k


@pytest.mark.parametrize("arch", ["structformer", "udgn", "combiner", "transformer"])
def test_one_compilation_gives_the_eager_loss_and_gradients_at_every_length(arch):
    torch._dynamo.reset()
    model = quiet_model(arch, 32, 2, VOCAB, SPECIALS.pad, n_layers=1).train()
    net = compiled(model)
    batches = [_batch((5, 9, 3), 1), _batch((12, 4), 2), _batch((7, 7, 2, 6), 3)]
    expected = [_loss_and_grads(model, model, batch) for batch in batches]
    _assert_eager(_compiled_once(net, model, batches), expected)


@pytest.mark.parametrize("scope", ["regions", "layers"])
@pytest.mark.parametrize("arch", ["structformer", "udgn", "combiner", "transformer"])
def test_regions_compile_each_layer_once_and_give_the_eager_step(arch, scope):
    """``train.compile_scope: regions|layers``: the stack's layers share one compilation (the
    Combiner's first layer, which has no layer below, one of its own), the parser is one
    more region under ``regions``, one compilation serves every later length, and the loss
    and gradients are the eager ones."""
    torch._dynamo.reset()
    counters = torch._dynamo.utils.counters
    counters.clear()
    model = quiet_model(arch, 32, 2, VOCAB, SPECIALS.pad, n_layers=3).train()
    regions = model.compile_regions(scope)
    parser = scope == "regions" and model.parser_region is not None
    assert len(regions) == 3 + parser
    net = compiled(model, regions)
    batches = [_batch((5, 9, 3), 1), _batch((12, 4), 2), _batch((7, 7, 2, 6), 3)]
    expected = [_loss_and_grads(model, model, batch) for batch in batches]
    _assert_eager(_compiled_once(net, model, batches), expected)
    graphs = counters["stats"]["unique_graphs"]  # all from the first batch: none recompiled
    layer_graphs = 2 if arch == "combiner" else 1
    if arch == "udgn" and parser:  # the BiLSTM splits the parser: before, after it
        assert graphs > layer_graphs + 1
    else:
        assert graphs == layer_graphs + parser


def test_the_model_is_eager_outside_the_compiled_call_even_when_it_fails():
    """A region's compiled method is the model's only during the wrapper's call: outside it
    (validation, parsing, a copy) the class's own methods run, and a call that raises
    leaves none behind."""
    torch._dynamo.reset()
    model = quiet_model("structformer", 32, 2, VOCAB, SPECIALS.pad).train()
    net = compiled(model, model.compile_regions("regions"))
    seen = []
    original = model.forward

    def looks(ids, keep):
        seen.append(["forward" in layer.__dict__ for layer in model.layers])
        seen.append("structure" in model.__dict__)
        return original(ids, keep)

    batch = _batch((5, 9, 3), 1)
    with patch.object(model, "forward", looks):
        _loss_and_grads(net, model, batch)
    assert seen == [[True, True], True]
    assert not any("forward" in layer.__dict__ for layer in model.layers)
    assert "structure" not in model.__dict__

    def fails(ids, keep):
        raise RuntimeError("in the forward")

    with patch.object(model, "forward", fails), pytest.raises(RuntimeError, match="forward"):
        net(batch.ids, batch.keep)
    assert not any("forward" in layer.__dict__ for layer in model.layers)
    assert "structure" not in model.__dict__
    assert list(net.state_dict()) == [f"compiled.{k}" for k in model.state_dict()]


def _caches_on() -> bool:
    """Whether AOTAutograd's and inductor's on-disk caches are on (this torch has them and
    the environment, e.g. ``TORCHINDUCTOR_FORCE_DISABLE_CACHES``, leaves them on)."""
    import torch._inductor.config as inductor

    forced_off = getattr(getattr(torch.compiler, "config", None), "force_disable_caches", False)
    return (
        bool(getattr(torch._functorch.config, "enable_autograd_cache", False))
        and bool(inductor.fx_graph_cache)
        and not forced_off
    )


@pytest.mark.skipif(not _caches_on(), reason="torch.compile's on-disk caches are off here")
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_a_compiled_step_is_traced_once_into_aotautograds_cache_and_read_back(precision):
    """Python floats are traced as constants (one trace: no restart, which looked the cache
    up twice and saved an entry no process would find); an fp32 forward holds no autocast
    region, and a bf16 one's fp32 regions are marked cacheable (the cache refused both): one
    lookup, a hit or a miss that is saved, so that a new process takes the step whole from
    the cache (``bench/RESULTS.md``: fp32 11.3 s -> 3.5 s, bf16 12.7 s -> 3.5 s).  Compiled
    again from the cache, the step computes what it computed when compiled."""
    cast = nullcontext if precision == "fp32" else partial(torch.autocast, "cpu", torch.bfloat16)
    model = quiet_model("structformer", 32, 2, VOCAB, SPECIALS.pad, n_layers=1).train()
    for module in model.modules():  # dropout rates: the floats Dynamo reads
        if isinstance(getattr(module, "p", None), float):
            module.p = 0.1
    counters = torch._dynamo.utils.counters
    results = []
    for _ in range(2):  # the second compilation reads the first's entry
        torch._dynamo.reset()
        counters.clear()
        torch.manual_seed(0)  # the same dropout both times
        results.append(_loss_and_grads(compiled(model), model, _batch((5, 9, 3), 1), cast))
        aot = dict(counters["aot_autograd"])
        assert aot.get("autograd_cache_hit", 0) + aot.get("autograd_cache_miss", 0) == 1, aot
        assert aot.get("autograd_cache_hit") or aot.get("autograd_cache_saved") == 1, aot
        assert not aot.get("autograd_cache_bypass"), aot
    assert aot.get("autograd_cache_hit") == 1, aot
    (loss, grads), (again, grads_again) = results
    assert torch.equal(loss, again)
    assert all(torch.equal(a, b) for a, b in zip(grads, grads_again, strict=True))


def test_compiling_keeps_the_users_own_cacheable_marks():
    """The autocast region's two calls are marked cacheable next to what the user marked."""
    import torch._inductor.config as inductor

    if not hasattr(inductor, "unsafe_marked_cacheable_functions"):
        pytest.skip("this torch has no unsafe_marked_cacheable_functions")
    seen: dict[str, str] = {}

    class Reads(torch.nn.Module):
        @torch.compiler.disable  # runs as called, inside the compiled call's settings
        def forward(self, x):
            seen.update(inductor.unsafe_marked_cacheable_functions)
            return x

    with inductor.patch(unsafe_marked_cacheable_functions={"mine.f": "1"}):
        compiled(Reads())(torch.zeros(1))
        assert inductor.unsafe_marked_cacheable_functions == {"mine.f": "1"}  # restored
    assert set(seen) == {
        "mine.f",
        *(f"torch.amp.autocast_mode.{f}" for f in ("_enter_autocast", "_exit_autocast")),
    }


def test_the_engine_trains_compiled_and_its_checkpoint_loads_eagerly(tmp_path):
    torch._dynamo.reset()
    data = make_dataset(tmp_path)
    out = tmp_path / "run"
    settings = tiny("transformer") + ["model.n_layers=1", "train.max_steps=3", "train.compile=true"]
    starts = []

    def on_event(kind, record):
        if kind == "start":
            starts.append(record)

    options = TrainOptions(str(out), "transformer", str(data), settings, device="cpu")
    assert train(options, on_event) == "done"
    assert [record["compiled"] for record in starts] == [True]
    run = open_run(out)
    assert run.config.train.compile
    model = run.load_model("last", "cpu")  # the model's own names, not the compiler's
    assert not any("_orig_mod" in name for name in model.state_dict())


def test_the_engine_trains_compiled_by_regions(tmp_path):
    torch._dynamo.reset()
    data = make_dataset(tmp_path)
    out = tmp_path / "run"
    settings = tiny("structformer") + [
        "train.max_steps=2",
        "train.compile=true",
        "train.compile_scope=regions",
    ]
    assert train(TrainOptions(str(out), "structformer", str(data), settings)) == "done"
    assert open_run(out).config.train.compile_scope == "regions"


def test_a_compile_scope_without_compiling_is_refused(tmp_path):
    data = make_dataset(tmp_path)
    settings = tiny("udgn") + ["train.compile_scope=layers"]
    with pytest.raises(ConfigError, match="train.compile_scope applies with train.compile"):
        train(TrainOptions(str(tmp_path / "run"), "udgn", str(data), settings))
    assert not (tmp_path / "run").exists()


def test_objectives_without_a_compiled_step_refuse_it(tmp_path):
    data = make_dataset(tmp_path)
    settings = tiny("chart") + ["train.compile=true"]
    with pytest.raises(ConfigError, match="train.compile compiles the masked LMs"):
        train(TrainOptions(str(tmp_path / "run"), "chart", str(data), settings))
    assert not (tmp_path / "run").exists()
