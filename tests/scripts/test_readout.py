"""bench/readout.py on a CPU: a tiny trained UDGN's forward passes against its two
read-outs, each a positive rate, over a dataset's own text."""

from __future__ import annotations

from induce.train.engine import TrainOptions, train
from tests.conftest import run_bench
from tests.train.helpers import make_dataset, tiny


def test_the_forward_and_both_read_outs_are_timed(tmp_path):
    data = make_dataset(tmp_path / "data")
    run = tmp_path / "run"
    settings = tiny("udgn") + ["train.max_steps=2"]
    assert train(TrainOptions(str(run), "udgn", str(data), settings, device="cpu")) == "done"
    done = run_bench(
        "readout", "--model", run, "--text", data / "valid.txt", "--rounds", 1, "--threads", 1
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith("decoder mst-uniform-root, 1 threads, device cpu, medians of 1 rounds")
    rates = {line.split()[0]: float(line.split()[-2].replace(",", "")) for line in lines[1:]}
    assert set(rates) == {"forward", "read_out", "read_heads"} and min(rates.values()) > 0
