"""bench/step_parity.py's helpers on small stand-in models (the script itself needs the
official checkout: the comparison of the real models runs by hand, its figures in
bench/RESULTS.md)."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.conftest import ROOT, bench_module

parity = bench_module("step_parity")


def side(model: torch.nn.Module) -> tuple[Any, Any, Any]:
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    return model, opt, lambda batch: model(batch).pow(2).mean()


def batches() -> list[torch.Tensor]:
    draw = torch.Generator().manual_seed(0)
    return [torch.randn(8, 4, generator=draw) for _ in range(5)]


def test_lockstep_of_a_model_and_its_copy_differs_by_nothing() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    lines = parity.lockstep("toy", "a copy", side(model), side(copy.deepcopy(model)), batches())
    assert len(lines) == 6  # a line a step, then the summary
    assert lines[-1] == (
        "toy: official against a copy: largest relative difference, loss 0.0e+00, gradient "
        "norm 0.0e+00 over 5 steps"
    )
    first = lines[0].split()
    assert first[2] == first[3] and first[4] == first[5]  # the same losses, the same norms


def test_lockstep_shows_a_different_model() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    other = copy.deepcopy(model)
    with torch.no_grad():
        other.bias.add_(0.5)
    summary = parity.lockstep("toy", "another", side(model), side(other), batches())[-1]
    loss = float(summary.split("loss ")[1].split(",")[0])
    assert loss > 1e-2


def test_a_perturbed_copy_is_rounding_away_and_leaves_the_model_and_the_seed_alone() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 64)
    before = copy.deepcopy(model.state_dict())
    torch.manual_seed(123)
    twin = parity.perturbed(model)
    after_seed = torch.rand(1)
    torch.manual_seed(123)
    assert torch.equal(after_seed, torch.rand(1))  # the caller's random stream untouched
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, before[name])
        moved = (twin.state_dict()[name] - tensor).abs() / tensor.abs().clamp_min(1e-30)
        assert 0 < float(moved.max()) < 1e-6


def test_agreement_gives_means_spreads_and_z() -> None:
    (ma, sa), (mb, sb), z = parity.agreement([1.0, 2.0, 3.0], [2.0, 3.0, 4.0])
    assert (ma, mb) == (2.0, 3.0)
    assert sa == sb == 1.0
    assert z == pytest.approx(1.0 / (2 / 3) ** 0.5)
    assert parity.agreement([1.0, 1.0], [1.0, 1.0])[2] == 0.0


@pytest.mark.parametrize(
    "extra, says",
    [
        (["--set", "lstm_kernel=dense"], "only model.KEY=VALUE"),
        (["--set", "model.lstm_kernel=fast"], "--set for udgn: udgn model: lstm_kernel"),
        (["--archs", "structformer", "--set", "model.lstm_kernel=dense"], "unknown setting"),
        (["--archs", "combiner"], "'combiner' is not one of structformer, udgn"),
    ],
)
def test_a_setting_that_cannot_run_is_refused_in_one_line_before_any_model(
    tmp_path: Path, extra: list[str], says: str
) -> None:
    (tmp_path / "models.py").write_text("raise SystemExit('the official code was imported')\n")
    args = ["--official", str(tmp_path), "--archs", "udgn", *extra]
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "step_parity.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("step_parity: ") and says in lines[0]
