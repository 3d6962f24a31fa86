#!/usr/bin/env python3
"""Training step by training step: the official StructFormer/UDGN code and ``induce`` from
the same weights on the same batches, dropout off.

    python bench/step_parity.py --official UDGN_CHECKOUT [--archs structformer,udgn]
        [--steps 10] [--d-model 64] [--layers 2] [--heads 2] [--threads 2]

``UDGN_CHECKOUT`` is a checkout of github.com/yikangshen/UDGN (its ``models.py``: the
``StructFormer`` and ``UDGN`` of ``main.py``).  The official model is built with ``main.py``'s
settings at the given size and dropout 0; ``induce``'s model is the preset's
(``structformer-udgn-repo``, ``udgn-ptb-paper``) filled with the official weights by the
importer (``induce.runs.official``), dropout 0.  Both then take the same Adam steps (lr 1e-3,
eps 1e-9, weight decay 1.2e-6, clipping 0.25) on the same masked 1,024-token batches of
random sentences.  Per step: both losses and both gradient norms before clipping; at the end
the largest relative differences.  Equal to float32 rounding means that a long run of the
two sides differs only by its random draws (dropout, masks, batch order).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PRESETS = {"structformer": "structformer-udgn-repo", "udgn": "udgn-ptb-paper"}
VOCAB, PAD, UNK, MASK = 500, 0, 1, 2


def induce_model(official: Any, arch: str) -> tuple[Any, Any]:
    """The preset's model filled with the official weights, every dropout 0."""
    from induce.models import build_model
    from induce.runs.config import load_config
    from induce.runs.official import MAPPERS, fill_weights

    tensors = {k: v.detach().clone() for k, v in official.state_dict().items()}
    settings, weights = MAPPERS[arch](tensors, "official", None, "softmax")
    config = load_config(arch, preset=settings.pop("preset"))
    base = config.to_dict()
    drops = ("dropout", "attn_dropout", "parser_dropout", "embed_dropout")
    base["model"].update(settings, **{k: 0.0 for k in drops if k in base["model"]})
    config = load_config(arch, base=base)
    model = build_model(arch, config.model, VOCAB, PAD)
    fill_weights(model, weights, "official")
    return model, config


def compare(args: argparse.Namespace, arch: str) -> list[str]:
    import torch
    from side_by_side import official_model  # bench/side_by_side.py: main.py's model

    from induce.runs.batches import Specials, make_batch, plan_batches
    from induce.runs.inference import masked_lm_training_loss
    from induce.train.options import build_optimizer

    torch.manual_seed(0)
    sizes = (args.d_model, args.layers, args.heads, args.d_model // args.heads)
    official = official_model(args.official, arch, VOCAB, PAD, sizes, dropout=0.0).train()
    ours, config = induce_model(official, arch)
    ours.train()
    opt_official = torch.optim.Adam(official.parameters(), lr=1e-3, eps=1e-9, weight_decay=1.2e-6)
    opt_ours = build_optimizer(ours, config.optim)[0]
    rng = random.Random(1)
    sents = [[rng.randrange(3, VOCAB) for _ in range(rng.randint(2, 30))] for _ in range(400)]
    plan = plan_batches([len(s) for s in sents], 1024, "summed")
    specials = Specials(pad=PAD, unk=UNK, mask=MASK)
    lines, worst_loss, worst_grad = [], 0.0, 0.0
    for step in range(args.steps):
        draw = torch.Generator().manual_seed(step)
        batch = make_batch(sents, plan[step % len(plan)], specials, 0.3, draw)
        targets = torch.full_like(batch.ids, PAD).masked_scatter(batch.masked, batch.targets)
        pos = torch.arange(batch.ids.shape[1])[None, :]
        loss_official = official(batch.ids, targets, pos)[0]
        loss_ours = masked_lm_training_loss(ours, ours, batch, contextlib.nullcontext)
        norms = []
        for model, opt, loss in (
            (official, opt_official, loss_official),
            (ours, opt_ours, loss_ours),
        ):
            opt.zero_grad()
            loss.backward()
            norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)))
            opt.step()
        a, b = float(loss_official.detach()), float(loss_ours.detach())
        worst_loss = max(worst_loss, abs(a - b) / abs(a))
        worst_grad = max(worst_grad, abs(norms[0] - norms[1]) / norms[0])
        lines.append(
            f"{arch:<13} {step:>4} {a:>12.6f} {b:>12.6f} {norms[0]:>11.5f} {norms[1]:>11.5f}"
        )
    lines.append(
        f"{arch}: largest relative difference, loss {worst_loss:.1e}, gradient norm "
        f"{worst_grad:.1e} over {args.steps} steps"
    )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--official", required=True, help="a checkout of github.com/yikangshen/UDGN")
    ap.add_argument("--archs", default="structformer,udgn")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    if not (Path(args.official) / "models.py").exists():
        sys.exit(f"error: {args.official}: no models.py (a checkout of yikangshen/UDGN?)")
    import torch

    torch.set_num_threads(args.threads)
    print(f"{'arch':<13} {'step':>4} {'official':>12} {'induce':>12} {'grad off.':>11} "
          f"{'grad ours':>11}")  # fmt: skip
    for arch in args.archs.split(","):
        print("\n".join(compare(args, arch)), flush=True)


if __name__ == "__main__":
    main()
