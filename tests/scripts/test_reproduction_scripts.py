"""The reproduction scripts run end to end (tiny model, tiny LDC-shaped treebank, two seeds)."""

from __future__ import annotations

import json
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


def _env(**extra: str) -> dict[str, str]:
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "induce").exists():
        pytest.skip("the induce console script is not installed beside this python")
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    settings = {"SEEDS": "1 2", "SETS": TINY, "OMP_NUM_THREADS": "1", "PATH": path}
    return {**os.environ, **settings, **extra}


def _run(script: str, *args: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / script), *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def _treebank(root: Path, with_dep_files: bool) -> Path:
    """An LDC-shaped treebank with the sections both protocols read (known words: maskable),
    with a CoNLL-X conversion beside every .mrg file when asked."""
    make_ptb(
        root,
        {"00": range(0, 20), "21": range(20, 25), "22": range(20, 25), "23": range(0, 10)}
        | {"24": range(10, 14), "01": range(25, 30)},
    )
    if with_dep_files:
        from typer.testing import CliRunner

        from induce.cli.app import app

        for mrg in sorted(root.rglob("*.mrg")):
            args = ["convert", "headrules", str(mrg), "-r", "collins", "--to", "conllx"]
            assert CliRunner().invoke(app, args + ["-o", f"{mrg}.dep"]).exit_code == 0
    return root


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_udgn_ptb_script(tmp_path):
    ptb = _treebank(tmp_path / "ptb", with_dep_files=True)
    out = tmp_path / "exp"
    _run("udgn_ptb.sh", ptb, out, env=_env(DEPS_SCHEME="collins-test"))
    table = (out / "results.md").read_text().splitlines()
    assert table[0].startswith("| Model | Protocol | Runs | UF1 | corpus UF1 |")
    assert table[2].startswith("| udgn | udgn-ptb-paper | 2 |")
    note = "Dependency gold: collins-test (UAS/UUAS collins-test)."
    assert note in (out / "results.md").read_text()
    run = out / "runs" / "seed-1"
    for name in ("uf1.json", "deps-collins-test.json", "mlm.json", "test.ptb", "test.conllu"):
        assert (run / "eval" / name).is_file()
    assert "UAS collins-test mean" in (out / "results.csv").read_text()
    mlm = json.loads((run / "eval" / "mlm.json").read_text())
    assert mlm["settings"]["runs"] == 5  # the UDGN code's 5 mask draws
    # the parsing split is section 23 alone, perplexity on 23-24
    manifest = (out / "data" / "manifest.yaml").read_text()
    assert "sections: '23'" in manifest and "sections: 23-24" in manifest


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_structformer_ptb_script(tmp_path):
    ptb = _treebank(tmp_path / "ptb", with_dep_files=False)
    mikolov = tmp_path / "mikolov"
    mikolov.mkdir()
    from induce.data.dataset import load_dataset

    words = {}
    for split, sections in (("train", "00"), ("valid", "21-22"), ("test", "23-24")):
        data = tmp_path / f"d-{split}"
        _run_preprocess(ptb, data, sections)
        words[split] = [" ".join(s) for s in load_dataset(data).sentences("test")]
        (mikolov / f"ptb.{split}.txt").write_text("".join(f" {w} \n" for w in words[split]))
    out = tmp_path / "exp"
    tiny = TINY.replace("--set model.head_size=8 ", "")
    _run("structformer_ptb.sh", ptb, mikolov, out, env=_env(SETS=tiny))
    text = (out / "results.md").read_text()
    assert text.splitlines()[2].startswith("| structformer | structformer-ptb-paper | 2 |")
    assert "penn2malt" in text  # no paper gold given: the head-rule column, named as such
    for name in ("uf1.json", "deps-penn2malt.json", "mlm.json"):
        assert (out / "runs" / "seed-2" / "eval" / name).is_file()


