"""The scripts of a GPU sitting, in the parts that run without a GPU: a device call
that names no call or no ``OUT`` is refused in one line before any lent time is spent
(``bench/gpu_next.sh``), and what a sitting returns of torch.compile's cache is what it
added, whole or not at all (``bench/gpu_step.sh``'s ``keep_compile_cache``); the benches'
refusals of what they cannot do are one line and exit 2; a call whose step failed exits 1,
naming it, and a failed measurement loses its own line only."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

BENCH = ROOT / "bench"
pytestmark = pytest.mark.skipif(
    not (shutil.which("bash") and shutil.which("tar")), reason="needs bash and tar"
)


def _gpu_next(*args: str, out: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "OUT"}
    if out is not None:
        env["OUT"] = str(out)
    command = ["bash", str(BENCH / "gpu_next.sh"), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("args", [(), ("speeed",), ("long-udgn-both",)])
def test_a_call_it_does_not_know_is_one_line_and_exit_2(args, tmp_path):
    done = _gpu_next(*args, out=tmp_path / "out")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "one of speed, tests, parse, profile" in done.stderr
    assert not (tmp_path / "out").exists()  # nothing done, nothing unpacked


def test_a_compile_scope_it_does_not_know_is_one_line_and_exit_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "OUT"}
    env |= {"OUT": str(tmp_path / "out"), "COMPILE": "graphs"}
    command = ["bash", str(BENCH / "gpu_next.sh"), "speed"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == "gpu_next: COMPILE is compile, regions or layers, not 'graphs'"
    assert not (tmp_path / "out").exists()


def test_a_call_without_out_is_one_line_and_exit_2():
    done = _gpu_next("speed")
    assert done.returncode == 2
    assert done.stderr.strip() == "gpu_next: set OUT to the folder the device call returns"


def _keep(cache: Path | None, out: Path, log: Path, path: str | None = None) -> None:
    env = dict(os.environ)
    env.pop("TORCHINDUCTOR_CACHE_DIR", None)
    if cache is not None:
        env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    if path is not None:
        env["PATH"] = path
    script = f'log="{log}"; . "{BENCH / "gpu_step.sh"}"; keep_compile_cache "{out}"'
    subprocess.run(["bash", "-c", script], check=True, env=env, timeout=60)


def _touch(path: Path, text: str, when: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (when, when))


def test_only_what_the_sitting_added_to_the_cache_is_packed(tmp_path):
    cache, out, log = tmp_path / "cache", tmp_path / "out", tmp_path / "log"
    out.mkdir()
    _touch(cache / "aa" / "from-the-kit", "old", 1_000_000)  # unpacked with its packed time
    _touch(cache / ".kit-stamp", "", 2_000_000)  # bench/gpu_env.sh's stamp
    _touch(cache / "fxgraph" / "new-entry", "new", 3_000_000)
    _touch(cache / "locks" / "a.lock", "", 3_000_000)
    _keep(cache, out, log)
    with tarfile.open(out / "compile-cache.tar.gz") as packed:
        names = sorted(m.name for m in packed.getmembers() if m.isfile())
    assert names == ["./fxgraph/new-entry"]
    assert "bytes in" in log.read_text()


def test_no_archive_when_nothing_was_added_or_there_is_no_cache(tmp_path):
    cache, out, log = tmp_path / "cache", tmp_path / "out", tmp_path / "log"
    out.mkdir()
    _touch(cache / "aa" / "from-the-kit", "old", 1_000_000)
    _touch(cache / ".kit-stamp", "", 2_000_000)
    _keep(cache, out, log)
    _keep(None, out, log)
    assert not (out / "compile-cache.tar.gz").exists()
    assert log.read_text().splitlines() == [
        "compile cache: nothing new to keep",
        "compile cache: none to keep",
    ]


def test_a_cache_that_cannot_be_packed_leaves_no_archive(tmp_path):
    cache, out, log = tmp_path / "cache", tmp_path / "out", tmp_path / "log"
    out.mkdir()
    _touch(cache / "fxgraph" / "entry", "new", 3_000_000)
    (out / "compile-cache.tar.gz").write_text("an earlier, stale archive")
    broken = tmp_path / "bin" / "tar"  # a tar that writes half an archive and fails
    broken.parent.mkdir()
    broken.write_text('#!/bin/sh\nfor a; do case $a in *.tar.gz) echo half > "$a";; esac; done\n'
                      "echo 'tar: write error' >&2; exit 2\n")  # fmt: skip
    broken.chmod(0o755)
    _keep(cache, out, log, path=f"{broken.parent}{os.pathsep}{os.environ['PATH']}")
    assert not (out / "compile-cache.tar.gz").exists()
    assert not list(out.iterdir())  # nor the half-written one
    assert "packing failed" in log.read_text()


@pytest.mark.parametrize(
    ("script", "args", "said"),
    [
        ("profile_step.py", ["--graphs"], "profile_step: --graphs needs --device cuda"),
        (
            "lowrank_vs_official.py",
            ["--official", "TNPCFG"],
            "lowrank_vs_official: nothing to do: give --data, --speed or --memory",
        ),
    ],
)
def test_benches_refuse_what_they_cannot_do_in_one_line(script, args, said):
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert done.stderr.strip() == said and done.stdout == ""


@pytest.mark.parametrize("code", [0, 3])
def test_the_call_exits_1_naming_the_steps_that_failed(tmp_path, code):
    """A device call's exit status said nothing of its steps (the script ended with an
    echo): a failed or cut-off step now makes it 1, and the last line names it."""
    fake = tmp_path / "bin" / "python3"  # every step's command: exits with ``code``
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho 'a step of the sitting'\nexit {code}\n")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "OUT"}
    env |= {"OUT": str(tmp_path / "out"), "NOENV": "1"}
    env["PATH"] = f"{fake.parent}{os.pathsep}{env['PATH']}"
    command = ["bash", str(BENCH / "gpu_next.sh"), "tests"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("gpu_next tests: ")
    if code:
        assert done.returncode == 1 and last.endswith(" s; failed: tests=3")
    else:
        assert done.returncode == 0 and last.endswith(" s")
    assert "-- tests: exit" in (tmp_path / "out" / "tests.log").read_text()


def test_a_failed_measurement_costs_its_own_line_only(monkeypatch):
    """``lowrank_vs_official.py --speed``: a measuring process that fails (a kernel, memory at
    the longest length) used to raise and lose every line measured before it; each line is
    now printed as it is measured and a failure is its own line, saying why."""
    from tests.conftest import bench_module

    lowrank = bench_module("lowrank_vs_official")
    failed = lowrank.child([sys.executable, "-c", "import sys; sys.exit('out of memory')"])
    assert failed == "failed (exit 1): out of memory"
    said = lowrank.child([sys.executable, "-c", "print('{\"tokens_per_s\": 5.0}')"])
    assert said == {"tokens_per_s": 5.0}

    def measured(command: list[str]) -> object:
        n, side = int(command[command.index("--one") + 2]), command[command.index("--one") + 1]
        if n == 40:
            return "failed (exit 1): out of memory"
        return {"tokens_per_s": 10.0 if side == "induce" else 5.0, "peak_gib": 1.0}

    monkeypatch.setattr(lowrank, "child", measured)
    args = lowrank.argparse.Namespace(
        archs="tnpcfg", lengths="10,40", rounds=1, device="cpu", official="X", simple_nt=4,
        steps=1, warmup=0, threads=1,
    )  # fmt: skip
    lines = list(lowrank.speed(args))
    assert lines[2].split()[-1] == "2.0x"
    assert lines[3] == "   40 official failed (exit 1): out of memory"
