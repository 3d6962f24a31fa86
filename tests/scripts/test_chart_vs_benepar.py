"""bench/chart_vs_benepar.py's own parts, on a stand-in shared folder of sample trees: the
induce sides (fp32 and bf16) train, check dev F1 and parse in fresh processes and the table
shows them; what it cannot run is a one-line refusal.  benepar's side needs its checkout and
transformers, so it is run by hand (bench/RESULTS.md), not here."""

from __future__ import annotations

import json
import subprocess

import pytest
import torch

from induce.runs.device import cpu_has_fast_bf16
from tests.conftest import run_bench
from tests.preprocess.fixtures import ldc_text, sample_trees


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """``data/ptb-sample/trees/wsj_00NN.mrg`` (12 trees) and ``data/wsj/dev22.trees`` (4)."""
    root = tmp_path_factory.mktemp("shared")
    trees = sample_trees()
    sample = root / "data" / "ptb-sample" / "trees"
    sample.mkdir(parents=True)
    for k in range(0, 12, 2):
        (sample / f"wsj_00{k // 2 + 1:02d}.mrg").write_text(ldc_text(trees[k : k + 2]))
    (root / "data" / "wsj").mkdir()
    (root / "data" / "wsj" / "dev22.trees").write_text(ldc_text(trees[12:16]))
    return root


def _bench(*args: object) -> subprocess.CompletedProcess[str]:
    return run_bench("chart_vs_benepar", *args)


def test_the_induce_sides_train_check_and_parse(shared, tmp_path):
    """Both induce sides where the CPU has bf16, the fp32 side elsewhere."""
    sides = ["induce", "induce-bf16"] if cpu_has_fast_bf16() else ["induce"]
    out = tmp_path / "runs.json"
    done = _bench(
        "--shared", shared, "--sides", ",".join(sides), "--seeds", "1", "--updates", 2,
        "--check-every", 1, "--threads", 1, "--json", out,
        "--set", "model.d_model=32", "--set", "model.d_position=16", "--set", "model.d_ff=32",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = json.loads(out.read_text())
    assert [r["side"] for r in records] == sides
    for record in records:
        assert [c["update"] for c in record["checks"]] == [1, 2]
        assert record["updates_per_s"] > 0 and record["parse_sentences_per_s"] > 0
        assert "peak_gpu_gib" not in record  # on the CPU
    table = done.stdout.splitlines()
    assert any(line.startswith(sides[-1] + " ") for line in table)
    assert any("updates/s" in line and "GPU GiB" not in line for line in table)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sides", "induce,fp16"], "--sides: benepar, induce and/or induce-bf16"),
        (["--sides", "benepar"], "no src/main.py"),
        pytest.param(
            ["--sides", "induce-bf16"],
            "this CPU has no AVX512-BF16 or AMX",
            marks=pytest.mark.skipif(cpu_has_fast_bf16(), reason="this CPU has bf16"),
        ),
        pytest.param(
            ["--device", "cuda"],
            "CUDA is not available",
            marks=pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available"),
        ),
    ],
)
def test_what_it_cannot_run_is_one_line(shared, tmp_path, args, message):
    done = _bench("--shared", shared, "--benepar", tmp_path, *args)
    assert done.returncode == 1 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
