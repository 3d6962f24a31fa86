"""CUDA graphs for the masked-LM training step: forward, loss and backward captured once per
batch shape and replayed for every later batch of that shape.

Why.  At the papers' size a training step on an H100 is bound by the host, not the GPU: about
1,200-1,600 kernels per step, each launched through Python, the dispatcher and autograd,
leave the GPU busy a quarter of the time (``bench/profile_step.py --device cuda``).  A graph
replays all of a step's kernels in one launch.

Shapes.  A graph runs one shape, and batches cut under a token budget come in as many shapes
as there are batches.  :func:`bucket` pads a batch up to a few shapes: the padded length to a
multiple of ``length``, the rows to ``rows`` steps per octave (64, 68, 72, ... 608, 640) with
one-word sentences that mask nothing, the masked positions to a multiple of ``targets``
(extra targets ``IGNORE``, at position 0).  Each padded row is its own sentence and no
target reads it, so the loss and the gradients are those of the batch as it came, to float
rounding (every model keeps sentences apart: attention, parsers and calibration are per
sentence).

Replayed, the step is bound by the GPU, so every padded cell costs its share of the time.
On WSJ section 22's lengths with the official 4,096-token batches (101 batches, 2.2% padding
of their own), the defaults make 47 shapes with 4.8% more cells than the batches; the first
choice (length to a multiple of 8, 8 row sizes an octave) made 28 shapes with 22% more.

Use.  Gradients accumulate into ``.grad`` tensors that exist before the first capture and
are never freed: zero them with ``optimizer.zero_grad(set_to_none=False)`` before each call;
clip and step the optimizer after it, outside the graph (the fused Adam is a few launches).
"""

from __future__ import annotations

import contextlib
import math
import typing
from dataclasses import dataclass

import torch

from induce.models.masked_lm import MaskedLM
from induce.runs.batches import Batch, Specials
from induce.runs.inference import Cast, masked_lm_training_loss

IGNORE = -100  # F.cross_entropy's default ignore_index: a padded target counts nowhere


@dataclass(frozen=True)
class Buckets:
    """How far shapes are rounded up: padded length to a multiple of ``length``; rows to
    ``rows`` steps per octave; masked positions to a multiple of ``targets``."""

    length: int = 2
    rows: int = 16
    targets: int = 64

    def __post_init__(self) -> None:
        if min(self.length, self.rows, self.targets) < 1:
            raise ValueError("bucket sizes must be positive")


def round_rows(n: int, steps: int) -> int:
    """The smallest ``m * 2^e >= n`` with ``steps <= m < 2 * steps`` (or ``n`` itself when
    ``n < 2 * steps``): ``steps`` sizes per octave, at most ``1 / steps`` padding."""
    e = 0
    while math.ceil(n / 2**e) >= 2 * steps:
        e += 1
    return math.ceil(n / 2**e) * 2**e


def bucket(batch: Batch, buckets: Buckets, specials: Specials) -> Batch:
    """``batch`` padded to its bucket's shape (CPU tensors in, CPU tensors out): padding
    columns, one-word sentences (``<unk>``, nothing masked) as extra rows, ``IGNORE``
    targets at position 0 as extra masked positions."""
    b, n = batch.ids.shape
    rows, length = round_rows(b, buckets.rows), math.ceil(n / buckets.length) * buckets.length
    m = batch.targets.numel()
    targets = max(buckets.targets, math.ceil(m / buckets.targets) * buckets.targets)
    ids = torch.full((rows, length), specials.pad, dtype=batch.ids.dtype)
    ids[:b, :n] = batch.ids
    ids[b:, 0] = specials.unk
    keep = torch.zeros((rows, length), dtype=torch.bool)
    keep[:b, :n] = batch.keep
    keep[b:, 0] = True
    masked = torch.zeros((rows, length), dtype=torch.bool)
    masked[:b, :n] = batch.masked
    # a masked position's row in [B * L] changes with the padded length
    row, col = batch.masked_rows // n, batch.masked_rows % n
    masked_rows = torch.zeros(targets, dtype=batch.masked_rows.dtype)
    masked_rows[:m] = row * length + col
    padded_targets = torch.full((targets,), IGNORE, dtype=batch.targets.dtype)
    padded_targets[:m] = batch.targets
    return Batch(ids, keep, masked, padded_targets, batch.index, masked_rows)


