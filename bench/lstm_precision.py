#!/usr/bin/env python3
"""UDGN's parser BiLSTM alone, forward and backward under bf16 autocast, in each
``model.lstm_precision``: what the LSTM costs a bf16 training step in bf16 (``auto`` on these
GPUs), in the fp16 that PyTorch's autocast picks for cuDNN (``autocast``; PyTorch opens
cuDNN's persistent LSTM kernels to fp16 inputs alone, for up to 128 rows a multiple of 8)
and in fp32 (``float32``, TF32 where PyTorch's cuDNN default allows it).

    python bench/lstm_precision.py [--device cuda] [--size paper|small] [--steps 20]
        [--warmup 3] [--rounds 3] [--precisions auto,autocast,float32] [--set KEY=VALUE ...]
        [--json OUT]

The LSTM is the preset's (``udgn-ptb-paper``: 3 layers of 512 a direction) with its dropout
between layers, on random inputs ``[B, L, D]`` shaped as the training step's CUDA graphs
take the timed batches of ``bench/side_by_side.py`` (the same ``--steps`` and ``--warmup``,
each batch padded to its bucket, ``induce.train.graphs.bucket``).  On a GPU each shape's
forward and backward is captured once in a CUDA graph per precision and replayed in the
batches' order, as training replays it, timed by CUDA events; the median of ``--rounds``.
On a CPU (a dry run) it runs eagerly; ``auto`` and ``autocast`` run the LSTM in bf16 there,
which needs hardware bf16 (AMX or AVX512-BF16).  Prints, per precision, the dtype the LSTM
ran in, the milliseconds of a step's LSTM, the ratio to ``autocast``, and the largest
difference of its outputs from fp32's on the first batch.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

# bench/ is not a package: its modules are imported from the path set above
from sides import induce_config, induce_model  # noqa: E402
from workload import batches, corpus, specials  # noqa: E402

PRECISIONS = ("auto", "autocast", "float32")


def shapes(args: argparse.Namespace) -> list[Any]:
    """The timed batches' ``keep [B, L]`` masks, each padded to its CUDA graph's bucket."""
    from induce.train.graphs import Buckets, bucket

    work = batches(corpus(Path(args.shared), 20_000), args.warmup + args.steps)[args.warmup :]
    return [bucket(b, Buckets(), specials()).keep for b in work]


def persistent_shape(rows: int) -> bool:
    """Whether PyTorch would give an fp16 call of ``rows`` sentences cuDNN's persistent LSTM
    kernel on an H100 or H200 (its ``use_persist_device_heuristics`` for compute capability
    8.0 and up: a multiple of 8, at most 128; UDGN's dense calls meet the rest: one layer,
    one direction, widths multiples of 128)."""
    return rows % 8 == 0 and rows <= 128


def forward(model: Any, x: Any, keep: Any, precision: str) -> Any:
    """The BiLSTM's forward under bf16 autocast in ``precision``, as the model calls it."""
    import torch

    from induce.models.bilstm import lstm_dtype, padded_bilstm

    with torch.autocast(x.device.type, dtype=torch.bfloat16, cache_enabled=False):
        dtype = lstm_dtype(precision, x.device)
        return padded_bilstm(model.lstm, x, keep, model.parser_drop, dtype)


def step(model: Any, x: Any, keep: Any, precision: str) -> Any:
    """``forward`` and its backward from a fixed gradient; returns the output."""
    out = forward(model, x, keep, precision)
    out.float().sum().backward()
    return out


def graphs(model: Any, inputs: dict[tuple[int, int], Any], precision: str) -> dict[Any, Any]:
    """One CUDA graph per shape of ``step`` in ``precision``, captured after warm-ups on a
    side stream (as capture asks)."""
    import torch

    captured = {}
    for key, (x, keep) in inputs.items():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step(model, x, keep, precision)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step(model, x, keep, precision)
        captured[key] = graph
    return captured


def timed(run: Callable[[], None], device: Any) -> float:
    """Seconds of ``run()``: CUDA events on a GPU, the wall clock on a CPU."""
    import torch

    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1000
    began = time.perf_counter()
    run()
    return time.perf_counter() - began


def measure(model: Any, masks: list[Any], precision: str, args: argparse.Namespace) -> float:
    """Milliseconds of a step's BiLSTM in ``precision``: the median round's mean batch."""
    import torch

    device = torch.device(args.device)
    torch.manual_seed(0)
    inputs = {}
    for keep in masks:
        if tuple(keep.shape) not in inputs:
            x = torch.randn(*keep.shape, model.lstm.input_size, device=device)
            inputs[tuple(keep.shape)] = (x.requires_grad_(), keep.to(device))
    if device.type == "cuda":
        captured = graphs(model, inputs, precision)

        def run() -> None:
            for keep in masks:
                captured[tuple(keep.shape)].replay()
    else:

        def run() -> None:
            for keep in masks:
                x, k = inputs[tuple(keep.shape)]
                step(model, x, k, precision)

        run()  # a first pass: oneDNN prepares its kernels (on a GPU the capture did)
    rounds = [timed(run, device) for _ in range(args.rounds)]
    model.zero_grad(set_to_none=True)
    return 1000 * statistics.median(rounds) / len(masks)


