"""bench/side_by_side.py's own parts on a CPU: the ``induce`` sides train and parse in fresh
processes at a tiny size, the table's ratios are to the first side when the official code
is not asked for, and what it cannot run is a one-line refusal.  The official side needs a
checkout of the UDGN repository and is run by hand (bench/RESULTS.md), not here."""

from __future__ import annotations

import json
import subprocess

import pytest

from induce.runs.device import cpu_has_fast_bf16
from tests.conftest import bench_module, run_bench

TINY = ["--set", "model.d_model=64", "--set", "model.n_layers=2"]


def _bench(*args: object) -> subprocess.CompletedProcess[str]:
    return run_bench("side_by_side", *args)


def test_the_induce_sides_train_and_parse_without_the_official_code(tmp_path):
    """WSJ-like lengths (no shared folder); bf16 beside fp32 where the CPU has it."""
    sides = ["induce", "induce-bf16"] if cpu_has_fast_bf16() else ["induce"]
    out = tmp_path / "runs.json"
    done = _bench(
        "--sides", ",".join(sides), "--archs", "structformer,udgn", "--sizes", "small",
        "--rounds", 1, "--steps", 1, "--warmup", 1, "--threads", 1, "--parse",
        "--parse-sentences", 8, "--shared", tmp_path / "none", "--json", out, *TINY,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = json.loads(out.read_text())
    expected = [(task, arch, side) for task in ("train", "parse")
                for arch in ("structformer", "udgn") for side in sides]  # fmt: skip
    assert [(r["task"], r["arch"], r["side"]) for r in records] == expected
    for r in records:
        rate = r["tokens_per_s" if r["task"] == "train" else "sentences_per_s"]
        assert rate > 0 and r["peak_rss_gib"] > 0 and "peak_gpu_gib" not in r
        if r["task"] == "parse":  # the host read-out's share of the parse
            assert 0 < r["readout_share"] < 1
    assert done.stdout.count("read-out on the host: ") == 2 * len(sides)
    lines = done.stdout.splitlines()
    assert sum("ratio to induce" in line for line in lines) == 2
    firsts = [line for line in lines if line.split()[2:3] == ["induce"]]
    assert len(firsts) == 4 and all(line.split()[5] == "1.00x" for line in firsts)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sides", "official,induce"], "the official side needs --official"),
        (["--sides", "induce,induce"], "--sides: each side at most once"),
        (["--sides", "induce,nope"], "--sides: unknown side 'nope'"),
        (["--official", "{tmp}", "--sides", "induce,official"], "no models.py"),
    ],
)
def test_what_cannot_be_run_is_refused_in_one_line(tmp_path, args, message):
    done = _bench(*(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert done.returncode == 1 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not done.stdout


def test_frames_compiled_in_the_timed_steps_are_named_under_the_figures():
    sides = bench_module("sides")
    report = {"frames": 3, "seconds": {"_compile.compile_inner": 12.0}, "caches": {}}
    assert "timed steps" not in sides.compiling(report | {"timed_frames": 0})
    late = sides.compiling(report | {"timed_frames": 1})
    assert "1 of them compiled in the timed steps: the rate includes them" in late
