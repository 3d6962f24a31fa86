#!/usr/bin/env python3
"""Benchmark the conversions of ``induce convert`` on WSJ section 22.

* Algorithm 3 (StructFormer): distances and heights -> binary tree + dependencies.  The inputs
  are the real ones of each dev sentence: distances of its (right-binarised) gold tree
  (Definition 3.1) and heights of its Penn2Malt dependencies (Definition 3.2).
* Head rules: treebank trees -> Penn2Malt dependencies (with labels).

Prints sentences per second (best of --repeat runs, in-process, reading excluded; the head
table is loaded afresh for each run, so its memo of productions starts cold) and the figures
of the whole commands.  Target (issue 3): at least 5,000 sentences/s for each.

    python bench/convert.py [--repeat 5] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from induce.data.jsonl import format_jsonl  # noqa: E402
from induce.data.ptb import read_trees  # noqa: E402
from induce.structure.distances import tree_distances  # noqa: E402
from induce.structure.headrules import lexical_heads  # noqa: E402
from induce.structure.headtables import load_head_table  # noqa: E402
from induce.structure.heights import dependency_heights, parse_distances  # noqa: E402
from induce.structure.trees import strip_empty, unwrap  # noqa: E402


def best(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    source = args.shared / "data" / "wsj" / "dev22.trees"
    if not source.exists():
        sys.exit(f"needs {source}")
    trees = [unwrap(strip_empty(t)) for t in read_trees(source).trees]
    table = load_head_table("penn2malt")
    n = len(trees)

    inputs = []
    for tree in trees:
        heads = lexical_heads(tree, table).heads
        inputs.append((tree.preterminals(), tree_distances(tree), dependency_heights(heads)))

    def algorithm3():
        for leaves, distances, heights in inputs:
            parse_distances(leaves, distances, heights)

    def headrules():
        fresh = load_head_table("penn2malt")  # its per-production memo starts empty
        for tree in trees:
            lexical_heads(tree, fresh)

    print(f"WSJ 22: {n} sentences, {sum(len(i[0]) for i in inputs)} words, best of {args.repeat}")
    print(f"{'conversion':<44} {'seconds':>8} {'sentences/s':>12}")
    for name, run in (
        ("Algorithm 3 (distances+heights -> tree+deps)", algorithm3),
        ("head rules (penn2malt, labelled)", headrules),
    ):
        seconds = best(args.repeat, run)
        print(f"{name:<44} {seconds:8.3f} {n / seconds:12.0f}")

    induce = shutil.which("induce")
    if induce:
        with tempfile.TemporaryDirectory() as tmp:
            jsonl = Path(tmp) / "dev.jsonl"
            jsonl.write_text(
                format_jsonl(
                    {"words": [p.children[0] for p in leaves], "distances": d, "heights": h}
                    for leaves, d, h in inputs
                )
            )
            for name, argv in (
                (
                    "induce convert distances --to conllu",
                    [induce, "convert", "distances", str(jsonl), "--to", "conllu"],
                ),
                ("induce convert headrules", [induce, "convert", "headrules", str(source)]),
            ):
                seconds = best(
                    args.repeat,
                    lambda argv=argv: subprocess.run(
                        argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                    ),
                )
                print(f"{name + ' (whole command)':<44} {seconds:8.3f} {n / seconds:12.0f}")


if __name__ == "__main__":
    main()
