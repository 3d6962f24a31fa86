"""Run settings: ``resources/configs/<arch>.yaml`` into frozen dataclasses, with dotted
overrides (``model.d_model=256``).

Every key is checked (unknown keys are errors), the resolved settings are written to the run
directory as ``config.yaml`` and a resumed run reads them back from there.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from induce.data.config import from_mapping, load_resource_yaml, resource_names
from induce.data.errors import ConfigError


@dataclass(frozen=True)
class DataConfig:
    """Masked-LM batches (item 1 of the training pipeline)."""

    mask_rate: float = 0.3  # per-token masking probability (0.3 PTB, 0.15 BLLIP)
    batch_tokens: int = 4096  # token budget of a training batch (padding included)
    eval_batch_tokens: int = 8192  # evaluation batches (no gradients: can be larger)
    max_length: int = 0  # longer training sentences are skipped (0: keep all)
    eval_seed: int = 1234  # masks of validation/test are drawn from this seed


@dataclass(frozen=True)
class OptimConfig:
    """Adam + gradient clipping + ReduceLROnPlateau on validation loss (the reference)."""

    lr: float = 3e-4
    weight_decay: float = 1.2e-6
    eps: float = 1e-9
    betas: tuple[float, ...] = (0.9, 0.999)
    clip: float = 0.25
    plateau_factor: float = 0.5
    plateau_patience: int = 2
    min_lr: float = 0.0


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 100
    max_steps: int = 0  # stop after this many updates (0: no limit)
    eval_every: int = 0  # validate every N updates (0: at the end of each epoch)
    patience: int = 10  # early stopping: validations without a better perplexity
    log_every: int = 50  # updates between log lines / metrics.jsonl train records
    checkpoint_every: int = 200  # updates between last/ checkpoints (0: only at validation)
    seed: int = 1111
    parse_metrics: bool = True  # UF1 / UAS on validation when the dataset has gold trees
    bf16: bool = True  # autocast to bfloat16 on CUDA (ignored on CPU)
    # the dependency decoder of validation (None: the parser's default; the official UDGN
    # training code validates with argmax heads)
    valid_decoder: str | None = None


@dataclass(frozen=True)
class RunConfig:
    arch: str
    model: dict = field(default_factory=dict)  # checked by the architecture's own config
    data: DataConfig = DataConfig()
    optim: OptimConfig = OptimConfig()
    train: TrainConfig = TrainConfig()

    def to_dict(self) -> dict[str, Any]:
        return _plain(dataclasses.asdict(self))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def architectures() -> list[str]:
    return resource_names("configs")


PRESETS = ("paper", "demo")


def load_config(
    arch: str,
    overrides: list[str] | None = None,
    base: dict[str, Any] | None = None,
    preset: str = "paper",
) -> RunConfig:
    """The shipped config of ``arch`` (or ``base``, e.g. a run's ``config.yaml``) with
    ``key.sub=value`` overrides applied (values are YAML: ``0.1``, ``true``, ``[a, b]``).
    ``preset``: ``paper`` (the papers' settings), ``demo`` (a few minutes on a laptop CPU),
    or a YAML file."""
    if base is None:
        if arch not in architectures():
            raise ConfigError(
                f"unknown architecture {arch!r} (known: {', '.join(architectures())})"
            )
        base = _preset(arch, preset)
    data = _deep_copy(base)
    data.setdefault("arch", arch)
    for item in overrides or []:
        apply_override(data, item)
    config = from_mapping(RunConfig, data, f"{arch} config")
    if config.arch != arch:
        raise ConfigError(f"the config is for {config.arch!r}, not {arch!r}")
    _check(config)
    return config


def apply_override(data: dict[str, Any], item: str) -> None:
    import yaml

    key, sep, text = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"expects key.sub=value, got {item!r}", setting="overrides")
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        raise ConfigError(f"{key}: cannot read the value {text!r}", setting="overrides") from None
    if isinstance(value, str):  # YAML 1.1 reads 3e-4 as text; users mean a number
        try:
            value = float(value)
        except ValueError:
            pass
    parts = key.strip().split(".")
    node = data
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"{key}: {part!r} is not a group of settings", setting="overrides")
        node = child
    node[parts[-1]] = value


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


def _check(config: RunConfig) -> None:
    """Ranges of every setting, named by key (types and finiteness: ``from_mapping``), and
    the architecture's own checks of its ``model`` settings."""
    d, o, t = config.data, config.optim, config.train
    _between("data.mask_rate", d.mask_rate, 0.0, 1.0, low_open=True, high_open=True)
    for key, count in (
        ("data.batch_tokens", d.batch_tokens),
        ("data.eval_batch_tokens", d.eval_batch_tokens),
    ):
        _between(key, count, 1, None)
    _between("data.max_length", d.max_length, 0, None)
    _between("optim.lr", o.lr, 0.0, None, low_open=True)
    for key, value in (
        ("optim.weight_decay", o.weight_decay),
        ("optim.eps", o.eps),
        ("optim.clip", o.clip),
        ("optim.min_lr", o.min_lr),
        ("optim.plateau_patience", o.plateau_patience),
    ):
        _between(key, value, 0, None)
    _between("optim.plateau_factor", o.plateau_factor, 0.0, 1.0, low_open=True, high_open=True)
    if len(o.betas) != 2:
        raise ConfigError(f"optim.betas must be two numbers, got {list(o.betas)}")
    for beta in o.betas:
        _between("optim.betas", beta, 0.0, 1.0, high_open=True)
    for key, count in (
        ("train.epochs", t.epochs),
        ("train.max_steps", t.max_steps),
        ("train.eval_every", t.eval_every),
        ("train.patience", t.patience),
        ("train.log_every", t.log_every),
        ("train.checkpoint_every", t.checkpoint_every),
    ):
        _between(key, count, 0, None)
    from induce.models import model_config  # torch only when a run's settings are loaded

    model_config(config.arch, config.model)
    _check_decoder(config)


def _check_decoder(config: RunConfig) -> None:
    decoder = config.train.valid_decoder
    if decoder is None:
        return
    from induce.models import model_class

    scores = model_class(config.arch).scores_class
    choices = scores.decoders if scores is not None else ()
    if decoder not in choices:
        allowed = ", ".join(choices) or f"none: a {config.arch} model has no parser"
        raise ConfigError(f"train.valid_decoder must be one of {allowed}, got {decoder!r}")


def _between(
    key: str,
    value: float,
    low: float,
    high: float | None,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """``ConfigError`` naming ``key`` unless ``low <= value <= high`` (strict where open)."""
    too_low = value <= low if low_open else value < low
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        lo, hi = "(" if low_open else "[", ")" if high_open or high is None else "]"
        span = f"{lo}{low}, {'inf' if high is None else high}{hi}"
        raise ConfigError(f"{key} must be in {span}, got {value}")


def _preset(arch: str, preset: str) -> dict[str, Any]:
    if preset == "paper":
        return load_resource_yaml("configs", f"{arch}.yaml")
    if preset == "demo":
        return load_resource_yaml("configs", "demo", f"{arch}.yaml")
    from pathlib import Path

    import yaml

    from induce.data.errors import InputError
    from induce.data.files import read_text

    if not Path(preset).is_file():
        raise ConfigError(
            f"must be {' or '.join(PRESETS)} or a YAML file, got {preset!r}", setting="preset"
        )
    try:
        data = yaml.safe_load(read_text(preset))
    except yaml.YAMLError as err:
        raise InputError(f"not valid YAML: {' '.join(str(err).split())}", preset) from None
    if not isinstance(data, dict):
        raise InputError("a config file is a mapping (arch, model, data, optim, train)", preset)
    return data