@dataclass
class _Graph:
    graph: torch.cuda.CUDAGraph
    inputs: Batch  # the static tensors the graph reads: new batches are copied into them
    loss: torch.Tensor


class GraphedLoss:
    """``loss = graphed(batch)``: the masked-LM loss of a CPU ``batch`` and its gradients
    accumulated into the model's ``.grad``, through a CUDA graph of the batch's bucket.  The
    first batch of a bucket runs eagerly (its own update is exact) and is then captured; the
    graphs share one memory pool, safe because they run one at a time.  ``cast`` opens the
    precision context; under autocast it must not cache casts across a capture (pass
    ``torch.autocast(..., cache_enabled=False)``)."""

    def __init__(
        self,
        net: torch.nn.Module,
        model: MaskedLM,
        cast: Cast,
        specials: Specials,
        device: torch.device,
        buckets: Buckets | None = None,
    ) -> None:
        if device.type != "cuda":
            raise ValueError("CUDA graphs need a CUDA device")
        self.net, self.model, self.cast = net, model, cast
        self.specials, self.device = specials, device
        self.buckets = buckets or Buckets()
        self.graphs: dict[tuple[int, ...], _Graph] = {}
        self.pool = torch.cuda.graph_pool_handle()
        self.side = torch.cuda.Stream(device)

    def _loss(self, batch: Batch) -> torch.Tensor:
        return masked_lm_training_loss(self.net, self.model, batch, self.cast)

    def __call__(self, batch: Batch) -> torch.Tensor:
        if not batch.targets.numel():
            # nothing masked: the engine's zero loss, eagerly (padded with IGNORE targets
            # alone, the mean over no target would be NaN)
            loss = self._loss(batch.to(self.device))
            loss.backward()
            return loss.detach()
        padded = bucket(batch, self.buckets, self.specials)
        key = (*padded.ids.shape, padded.targets.numel())
        found = self.graphs.get(key)
        if found is None:
            return self._run_and_capture(key, padded)
        for static, new in zip(_tensors(found.inputs), _tensors(padded), strict=True):
            static.copy_(new.pin_memory(), non_blocking=True)
        found.graph.replay()
        return found.loss.detach().clone()  # the pool's memory is the next graph's

    def _run_and_capture(self, key: tuple[int, ...], padded: Batch) -> torch.Tensor:
        inputs = padded.to(self.device)
        # eager on a side stream first: the update of this batch, and the warm-up that
        # capture asks for (libraries' lazy set-up happens outside the graph)
        self.side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(self.side):
            loss = self._loss(inputs)
            loss.backward()
            result = loss.detach().clone()
        torch.cuda.current_stream(self.device).wait_stream(self.side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.pool):
            captured = self._loss(inputs)
            captured.backward()
        self.graphs[key] = _Graph(graph, inputs, captured)
        return result


def compiled(
    net: torch.nn.Module, regions: typing.Sequence[tuple[torch.nn.Module, str]] | None = None
) -> torch.nn.Module:
    """``net`` under ``torch.compile`` with dynamic shapes (``train.compile``): one
    compilation for every batch shape (on a CPU up to four: inductor's C++ code sums more
    than 4,096 float32 values through a cascade, a guard on the summed size, which is the
    batch's cells in StructFormer's layers, and in UDGN's also its padded length squared),
    its kernels captured by :class:`GraphedLoss` like the eager ones.  The models keep
    their compiled forward free of what fixes a length: their dropout is ``F.dropout`` and
    the convolutions of StructFormer's parser and the Combiner's gate are products over
    windows when compiling (``torch.compiler.is_compiling``).  UDGN's BiLSTM runs between
    two compiled graphs, its two-stream layer eagerly (``torch.compiler.disable``).
    ``regions`` (``train.compile_scope`` other than ``model``:
    :meth:`MaskedLM.compile_regions`): only those methods are compiled, each on its own,
    and ``net`` runs eagerly around them.  See :class:`_Compiled` for the Python floats."""
    return _Compiled(net, regions)


