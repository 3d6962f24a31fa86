"""Process-group helpers: one code path for a single process and for ``torchrun``."""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0


def processes_here() -> int:
    """Processes of this run on this machine (``torchrun`` sets ``LOCAL_WORLD_SIZE``)."""
    return int(os.environ.get("LOCAL_WORLD_SIZE", "1"))


def start(device_kind: str) -> World:
    """Join the process group when launched by ``torchrun`` (``WORLD_SIZE`` > 1): NCCL on
    CUDA, gloo on CPU."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World()
    if not dist.is_initialized():
        # A process that fails leaves the others waiting in a collective: give up after
        # INDUCE_DIST_TIMEOUT_S seconds (torchrun then stops the job).
        timeout = timedelta(seconds=int(os.environ.get("INDUCE_DIST_TIMEOUT_S", "1800")))
        dist.init_process_group("nccl" if device_kind == "cuda" else "gloo", timeout=timeout)
    return World(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0")))


def barrier(world: World) -> None:
    if world.size > 1:
        dist.barrier()


def stop(world: World) -> None:
    """Leave the process group together: a process that tears its connections down while
    another still finishes its last checkpoint makes gloo abort one of them at exit."""
    if world.size > 1 and dist.is_initialized():
        with contextlib.suppress(RuntimeError):  # a peer already gone: nothing to wait for
            dist.barrier()
        # gloo's worker thread lets go of the barrier's work (and the tensors of the
        # collectives before it) just after the wait returns, and takes the GIL to do it; a
        # process group freed before that, from a deallocation that holds the GIL (DDP's
        # reducer, when the trainer goes), waits for that thread forever: a two-process CPU
        # run hung at exit once in CI (torch 2.13).  Sleeping lets the thread have the GIL.
        time.sleep(0.05)
        dist.destroy_process_group()


def sum_all(world: World, *values: float, device: torch.device | None = None) -> list[float]:
    """Sums over all processes (values unchanged in a single process)."""
    if world.size == 1:
        return list(values)
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return t.tolist()


def any_all(world: World, flag: bool, device: torch.device | None = None) -> bool:
    return sum_all(world, float(flag), device=device)[0] > 0
