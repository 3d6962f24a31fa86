"""bench/long_report.py: the long runs of several device calls in one table, and what
cannot go in one table refused in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, bench_module

report = bench_module("long_report")


def run(side: str, arch: str, seed: int, uas: float, epochs: int = 100) -> dict[str, Any]:
    return {"side": side, "arch": arch, "seed": seed, "uas": uas, "uuas": uas + 10,
            "valid_ppl": 100.0 + uas, "train_s": 300.0, "epochs_run": epochs}  # fmt: skip


def summary(path: Path, walls: dict[str, float], runs: list[dict], size: str = "paper") -> str:
    path.write_text(json.dumps({"walls": walls, "runs": runs, "settings": {"size": size}}))
    return str(path)


def _report(*paths: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(ROOT / "bench" / "long_report.py"), *paths]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def calls(tmp_path: Path) -> list[str]:
    """UDGN's official side in two calls (two seeds, then one), induce's in one."""
    return [
        summary(tmp_path / "a.json", {"official": 500.0},
                [run("official", "udgn", 1111, 10.0), run("official", "udgn", 2222, 14.0)]),
        summary(tmp_path / "b.json", {"official": 300.0},
                [run("official", "udgn", 3333, 12.0, epochs=97)]),
        summary(tmp_path / "c.json", {"induce": 400.0},
                [run("induce", "udgn", s, u) for s, u in ((1111, 11.0), (2222, 12.0),
                                                          (3333, 13.0))]),
    ]  # fmt: skip


def test_the_runs_of_several_calls_make_one_table(tmp_path):
    done = _report(*calls(tmp_path))
    assert done.returncode == 0, done.stderr
    rows = {line.split(" | ")[1]: line for line in done.stdout.splitlines()[2:]}
    # official: three seeds from two calls, walls summed, two then one at once
    assert rows["official"] == (
        "| udgn | official | 3 | 97-100 | - | 12.00 (2.00) | 22.00 (2.00) | 112.00 (2.00) "
        "| 300.00 (0.00) | 800 | 2+1 |"
    )
    assert rows["induce"].endswith("| 3 | 100 | - | 12.00 (1.00) | 22.00 (1.00) | 112.00 (1.00) "
                                   "| 300.00 (0.00) | 400 | 3 |")  # fmt: skip


def test_a_side_of_two_models_at_once_gives_both_its_wall():
    runs = [run("official", "udgn", 1, 1.0), run("official", "structformer", 1, 2.0)]
    walls, waves = report.side_walls([{"walls": {"official": 60.0}, "runs": runs}])
    assert walls == {("udgn", "official"): 60.0, ("structformer", "official"): 60.0}
    assert waves == {("udgn", "official"): [2], ("structformer", "official"): [2]}


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ("twice", "both hold official udgn 3333"),
        ("sizes", "runs of different sizes: paper in"),
        ("broken", "not a long_runs.json (JSONDecodeError"),
        ("other", "not a long_runs.json (KeyError"),
    ],
)
def test_what_cannot_go_in_one_table_is_refused_in_one_line(tmp_path, files, says):
    paths = calls(tmp_path)
    extra = tmp_path / "extra.json"
    if files == "twice":
        paths.append(summary(extra, {"official": 1.0}, [run("official", "udgn", 3333, 1.0)]))
    elif files == "sizes":
        paths.append(summary(extra, {"induce": 1.0}, [run("induce", "udgn", 4, 1.0)], "small"))
    elif files == "broken":
        extra.write_text('{"walls": ')
        paths.append(str(extra))
    else:
        extra.write_text(json.dumps({"runs": []}))
        paths.append(str(extra))
    done = _report(*paths)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("long_report: ") and says in lines[0]


def test_no_file_is_a_usage_line():
    done = _report()
    assert done.returncode == 2 and done.stderr.startswith("usage: ")
