#!/usr/bin/env python3
"""Training step by training step: the official StructFormer/UDGN code and ``induce`` from
the same weights on the same batches, dropout off; then, with dropout on, the same loss
distribution over many draws.

    python bench/step_parity.py --official UDGN_CHECKOUT [--archs structformer,udgn]
        [--steps 10] [--d-model 64] [--layers 2] [--heads 2] [--head-size N]
        [--baseline] [--draws 0] [--threads 2] [--set model.KEY=VALUE ...]

``UDGN_CHECKOUT`` is a checkout of github.com/yikangshen/UDGN (its ``models.py``: the
``StructFormer`` and ``UDGN`` of ``main.py``).  The official model is built with ``main.py``'s
settings at the given size and dropout 0; ``induce``'s model is the preset's
(``structformer-udgn-repo``, ``udgn-ptb-paper``) filled with the official weights by the
importer (``induce.runs.official``), dropout 0.  Both then take the same Adam steps (lr 1e-3,
eps 1e-9, weight decay 1.2e-6, clipping 0.25) on the same masked 1,024-token batches of
random sentences.  Per step: both losses and both gradient norms before clipping; at the end
the largest relative differences.  Equal to float32 rounding means that a long run of the
two sides differs only by its random draws (dropout, masks, batch order).  Not every model
keeps rounding differences that small: ``--baseline`` also runs the official code against
itself with each weight multiplied by ``1 + 1e-7 * N(0, 1)``, the scale at which the model's
own ``max``/``cummin`` choices amplify float32 rounding.

Dropout's draws cannot be the same on both sides (``induce`` draws its own masks on a CPU),
so ``--draws K`` compares their distributions: after the steps, both models are rebuilt
with the dropouts of ``main.py`` and the preset (0.2; attention 0.1) and the trained weights,
and each computes the training loss of one batch ``K`` times, each time with fresh dropout
masks.  A dropout missing, added or at another rate on one side moves the mean loss or its
spread: the line gives each side's mean and standard deviation and ``z``, the difference of
the means over its standard error (|z| < 2 in 19 runs of 20 when the distributions agree).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))
from sides import PRESETS  # noqa: E402  (bench/ is not a package: found on the path above)

VOCAB, PAD, UNK, MASK = 500, 0, 1, 2


def induce_model(
    official: Any, arch: str, dropout: bool = False, overrides: list[str] | None = None
) -> tuple[Any, Any]:
    """The preset's model filled with the official weights; every dropout 0 unless
    ``dropout`` (then the preset's); ``overrides``: ``model.KEY=VALUE`` settings on top."""
    from induce.models import build_model
    from induce.runs.config import load_config
    from induce.runs.official import MAPPERS, fill_weights

    tensors = {k: v.detach().clone() for k, v in official.state_dict().items()}
    settings, weights = MAPPERS[arch](tensors, "official", None, "softmax")
    config = load_config(arch, preset=settings.pop("preset"))
    base = config.to_dict()
    drops = ("dropout", "attn_dropout", "parser_dropout", "embed_dropout")
    base["model"].update(settings)
    if not dropout:
        base["model"].update({k: 0.0 for k in drops if k in base["model"]})
    config = load_config(arch, overrides, base=base)
    model = build_model(arch, config.model, VOCAB, PAD)
    fill_weights(model, weights, "official")
    return model, config


def compare(args: argparse.Namespace, arch: str) -> list[str]:
    import torch
    from official import official_model  # bench/official.py: main.py's model

    from induce.runs.batches import Specials, make_batch, plan_batches
    from induce.runs.inference import masked_lm_training_loss
    from induce.train.options import build_optimizer

    torch.manual_seed(0)
    sizes = (args.d_model, args.layers, args.heads, args.head_size or args.d_model // args.heads)
    official = official_model(args.official, arch, VOCAB, PAD, sizes, dropout=0.0).train()
    twins = (copy.deepcopy(official), perturbed(official)) if args.baseline else None
    ours, config = induce_model(official, arch, overrides=args.set)
    rng = random.Random(1)
    sents = [[rng.randrange(3, VOCAB) for _ in range(rng.randint(2, 30))] for _ in range(400)]
    plan = plan_batches([len(s) for s in sents], 1024, "summed")
    specials = Specials(pad=PAD, unk=UNK, mask=MASK)
    batches = [
        make_batch(
            sents, plan[step % len(plan)], specials, 0.3, torch.Generator().manual_seed(step)
        )
        for step in range(args.steps)
    ]

    def theirs(model: Any) -> Side:
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-9, weight_decay=1.2e-6)
        return model, opt, lambda batch: model(*official_inputs(batch))[0]

    def mine(batch: Any) -> Any:
        return masked_lm_training_loss(ours, ours, batch, contextlib.nullcontext)

    side = ours, build_optimizer(ours, config.optim)[0], mine
    lines = lockstep(arch, "induce", theirs(official), side, batches)
    if twins is not None:  # copies of the first weights: the lockstep above trained them
        found = lockstep(arch, "itself x (1 + 1e-7 noise)", *map(theirs, twins), batches)
        lines.append(found[-1])
    if args.draws:
        batch = make_batch(sents, plan[0], specials, 0.3, torch.Generator().manual_seed(-1))
        lines.append(dropout_draws(args, arch, official, batch, sizes))
    return lines


Side = tuple[Any, Any, Any]  # (model, optimizer, batch -> training loss)


def official_inputs(batch: Any) -> tuple[Any, Any, Any]:
    """``main.py``'s arguments for a batch: masked ids, targets (padding elsewhere), positions."""
    import torch

    targets = torch.full_like(batch.ids, PAD).masked_scatter(batch.masked, batch.targets)
    return batch.ids, targets, torch.arange(batch.ids.shape[1])[None, :]


def perturbed(model: Any) -> Any:
    """A copy of ``model`` whose every weight is multiplied by ``1 + 1e-7 * N(0, 1)``: float32
    rounding's size, to show how far the model itself carries a rounding difference."""
    import torch

    twin = copy.deepcopy(model)
    with torch.no_grad(), torch.random.fork_rng():
        torch.manual_seed(7)
        for p in twin.parameters():
            p.mul_(1 + 1e-7 * torch.randn_like(p))
    return twin


def lockstep(arch: str, name: str, a: Side, b: Side, batches: list[Any]) -> list[str]:
    """``a`` and ``b`` take the same clipped Adam steps on ``batches``: a line per step (both
    losses, both gradient norms before clipping), then the largest relative differences."""
    import torch

    lines, worst_loss, worst_grad = [], 0.0, 0.0
    for step, batch in enumerate(batches):
        losses, norms = [], []
        for model, opt, loss_of in (a, b):
            model.train()
            opt.zero_grad()
            loss = loss_of(batch)
            loss.backward()
            norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)))
            opt.step()
            losses.append(float(loss.detach()))
        worst_loss = max(worst_loss, abs(losses[0] - losses[1]) / abs(losses[0]))
        worst_grad = max(worst_grad, abs(norms[0] - norms[1]) / norms[0])
        lines.append(
            f"{arch:<13} {step:>4} {losses[0]:>12.6f} {losses[1]:>12.6f} {norms[0]:>11.5f} "
            f"{norms[1]:>11.5f}"
        )
    lines.append(
        f"{arch}: official against {name}: largest relative difference, loss "
        f"{worst_loss:.1e}, gradient norm {worst_grad:.1e} over {len(batches)} steps"
    )
    return lines


