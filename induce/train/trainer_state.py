"""Checks of a trainer state (``trainer_state.pt``) before a resumed run restores it.

The file is valid torch format and still may not be what :func:`induce.train.checkpoint.save`
wrote: edited, or another program's.  Each part the restore reads is checked for the shape it
needs, so that a damaged state is one :class:`InputError` (``not a trainer state of induce
(...)``) before anything is restored or written, rather than a ``KeyError`` or a torch error
from the middle of the restore.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from induce.data.errors import InputError

# progress counters that are whole numbers >= 0 where present ("step" must be)
COUNTERS = ("step", "epoch", "position", "bad_evals", "tokens", "saved_step", "validated_step")
MERSENNE_WORDS = 625  # random.getstate()'s internal state: 624 words and a position


class BadState(Exception):
    """What is wrong with a trainer state (the caller adds the file)."""


def check_state(
    saved: dict[str, Any],
    path: Path,
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
) -> None:
    """Raise :class:`InputError` naming ``path`` and what is wrong when ``saved`` is not a
    trainer state that ``optimizer``, ``scheduler`` and the random generators can take."""
    try:
        _check_progress(saved["progress"])
        _check_optimizer(saved["optimizer"], optimizer)
        _check_scheduler(saved["scheduler"], scheduler)
        _check_rng(saved["rng"])
    except BadState as err:
        raise InputError(f"not a trainer state of induce ({err})", str(path)) from None


def _kind(value: object) -> str:
    """A value's kind in messages: what a person editing the file would call it."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if value is None:
        return "nothing (None)"
    if isinstance(value, torch.Tensor):
        return f"a {value.dtype} tensor of shape {tuple(value.shape)}"
    names = {"str": "a string", "list": "a list", "tuple": "a list", "dict": "a mapping"}
    return names.get(type(value).__name__, f"a {type(value).__name__}")


def _mapping(value: object, what: str) -> dict[Any, Any]:
    if not isinstance(value, dict):
        raise BadState(f"its {what} is {_kind(value)}, not a mapping")
    return value


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_progress(value: object) -> None:
    """Step, epoch, position, ... (counts), the best figure and the meter's losses (other
    keys, which a trainer may add, are its own)."""
    progress = _mapping(value, "progress")
    if "step" not in progress:
        raise BadState("its progress has no step")
    for key in (*COUNTERS, "metrics_bytes"):
        if key in progress and not _is_count(progress[key]):
            raise BadState(f"its progress.{key} is {_kind(progress[key])}, not a count")
    for key, item in progress.items():  # the best figure (best_loss, best_f1), the time
        named = isinstance(key, str) and (key.startswith("best_") or key == "seconds")
        if named and not _is_number(item):
            raise BadState(f"its progress.{key} is {_kind(item)}, not a number")
    if progress.get("meter") is not None:
        _check_meter(progress["meter"])
    if not isinstance(progress.get("metrics_sha256", ""), str):
        raise BadState(f"its progress.metrics_sha256 is {_kind(progress['metrics_sha256'])}")
    _check_optim(progress.get("optim", {}))


def _check_optim(value: object) -> None:
    """The optimizer settings the checkpoint ran with: numbers (``betas`` a list of them)."""
    for key, item in _mapping(value, "progress.optim").items():
        numbers = item if key == "betas" and isinstance(item, list) else [item]
        if not all(_is_number(x) for x in numbers):
            raise BadState(f"its progress.optim.{key} is {_kind(item)}, not a number")


def _check_meter(value: object) -> None:
    """The mean-loss meter's state (:class:`induce.train.bookkeeping.Meter`)."""
    meter = _mapping(value, "progress.meter")
    lacking = [key for key in ("losses", "tokens") if key not in meter]
    if meter and lacking:  # an empty meter is restored as none
        raise BadState(f"its progress.meter has no {lacking[0]}")
    series = {"losses": meter.get("losses", [])}
    series.update(_mapping(meter.get("figures", {}), "progress.meter.figures"))
    for key, values in series.items():
        if not isinstance(values, list) or not all(_is_number(x) for x in values):
            raise BadState(f"its progress.meter {key} is {_kind(values)}, not a list of numbers")
    if not _is_count(meter.get("tokens", 0)):
        raise BadState(f"its progress.meter.tokens is {_kind(meter['tokens'])}, not a count")


