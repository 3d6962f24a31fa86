"""Where a model runs, and in which precision."""

from __future__ import annotations

import os
import re
from contextlib import AbstractContextManager, nullcontext
from functools import cache

import torch

from induce.data.errors import ConfigError


def pick_device(spec: str, local_rank: int | None = None) -> torch.device:
    """``auto`` (CUDA when available), ``cpu``, ``cuda`` or ``cuda:N``; under ``torchrun``
    (``local_rank`` given) plain ``cuda`` means this process's own GPU."""
    if spec == "auto":
        spec = "cuda" if torch.cuda.is_available() else "cpu"
    if not isinstance(spec, str) or spec != "cpu" and not _CUDA.fullmatch(spec):
        raise ConfigError(f"must be auto, cpu, cuda or cuda:N, got {spec!r}", setting="device")
    if spec == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise ConfigError(f"{spec}: CUDA is not available on this machine", setting="device")
    if spec == "cuda":
        return torch.device("cuda") if local_rank is None else torch.device("cuda", local_rank)
    index, count = int(spec[5:]), torch.cuda.device_count()  # cuda:01 is cuda:1, as torch
    if index >= count:  # cannot read it
        raise ConfigError(
            f"{spec}: this machine has {count} CUDA device{'s' * (count != 1)} "
            f"(cuda:0 to cuda:{count - 1})",
            setting="device",
        )
    return torch.device("cuda", index)


_CUDA = re.compile(r"cuda(:[0-9]+)?", re.ASCII)


def autocast(
    device: torch.device, bf16: bool, cpu_bf16: bool = False, cache: bool = True
) -> AbstractContextManager[object]:
    """bfloat16 autocast on CUDA when ``bf16`` is set, on a CPU with hardware bf16
    (:func:`cpu_has_fast_bf16`) when ``cpu_bf16`` is set; full precision otherwise.
    ``cache=False``: weights are cast again at each use instead of once per region (what a
    region captured in a CUDA graph needs)."""
    if not uses_bf16(device, bf16, cpu_bf16):
        return nullcontext()
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=cache)
    return torch.autocast("cpu", dtype=torch.bfloat16)


def uses_bf16(device: torch.device, bf16: bool, cpu_bf16: bool = False) -> bool:
    """Whether :func:`autocast` runs bfloat16 on ``device`` with these settings."""
    if device.type == "cuda":
        return bf16
    return device.type == "cpu" and cpu_bf16 and cpu_has_fast_bf16()


def set_matmul_precision(device: torch.device, tf32: bool) -> None:
    """On CUDA, float32 matrix products on the tensor cores as TF32 (10-bit mantissa,
    PyTorch's ``"high"``) when ``tf32``, in full float32 otherwise (``"highest"``,
    PyTorch's default).  Process-wide: the trainer that owns the process sets it from its
    config, either way.  Ignored on CPU.  (cuDNN's convolutions and LSTMs take TF32 by
    PyTorch's default whatever this says, in the official code too.)"""
    if device.type == "cuda":
        torch.set_float32_matmul_precision("high" if tf32 else "highest")


@cache  # read once per process: the training loop asks at every step
def cpu_has_fast_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (AMX or AVX512-BF16): there
    bf16 matmuls run several times faster than fp32; elsewhere they are emulated, ~100x
    slower.  Linux reads ``/proc/cpuinfo``; other systems answer ``False``."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"amx_bf16", "avx512_bf16"})
    except OSError:
        pass
    return False


def inference_autocast(device: torch.device, bf16: bool) -> AbstractContextManager[object]:
    """bfloat16 autocast for inference when ``bf16`` is set: on CUDA, or on a CPU with
    hardware bf16 (:func:`cpu_has_fast_bf16`); full precision otherwise."""
    return autocast(device, bf16, cpu_bf16=bf16)


def physical_cores() -> int:
    """Physical cores this process may run on: the distinct (package, core) pairs of
    ``/proc/cpuinfo`` among the CPUs of its affinity mask, so that hyper-threads do not
    count twice (two threads on one core slow matmuls down); the affinity's CPU count
    where ``/proc/cpuinfo`` says nothing."""
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    cores: set[tuple[str, str]] = set()
    cpu, package = -1, "0"
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "processor":
                    cpu = int(value)
                elif key == "physical id":
                    package = value
                elif key == "core id" and (allowed is None or cpu in allowed):
                    cores.add((package, value))
    except (OSError, ValueError):
        cores = set()
    return len(cores) or len(allowed or ()) or os.cpu_count() or 1


def set_cpu_threads(threads: int, processes: int = 1) -> int:
    """Set torch's intra-op threads: ``threads`` when > 0; else, unless ``OMP_NUM_THREADS``
    is set (the user's choice stands), the physical cores shared among ``processes``
    processes on this machine.  Returns the number in use."""
    if threads <= 0 and os.environ.get("OMP_NUM_THREADS"):
        return torch.get_num_threads()
    wanted = threads if threads > 0 else max(1, physical_cores() // max(1, processes))
    torch.set_num_threads(wanted)
    return wanted
