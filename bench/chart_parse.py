#!/usr/bin/env python3
"""Benchmark ``induce parse`` with a chart parser: sentences/s on WSJ section 22.

Times the whole command on the 1,700 trees of ``dev22.trees`` (their words and tags, as the
paper parses its dev set), start-up, reading, batching, the model, CKY and writing included,
for a trained run (``--run RUN``) or, without one, a paper-size model (preset
``chart-ptb-paper``) with fresh weights and inventories from section 22 itself (speed does not
depend on training).  The paper: 1,700 sentences in 8 s on a K80 GPU (212 sentences/s).

    python bench/chart_parse.py [--run RUN] [--threads 2] [--device cpu] [--repeat 2] [--bf16]

With ``--bf16`` each repetition times fp32 and then ``parse --bf16`` (bf16 only pays on CUDA
or on CPUs with AMX/AVX512-BF16).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def make_run(folder: Path, dev: Path) -> None:
    import torch

    from induce.data.ptb import read_trees
    from induce.models import build_model
    from induce.runs.chart import example, inventories
    from induce.runs.config import load_config
    from induce.runs.directory import write_pointer, write_run_files
    from induce.runs.weights import save_weights
    from induce.structure.chart import clean_tree

    examples = []
    for tree in read_trees(dev).trees:
        clean = clean_tree(tree) if tree is not None else None
        if clean is not None:
            examples.append(example(clean))
    vocab, found = inventories(examples)
    config = load_config("chart")
    model = {**config.model, **{k: list(v) for k, v in found.items()}}
    config = load_config("chart", base={**config.to_dict(), "model": model})
    torch.manual_seed(0)
    parser = build_model("chart", config.model, len(vocab), vocab.id("<pad>"))
    folder.mkdir(parents=True)
    write_run_files(folder, config, vocab, {})
    save_weights(parser, folder / "checkpoints" / "0" / "model.safetensors", vocab)
    write_pointer(folder, 0, "checkpoints/0", "checkpoints/0")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", help="a trained chart run (default: fresh paper-size weights)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--bf16", action="store_true", help="also time parse --bf16")
    args = ap.parse_args()
    dev = Path(args.shared) / "data" / "wsj" / "dev22.trees"
    if not dev.exists():
        sys.exit(f"needs {dev}")
    induce = Path(sys.executable).with_name("induce")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(args.run) if args.run else Path(tmp) / "chart"
        if not args.run:
            make_run(run, dev)
        print(f"1700 sentences of WSJ section 22, {args.threads} threads, device {args.device}")
        print(
            f"{'run':<30} {'precision':<9} {'seconds':>8} {'sent/s':>8} {'CPU s':>7} "
            f"{'peak RSS MiB':>13}"
        )
        name = str(args.run or "paper size, fresh weights")[-30:]
        for _ in range(args.repeat):
            for extra in [[]] + ([["--bf16"]] if args.bf16 else []):
                command = [str(induce), "parse", str(dev), "-m", str(run), "--format", "ptb"]
                command += ["--device", args.device, "-q", "-o", str(Path(tmp) / "out.ptb")]
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                began = time.perf_counter()
                done = subprocess.run(command + extra, env=env, capture_output=True, text=True)
                seconds = time.perf_counter() - began
                if done.returncode:
                    sys.exit(done.stderr.strip()[-500:])
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                peak = after.ru_maxrss / 1024
                precision = "bf16" if extra else "fp32"
                print(
                    f"{name:<30} {precision:<9} {seconds:>8.2f} {1700 / seconds:>8.1f} "
                    f"{cpu:>7.1f} {peak:>13.0f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
