#!/usr/bin/env python3
"""The table of ``bench/long_runs.py``, of one run of it or of several put together.

    python bench/long_report.py A.json [B.json ...]

Each file is a ``long_runs.json`` (on a lent GPU, the ``official.json`` and ``induce.json``
that ``bench/gpu_long_runs.sh`` returns).  The papers' 100 epochs do not fit one device call
for every seed, so a side's runs come in several calls (e.g. the official seeds 1111 and 2222
in one, 3333 in the next): this prints one table over all of them, mean (std) per model and
side.  A side's wall time is the sum over the calls that trained it, and the column "at
once" says how many of its runs shared the GPU in each call (``2+1``): wall times compare
only between sides that ran the same way.  Refused in one line, exit 2: a file that is not a
``long_runs.json``, the same (side, model, seed) in two files, runs of different sizes.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

READ_OUT = "official, induce read-out"  # the table's row of imported_read_out's scores
KEYS = ("uf1", "uas", "uuas", "valid_ppl", "train_s")

Walls = dict[tuple[str, str], float]  # (arch, side) -> seconds
Waves = dict[tuple[str, str], list[int]]  # (arch, side) -> runs at once, call by call


class ReportError(Exception):
    """Files that cannot be put in one table (the message names them)."""


def side_walls(summaries: list[dict[str, Any]]) -> tuple[Walls, Waves]:
    """Each (arch, side)'s wall time summed over the summaries that ran it, and how many
    runs of that side each of those held at once (a side's runs of every arch share it)."""
    walls: Walls = {}
    waves: Waves = {}
    for summary in summaries:
        for side, seconds in summary["walls"].items():
            runs = [r for r in summary["runs"] if r["side"] == side]
            for arch in dict.fromkeys(r["arch"] for r in runs):
                walls[arch, side] = walls.get((arch, side), 0.0) + seconds
                waves.setdefault((arch, side), []).append(len(runs))
    return walls, waves


def table(results: list[dict[str, Any]], walls: Walls, waves: Waves) -> list[str]:
    """Mean (std) per model and side, with the official weights' ``induce`` read-out as a
    row of its own."""
    results = results + [
        {"arch": r["arch"], "side": READ_OUT}
        | {key: r[f"{key}_induce_read_out"] for key in KEYS if f"{key}_induce_read_out" in r}
        for r in results
        if r["side"] == "official" and "uas_induce_read_out" in r
    ]
    lines = [
        "| arch | side | runs | epochs | UF1 | UAS | UUAS | valid ppl | train s (each) "
        "| side wall s | at once |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for arch in dict.fromkeys(r["arch"] for r in results):
        for side in dict.fromkeys(r["side"] for r in results):
            mine = [r for r in results if r["arch"] == arch and r["side"] == side]
            if not mine:
                continue
            cells = [mean_std([r[k] for r in mine if k in r]) for k in KEYS]
            wall = f"{walls[arch, side]:.0f}" if (arch, side) in walls else "-"
            once = "+".join(map(str, waves.get((arch, side), []))) or "-"
            row = " | ".join([arch, side, str(len(mine)), epochs(mine), *cells, wall, once])
            lines.append(f"| {row} |")
    return lines


def epochs(runs: list[dict[str, Any]]) -> str:
    """The epochs the runs trained: one number, or the range when they differ."""
    found = sorted({r["epochs_run"] for r in runs if "epochs_run" in r})
    if not found:
        return "-"
    return str(found[0]) if len(found) == 1 else f"{found[0]}-{found[-1]}"


def mean_std(xs: list[float]) -> str:
    if not xs:
        return "-"
    spread = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.mean(xs):.2f} ({spread:.2f})"


def read(paths: list[str]) -> list[dict[str, Any]]:
    """The summaries of ``paths``, checked to go in one table."""
    summaries: list[dict[str, Any]] = []
    seen: dict[tuple[Any, ...], str] = {}  # (side, arch, seed) -> the file holding it
    sizes: dict[Any, str] = {}  # each size -> the first file of it
    for path in paths:
        try:
            summary = json.loads(Path(path).read_text(encoding="utf-8"))
            runs, walls = summary["runs"], summary["walls"]
            keys = [(r["side"], r["arch"], r["seed"]) for r in runs]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ReportError(f"{path}: not a long_runs.json ({type(e).__name__}: {e})") from e
        if not isinstance(walls, dict):
            raise ReportError(f"{path}: not a long_runs.json (walls is not a table)")
        for key in keys:
            if key in seen:
                raise ReportError(f"{seen[key]} and {path} both hold {' '.join(map(str, key))}")
            seen[key] = path
        size = summary.get("settings", {}).get("size")
        sizes.setdefault(size, path)
        if len(sizes) > 1:
            (a, first), (b, _) = list(sizes.items())[:2]
            raise ReportError(f"runs of different sizes: {a} in {first}, {b} in {path}")
        summaries.append(summary)
    return summaries


def main() -> None:
    paths = sys.argv[1:]
    if not paths or any(p.startswith("-") for p in paths):
        print("usage: python bench/long_report.py A.json [B.json ...]", file=sys.stderr)
        sys.exit(2)
    try:
        summaries = read(paths)
    except ReportError as e:
        print(f"long_report: {e}", file=sys.stderr)
        sys.exit(2)
    results = [r for s in summaries for r in s["runs"]]
    print("\n".join(table(results, *side_walls(summaries))))


if __name__ == "__main__":
    main()
