#!/usr/bin/env python3
"""Benchmark ``induce parse``: sentences/s for StructFormer and UDGN at the paper size.

Builds a run directory per architecture with freshly initialised weights (parsing speed does
not depend on training) and a vocabulary from WSJ section 22 (``../shared``), then times the
whole command on the 1,700 sentences of ``dev22.trees`` (words only, pre-tokenised), as a
user runs it: start-up, reading, batching, the model, decoding and writing included.

    python bench/parse.py [--threads 2] [--device cpu] [--format conllu] [--shared ../shared]
        [--bf16]

Target (issue 18, item 4): at least 10x the sentences/s of the reference test scripts, which
parse one sentence per forward of the whole model and, for UDGN, run Chu-Liu/Edmonds once per
candidate root: at least 300 sentences/s for StructFormer and 250 for UDGN at paper size on
WSJ section 22.  ``--bf16`` times ``induce parse --bf16`` after each fp32 run (bfloat16 on CUDA
or a CPU with AMX/AVX512-BF16); ``bench/side_by_side.py --parse`` times the library loop against
the official code itself.
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


def make_run(folder: Path, arch: str, words: list[list[str]]) -> None:
    from collections import Counter

    import torch

    from induce.data.vocab import PAD, build_vocabulary
    from induce.models import build_model
    from induce.runs.config import load_config
    from induce.runs.directory import write_run_files
    from induce.runs.weights import save_weights

    vocab = build_vocabulary(Counter(w for s in words for w in s), max_size=10_000)
    config = load_config(arch)
    torch.manual_seed(0)
    model = build_model(arch, config.model, len(vocab), vocab.id(PAD))
    folder.mkdir(parents=True)
    write_run_files(folder, config, vocab, {"normalization": {"lowercase": True, "digits": "N"}})
    save_weights(model, folder / "best" / "model.safetensors", vocab)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--format", default="conllu")
    ap.add_argument("--archs", default="structformer,udgn")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--bf16", action="store_true", help="also time parse --bf16")
    ap.add_argument(
        "--reference-style",
        type=int,
        default=300,
        metavar="N",
        help="also time an emulation of the reference scripts' scheme on the "
        "first N sentences (0: skip)",
    )
    args = ap.parse_args()
    from induce.data.ptb import read_trees

    dev = Path(args.shared) / "data" / "wsj" / "dev22.trees"
    if not dev.exists():
        sys.exit(f"needs {dev}")
    from induce.data.normalize import load_tagset

    tags = load_tagset("ptb_word_tags")
    words = [
        [w for w, t in tree.pos() if t in tags]
        for tree in read_trees(str(dev)).trees
        if tree is not None
    ]
    words = [s for s in words if s]
    induce = Path(sys.executable).with_name("induce")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "dev22.txt"
        text.write_text("".join(" ".join(s) + "\n" for s in words))
        print(
            f"{len(words)} sentences of WSJ section 22, {args.threads} threads, "
            f"device {args.device}, --format {args.format}"
        )
        print(
            f"{'arch':<13} {'decoder':<16} {'precision':<9} {'seconds':>8} {'sent/s':>8} "
            f"{'CPU s':>7} {'peak RSS MiB':>13}"
        )
        for arch in args.archs.split(","):
            run = Path(tmp) / arch
            make_run(run, arch, words)
            decoders = (
                ["argmax", "algorithm3"]
                if arch == "structformer"
                else ["mst-uniform-root", "mst", "eisner"]
            )
            for decoder, bf16 in [(d, b) for d in decoders for b in [False] + [True] * args.bf16]:
                began = time.perf_counter()
                cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu_before = cpu.ru_utime + cpu.ru_stime
                before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                done = subprocess.run(
                    [
                        str(induce),
                        "parse",
                        str(text),
                        "-m",
                        str(run),
                        "--pretokenized",
                        "-f",
                        args.format,
                        "--device",
                        args.device,
                        "--decoder",
                        decoder,
                        "-o",
                        str(Path(tmp) / "out"),
                        *(["--bf16"] if bf16 else []),
                    ],
                    env=env,
                    capture_output=True,
                    text=True,
                )
                seconds = time.perf_counter() - began
                precision = "bf16" if bf16 else "fp32"
                if done.returncode:
                    print(
                        f"{arch:<13} {decoder:<16} {precision:<9} failed: "
                        f"{done.stderr.strip()[-300:]}"
                    )
                    continue
                usage = resource.getrusage(resource.RUSAGE_CHILDREN)
                peak = max(before, usage.ru_maxrss)
                cpu_seconds = usage.ru_utime + usage.ru_stime - cpu_before
                print(
                    f"{arch:<13} {decoder:<16} {precision:<9} {seconds:>8.2f} "
                    f"{len(words) / seconds:>8.0f} {cpu_seconds:>7.1f} {peak / 1024:>13.0f}",
                    flush=True,
                )
            if args.reference_style and arch == "udgn":
                subset = words[: args.reference_style]
                seconds = reference_style(run, subset, args.threads)
                print(
                    f"{arch:<13} {'ref-style':<16} {'fp32':<9} {seconds:>8.2f} "
                    f"{len(subset) / seconds:>8.0f} {'':>7} {'':>13}  (first {len(subset)} "
                    f"sentences: batch of 1, MST once per candidate root)",
                    flush=True,
                )


def reference_style(run: Path, words: list[list[str]], threads: int) -> float:
    """Seconds to parse ``words`` the way the reference test scripts do: one sentence per
    forward pass, Chu-Liu/Edmonds run once per candidate root word, best total kept.  Our
    model and CLE, their scheme: a same-machine stand-in for the side-by-side review."""
    import numpy as np
    import torch

    from induce.decode.dependencies import _chu_liu_edmonds, arc_scores
    from induce.runs import open_run

    torch.set_num_threads(threads)
    run_ = open_run(run)
    model = run_.load_model("best", "cpu")
    began = time.perf_counter()
    with torch.no_grad():
        for sentence in words:
            ids = torch.tensor([run_.vocab.ids(sentence)])
            out = model.structure(ids, torch.ones_like(ids, dtype=torch.bool))
            s = arc_scores(out.parents[0].numpy(), out.roots[0].numpy())
            n = len(sentence)
            best = -np.inf
            for root in range(n):
                w = np.full((n + 1, n + 1), -np.inf)
                w[1:, 1:] = s[:, 1:].T
                w[0, root + 1] = s[root, 0]
                np.fill_diagonal(w, -np.inf)
                heads = _chu_liu_edmonds(w)
                total = w[heads[1:], np.arange(1, n + 1)].sum()
                best = max(best, total)
    return time.perf_counter() - began


if __name__ == "__main__":
    main()