def _check_optimizer(value: object, optimizer: torch.optim.Optimizer) -> None:
    """Groups of the live optimizer's settings, per-parameter state of tensors (how many
    parameters and of which shapes is checked when it is loaded: another model's state)."""
    saved = _mapping(value, "optimizer state")
    groups, state = saved.get("param_groups"), _mapping(saved.get("state"), "optimizer.state")
    if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
        raise BadState(f"its optimizer.param_groups is {_kind(groups)}, not a list of mappings")
    live = optimizer.param_groups[0]  # build_optimizer makes one group
    for group in groups:
        params = group.get("params")
        if not isinstance(params, list) or not all(_is_count(p) for p in params):
            raise BadState(f"an optimizer group's params is {_kind(params)}, not a list of ids")
        for key, item in group.items():
            expected = live.get(key)
            if key not in _MACHINE and expected is not None and not _alike(item, expected):
                raise BadState(f"its optimizer setting {key} is {_kind(item)}")
    for index, moments in state.items():
        for key, item in _mapping(moments, f"optimizer state of parameter {index}").items():
            if not (isinstance(item, torch.Tensor) or _is_number(item)):
                raise BadState(f"its optimizer {key} of parameter {index} is {_kind(item)}")


# optimizer settings that are the machine's choice, set again after loading
_MACHINE = ("params", "fused", "foreach")


def _check_scheduler(value: object, scheduler: Any) -> None:
    """The plateau schedule's fields: its ``load_state_dict`` takes any mapping as its own
    attributes, so a wrong field would only fail at the first validation."""
    saved = _mapping(value, "scheduler state")
    live = scheduler.state_dict()
    for key, item in saved.items():  # fields of another torch version are left alone
        if live.get(key) is not None and not _alike(item, live[key]):
            raise BadState(f"its scheduler {key} is {_kind(item)}")


def _alike(value: object, expected: object) -> bool:
    """Whether ``value`` may stand where the live object holds ``expected``: the same kind
    (a number for a number, a list of numbers for a list or tuple of them)."""
    if isinstance(expected, bool):
        return isinstance(value, bool)
    if _is_number(expected):
        return _is_number(value)
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(expected)
            and all(_alike(v, e) for v, e in zip(value, expected, strict=True))
        )
    return isinstance(value, type(expected))


def _check_rng(value: object) -> None:
    """The random generators' states: torch's byte tensor (the size this torch writes), the
    optional CUDA one, Python's ``random.getstate()`` (as lists or tuples)."""
    rng = _mapping(value, "rng")
    size = torch.get_rng_state().numel()
    for key in ("torch", "cuda"):
        item = rng.get(key)
        if key == "cuda" and key not in rng:
            continue  # saved on CPU
        if not isinstance(item, torch.Tensor) or item.dtype != torch.uint8:
            raise BadState(f"its rng.{key} is {_kind(item)}, not a uint8 tensor")
        if key == "torch" and item.numel() != size:
            raise BadState(f"its rng.torch is {item.numel()} bytes, not {size}")
    if not _is_random_state(rng.get("python")):
        raise BadState(f"its rng.python is {_kind(rng.get('python'))}, not random.getstate()'s")


def _is_random_state(state: object) -> bool:
    """Whether ``state`` has the form of ``random.getstate()``: a version, the Mersenne
    Twister's 624 words and position, the spare Gaussian (or ``None``)."""
    if not isinstance(state, (list, tuple)) or len(state) != 3:
        return False
    version, words, gauss = state
    return (
        _is_count(version)
        and isinstance(words, (list, tuple))
        and len(words) == MERSENNE_WORDS
        and all(_is_count(w) and w < 2**32 for w in words)
        and (gauss is None or _is_number(gauss))
    )
