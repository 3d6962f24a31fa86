"""The reproduction scripts run end to end (tiny model, tiny LDC-shaped treebank, two seeds)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.preprocess.fixtures import make_ptb

TINY = (
    "--set model.d_model=32 --set model.n_layers=1 --set model.n_heads=2 "
    "--set model.head_size=8 --set model.n_parser_layers=1 --set train.max_steps=2 "
    "--set train.eval_every=2 --set data.batch_tokens=128"
)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_udgn_ptb_script(tmp_path):
    make_ptb(
        tmp_path / "ptb", {"02": range(0, 20), "22": range(20, 25), "23": range(0, 10)}
    )  # known words: maskable
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "induce").exists():
        pytest.skip("the induce console script is not installed beside this python")
    env = dict(
        os.environ,
        SEEDS="1 2",
        SETS=TINY,
        OMP_NUM_THREADS="1",
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    out = tmp_path / "exp"
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "udgn_ptb.sh"), str(tmp_path / "ptb"), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    table = (out / "results.md").read_text().splitlines()
    assert table[0].startswith("| Model | Runs | UF1 | corpus UF1 |")
    assert table[2].startswith("| udgn | 2 |")
    for name in ("uf1.json", "deps-conll.json", "mlm.json", "test.ptb", "test.conllu"):
        assert (out / "runs" / "seed-1" / "eval" / name).is_file()
    assert "UAS conll mean" in (out / "results.csv").read_text()
