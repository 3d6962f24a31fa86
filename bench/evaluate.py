#!/usr/bin/env python3
"""Benchmark ``induce evaluate brackets`` and ``induce evaluate unsupervised``.

Builds a 2,400-sentence gold/prediction pair from WSJ section 22 (``../shared/data/wsj``;
the predictions are the reference pack's perturbed trees when it is there, right-branching
trees otherwise), then runs each whole command several times as a user would and prints wall
time (min / median), sentences per second and peak resident memory of the process.

    python bench/evaluate.py [--sentences 2400] [--repeat 5] [--shared ../shared]

Target (issue 2): under 1 s wall per command on a 2-core laptop-class machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def repeat_lines(source: Path, count: int) -> str:
    lines = source.read_text(encoding="utf-8").splitlines()
    return "".join(lines[i % len(lines)] + "\n" for i in range(count))


def make_inputs(shared: Path, count: int, folder: Path) -> dict[str, str]:
    gold = shared / "data" / "wsj" / "dev22.trees"
    if not gold.exists():
        sys.exit(f"needs {gold} (WSJ section 22, one tree per line)")
    ref = shared / "reference" / "dev22"
    files = {
        "gold": folder / "gold.mrg",
        "pred": folder / "pred.mrg",
        "words": folder / "pred_words.txt",
    }
    files["gold"].write_text(repeat_lines(gold, count), encoding="utf-8")
    if (ref / "pred_perturbed_s1.mrg").exists():
        # The reference predictions are over the cleaned gold of the same sentences.
        files["gold"].write_text(repeat_lines(ref / "gold.mrg", count), encoding="utf-8")
        files["pred"].write_text(repeat_lines(ref / "pred_perturbed_s1.mrg", count), "utf-8")
        files["words"].write_text(repeat_lines(ref / "mpred_perturbed_s1.txt", count), "utf-8")
    else:
        sys.path.insert(0, str(ROOT))
        from induce.data.ptb import format_trees, read_trees
        from induce.evaluate.brackets import baseline_trees

        trees = baseline_trees(read_trees(files["gold"]), "right")
        files["pred"].write_text(format_trees(trees), encoding="utf-8")
        files["words"] = files["pred"]
    return {k: str(v) for k, v in files.items()}


def run_once(argv: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one run of a whole
    command.  CPU time varies less than wall time on a shared machine."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(argv)}\n{proc.stderr.read().decode()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=2400)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    induce = shutil.which("induce") or sys.exit("the induce command is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        f = make_inputs(args.shared, args.sentences, Path(tmp))
        out = str(Path(tmp) / "out.json")
        commands = {
            "evaluate brackets": [
                induce,
                "evaluate",
                "brackets",
                f["gold"],
                f["pred"],
                "--json",
                out,
                "-q",
            ],
            "evaluate unsupervised": [
                induce,
                "evaluate",
                "unsupervised",
                f["gold"],
                f["words"],
                "--json",
                out,
                "-q",
            ],
            "evaluate unsupervised (cpcfg)": [
                induce,
                "evaluate",
                "unsupervised",
                f["gold"],
                f["words"],
                "-c",
                "cpcfg",
                "--json",
                out,
                "-q",
            ],
            "python -c pass (interpreter start)": [sys.executable, "-c", "pass"],
        }
        print(f"{args.sentences} sentences, {args.repeat} runs each, {os.cpu_count()} CPUs")
        print(
            f"{'command':<36} {'wall min':>8} {'median':>7} {'cpu min':>8} {'sent/s':>7} "
            f"{'peak RSS MiB':>13}"
        )
        for name, argv in commands.items():
            runs = [run_once(argv) for _ in range(args.repeat)]
            walls = [w for w, _, _ in runs]
            cpu = min(c for _, c, _ in runs)
            rss = max(r for _, _, r in runs)
            best = min(walls)
            print(
                f"{name:<36} {best:8.3f} {statistics.median(walls):7.3f} {cpu:8.3f} "
                f"{args.sentences / best:7.0f} {rss:13.1f}"
            )


if __name__ == "__main__":
    main()
