#!/usr/bin/env python3
"""The arithmetic of one training step (forward and backward), official and ``induce``, on
the batches of ``bench/side_by_side.py``: what no GPU can do faster than its peak allows.

    python bench/step_flops.py [--official UDGN_CHECKOUT] [--archs structformer,udgn]
        [--size paper|small] [--steps 20] [--warmup 3] [--threads 2] [--set KEY=VALUE ...]
        [--json OUT]

Floating-point operations are counted by ``torch.utils.flop_counter.FlopCounterMode`` (two
per multiply-add) by the kind of unit a GPU runs them on: matrix products (``mm``,
``addmm``, ``bmm``: fp32 on the CUDA cores unless ``train.tf32`` or bf16 autocast moves them
to the tensor cores), convolutions and LSTMs (cuDNN, which PyTorch lets take TF32 by default,
on both sides), and scaled-dot-product attention.  An LSTM runs as one fused kernel the
counter does not see, so its products are counted from its weights: each direction of each
layer multiplies ``W_ih`` and ``W_hh`` once per position it reads (``2 (|W_ih| + |W_hh|)``
operations), and the backward pass twice more (the gradients of the inputs and of the
weights); positions are the words (packed sequences) or every padded cell (the dense
kernel of CUDA and bf16 runs).  Elementwise work (softmax, layer norms, dropout, the
optimizer) is not counted: it is bound by memory, not arithmetic.

Prints, per model and side, GFLOP per step (the mean over ``--steps`` batches of 4,096
tokens), MFLOP per token and the share of each kind.  The batches are the timed ones of
``bench/side_by_side.py`` with the same ``--steps`` and ``--warmup`` (the attention's share
grows with a batch's length, so a step's count depends on which batches are timed).  A CPU
is enough: the counts do not depend on the device.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

# bench/ is not a package: its modules are imported from the path set above
from official import official_model  # noqa: E402
from sides import PRESETS, induce_config, induce_model, sized  # noqa: E402
from workload import PAD, VOCAB, batches, corpus  # noqa: E402

KINDS = ("matmul", "conv", "lstm", "attention")
OPS = {  # FlopCounterMode's operator names -> kind
    "mm": "matmul",
    "addmm": "matmul",
    "bmm": "matmul",
    "baddbmm": "matmul",
    "convolution": "conv",
    "convolution_backward": "conv",
}


def kind_of(op: Any) -> str:
    """The kind of a counted operator (``aten.mm`` -> ``matmul``); attention for the SDPA
    kernels, which the counter names by backend."""
    name = str(op).removeprefix("aten.").split(".")[0]
    if "attention" in name:
        return "attention"
    return OPS.get(name, "matmul")


def lstm_flops(lstm: Any, positions: int) -> int:
    """Forward and backward operations of ``lstm`` (``nn.LSTM``, no projection) over
    ``positions`` read by each direction: 3 x 2 x (|W_ih| + |W_hh|) per position."""
    weights = sum(
        getattr(lstm, f"{name}_l{layer}{suffix}").numel()
        for layer in range(lstm.num_layers)
        for suffix in ("", "_reverse")[: 1 + int(lstm.bidirectional)]
        for name in ("weight_ih", "weight_hh")
    )
    return 3 * 2 * weights * positions


def lstms(model: Any) -> list[Any]:
    import torch

    return [m for m in model.modules() if isinstance(m, torch.nn.LSTM)]


def step_flops(loss_of: Any, model: Any, batch: Any, dense: bool) -> dict[str, int]:
    """One step's operations by kind: ``loss_of(batch)`` and its backward under the counter,
    then the LSTMs from their weights (every padded cell when ``dense``)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        loss_of(batch).backward()
    found = dict.fromkeys(KINDS, 0)
    for op, count in counter.get_flop_counts()["Global"].items():
        found[kind_of(op)] += int(count)
    positions = batch.ids.numel() if dense else int(batch.keep.sum())
    found["lstm"] += sum(lstm_flops(m, positions) for m in lstms(model))
    model.zero_grad(set_to_none=True)
    return found


