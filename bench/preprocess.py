#!/usr/bin/env python3
"""Benchmark ``induce preprocess ptb`` and ``induce preprocess bllip`` on synthetic corpora.

The corpora repeat real trees (the WSJ sample of ``../shared`` when it is there, induce's own
sample treebank otherwise) in shuffled order: a PTB-shaped tree (``parsed/mrg/wsj/NN/``, LDC
multi-line files of 100 trees) and a BLLIP-shaped one (``1987/w7_NNN/`` article files with
``(S1 ...)`` trees one per line).  Each whole command is timed at two corpus sizes, with one and
two worker processes, and its peak resident memory is read from the kernel: the memory must not
grow with the corpus.

    python bench/preprocess.py [--trees 200000] [--shared ../shared]

Target (issue 4): at least 20,000 trees/s; peak RSS flat across sizes.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from induce.data.ptb import read_trees  # noqa: E402
from induce.evaluate.baselines import builtin_treebank  # noqa: E402


def source_trees(shared: Path) -> list[str]:
    sample = shared / "data" / "ptb-sample" / "trees"
    trees = read_trees(sample if sample.exists() else builtin_treebank()).trees
    return [t.to_string() for t in trees if t is not None]


def ldc(tree: str) -> str:
    """Spread a one-line tree over lines as LDC files do."""
    return tree.replace(") (", ")\n    (")


def make_ptb(folder: Path, trees: list[str], count: int, rng: random.Random) -> None:
    per_file = 100
    sections = list(range(25))
    for k in range(0, count, per_file):
        section = sections[(k // per_file) % 25]
        chosen = [trees[rng.randrange(len(trees))] for _ in range(min(per_file, count - k))]
        path = folder / "parsed" / "mrg" / "wsj" / f"{section:02d}"
        path.mkdir(parents=True, exist_ok=True)
        (path / f"wsj_{section:02d}{k // per_file:05d}.mrg").write_text(
            "\n" + "\n".join(ldc(t) for t in chosen) + "\n"
        )


def make_bllip(folder: Path, trees: list[str], count: int, rng: random.Random) -> None:
    layout = {1987: range(1, 128), 1988: range(1, 109), 1989: range(10, 42)}
    cells = [(y, s) for y, ss in layout.items() for s in ss]
    per_file = 50
    for k in range(0, count, per_file):
        year, section = cells[(k // per_file) % len(cells)]
        path = folder / str(year) / f"w{str(year)[-1]}_{section:03d}"
        path.mkdir(parents=True, exist_ok=True)
        chosen = [trees[rng.randrange(len(trees))] for _ in range(min(per_file, count - k))]
        (path / f"w{str(year)[-1]}_{section:03d}_{k:07d}").write_text(
            "\n".join(t.replace("(TOP ", "(S1 ", 1).replace("( (", "(S1 (", 1) for t in chosen)
            + "\n"
        )


def run(argv: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(argv)}\n{proc.stderr.read().decode()}")
    return time.perf_counter() - start, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", type=int, default=200_000)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    induce = shutil.which("induce") or sys.exit("the induce command is not installed")
    trees = source_trees(args.shared)
    sizes = (args.trees // 2, args.trees)
    print(f"{len(trees)} distinct trees repeated; {os.cpu_count()} CPUs")
    print(
        f"{'corpus':<8} {'trees':>8} {'workers':>7} {'seconds':>8} {'trees/s':>8} "
        f"{'peak RSS MiB':>13}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("ptb", "bllip"):
            for size in sizes:
                corpus = Path(tmp) / f"{kind}-{size}"
                rng = random.Random(size)
                (make_ptb if kind == "ptb" else make_bllip)(corpus, trees, size, rng)
                for workers in (1, 2):
                    out = Path(tmp) / "out"
                    if kind == "ptb":
                        argv = [
                            induce,
                            "preprocess",
                            "ptb",
                            "-t",
                            str(corpus),
                            "-o",
                            str(out),
                            "--preset",
                            "mikolov",
                            "-j",
                            str(workers),
                        ]
                        used = size  # the Mikolov preset reads every section
                    else:
                        argv = [
                            induce,
                            "preprocess",
                            "bllip",
                            "-r",
                            str(corpus),
                            "-s",
                            "lg",
                            "-o",
                            str(out),
                            "-j",
                            str(workers),
                        ]
                        used = size
                    seconds, rss = run(argv)
                    shutil.rmtree(out)
                    print(
                        f"{kind:<8} {used:>8} {workers:>7} {seconds:8.2f} "
                        f"{used / seconds:8.0f} {rss:13.1f}"
                    )
                shutil.rmtree(corpus)


if __name__ == "__main__":
    main()
