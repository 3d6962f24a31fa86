"""What the Combiner tests share: a small model from the demo config, a padded batch, and the
gradients a language-model-like loss leaves on some of its parameters."""

from __future__ import annotations

import torch

from induce.models import build_model
from induce.runs.config import load_config


def small_combiner(settings: list[str], seed: int = 0) -> torch.nn.Module:
    """A Combiner over 60 ids (pad 1) from the demo config with ``settings`` on top."""
    config = load_config("combiner", settings, preset="demo")
    torch.manual_seed(seed)
    return build_model("combiner", config.model, 60, 1)


def padded_batch(seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """Three sentences of 11 ids, the second one 6 words long and padded."""
    torch.manual_seed(seed)
    ids = torch.randint(3, 60, (3, 11))
    keep = torch.ones(3, 11, dtype=torch.bool)
    keep[1, 6:] = False
    ids[1, 6:] = 1
    return ids, keep


def gradients_of(model, ids: torch.Tensor, keep: torch.Tensor, part: str) -> list:
    """Back-propagate the mean log-partition of the output at every word; the gradients
    of the parameters whose name holds ``part`` (e.g. ``.gate.``, ``.links.``)."""
    model.logits(model(ids, keep).hidden[keep]).logsumexp(-1).mean().backward()
    return [p.grad for name, p in model.named_parameters() if part in name]