def side_counts(
    args: argparse.Namespace, side: str, arch: str, work: list[Any]
) -> list[dict[str, int]]:
    """Every batch's counts for one side."""
    import torch

    from induce.runs.inference import masked_lm_training_loss

    torch.manual_seed(0)
    if side == "official":
        model = official_model(args.official, arch, VOCAB, PAD, sized(args.size)).train()

        def loss_of(b: Any) -> Any:  # main.py's call: targets at the masked positions
            targets = torch.full_like(b.ids, PAD).masked_scatter(b.masked, b.targets)
            return model(b.ids, targets, torch.arange(b.ids.shape[1])[None, :])[0]

        dense = False  # pack_padded_sequence
    else:
        model, config = induce_model(arch, args.size, args.set)
        model.train()

        def loss_of(b: Any) -> Any:
            import contextlib

            return masked_lm_training_loss(model, model, b, contextlib.nullcontext)

        # the kernel a GPU runs (lstm_kernel: auto is dense on CUDA)
        dense = getattr(config.model, "lstm_kernel", "auto") in ("auto", "dense")
    return [step_flops(loss_of, model, b, dense) for b in work]


def summary(counts: list[dict[str, int]], tokens: float) -> dict[str, Any]:
    """The mean step: GFLOP, MFLOP per token, each kind's share."""
    total = sum(sum(c.values()) for c in counts) / len(counts)
    kinds = {k: sum(c[k] for c in counts) / len(counts) for k in KINDS}
    return {
        "gflop": total / 1e9,
        "mflop_per_token": total / tokens / 1e6,
        "share": {k: v / total for k, v in kinds.items() if v},
    }


def refusal(args: argparse.Namespace, archs: list[str]) -> str | None:
    """Why the arguments cannot run (one line), before any model is built; else None."""
    from induce.data.errors import ConfigError

    if args.steps < 1 or args.warmup < 0:
        return "--steps must be at least 1, --warmup at least 0"
    if args.official and not (Path(args.official) / "models.py").exists():
        return f"{args.official}: no models.py (a checkout of yikangshen/UDGN?)"
    for arch in archs:
        if arch not in PRESETS:
            return f"--archs: {arch!r} is not one of {', '.join(PRESETS)}"
        try:
            induce_config(arch, args.size, args.set)
        except ConfigError as e:
            return f"--set for {arch}: {e}"
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--official", help="a checkout of github.com/yikangshen/UDGN")
    ap.add_argument("--archs", default="structformer,udgn")
    ap.add_argument("--size", default="paper", choices=["paper", "small"])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3, help="batches before the counted ones")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--set", action="append", default=[], help="induce setting KEY=VALUE")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    archs = args.archs.split(",")
    problem = refusal(args, archs)
    if problem:
        print(f"step_flops: {problem}", file=sys.stderr)
        sys.exit(2)
    import torch

    torch.set_num_threads(args.threads)
    work = batches(corpus(Path(args.shared), 20_000), args.warmup + args.steps)[args.warmup :]
    tokens = sum(b.tokens for b in work) / len(work)
    sides = (["official"] if args.official else []) + ["induce"]
    settings = " ".join(args.set) or "the presets"
    print(f"one training step (forward and backward), mean of {args.steps} batches of "
          f"{tokens:,.0f} tokens, {args.size} size; {settings}")  # fmt: skip
    print(f"{'arch':<13} {'side':<9} {'GFLOP':>8} {'MFLOP/token':>12}  shares")
    figures = {}
    for arch in archs:
        for side in sides:
            found = summary(side_counts(args, side, arch, work), tokens)
            figures[f"{arch}/{side}"] = found
            shares = ", ".join(f"{k} {100 * v:.1f}%" for k, v in found["share"].items())
            print(
                f"{arch:<13} {side:<9} {found['gflop']:>8.1f} {found['mflop_per_token']:>12.1f}"
                f"  {shares}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
