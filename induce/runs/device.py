"""Where a model runs, and in which precision."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from functools import cache

import torch

from induce.data.errors import ConfigError


def pick_device(spec: str, local_rank: int | None = None) -> torch.device:
    """``auto`` (CUDA when available), ``cpu``, ``cuda`` or ``cuda:N``; under ``torchrun``
    (``local_rank`` given) plain ``cuda`` means this process's own GPU."""
    if spec == "auto":
        spec = "cuda" if torch.cuda.is_available() else "cpu"
    if spec.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ConfigError(f"{spec}: CUDA is not available on this machine", setting="device")
        if spec == "cuda" and local_rank is not None:
            spec = f"cuda:{local_rank}"
    elif spec != "cpu":
        raise ConfigError(f"must be auto, cpu, cuda or cuda:N, got {spec!r}", setting="device")
    return torch.device(spec)


def autocast(
    device: torch.device, bf16: bool, cpu_bf16: bool = False
) -> AbstractContextManager[object]:
    """bfloat16 autocast on CUDA when ``bf16`` is set, on a CPU with hardware bf16
    (:func:`cpu_has_fast_bf16`) when ``cpu_bf16`` is set; full precision otherwise."""
    if device.type == "cuda" and bf16:
        return torch.autocast("cuda", dtype=torch.bfloat16)
    if device.type == "cpu" and cpu_bf16 and cpu_has_fast_bf16():
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return nullcontext()


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
    """bfloat16 autocast for inference: on CUDA, or on a CPU with hardware bf16
    (:func:`cpu_has_fast_bf16`); full precision otherwise."""
    if bf16 and (device.type == "cuda" or cpu_has_fast_bf16()):
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return nullcontext()
