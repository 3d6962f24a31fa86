#!/usr/bin/env python3
"""Where a training step's time goes: the ``torch.profiler`` table of ``induce``'s training
step (the engine's loss, backward, clipping, Adam) on the batches of
``bench/side_by_side.py``.

    python bench/profile_step.py --arch udgn [--size paper] [--steps 3] [--threads 2]
        [--set train.cpu_bf16=true] [--rows 15]

Prints tokens/s over the profiled steps and the operators sorted by their own CPU time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import side_by_side as sbs  # noqa: E402  (bench/ is not a package)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="udgn", choices=sorted(sbs.PRESETS))
    ap.add_argument("--size", default="paper", choices=["paper", "small"])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rows", type=int, default=15)
    ap.add_argument("--set", action="append", default=[], help="induce setting KEY=VALUE")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = ap.parse_args()

    import torch
    from torch.profiler import ProfilerActivity, profile

    from induce.runs.device import autocast
    from induce.train.engine import build_optimizer, masked_lm_training_loss

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    work = sbs.batches(sbs.corpus(Path(args.shared), 20_000), args.steps + 1)
    model, config = sbs.induce_model(args.arch, args.size, args.set)
    optimizer = build_optimizer(model, config.optim)[0]
    cpu, t = torch.device("cpu"), config.train

    def step(batch: Any) -> None:
        loss = masked_lm_training_loss(
            model, model, batch, lambda: autocast(cpu, t.bf16, t.cpu_bf16)
        )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.optim.clip)
        optimizer.step()

    step(work[0])  # warm-up, outside the profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        began, tokens = time.perf_counter(), 0
        for batch in work[1:]:
            step(batch)
            tokens += batch.tokens
        seconds = time.perf_counter() - began
    print(
        f"{args.arch} {args.size}, {args.threads} threads, {' '.join(args.set) or 'fp32'}: "
        f"{tokens / seconds:.0f} tokens/s over {args.steps} steps (under the profiler)"
    )
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows))


if __name__ == "__main__":
    main()
