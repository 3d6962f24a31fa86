"""Devices named as a user writes them; CPU threads: physical cores by default, the user's
OMP_NUM_THREADS kept, shared among the processes of one machine."""

from __future__ import annotations

import os

import pytest
import torch

from induce.data.errors import ConfigError
from induce.runs import device


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_physical_cores_counts_cores_not_hyperthreads(monkeypatch, tmp_path):
    info = "".join(
        f"processor\t: {cpu}\nphysical id\t: 0\ncore id\t\t: {cpu % 2}\n\n" for cpu in range(4)
    )
    real_open = open

    def fake_open(path, *args, **kwargs):
        if path == "/proc/cpuinfo":
            (tmp_path / "cpuinfo").write_text(info)
            return real_open(tmp_path / "cpuinfo", *args, **kwargs)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", fake_open)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert device.physical_cores() == 2  # 4 logical CPUs, two per core
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2}, raising=False)
    assert device.physical_cores() == 1  # both allowed CPUs are core 0


def test_threads_setting_and_environment(monkeypatch, restore_threads):
    monkeypatch.setattr(device, "physical_cores", lambda: 8)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert device.set_cpu_threads(0) == 8 and torch.get_num_threads() == 8
    assert device.set_cpu_threads(0, processes=2) == 4 and torch.get_num_threads() == 4
    assert device.set_cpu_threads(3) == 3 and torch.get_num_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    assert device.set_cpu_threads(0) == 1  # the user's choice stands
    assert device.set_cpu_threads(2) == 2  # an explicit setting wins over it


@pytest.mark.parametrize("spec", ["cuda:x", "cuda:-1", "cuda:", "cuda:1.0", "gpu", "CPU", "cuda:١"])
def test_a_device_that_is_no_device_is_named_so(spec):
    """``cuda:x`` was said to need CUDA, on a CPU machine: the value itself is wrong."""
    with pytest.raises(ConfigError, match=r"^device must be auto, cpu, cuda or cuda:N, got"):
        device.pick_device(spec)


def test_a_cuda_device_the_machine_lacks(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match="^device cuda:1: CUDA is not available"):
        device.pick_device("cuda:1")
    assert device.pick_device("auto") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(ConfigError, match=r"^device cuda:1: this machine has 1 CUDA device \("):
        device.pick_device("cuda:1")
    assert device.pick_device("cuda:0") == torch.device("cuda:0")
    assert device.pick_device("cuda:00") == torch.device("cuda:0")  # torch's own text refused it
    assert device.pick_device("cuda", local_rank=0) == torch.device("cuda:0")