def difference(model: Any, keep: Any, precision: str, device: Any) -> tuple[str, float]:
    """The dtype the LSTM runs in for ``precision`` and its outputs' largest difference from
    fp32's (no autocast, dropout off) on one batch."""
    import torch

    from induce.models.bilstm import padded_bilstm

    torch.manual_seed(1)
    x = torch.randn(*keep.shape, model.lstm.input_size, device=device)
    keep = keep.to(device)
    model.eval()
    with torch.no_grad():
        exact = padded_bilstm(model.lstm, x, keep, model.parser_drop)
        out = forward(model, x, keep, precision)
    model.train()
    return str(out.dtype).removeprefix("torch."), float((out.float() - exact).abs().max())


def refusal(args: argparse.Namespace) -> str | None:
    """Why the arguments cannot run (one line), before any model is built; else None."""
    from induce.data.errors import ConfigError

    if args.steps < 1 or args.warmup < 0 or args.rounds < 1:
        return "--steps and --rounds must be at least 1, --warmup at least 0"
    unknown = [p for p in args.precisions.split(",") if p not in PRECISIONS]
    if unknown:
        return f"--precisions: {unknown[0]!r} is not one of {', '.join(PRECISIONS)}"
    if args.device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            return "--device cuda: CUDA is not available here"
    try:
        induce_config("udgn", args.size, args.set)
    except ConfigError as e:
        return f"--set: {e}"
    if not args.device.startswith("cuda") and _bf16_on_cpu(args.precisions.split(",")):
        return (
            "--device cpu: this CPU has no hardware bf16, and oneDNN no bf16 LSTM without it: "
            "use --precisions float32"
        )
    return None


def _bf16_on_cpu(precisions: list[str]) -> bool:
    """Whether ``precisions`` ask a CPU for a bf16 LSTM (``auto`` and ``autocast`` run it in
    bf16 there) that this CPU cannot run."""
    from induce.runs.device import cpu_has_fast_bf16

    return bool({"auto", "autocast"} & set(precisions)) and not cpu_has_fast_bf16()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu (a dry run)")
    ap.add_argument("--size", default="paper", choices=["paper", "small"])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3, help="batches before the timed ones")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--precisions", default=",".join(PRECISIONS))
    ap.add_argument("--set", action="append", default=[], help="induce setting KEY=VALUE")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    problem = refusal(args)
    if problem:
        print(f"lstm_precision: {problem}", file=sys.stderr)
        sys.exit(2)
    import torch

    device = torch.device(args.device)
    model, _ = induce_model("udgn", args.size, args.set)
    model = model.to(device).train()
    masks = shapes(args)
    rows = ", ".join(f"{k.shape[0]}x{k.shape[1]}" for k in masks[:4])
    persistent = sum(persistent_shape(k.shape[0]) for k in masks)
    print(f"UDGN's parser BiLSTM ({model.lstm.num_layers} layers of {model.lstm.hidden_size}), "
          f"forward and backward, {len(masks)} batches ({rows}, ...), {args.device}, "
          f"median of {args.rounds} rounds; {persistent} of the batches of a size for fp16's "
          "persistent kernels")  # fmt: skip
    figures = {}
    for precision in args.precisions.split(","):
        dtype, diff = difference(model, masks[0], precision, device)
        figures[precision] = {"ms": measure(model, masks, precision, args), "dtype": dtype}
        figures[precision]["max_diff_from_fp32"] = diff
    base = figures.get("autocast", {}).get("ms")
    print(f"{'precision':<10} {'runs in':<9} {'ms/step':>8} {'vs autocast':>12} {'max |diff|':>11}")
    for precision, f in figures.items():
        ratio = f"{f['ms'] / base:.2f}x" if base else "-"
        print(
            f"{precision:<10} {f['dtype']:<9} {f['ms']:>8.3f} {ratio:>12} "
            f"{f['max_diff_from_fp32']:>11.2e}",
            flush=True,
        )
    if args.json:
        found = {"batches": len(masks), "persistent_batches": persistent, "precisions": figures}
        Path(args.json).write_text(json.dumps(found, indent=1) + "\n")


if __name__ == "__main__":
    main()
