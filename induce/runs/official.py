"""Official StructFormer and UDGN checkpoints as induce run directories.

The reference code of both papers saves ``torch.save([model, criterion, optimizer,
scheduler])``: a whole pickled model, readable only with the reference classes importable
and by running the pickle's code (``trust_pickle``).  A plain state dict (``torch.save(
model.state_dict())`` or safetensors) needs neither.  The vocabulary comes from the
reference's pickled ``Dictionary`` (read by an unpickler that admits that class alone) or
from a word list, one word per line in id order.

Sources understood (told apart by their keys):

* google-research ``structformer/`` StructFormer (``--arch structformer``);
* the UDGN repository's StructFormer variant: the same model with non-affine LayerNorms in
  its layers (identity weights in induce) and no relative position bias;
* the UDGN repository's UDGN (``--arch udgn``).

Sizes are read from the tensor shapes; settings that no tensor records (dropouts, the
data and optimiser settings, the test decoder) come from the preset of the reference's
protocol (``structformer-ptb-paper``, ``structformer-udgn-repo``, ``udgn-ptb-paper``); the
relations and their weighting, which no tensor records either, are arguments.  Shapes:
``V`` vocabulary, ``D`` width, ``H`` heads, ``d`` head size, ``L`` layers, ``R`` relations.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from induce.data.dictionaries import read_dictionary
from induce.data.errors import ConfigError, InputError
from induce.data.normalize import Normalization, load_tagset
from induce.data.vocab import MASK, PAD, UNK, Vocabulary
from induce.models import build_model, model_config
from induce.runs import directory as rd
from induce.runs.config import load_config
from induce.runs.official_files import read_state_dict
from induce.runs.weights import save_weights

CHECKPOINT_NAME = "00000000-import"
# the presets of each reference's training script and test protocol: what a state dict does
# not record (dropouts, data, optimiser, the test decoder) comes from them
GOOGLE_STRUCTFORMER, UDGN_REPO_STRUCTFORMER, UDGN = (
    "structformer-ptb-paper",
    "structformer-udgn-repo",
    "udgn-ptb-paper",
)
RELATION_NAMES = {"head": "parent", "child": "dependent"}  # official -> induce
WEIGHT_ACTS = ("softmax", "sigmoid")
POSITIONS = 500  # rows of the reference's learned position table
RELATIVE = 256  # the reference's relative bias: column 256 + |i - j| of a [H, 512] table


# -- key mapping ---------------------------------------------------------------------------


def shape_of(
    tensors: dict[str, torch.Tensor], key: str, dims: str, file: str, what: str
) -> tuple[int, ...]:
    """The shape of ``tensors[key]``, a tensor whose shape sizes the model, checked against
    ``dims`` (its axes' names, ``"V, D"``: as many axes, none empty).  Otherwise the file is
    not an official ``what`` checkpoint, and an :class:`InputError` names the tensor."""
    if key not in tensors:
        raise InputError(f"not an official {what} checkpoint: no {key}", file)
    shape = tuple(tensors[key].shape)
    if len(shape) != len(dims.split(",")) or 0 in shape:
        raise InputError(
            f"not an official {what} checkpoint: {key} is of shape {list(shape)}, "
            f"expected [{dims}]",
            file,
        )
    return shape


class Weights(dict[str, torch.Tensor]):
    """induce's weights by name, each remembering the official tensor it was made of (for
    messages)."""

    def __init__(self) -> None:
        super().__init__()
        self.origin: dict[str, str] = {}


class _Mapping:
    """Official tensors consumed one by one into induce names; what is never consumed is
    unexpected, what is asked for and absent is missing."""

    def __init__(self, tensors: dict[str, torch.Tensor], file: str, what: str) -> None:
        self.left = dict(tensors)
        self.file, self.what = file, what
        self.missing: list[str] = []
        self.out = Weights()

    def need(self, key: str, dims: str) -> tuple[int, ...]:
        """The shape of a tensor that sizes the model (``dims`` names its axes, ``"V, D"``):
        absent, of another rank or with an empty axis, nothing can be built."""
        return shape_of(self.left, key, dims, self.file, self.what)

    def take(self, key: str) -> torch.Tensor:
        if key not in self.left:
            self.missing.append(key)
            return torch.empty(0)
        return self.left.pop(key)

    def put(self, name: str, key: str) -> None:
        self.out[name] = self.take(key)
        self.out.origin[name] = key

    def count(self, pattern: str) -> int:
        """How many ``i`` have ``pattern.format(i)`` among the keys."""
        n = 0
        while pattern.format(n) in self.left:
            n += 1
        return n

    def finish(self) -> dict[str, torch.Tensor]:
        if self.missing or self.left:
            raise InputError(
                f"does not fit the official {self.what}: missing {self.missing[:4]}, "
                f"unexpected {sorted(self.left)[:4]}",
                self.file,
            )
        return self.out


def _tied_output(m: _Mapping) -> None:
    """The reference ties its output layer to the embeddings, as induce does."""
    m.put("embed.weight", "emb.weight")
    tied = m.take("output_layer.weight")
    if tied.numel() and not torch.equal(tied, m.out["embed.weight"]):
        raise InputError("the output layer is not tied to the embeddings", m.file)
    m.put("out_bias", "output_layer.bias")
    m.put("norm.weight", "norm.weight")
    m.put("norm.bias", "norm.bias")


def map_structformer(
    tensors: dict[str, torch.Tensor],
    file: str,
    relations: Sequence[str] | None = None,
    weight_act: str = "softmax",
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """induce ``model:`` settings and weights of an official StructFormer.

    Official: ``emb [V, D]``, ``layers.i.self_attn.{q,k,v,out}_proj``, ``relative_bias
    [H, 512]``, ``layers.i.norm`` / ``feedforward.{0,1,4}`` (LayerNorm, ``D -> 4D``,
    ``4D -> D``), ``parser_layers.k.0.conv [D, D, w]``, ``distance_ff`` / ``height_ff``,
    ``_rel_weight [L, H, R]``, ``_scaler [2]``."""
    m = _Mapping(tensors, file, "StructFormer")
    n_layers, n_heads, n_rel = m.need("_rel_weight", "L, H, R")
    d_model = m.need("emb.weight", "V, D")[1]
    if m.count("layers.{}.self_attn.q_proj.weight") != n_layers:
        raise InputError(f"_rel_weight is of {n_layers} layers, the encoder is not", file)
    google = "layers.0.norm.weight" in m.left  # the UDGN repository's has no affine norms
    relative = "layers.0.self_attn.relative_bias" in m.left
    absolute = "pos_emb.weight" in m.left
    rows = m.need("pos_emb.weight", "P, D")[0] if absolute else POSITIONS
    if relative and absolute:
        raise ConfigError("the checkpoint has position embeddings and a relative bias")
    if weight_act not in WEIGHT_ACTS:
        raise ConfigError(f"must be one of {', '.join(WEIGHT_ACTS)}", setting="weight_act")
    n_parser = m.count("parser_layers.{}.0.conv.weight")
    settings: dict[str, Any] = {
        **dict(d_model=d_model, n_layers=n_layers, n_heads=n_heads, relation_weight=weight_act),
        "d_ff": m.need("layers.0.feedforward.1.weight", "F, D")[0],
        "preset": GOOGLE_STRUCTFORMER if google else UDGN_REPO_STRUCTFORMER,
        "position": "relative" if relative else "absolute" if absolute else "none",
        "max_length": RELATIVE - 1 if relative else rows,
        "n_parser_layers": n_parser,
        "conv_size": m.need("parser_layers.0.0.conv.weight", "D, D, W")[2] if n_parser else 9,
        "relations": _relations(relations, n_rel),
        "norm_affine": google,
    }
    _tied_output(m)
    if absolute:
        m.put("positions.weight", "pos_emb.weight")
    for i in range(n_layers):
        _encoder_layer(m, f"layers.{i}.", google, relative)
    for k in range(n_parser):
        for part in ("weight", "bias"):
            m.put(f"parser.{k}.0.conv.{part}", f"parser_layers.{k}.0.conv.{part}")
    for part in ("weight", "bias"):
        m.put(f"distance_head.0.conv.{part}", f"distance_ff.0.conv.{part}")
        m.put(f"distance_head.3.{part}", f"distance_ff.3.{part}")
        m.put(f"height_head.0.{part}", f"height_ff.0.{part}")
        m.put(f"height_head.3.{part}", f"height_ff.3.{part}")
    m.put("relation_logits", "_rel_weight")
    m.put("log_temperature", "_scaler")
    return settings, m.finish()


def _encoder_layer(m: _Mapping, prefix: str, google: bool, relative: bool) -> None:
    """One official ``TransformerLayer`` into induce's ``EncoderLayer`` (same prefix)."""
    attn = prefix + "self_attn."
    for part in ("weight", "bias"):  # q, k, v stacked in that order: [3D, D]
        qkv = [m.take(f"{attn}{p}_proj.{part}") for p in "qkv"]
        if all(q.numel() for q in qkv) and (
            qkv[0].dim() == 0 or any(q.shape != qkv[0].shape for q in qkv)
        ):
            shapes = ", ".join(str(list(q.shape)) for q in qkv)
            raise InputError(f"{attn}q/k/v_proj.{part} are of shapes {shapes}", m.file)
        m.out[f"{prefix}attn.qkv.{part}"] = (
            torch.cat(qkv) if all(q.numel() for q in qkv) else qkv[0]
        )
        m.out.origin[f"{prefix}attn.qkv.{part}"] = f"{attn}q/k/v_proj.{part}"
        m.put(f"{prefix}attn.out.{part}", f"{attn}out_proj.{part}")
        m.put(f"{prefix}ff.0.{part}", f"{prefix}feedforward.1.{part}")
        m.put(f"{prefix}ff.3.{part}", f"{prefix}feedforward.4.{part}")
        for name, key in (("norm_attn", "norm"), ("norm_ff", "feedforward.0")):
            if google:  # the UDGN repository's are non-affine: model.norm_affine false
                m.put(f"{prefix}{name}.{part}", f"{prefix}{key}.{part}")
    if relative:  # column 256 + |i - j| -> row |i - j|: [256, H]
        key = attn + "relative_bias"
        if key in m.left:
            m.need(key, "H, 512")
            m.out[f"{prefix}attn.relative.bias.weight"] = m.take(key)[:, RELATIVE:].T
            m.out.origin[f"{prefix}attn.relative.bias.weight"] = key
        else:
            m.missing.append(key)