class _Compiled(torch.nn.Module):
    """``torch.compile(net, dynamic=True)``, or each of ``regions`` compiled alone, traced
    with Python floats as constants.

    With ``dynamic=True`` Dynamo makes every float it reads (a dropout rate, a module's
    setting) a symbolic input, then finds each fixed by a guard, drops them and traces the
    whole forward again: a second trace and AOTAutograd pass, and entries of its on-disk
    cache that are never hit.  Floats as constants (``specialize_float``, set around each
    call of this module, which reads it only when it traces) halve the trace; on a CPU,
    StructFormer small compiles in 47.5 s instead of 59.1, and in fp32 from a warm cache in
    3.5 s instead of 11.3 (``bench/RESULTS.md``).  Shapes stay dynamic.

    Under bf16 autocast the graph holds the models' fp32 regions (``full_precision``: an
    autocast region's entry and exit), which AOTAutograd's on-disk cache refuses as calls it
    has not vetted, so a bf16 step traced its joint graph again in every process.  They are
    marked cacheable (torch's ``unsafe_marked_cacheable_functions``, read when the forward is
    traced): the region's settings are constants of the graph, which the cache key holds, as
    it holds the autocast state the step runs under.  On a CPU, StructFormer small in bf16
    from a warm cache: 3.5 s instead of 12.7 (``bench/RESULTS.md``).

    Regions.  A region's compiled method is set on its module for the length of this
    module's call only (an attribute of the instance, over the class's method), so that the
    model stays eager everywhere else (validation, parsing, a copy) and its parameters keep
    their names.  Dynamo keys what it compiled by the code, not the instance: the layers of
    a stack, which run the same code on weights it takes as inputs, compile once."""

    def __init__(
        self,
        net: torch.nn.Module,
        regions: typing.Sequence[tuple[torch.nn.Module, str]] | None = None,
    ) -> None:
        super().__init__()
        if regions is None:
            self.compiled = torch.compile(net, dynamic=True)
            self.regions: list[tuple[torch.nn.Module, str, typing.Callable[..., typing.Any]]] = []
        else:
            self.compiled = net
            self.regions = [
                (module, name, torch.compile(getattr(module, name), dynamic=True))
                for module, name in regions
            ]

    def forward(self, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
        import torch._inductor.config as inductor  # torch.compile imported it already

        floats = _patched(torch._dynamo.config, specialize_float=True)
        marked = getattr(inductor, "unsafe_marked_cacheable_functions", {})  # the user's too
        regions = _patched(inductor, unsafe_marked_cacheable_functions=marked | _AUTOCAST_REGION)
        with floats, regions, self._regions_in_place():
            return self.compiled(*args, **kwargs)

    @contextlib.contextmanager
    def _regions_in_place(self) -> typing.Iterator[None]:
        for module, name, fn in self.regions:
            object.__setattr__(module, name, fn)
        try:
            yield
        finally:
            for module, name, _ in self.regions:
                object.__delattr__(module, name)


# an autocast region in a traced graph: its entry and exit as Dynamo records them, keyed by
# torch's version (the key is part of the cache's)
_AUTOCAST_REGION = {
    f"torch.amp.autocast_mode.{name}": torch.__version__
    for name in ("_enter_autocast", "_exit_autocast")
}


def _patched(config: typing.Any, **settings: typing.Any) -> typing.ContextManager[object]:
    """``config.patch(**settings)``, or nothing on a torch without one of the settings."""
    if all(hasattr(config, key) for key in settings):
        return typing.cast(typing.ContextManager[object], config.patch(**settings))
    return contextlib.nullcontext()


def _tensors(batch: Batch) -> tuple[torch.Tensor, ...]:
    return (batch.ids, batch.keep, batch.masked, batch.targets, batch.masked_rows)