def _run_preprocess(ptb: Path, out: Path, sections: str) -> None:
    from typer.testing import CliRunner

    from induce.cli.app import app

    args = ["preprocess", "ptb", "-t", str(ptb), "-o", str(out), "--train", sections]
    result = CliRunner().invoke(app, args + ["--valid", sections, "--test", sections])
    assert result.exit_code == 0, result.output


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_combiner_ptb_script(tmp_path):
    make_ptb(tmp_path / "ptb", {"02": range(0, 20), "22": range(20, 25), "23": range(0, 10)})
    out = tmp_path / "exp"
    tiny = TINY.replace("--set model.head_size=8 --set model.n_parser_layers=1 ", "")
    _run("combiner_ptb.sh", tmp_path / "ptb", out, env=_env(SETS=tiny + " --set model.d_ff=64"))
    table = (out / "results.md").read_text().splitlines()
    assert table[2].startswith("| combiner | combiner-ptb-paper | 2 |")
    for name in ("uf1.json", "mlm.json", "test.ptb"):
        assert (out / "runs" / "seed-1" / "eval" / name).is_file()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_chart_ptb_script(tmp_path):
    make_ptb(tmp_path / "ptb", {"02": range(0, 20), "22": range(20, 25), "23": range(0, 10)})
    out = tmp_path / "exp"
    sets = (
        "--set model.d_model=32 --set model.d_position=16 --set model.n_layers=1 "
        "--set model.n_heads=2 --set model.d_kv=8 --set model.d_ff=32 --set model.d_char=8 "
        "--set data.batch_sentences=8 --set train.max_steps=2 --set train.evals_per_epoch=0 "
        "--set train.eval_every=2"
    )
    _run("chart_ptb.sh", tmp_path / "ptb", out, env=_env(SETS=sets))
    table = (out / "results.md").read_text().splitlines()
    assert table[2].startswith("| chart | chart-ptb-paper | 2 |"), table
    assert "F1 collins" in table[0]
    for name in ("evalb-valid.json", "evalb-test.json", "test.ptb"):
        assert (out / "runs" / "seed-1" / "eval" / name).is_file()


@pytest.fixture(scope="module")
def pcfg_data(tmp_path_factory):
    """The papers' data of the PCFG script, made once: the script reuses a folder's data."""
    root = tmp_path_factory.mktemp("pcfg")
    make_ptb(root / "ptb", {"02": range(0, 20), "22": range(20, 25), "23": range(0, 10)})
    env = _env()
    args = ["induce", "preprocess", "ptb", "--treebank", str(root / "ptb"), "--preset", "pcfg"]
    done = subprocess.run(args + ["--out", str(root / "data")], env=env, capture_output=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return root


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("arch", ["cpcfg", "npcfg", "tnpcfg", "simplepcfg", "scpcfg"])
def test_pcfg_ptb_script(tmp_path, pcfg_data, arch):
    out = tmp_path / "exp"
    shutil.copytree(pcfg_data / "data", out / "data")
    sizes = {
        "cpcfg": "model.z_dim=4 model.h_dim=8 model.w_dim=8",
        "npcfg": "model.z_dim=0",
        "tnpcfg": "model.rank=4",
        "simplepcfg": "model.t=6",
        "scpcfg": "model.t=6 model.z_dim=4 model.h_dim=8 model.w_dim=8",
    }[arch]
    sets = " ".join(
        f"--set {item}"
        for item in f"model.nt=3 model.t=4 model.s_dim=8 {sizes} train.max_steps=2 "
        "train.eval_every=2".split()
    )
    seeds = "1 2" if arch == "cpcfg" else "1"  # the loop over seeds once; every preset once
    env = _env(SETS=sets, ARCH=arch, SEEDS=seeds)
    _run("cpcfg_ptb.sh", pcfg_data / "ptb", out, env=env)
    table = (out / "results.md").read_text().splitlines()
    assert table[2].startswith(f"| {arch} | {arch}-ptb-paper | {len(seeds.split())} |"), table
    uf1 = json.loads((out / "runs" / "seed-1" / "eval" / "uf1.json").read_text())
    low_rank = arch in ("tnpcfg", "simplepcfg", "scpcfg")
    convention, label = ("tnpcfg", "(NT (") if low_rank else ("cpcfg", "(NT-")
    assert uf1["settings"]["convention"]["name"] == convention
    assert label in (out / "runs" / "seed-1" / "eval" / "test.ptb").read_text()