def _relations(relations: Sequence[str] | None, n_rel: int) -> list[str]:
    """induce's relation names, in the order the reference stacks them (head, child)."""
    if relations is None and n_rel != 2:
        raise ConfigError(f"is needed: the checkpoint mixes {n_rel} relation(s)", "relations")
    relations = ("head", "child") if relations is None else relations
    unknown = [r for r in relations if r not in RELATION_NAMES]
    if unknown:  # the reference's "cibling": induce's StructFormer has no sibling relation
        raise ConfigError(f"{unknown[0]!r} is not a relation induce has (head, child)", "relations")
    if len(set(relations)) != n_rel or len(relations) != n_rel:
        raise ConfigError(
            f"names {len(relations)} relation(s), the checkpoint {n_rel}", "relations"
        )
    return [RELATION_NAMES[r] for r in ("head", "child") if r in relations]


def map_udgn(
    tensors: dict[str, torch.Tensor],
    file: str,
    relations: Sequence[str] | None = None,
    weight_act: str = "softmax",
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """induce ``model:`` settings and weights of an official UDGN.

    Official: ``emb``, ``parser_emb [V, D]``, ``parser_layers`` (a BiLSTM), ``parser_ff
    [2D, 2D]``, ``layers.i.self_attn.proj [4 H d, D]`` (q, k, v, gate), ``out_proj
    [D, H d]``, ``rels_bias [2, H]`` (j before i, j after i), ``norm``, ``output_layer``."""
    if relations is not None or weight_act != "softmax":
        raise ConfigError("relations and weight_act describe a StructFormer, not a UDGN")
    m = _Mapping(tensors, file, "UDGN")
    d_model = m.need("emb.weight", "V, D")[1]
    n_layers = m.count("layers.{}.self_attn.proj.weight")
    if n_layers < 1:
        raise InputError("not an official UDGN checkpoint: no layers.0.self_attn.proj", file)
    n_heads = m.need("layers.0.self_attn.rels_bias", "2, H")[1]
    width = m.need("layers.0.self_attn.out_proj.weight", "D, H d")[1]
    if width % n_heads or m.need("layers.0.self_attn.proj.weight", "4 H d, D")[0] != 4 * width:
        raise InputError("the attention projections do not fit 4 parts of H heads", file)
    absolute = "pos_emb.weight" in m.left
    rows = m.need("pos_emb.weight", "P, D")[0] if absolute else POSITIONS
    settings: dict[str, Any] = {
        **dict(d_model=d_model, head_size=width // n_heads, n_layers=n_layers, n_heads=n_heads),
        **dict(n_parser_layers=m.count("parser_layers.weight_ih_l{}"), preset=UDGN),
        **dict(position="absolute" if absolute else "none", max_length=rows),
    }
    _tied_output(m)
    m.put("parser_embed.weight", "parser_emb.weight")
    if absolute:
        m.put("positions.weight", "pos_emb.weight")
    for key in [k for k in m.left if k.startswith("parser_layers.")]:  # both nn.LSTM
        m.put("lstm." + key.removeprefix("parser_layers."), key)
    m.put("parser_ff.weight", "parser_ff.weight")
    m.put("parser_ff.bias", "parser_ff.bias")
    for i in range(n_layers):
        src = f"layers.{i}.self_attn."
        for part in ("weight", "bias"):
            m.put(f"layers.{i}.proj.{part}", f"{src}proj.{part}")
            m.put(f"layers.{i}.out.{part}", f"{src}out_proj.{part}")
        m.put(f"layers.{i}.direction_bias", f"{src}rels_bias")
    return settings, m.finish()


# what the importer knows, by the official architecture's name
MAPPERS = {"structformer": map_structformer, "udgn": map_udgn}
ARCHS = tuple(MAPPERS)


# -- the run directory ---------------------------------------------------------------------


def import_checkpoint(
    path: str | os.PathLike[str],
    arch: str,
    out: str | os.PathLike[str],
    dictionary: str | os.PathLike[str],
    trust_pickle: bool = False,
    relations: Sequence[str] | None = None,
    weight_act: str = "softmax",
    normalization: Normalization | None = None,
) -> Path:
    """Write ``out``, a run directory of ``arch`` holding the official checkpoint ``path``
    (its only checkpoint, both ``best`` and ``last``) with the vocabulary ``dictionary``.

    ``relations`` (official names, ``head``/``child``) and ``weight_act`` describe a
    StructFormer's relation mixture, which no tensor records.  ``normalization``: how the
    reference prepared its words (lower-cased, digit runs as ``N``, PTB word tags)."""
    if arch not in ARCHS:
        raise ConfigError(f"must be one of {', '.join(ARCHS)}", setting="arch")
    words = read_dictionary(dictionary)
    tensors = read_state_dict(path, trust_pickle)
    settings, weights = MAPPERS[arch](tensors, str(path), relations, weight_act)
    rows = weights["embed.weight"].shape[0]
    if rows != len(words):
        why = f"{len(words)} words, the checkpoint {rows}: another corpus's dictionary"
        raise InputError(why, str(dictionary))
    base = load_config(arch, preset=settings.pop("preset")).to_dict()
    merged = {**base["model"], **settings}  # the preset's, where the tensors say nothing
    base["model"] = model_settings(arch, merged, str(path))  # every setting, written
    config = load_config(arch, base=base)
    # the reference's ids are kept as they are: induce finds its specials by name
    vocab = Vocabulary(words, specials=(UNK, PAD, MASK), settings={"source": str(dictionary)})
    model = build_model(arch, config.model, len(vocab), vocab.id(PAD))
    fill_weights(model, weights, str(path))
    norm = normalization or Normalization(
        word_tags=load_tagset("ptb_word_tags"), tagset="ptb_word_tags"
    )
    sources = {
        "checkpoint": str(Path(path).resolve()),
        "dictionary": str(Path(dictionary).resolve()),
    }
    record = dict(path=None, format=None, normalization=norm.to_dict(), sources=sources)
    return write_imported_run(Path(out), config, vocab, record, model)


def model_settings(arch: str, settings: dict[str, Any], file: str) -> dict[str, Any]:
    """Every ``model:`` setting of ``arch``, its sizes read from the tensors of ``file``:
    sizes that make no valid model (heads that do not divide the width) are the file's
    fault, an :class:`InputError` naming it."""
    try:
        return dataclasses.asdict(model_config(arch, settings))
    except ConfigError as err:
        raise InputError(f"its tensors' sizes make no valid {arch}: {err}", file) from None


def fill_weights(model: torch.nn.Module, weights: dict[str, torch.Tensor], file: str) -> None:
    """Every induce parameter from ``weights``, shapes checked against the model the sizes
    read from the tensors built: a tensor of another shape, or one holding NaN or an
    infinity, is named (the official name, where ``weights`` are a mapper's
    :class:`Weights`)."""
    own = model.state_dict()
    missing = sorted(set(own) - set(weights))
    unexpected = sorted(set(weights) - set(own))
    wrong = [k for k in own if k in weights and tuple(weights[k].shape) != tuple(own[k].shape)]
    if missing or unexpected:
        raise InputError(
            f"the weights do not fill the induce model: missing {missing[:4]}, unexpected "
            f"{unexpected[:4]}",
            file,
        )
    if wrong:
        first = wrong[0]
        name = _official_name(weights, first)
        more = f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""
        raise InputError(
            f"{name} is of shape {list(weights[first].shape)}, where the sizes of the other "
            f"tensors make it {list(own[first].shape)}{more}",
            file,
        )
    broken = [k for k in own if weights[k].is_floating_point() and not weights[k].isfinite().all()]
    if broken:  # a diverged run's weights: every score they give is NaN
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        name = _official_name(weights, broken[0])
        raise InputError(f"{name} holds NaN or infinite values{more}: a diverged run?", file)
    model.load_state_dict({k: v.contiguous() for k, v in weights.items()})


def _official_name(weights: dict[str, torch.Tensor], key: str) -> str:
    """The checkpoint's own name of induce's tensor ``key`` (a mapper's :class:`Weights`)."""
    return weights.origin.get(key, key) if isinstance(weights, Weights) else key


def write_imported_run(
    out: Path, config: Any, vocab: Vocabulary, record: dict[str, Any], model: torch.nn.Module
) -> Path:
    """The run's files in a temporary folder beside ``out``, renamed to ``out`` at the end:
    an interrupted import leaves no half-written run."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError("the run directory exists and is not empty", str(out))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    except OSError as err:
        raise InputError(f"cannot create the run directory: {err.strerror}", str(out)) from None
    try:
        rd.write_run_files(tmp, config, vocab, record)
        (tmp / rd.METRICS).write_text("", encoding="utf-8")
        folder = f"{rd.CHECKPOINTS}/{CHECKPOINT_NAME}"
        save_weights(model, tmp / folder / rd.WEIGHTS, vocab)
        rd.write_pointer(tmp, 0, folder, folder)
        if out.exists():
            out.rmdir()  # empty, checked above
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
