#!/usr/bin/env python3
"""Benchmark training throughput of ``induce train`` models: tokens/s and peak RSS.

Each measurement runs in a fresh process (so peak RSS is that configuration's own): 4,096-
token batches of sentences whose lengths follow WSJ (section 22 of ``../shared`` when it is
there, a WSJ-like distribution otherwise), masking 0.3, a 10,000-word vocabulary, Adam and
clipping as in training.  It times forward + backward + update after warm-up steps.

    python bench/train.py [--archs transformer,structformer] [--sizes paper,small]
                          [--steps 6] [--warmup 2] [--threads 2] [--device cpu|cuda]
                          [--precision fp32|bf16]

``--precision bf16``: the forward pass under bfloat16 autocast (the default on CUDA; on a CPU
what ``train.cpu_bf16`` does, worth it only where the CPU has hardware bf16).

Reference (issue 5, official StructFormer code, this machine, 2 threads, --pos_emb):
paper size 581 tokens/s, peak RSS 6.4 GB; small (d 256, 4 layers) 2,410 tokens/s, 3.0 GB.
Official UDGN code (issue 6): paper size 495 tokens/s, 5.2 GB; small about 1,480 tokens/s.
Target: at least 2x the tokens/s and lower peak memory.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZES = {"paper": {}, "small": {"d_model": 256, "n_layers": 4, "d_ff": 1024}}
# UDGN has no feed-forward block; its small size keeps the paper's head size (128)
UDGN_SIZES = {"paper": {}, "small": {"d_model": 256, "n_layers": 4}}


def lengths(shared: Path, count: int, rng: random.Random) -> list[int]:
    dev = shared / "data" / "wsj" / "dev22.trees"
    if dev.exists():
        sys.path.insert(0, str(ROOT))
        from induce.data.normalize import load_tagset
        from induce.data.ptb import read_trees

        tags = load_tagset("ptb_word_tags")
        found = [
            sum(t in tags for _, t in tree.pos())
            for tree in read_trees(str(dev)).trees
            if tree is not None
        ]
        found = [n for n in found if n > 0]
        return [rng.choice(found) for _ in range(count)]
    return [max(2, min(120, int(rng.gauss(21, 11)))) for _ in range(count)]


def one(
    arch: str,
    size: str,
    device: str,
    steps: int,
    warmup: int,
    threads: int,
    shared: Path,
    precision: str,
) -> dict:
    import torch
    import torch.nn.functional as F

    sys.path.insert(0, str(ROOT))
    from induce.models import build_model
    from induce.runs.batches import Specials, make_batch, plan_batches

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    rng = random.Random(0)
    vocab = 10_000
    sents = [[rng.randrange(3, vocab) for _ in range(n)] for n in lengths(shared, 20_000, rng)]
    plan = plan_batches([len(s) for s in sents], 4096)
    rng.shuffle(plan)
    specials = Specials(pad=1, unk=0, mask=2)
    settings = dict(UDGN_SIZES[size] if arch == "udgn" else SIZES[size])
    if arch == "transformer":
        settings["attn_dropout"] = 0.1
    model = build_model(arch, settings, vocab, 1).to(device).train()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4, eps=1e-9, weight_decay=1.2e-6)
    gen = torch.Generator().manual_seed(0)
    kind = "cuda" if device.startswith("cuda") else "cpu"
    cast = torch.autocast(kind, dtype=torch.bfloat16) if precision == "bf16" else None
    tokens, began = 0, 0.0
    for k in range(warmup + steps):
        if k == warmup:
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            began, tokens = time.perf_counter(), 0
        b = make_batch(sents, plan[k % len(plan)], specials, 0.3, gen).to(torch.device(device))
        if cast is not None:
            with cast:
                out = model(b.ids, b.keep)
                loss = F.cross_entropy(model.logits(out.hidden[b.masked]).float(), b.targets)
        else:
            out = model(b.ids, b.keep)
            loss = F.cross_entropy(model.logits(out.hidden[b.masked]), b.targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        tokens += b.tokens
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    seconds = time.perf_counter() - began
    peak_gpu = torch.cuda.max_memory_allocated() / 2**30 if device.startswith("cuda") else 0
    return {
        "arch": arch,
        "size": size,
        "device": device,
        "precision": precision,
        "parameters": sum(p.numel() for p in model.parameters()),
        "tokens_per_s": tokens / seconds,
        "steps": steps,
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "peak_gpu_gib": peak_gpu,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--archs", default="transformer,structformer,udgn")
    ap.add_argument("--sizes", default="paper,small")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--precision", choices=["fp32", "bf16"], help="default: bf16 on CUDA")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    precision = args.precision or ("bf16" if args.device.startswith("cuda") else "fp32")
    if args.one:
        print(
            json.dumps(
                one(
                    args.one[0],
                    args.one[1],
                    args.device,
                    args.steps,
                    args.warmup,
                    args.threads,
                    Path(args.shared),
                    precision,
                )
            )
        )
        return
    print(
        f"4,096-token batches, mask 0.3, vocabulary 10,000, {args.threads} threads, "
        f"{args.steps} timed steps after {args.warmup} warm-up, device {args.device}, {precision}"
    )
    print(
        f"{'arch':<13} {'size':<6} {'params':>11} {'tokens/s':>9} {'peak RSS GiB':>13}"
        + (f" {'peak GPU GiB':>13}" if args.device.startswith("cuda") else "")
    )
    for arch in args.archs.split(","):
        for size in args.sizes.split(","):
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--one",
                    arch,
                    size,
                    "--device",
                    args.device,
                    "--steps",
                    str(args.steps),
                    "--warmup",
                    str(args.warmup),
                    "--threads",
                    str(args.threads),
                    "--shared",
                    args.shared,
                    "--precision",
                    precision,
                ],
                capture_output=True,
                text=True,
            )
            if done.returncode:
                print(f"{arch:<13} {size:<6} failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(done.stdout)
            print(
                f"{arch:<13} {size:<6} {r['parameters']:>11,} {r['tokens_per_s']:>9.0f} "
                f"{r['peak_rss_gib']:>13.2f}"
                + (f" {r['peak_gpu_gib']:>13.2f}" if args.device.startswith("cuda") else ""),
                flush=True,
            )


if __name__ == "__main__":
    main()
