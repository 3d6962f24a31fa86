"""The sides of ``bench/side_by_side.py``: their names, the ``induce`` settings each name
stands for, the models at ``--size paper|small`` on both sides, what a side trains through,
and what ``torch.compile`` spent in a compiled side's process.

A side's name is ``official`` or ``induce`` followed by words: ``-bf16`` autocasts to
bfloat16 (``train.bf16`` on CUDA, ``train.cpu_bf16`` on a CPU), ``-tf32`` multiplies float32
matrices as TF32 (``train.tf32``, CUDA), ``-compile`` runs the forward under
``torch.compile`` with dynamic shapes (``train.compile``), ``-regions`` or ``-layers`` instead
compile by regions (``train.compile_scope``: each layer of the stack once, the parser apart
or not at all), and ``-graphs`` (CUDA) replays the step from CUDA graphs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

PRESETS = {"structformer": "structformer-udgn-repo", "udgn": "udgn-ptb-paper"}
SMALL = {"d_model": 256, "n_layers": 4}

SIDES = (
    "official",
    "induce",
    "induce-bf16",
    "induce-tf32",
    "induce-graphs",
    "induce-bf16-graphs",
    "induce-tf32-graphs",
    "induce-compile",
    "induce-bf16-compile",
    "induce-compile-graphs",
    "induce-bf16-compile-graphs",
    # train.compile with train.compile_scope regions / layers (each layer compiled once)
    *(
        f"induce{bf16}-{scope}{graphs}"
        for scope in ("regions", "layers")
        for bf16 in ("", "-bf16")
        for graphs in ("", "-graphs")
    ),
)
# a side's word for what train.compile compiles (train.compile_scope)
COMPILE_WORDS = {"-compile": "model", "-regions": "regions", "-layers": "layers"}
SIDE_WIDTH = max(map(len, SIDES))  # the tables' side column


def chosen_sides(args: argparse.Namespace) -> list[str]:
    """``--sides`` checked (the default: official and induce, and induce-bf16 on CUDA):
    known names, each once, and a checkout of the official code when its side is asked
    for.  The official side, or else the first one given, is the ratios' base."""
    default = "official,induce,induce-bf16" if args.device.startswith("cuda") else "official,induce"
    sides = (args.sides or default).split(",")
    unknown = [side for side in sides if side not in SIDES]
    if unknown:
        sys.exit(f"error: --sides: unknown side {unknown[0]!r}; from {', '.join(SIDES)}")
    if len(set(sides)) < len(sides):
        sys.exit("error: --sides: each side at most once")
    if "official" in sides:
        if not args.official:
            sys.exit("error: the official side needs --official (a checkout of yikangshen/UDGN)")
        if not (Path(args.official) / "models.py").exists():
            sys.exit(f"error: {args.official}: no models.py (a checkout of yikangshen/UDGN?)")
        sides.remove("official")
        sides.insert(0, "official")
    return sides


def sized(size: str) -> tuple[int, int, int, int]:
    """The official model's sizes at ``--size paper|small`` (``official.official_model``)."""
    return (512, 8, 8, 128) if size == "paper" else (SMALL["d_model"], SMALL["n_layers"], 8, 128)


def induce_config(arch: str, size: str, overrides: list[str]) -> Any:
    """``induce``'s settings of the preset at ``size`` with ``overrides`` (``ConfigError``
    when they cannot be)."""
    from induce.runs.config import load_config

    extra = [f"model.{k}={v}" for k, v in SMALL.items()] if size == "small" else []
    return load_config(arch, extra + overrides, preset=PRESETS[arch])


def induce_model(arch: str, size: str, overrides: list[str]) -> tuple[Any, Any]:
    """``induce``'s model of the preset at ``size`` with ``overrides``, and its config."""
    from workload import PAD, VOCAB

    from induce.models import build_model

    config = induce_config(arch, size, overrides)
    return build_model(arch, config.model, VOCAB, PAD), config


def side_settings(side: str, device: str, overrides: list[str]) -> list[str]:
    """``induce``'s settings for a side's words (the module's docstring); ``-graphs`` is not
    a setting but the way ``bench/side_by_side.py`` steps."""
    extra = []
    if "-bf16" in side:
        extra.append("train.bf16=true" if device.startswith("cuda") else "train.cpu_bf16=true")
    if "-tf32" in side:
        extra.append("train.tf32=true")
    scope = compile_scope(side)
    if scope:
        extra += ["train.compile=true", f"train.compile_scope={scope}"]
    return [*overrides, *extra]


def compile_scope(side: str) -> str | None:
    """What a side compiles (``train.compile_scope``), ``None`` when it does not compile."""
    return next((scope for word, scope in COMPILE_WORDS.items() if word in side), None)


def training_net(model: Any, train: Any) -> Any:
    """What a side trains through: ``model``, or under ``train.compile`` the model compiled
    as its ``train.compile_scope`` says."""
    from induce.train.graphs import compiled

    return compiled(model, model.compile_regions(train.compile_scope)) if train.compile else model


def induce_side(side: str, arch: str, size: str, args: argparse.Namespace) -> tuple[Any, Any]:
    """The side's model on ``args.device`` and its config, the matmul precision set."""
    import torch

    from induce.runs.device import set_matmul_precision

    device = torch.device(args.device)
    model, config = induce_model(arch, size, side_settings(side, args.device, args.set))
    set_matmul_precision(device, config.train.tf32)
    return model.to(device), config


def compiled_frames() -> int:
    """How many frames ``torch.compile`` has compiled in this process so far."""
    from torch._dynamo.utils import compilation_time_metrics

    return len(compilation_time_metrics.get("_compile.compile_inner", []))


def compile_report() -> dict[str, Any]:
    """What ``torch.compile`` spent in this process (a compiled side): the frames it
    compiled, seconds per timed phase of at least half a second (Dynamo's tracing,
    AOTAutograd, inductor's code generation, the wait on Triton's or the C++ compiler, the
    kernels' autotuning), and its cache counters (hits of the on-disk caches that
    ``bench/gpu_env.sh`` carries between sittings)."""
    from torch._dynamo.utils import compilation_time_metrics, counters

    phases = {name: sum(times) for name, times in compilation_time_metrics.items()}
    caches = {
        f"{group}.{name}": count
        for group in ("inductor", "aot_autograd")
        for name, count in counters[group].items()
        if "cache" in name
    }
    return {
        "frames": compiled_frames(),
        "seconds": {
            k: round(v, 2) for k, v in sorted(phases.items(), key=lambda kv: -kv[1]) if v >= 0.5
        },
        "caches": caches,
    }


def compiling(report: dict[str, Any]) -> str:
    """One line of :func:`compile_report`: the total, the longest phases, the caches."""
    seconds = report["seconds"]
    total = seconds.get("_compile.compile_inner", 0.0)
    longest = [(k, v) for k, v in seconds.items() if k != "_compile.compile_inner"][:6]
    caches = ", ".join(f"{k} {v}" for k, v in report["caches"].items()) or "no cache counts"
    timed = report.get("timed_frames", 0)
    late = f"; {timed} of them compiled in the timed steps: the rate includes them" if timed else ""
    return (
        f"{report['frames']} frames, {total:.1f} s in Dynamo's compile ("
        + ", ".join(f"{k} {v:.1f}" for k, v in longest)
        + f"); {caches}{late}"
    )
