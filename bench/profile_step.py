#!/usr/bin/env python3
"""Where a training step's time goes: the ``torch.profiler`` table of ``induce``'s training
step (the engine's loss, backward, clipping, Adam) on the batches of
``bench/side_by_side.py`` (``bench/workload.py``).

    python bench/profile_step.py --arch udgn [--size paper] [--steps 3] [--threads 2]
        [--device cpu|cuda] [--compile] [--graphs] [--set train.cpu_bf16=true] [--rows 15]

Prints tokens/s over the profiled steps and the operators sorted by their own time on the
device (CPU time on CPU; on CUDA, kernel time, with the kernel launches per step and the
share of the wall time the GPU was busy: a step of these small models on a GPU is bound by
launches rather than arithmetic).  ``--compile``: the model as ``train.compile`` compiles it
(``induce.train.graphs.compiled``), compiled in the warm-up steps, outside the profile.
``--graphs`` (CUDA): the step replayed from CUDA graphs as the engine runs it
(``GraphedLoss``), every profiled batch captured once in the warm-up, so that the table is of
replays: the kernels a graph launches, by kernel name (a replay has no operators).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

# bench/ is not a package: its modules are imported from the path set above
from sides import PRESETS, induce_model  # noqa: E402
from workload import batches, corpus, specials  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="udgn", choices=sorted(PRESETS))
    ap.add_argument("--size", default="paper", choices=["paper", "small"])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model")
    ap.add_argument("--graphs", action="store_true", help="replay the step from CUDA graphs")
    ap.add_argument("--rows", type=int, default=15)
    ap.add_argument("--set", action="append", default=[], help="induce setting KEY=VALUE")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = ap.parse_args()
    if args.graphs and not args.device.startswith("cuda"):
        print("profile_step: --graphs needs --device cuda", file=sys.stderr)
        sys.exit(2)

    import torch
    from torch.profiler import ProfilerActivity, profile

    from induce.runs.device import autocast
    from induce.runs.inference import masked_lm_training_loss
    from induce.train.engine import build_optimizer
    from induce.train.graphs import GraphedLoss, compiled

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    warm = 4 if args.compile else 2  # compiling: a static graph, then the dynamic one
    work = batches(corpus(Path(args.shared), 20_000), args.steps + warm)
    # compiled: the profiled batches once first, so that none compiles inside the profile
    # (a compilation holds for a range of sizes only: bench/side_by_side.py)
    first = work[warm:] if args.compile else []
    model, config = induce_model(args.arch, args.size, args.set)
    model = model.to(device)
    scope = config.train.compile_scope  # --set train.compile_scope=regions|layers
    net = compiled(model, model.compile_regions(scope)) if args.compile else model
    optimizer = build_optimizer(model, config.optim)[0]
    t = config.train

    def cast() -> Any:  # no cast cached across a graph's capture
        return autocast(device, t.bf16, t.cpu_bf16, cache=not args.graphs)

    graphed = GraphedLoss(net, model, cast, specials(), device) if args.graphs else None

    def step(batch: Any) -> None:  # the engine's train_step and update
        if graphed is not None:
            optimizer.zero_grad(set_to_none=False)  # the graphs' .grad tensors stay
            graphed(batch)
        else:
            optimizer.zero_grad(set_to_none=True)
            masked_lm_training_loss(net, model, batch.to(device), cast).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.optim.clip)
        optimizer.step()

    # warm-up (kernels chosen, memory cached; with graphs, every profiled batch's graph
    # captured), outside the profile
    for batch in first + work[:warm] + (work[warm:] if graphed is not None else []):
        step(batch)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        if cuda:
            torch.cuda.synchronize(device)
        began, tokens = time.perf_counter(), 0
        for batch in work[warm:]:
            step(batch)
            tokens += batch.tokens
        if cuda:
            torch.cuda.synchronize(device)
        seconds = time.perf_counter() - began
    events = prof.key_averages()
    launches = sum(e.count for e in events if e.key.startswith(LAUNCHES))
    # kernels' (and copies') own time over the wall time: the operators that launched them
    # carry the same time as theirs, so only events on the device count
    busy = sum(_device_time(e) for e in events if _on_device(e)) / 1e6 / seconds
    print(
        f"{args.arch} {args.size} on {args.device}{' compiled' if args.compile else ''}"
        f"{', CUDA graphs' if args.graphs else ''}, "
        f"{' '.join(args.set) or 'fp32'}: {tokens / seconds:.0f} tokens/s over {args.steps} "
        "steps (under the profiler)"
        + (
            f"; {launches / args.steps:.0f} kernel launches and {1e3 * seconds / args.steps:.1f}"
            f" ms per step, the GPU busy {100 * busy:.0f}% of it"
            if cuda
            else ""
        )
    )
    key = "self_cpu_time_total"
    if cuda:
        key = (
            "self_device_time_total"
            if hasattr(events[0], "self_device_time_total")
            else ("self_cuda_time_total")
        )
    print(events.table(sort_by=key, row_limit=args.rows))


LAUNCHES = ("cudaLaunchKernel", "cuLaunchKernel", "cudaGraphLaunch")


def _on_device(event: Any) -> bool:
    from torch.autograd import DeviceType

    return bool(getattr(event, "device_type", None) == DeviceType.CUDA)


def _device_time(event: Any) -> float:
    """An operator's own time on the GPU in microseconds (the name changed in torch 2.4)."""
    value = getattr(event, "self_device_time_total", None)
    if value is None:
        value = getattr(event, "self_cuda_time_total", 0.0)
    return float(value)


if __name__ == "__main__":
    main()
