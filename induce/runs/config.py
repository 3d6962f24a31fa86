"""Run settings: a preset (``resources/configs/presets/NAME.yaml``: one paper experiment
each, ``paper`` being ``<arch>-ptb-paper``; ``demo``: ``resources/configs/demo/<arch>.yaml``;
or a YAML file) into frozen dataclasses, with dotted overrides (``model.d_model=256``).
A preset may ``extends:`` another and change some values; one that changes ``arch`` replaces
the ``model`` block instead of merging it.

Every key is checked (unknown keys are errors), the resolved settings are written to the run
directory as ``config.yaml`` and a resumed run reads them back from there.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from induce.data.config import (
    Seed,
    Size,
    from_mapping,
    load_resource_yaml,
    parse_yaml,
    resource_names,
)
from induce.data.errors import ConfigError


@dataclass(frozen=True)
class DataConfig:
    """Masked-LM batches (item 1 of the training pipeline)."""

    mask_rate: float = 0.3  # per-token masking probability (0.3 PTB, 0.15 BLLIP)
    batch_tokens: Size = 4096  # token budget of a training batch (padding included)
    eval_batch_tokens: Size = 8192  # evaluation batches (no gradients: can be larger)
    max_length: int = 0  # longer training sentences are skipped (0: keep all)
    # grammars: the length curriculum (Kim et al.): the limit max_length grows by
    # length_step words each epoch up to final_max_length (0: no end)
    length_step: int = 0
    final_max_length: int = 0
    eval_seed: int = 1234  # masks of validation/test are drawn from this seed
    # mask draws averaged for validation/test perplexity (run r uses eval_seed + r; the UDGN
    # code averages 5 random draws, the StructFormer code uses one)
    eval_runs: Size = 1
    # validation's masks during training.  fixed: the same draws (from eval_seed) at every
    # evaluation, so the curve moves with the model only; fresh: new draws at each one (run r
    # at update s from eval_seed + s * eval_runs + r), as the official StructFormer and UDGN
    # code draws them at random, which moves its plateau schedule and best checkpoint with
    # the draw.  Reproducible either way (a resumed run repeats them); test and `induce
    # evaluate` always draw from eval_seed
    eval_masks: Literal["fixed", "fresh"] = "fixed"
    # padded: count x longest <= batch_tokens; summed: the reference code's batchify
    # (longest first, summed lengths < batch_tokens)
    batching: Literal["padded", "summed"] = "summed"
    # chart, grammars: sentences per update (0: batches by the token budget, as the masked
    # LMs; a grammar needs it: its batches are of sentences of one length)
    batch_sentences: int = 0
    # chart: how an epoch's batches are drawn.  batches: sentences sorted by length and cut
    # into batches once, the batch order shuffled per epoch (little padding); sentences:
    # benepar's (its DataLoader, shuffle=True): the sentences shuffled per epoch and cut into
    # new batches, each run as sub-batches of similar length under subbatch_tokens with the
    # gradients summed (its subbatching.split), one update per batch
    shuffle: Literal["batches", "sentences"] = "batches"
    subbatch_tokens: Size = 2000  # chart, shuffle: sentences (benepar --subbatch-max-tokens)
    # grammars: which sentences of one length share a batch.  text: consecutive ones in the
    # text's order (the TN-PCFG repository's sampler); shuffled: in an order drawn once from
    # the seed, fixed for the run (Kim et al.'s preprocess.py sorts by length with
    # np.argsort, which scrambles the sentences of one length across the corpus); argsort:
    # that very order, the same for every seed (numpy's sort decides it, so it may differ
    # between numpy versions and CPUs: the bench's way to train on Kim's exact batches)
    length_groups: Literal["text", "shuffled", "argsort"] = "text"


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
    # on CUDA, Adam's fused kernel (one launch updates every parameter, where the default
    # launches several per parameter group); ignored on CPU, whose default loop keeps its
    # earlier results bit for bit
    fused: bool = True
    # on CPU too (torch >= 2.4): the C-PCFG's Adam step 4-6x faster, but its rounding is not
    # the default loop's (1.5e-8 apart after 20 steps), so off: every CPU figure so far was
    # measured with the loop
    fused_cpu: bool = False


@dataclass(frozen=True)
class TrainConfig:
    epochs: Size = 100
    max_steps: int = 0  # stop after this many updates (0: no limit)
    eval_every: int = 0  # validate every N updates (0: at the end of each epoch)
    patience: int = 0  # early stopping after N validations without a better loss (0: off)
    log_every: int = 50  # updates between log lines / metrics.jsonl train records
    checkpoint_every: int = 200  # updates between last/ checkpoints (0: only at validation)
    seed: Seed = 1111  # torch.manual_seed's: 0 to 2**64 - 1
    parse_metrics: bool = True  # UF1 / UAS on validation when the dataset has gold trees
    bf16: bool = False  # autocast to bfloat16 on CUDA (ignored on CPU)
    # autocast to bfloat16 on a CPU with AMX or AVX512-BF16 (ignored elsewhere: emulated
    # bf16 is ~100x slower); matmuls and convolutions in bf16, the parsers' structure
    # computations, softmax statistics and the loss in fp32, fp32 master weights
    cpu_bf16: bool = False
    # on one GPU, each training step replayed from a CUDA graph captured once per bucket of
    # batch shapes (induce.train.graphs; masked LMs): at paper size an eager step is bound
    # by kernel launches, not arithmetic (H100: 1.6x the eager step in fp32, 4x in bf16).
    # Ignored on CPU and under torchrun (DDP's gradient hooks are not captured)
    cuda_graphs: bool = True
    # masked LMs: the model's forward under torch.compile (dynamic shapes: one compilation
    # serves every batch shape; on CPU a few, past 4,096 summed values), which fuses the small
    # memory-bound kernels that remain of a step replayed from CUDA graphs (autocast's
    # casts, layer norms, dropout); its own dropout masks, not the eager ones.  Validation
    # and parsing stay eager.  Compiling takes a minute or more at the start of a run
    compile: bool = False
    # what train.compile compiles: model (the whole forward as one graph: the most fusion
    # and the longest compilation), regions (each layer of the stack on its own, one
    # compilation serving every layer, since they run the same code, and the parser's
    # read-out apart), layers (the layers only; the parser stays eager).  Cold, on a CPU at
    # paper size: StructFormer 142 / 91 / 30 s, UDGN 77 / 39 / 31 s (bench/RESULTS.md)
    compile_scope: Literal["model", "regions", "layers"] = "model"
    # on CUDA, float32 matrix products as TF32 on the tensor cores (10-bit mantissa; the
    # official code multiplies in full fp32, but its convolutions and LSTMs take TF32 by
    # PyTorch's default on both sides); ignored on CPU and under bf16 autocast's matmuls
    tf32: bool = False
    # CPU threads of each process (0: the physical cores, shared among the processes of a
    # torchrun on one machine; OMP_NUM_THREADS, when set, is kept)
    threads: int = 0
    # the dependency decoder of validation (None: the parser's default; the official UDGN
    # training code validates with argmax heads)
    valid_decoder: str | None = None
    # a local BERT folder the model starts from (combiner; its sizes become the model's)
    init_from: str | None = None
    # updates of linear learning-rate warm-up (every arch; the plateau schedule starts after)
    warmup: int = 0
    # the warm-up's first update at rate 0, update k at lr * (k - 1) / warmup (benepar's
    # WarmupThenReduceLROnPlateau sets the rate after each update); false: lr * k / warmup
    warmup_from_zero: bool = False
    # chart: dev evaluations per epoch (0: use eval_every) and the EVALB preset of dev F1
    # (the plateau and patience then follow F1)
    evals_per_epoch: int = 0
    evalb: str = "collins"
    # where the train and eval records go: jsonl (the run's metrics.jsonl, which report
    # reads; always) and tensorboard (the same numbers as scalars in RUN/tensorboard,
    # torch.utils.tensorboard: pip install 'induce[tensorboard]')
    log: tuple[Literal["jsonl", "tensorboard"], ...] = ("jsonl",)


@dataclass(frozen=True)
class ProtocolConfig:
    """What a preset says about the experiment beyond training: recorded in the run, shown
    by ``report``, followed by ``parse`` (its default decoder) and the scripts."""

    name: str = "custom"
    source: str = ""  # the paper and code the values come from
    dataset: str = ""  # how to make its data (the preprocess command)
    test_decoder: str | None = None  # the decoder of reported parses (None: the model's)
    brackets: str = "structformer"  # the unsupervised constituency convention
    deps: str = "position"  # the dependency convention
    gold_deps: str = ""  # the dependency conversion the paper's DDA/UDA are against


@dataclass(frozen=True)
class RunConfig:
    arch: str
    model: dict = field(default_factory=dict)  # checked by the architecture's own config
    data: DataConfig = DataConfig()
    optim: OptimConfig = OptimConfig()
    train: TrainConfig = TrainConfig()
    protocol: ProtocolConfig = ProtocolConfig()

    def to_dict(self) -> dict[str, Any]:
        return _plain(dataclasses.asdict(self))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def with_defaults(settings: dict[str, Any]) -> dict[str, Any]:
    """A run's ``config.yaml`` with the ``data``/``optim``/``train``/``protocol`` keys it
    lacks filled in from their defaults: a run written before a key existed then compares
    equal to one written after it (``report`` groups runs by their settings)."""
    out = dict(settings)
    for name, kind in (
        ("data", DataConfig),
        ("optim", OptimConfig),
        ("train", TrainConfig),
        ("protocol", ProtocolConfig),
    ):
        given = out.get(name)
        if given is None or isinstance(given, dict):
            out[name] = {**_plain(dataclasses.asdict(kind())), **(given or {})}
    return out


_PAPER = "-ptb-paper"

# The checkpoints of a run that parse, sample and evaluate load, by name (``--weights``).
WEIGHT_CHOICES = ("best", "last")


def architectures() -> list[str]:
    """Every architecture has its paper preset ``<arch>-ptb-paper``."""
    return [n[: -len(_PAPER)] for n in presets() if n.endswith(_PAPER)]


def presets() -> list[str]:
    """The named presets shipped in ``resources/configs/presets/``."""
    return resource_names("configs", "presets")


def load_config(
    arch: str | None,
    overrides: list[str] | None = None,
    base: dict[str, Any] | None = None,
    preset: str = "paper",
) -> RunConfig:
    """The ``preset`` settings (or ``base``, e.g. a run's ``config.yaml``) with
    ``key.sub=value`` overrides applied (values are YAML: ``0.1``, ``true``, ``[a, b]``).
    ``preset``: ``paper`` (``<arch>-ptb-paper``), ``demo`` (a few minutes on a laptop CPU), a
    named preset (which fixes ``arch``; ``arch=None`` takes it) or a YAML file."""
    if base is None:
        if arch is not None and arch not in architectures():
            raise ConfigError(
                f"unknown architecture {arch!r} (known: {', '.join(architectures())})"
            )
        base = _preset(arch, preset)
    data = _deep_copy(base)
    arch = arch or str(data.get("arch") or "")
    if not arch:
        raise ConfigError(f"the preset {preset!r} names no arch: give one", setting="arch")
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
    if "jsonl" not in t.log:
        raise ConfigError("train.log must hold jsonl: metrics.jsonl is the run's record")
    _between("data.eval_runs", d.eval_runs, 1, None)
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
        ("train.threads", t.threads),
    ):
        _between(key, count, 0, None)
    from induce.models import model_config  # torch only when a run's settings are loaded

    _check_decoder(config, model_config(config.arch, config.model))


def _check_decoder(config: RunConfig, model: Any) -> None:
    """The decoders named in the settings: the architecture's, and usable with its
    settings (the model config's ``decoder_problem``)."""
    from induce.models import decoders

    choices = decoders(config.arch)
    for key, decoder in (
        ("train.valid_decoder", config.train.valid_decoder),
        ("protocol.test_decoder", config.protocol.test_decoder),
    ):
        if decoder is not None and decoder not in choices:
            allowed = ", ".join(choices) or f"none: a {config.arch} model has no parser"
            raise ConfigError(f"{key} must be one of {allowed}, got {decoder!r}")
        problem = None if decoder is None else model.decoder_problem(decoder)
        if problem is not None:
            raise ConfigError(f"{key}: {problem}")


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


def _preset(arch: str | None, preset: str) -> dict[str, Any]:
    """The settings of ``preset`` for ``arch``, its ``extends:`` chain resolved."""
    if preset in ("paper", "demo"):
        if arch is None:
            raise ConfigError(f"the {preset} preset needs an architecture", setting="arch")
        if preset == "demo":
            return _resolve(load_resource_yaml("configs", "demo", f"{arch}.yaml"), ["demo"])
        preset = arch + _PAPER
    if preset in presets():
        return _resolve(load_resource_yaml("configs", "presets", f"{preset}.yaml"), [preset])
    return _resolve(_read_file(preset), [preset])


def _read_file(preset: str) -> dict[str, Any]:
    from pathlib import Path

    from induce.data.errors import InputError
    from induce.data.reading import read_text

    if not Path(preset).is_file():
        raise ConfigError(
            f"must be paper, demo, a preset ({', '.join(presets())}) or a YAML file, "
            f"got {preset!r}",
            setting="preset",
        )
    data = parse_yaml(read_text(preset), preset)
    if not isinstance(data, dict):
        raise InputError("a config file is a mapping (arch, model, data, optim, train)", preset)
    return data


def _resolve(data: dict[str, Any], chain: list[str]) -> dict[str, Any]:
    """``data`` over the preset it ``extends`` (recursively); changing ``arch`` replaces the
    ``model`` block, anything else is merged key by key."""
    parent = data.pop("extends", None)
    if parent is None:
        return data
    if parent in chain or parent not in presets():
        why = "a cycle" if parent in chain else "no such preset"
        raise ConfigError(f"{chain[-1]} extends {parent!r}: {why}", setting="preset")
    base = _resolve(load_resource_yaml("configs", "presets", f"{parent}.yaml"), chain + [parent])
    if data.get("arch", base.get("arch")) != base.get("arch"):
        base.pop("model", None)
    return _merge(base, data)


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out