def dropout_draws(args: argparse.Namespace, arch: str, trained: Any, batch: Any, sizes: Any) -> str:
    """Both sides with their dropouts and ``trained``'s weights: the training loss of
    ``batch`` over ``args.draws`` dropout draws each (no gradients)."""
    import torch
    from official import official_model

    from induce.runs.inference import masked_lm_training_loss

    official = official_model(args.official, arch, VOCAB, PAD, sizes)  # main.py's dropouts
    official.load_state_dict(trained.state_dict())
    ours = induce_model(official, arch, dropout=True, overrides=args.set)[0]
    official.train()
    losses: tuple[list[float], list[float]] = ([], [])
    with torch.no_grad():
        for k in range(args.draws):
            torch.manual_seed(k)
            losses[0].append(float(official(*official_inputs(batch))[0]))
            losses[1].append(
                float(masked_lm_training_loss(ours, ours, batch, contextlib.nullcontext))
            )
    (m0, s0), (m1, s1), z = agreement(*losses)
    return (
        f"{arch}: training loss over {args.draws} dropout draws, official {m0:.5f} (sd {s0:.5f}), "
        f"induce {m1:.5f} (sd {s1:.5f}), z {z:+.2f}"
    )


def agreement(
    a: list[float], b: list[float]
) -> tuple[tuple[float, float], tuple[float, float], float]:
    """Each sample's mean and standard deviation, and ``z``: the difference of the means
    (``b`` minus ``a``) over its standard error."""
    import statistics

    ma, mb, sa, sb = (
        statistics.fmean(a),
        statistics.fmean(b),
        statistics.stdev(a),
        statistics.stdev(b),
    )
    se = (sa**2 / len(a) + sb**2 / len(b)) ** 0.5
    return (ma, sa), (mb, sb), (mb - ma) / se if se else 0.0


def refusal(args: argparse.Namespace) -> str | None:
    """Why the arguments cannot run (one line), before any model is built; else None."""
    from induce.data.errors import ConfigError
    from induce.runs.config import load_config

    if not (Path(args.official) / "models.py").exists():
        return f"{args.official}: no models.py (a checkout of yikangshen/UDGN?)"
    for item in args.set:
        if not item.startswith("model.") or "=" not in item:
            return f"--set {item}: only model.KEY=VALUE (the optimizer is main.py's)"
    for arch in args.archs.split(","):
        if arch not in PRESETS:
            return f"--archs: {arch!r} is not one of {', '.join(PRESETS)}"
        try:
            load_config(arch, args.set, preset=PRESETS[arch])
        except ConfigError as e:
            return f"--set for {arch}: {e}"
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--official", required=True, help="a checkout of github.com/yikangshen/UDGN")
    ap.add_argument("--archs", default="structformer,udgn")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--head-size", type=int, default=0, help="UDGN's; 0: d-model / heads")
    ap.add_argument(
        "--baseline", action="store_true", help="also the official code against itself, perturbed"
    )
    ap.add_argument("--draws", type=int, default=0, help="dropout draws a side (0: none)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="model.KEY=VALUE",
        help="an induce model setting (e.g. model.lstm_kernel=dense); repeatable",
    )
    args = ap.parse_args()
    problem = refusal(args)
    if problem:
        print(f"step_parity: {problem}", file=sys.stderr)
        sys.exit(2)
    import torch

    torch.set_num_threads(args.threads)
    print(f"{'arch':<13} {'step':>4} {'official':>12} {'induce':>12} {'grad off.':>11} "
          f"{'grad ours':>11}")  # fmt: skip
    for arch in args.archs.split(","):
        print("\n".join(compare(args, arch)), flush=True)


if __name__ == "__main__":
    main()
