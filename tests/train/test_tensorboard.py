"""``train.log: [jsonl, tensorboard]``: the records as TensorBoard scalars, resumes included."""

from __future__ import annotations

import importlib.util
import json

import pytest
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.errors import ConfigError
from induce.runs.config import load_config
from induce.train.bookkeeping import TensorBoardLog
from induce.train.engine import TrainOptions, build_trainer, train
from tests.train.helpers import make_dataset, tiny

pytest.importorskip("tensorboard")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("tb"))


def _scalars(folder, tag: str) -> list[tuple[int, float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(folder))
    events.Reload()
    return [(e.step, e.value) for e in events.Scalars(tag)]


def _records(run, kind):
    lines = (run / "metrics.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["kind"] == kind]


@pytest.mark.parametrize("arch", ["structformer", "chart"])
def test_a_stopped_and_resumed_run_logs_each_record_once(data, tmp_path, arch):
    run = tmp_path / "run"
    settings = tiny(arch) + ["train.max_steps=8", "train.log=[jsonl, tensorboard]"]
    settings += ["train.eval_every=4"] if arch != "chart" else []
    holder = {}

    def stop_there(kind, record):
        if kind == "train" and record["step"] == 5:
            holder["trainer"].request_stop()

    options = TrainOptions(str(run), arch, str(data), settings, device="cpu")
    holder["trainer"] = build_trainer(options, stop_there)
    assert holder["trainer"].fit() == "interrupted"
    assert train(TrainOptions(str(run), resume=True, device="cpu")) == "done"
    logged = _scalars(run / "tensorboard", "train/loss")
    records = _records(run, "train")
    assert [step for step, _ in logged] == [r["step"] for r in records] == list(range(1, 9))
    assert [value for _, value in logged] == pytest.approx([r["loss"] for r in records])
    evals = _records(run, "eval")
    key = "f1" if arch == "chart" else "valid_loss"
    logged = _scalars(run / "tensorboard", f"eval/{key}")
    assert evals and [step for step, _ in logged] == [r["step"] for r in evals]
    assert [value for _, value in logged] == pytest.approx([r[key] for r in evals])


def test_a_resumed_writer_drops_what_came_after_the_checkpoint(tmp_path):
    """A run killed at update 7 after its checkpoint at 5 logged 6 and 7 twice: TensorBoard
    shows the resumed values only."""
    first = TensorBoardLog(tmp_path, None)
    for step in range(1, 8):
        first.write("train", {"step": step, "loss": float(step)})
    first.close()
    again = TensorBoardLog(tmp_path, resumed_at=5)
    for step in (6, 7, 8):
        again.write("train", {"step": step, "loss": -float(step), "loss_kind": "hinge"})
    again.close()
    assert _scalars(tmp_path, "train/loss") == [
        (1, 1.0),
        (2, 2.0),
        (3, 3.0),
        (4, 4.0),
        (5, 5.0),
        (6, -6.0),
        (7, -7.0),
        (8, -8.0),
    ]


def test_the_run_record_cannot_be_left_out():
    with pytest.raises(ConfigError, match="train.log must hold jsonl"):
        load_config("structformer", ["train.log=[tensorboard]"])
    with pytest.raises(ConfigError, match="must be one of"):
        load_config("structformer", ["train.log=[jsonl, wandb]"])


def test_without_the_package_training_is_refused_before_anything_is_written(
    data, tmp_path, monkeypatch
):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "tensorboard" else real(name, *a),
    )
    run = tmp_path / "run"
    args = ["train", "--arch", "structformer", "--data", str(data), "-o", str(run)]
    result = CliRunner().invoke(app, [*args, "--set", "train.log=[jsonl,tensorboard]"])
    assert result.exit_code == 2
    assert "pip install 'induce[tensorboard]'" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not run.exists()
