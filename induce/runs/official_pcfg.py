"""Official N-PCFG and C-PCFG checkpoints (Kim, Dyer and Rush 2019;
``harvardnlp/compound-pcfg``) and TN-PCFG ones (Yang et al. 2021; ``sustcsonglin/TN-PCFG``,
whose training saves the model's state dict) as induce run directories.

The official ``train.py`` saves ``torch.save({'args', 'model', 'word2idx', 'idx2word'})``
with the whole module pickled: readable only with the official code importable and by
running the pickle's code (``trust_pickle``), its vocabulary then read from the same file.
A plain state dict (``torch.save(model.state_dict())`` or safetensors) needs neither; its
vocabulary comes from ``preprocess.py``'s ``.dict`` file (``word id`` per line) or a word
list in id order.  Our :class:`~induce.models.pcfg.CompoundPCFG` names and orders its
parameters as the official ``CompPCFG`` does, so the weights load as they are; the sizes
are read from the tensor shapes, the rest from the paper preset of the architecture.  The
words were prepared by the official ``process_ptb.py``: the PTB word tags, lower case, a
number with its separators as one ``N`` (``Normalization.numbers: whole``).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import torch

from induce.data.architectures import ARCHITECTURES
from induce.data.errors import ConfigError, InputError
from induce.data.normalize import Normalization, load_tagset
from induce.data.vocab import PAD, UNK, Vocabulary
from induce.models import build_model, model_config
from induce.runs.config import load_config
from induce.runs.official import fill_weights, write_imported_run
from induce.runs.official_files import load_code_pickle, read_state_dict

# the grammars of the registry (npcfg, cpcfg)
ARCHS = tuple(a.name for a in ARCHITECTURES if a.objective == "likelihood")


def import_pcfg_checkpoint(
    path: str | os.PathLike[str],
    arch: str,
    out: str | os.PathLike[str],
    dictionary: str | os.PathLike[str] | None = None,
    trust_pickle: bool = False,
) -> Path:
    """Write ``out``, a run directory of ``arch`` (``npcfg`` or ``cpcfg``) holding the
    official checkpoint ``path`` (both ``best`` and ``last``); the vocabulary from
    ``dictionary``, or from the checkpoint itself when it is the official pickle."""
    if arch not in ARCHS:
        raise ConfigError(f"must be one of {', '.join(ARCHS)}", setting="arch")
    tensors = read_state_dict(path, trust_pickle)
    words = _words(path, dictionary, trust_pickle)
    sizes = _sizes(tensors, str(path), arch)
    if "z_dim" in sizes:
        compound = model_config(arch, {}).z_dim > 0  # the architecture's: N-PCFG z_dim 0
        if (sizes["z_dim"] > 0) != compound:
            kind = "a compound PCFG" if sizes["z_dim"] else "an N-PCFG"
            raise InputError(f"the checkpoint is {kind}, not --arch {arch}", str(path))
    rows = _vocabulary_rows(tensors)
    if rows != len(words):
        why = f"{len(words)} words, the checkpoint {rows}: another corpus's dictionary"
        raise InputError(why, str(dictionary or path))
    base = load_config(arch).to_dict()
    base["model"] = dataclasses.asdict(model_config(arch, {**base["model"], **sizes}))
    config = load_config(arch, base=base)
    specials = tuple(t for t in (UNK, PAD) if t in words)
    vocab = Vocabulary(words, specials=specials, settings={"source": str(dictionary or path)})
    model = build_model(arch, config.model, len(vocab), vocab.id(PAD))
    fill_weights(model, tensors, str(path))
    norm = Normalization(
        word_tags=load_tagset("ptb_word_tags"), tagset="ptb_word_tags", numbers="whole"
    )
    sources = {"checkpoint": str(Path(path).resolve())}
    if dictionary is not None:
        sources["dictionary"] = str(Path(dictionary).resolve())
    record = dict(path=None, format=None, normalization=norm.to_dict(), sources=sources)
    return write_imported_run(Path(out), config, vocab, record, model)


# the kinds of official checkpoints: the tensors that tell each apart, and its vocabulary's
KINDS = {
    "a compound Simple PCFG": ("rule_state_emb", "parent_mlp1.0.weight", "enc_out.weight"),
    "a Simple PCFG": ("vocab_emb", "rule_state_emb", "parent_mlp1.0.weight"),
    "a TN-PCFG": ("root_mlp.3.weight", "term_emb", "parent_mlp.2.weight", "term_mlp.3.weight"),
    "a compound-pcfg model": ("nt_emb", "t_emb", "rule_mlp.weight", "vocab_mlp.3.weight"),
}

# the architectures each kind of checkpoint is (compound-pcfg's: by its z_dim, checked after)
ARCHS_OF = {
    "a compound Simple PCFG": ("scpcfg",),
    "a Simple PCFG": ("simplepcfg",),
    "a TN-PCFG": ("tnpcfg",),
    "a compound-pcfg model": ("npcfg", "cpcfg"),
}


def _sizes(tensors: dict[str, torch.Tensor], file: str, arch: str) -> dict[str, int]:
    """The grammar's sizes from the tensor shapes, for a checkpoint of ``arch``'s kind.  A
    Simple PCFG's split of its symbols into nonterminals and preterminals is in no shape:
    ``T = 2N``, as in every official configuration."""
    kind = next((k for k, keys in KINDS.items() if all(key in tensors for key in keys)), None)
    if kind is None:
        raise InputError(
            "not a PCFG checkpoint of the official code (compound-pcfg, TN-PCFG)", file
        )
    if arch not in ARCHS_OF[kind]:
        raise InputError(f"the checkpoint is {kind}: give its --arch", file)
    sizes: dict[str, Any]
    if kind in ("a Simple PCFG", "a compound Simple PCFG"):
        symbols, s_dim = tensors["rule_state_emb"].shape
        if symbols % 3:
            raise InputError(f"{symbols} symbols: not the official T = 2N", file)
        sizes = {"nt": symbols // 3, "t": 2 * symbols // 3, "s_dim": s_dim}
        if kind == "a compound Simple PCFG":
            sizes["z_dim"] = tensors["enc_out.weight"].shape[0] // 2
            sizes["w_dim"] = tensors["enc_emb.weight"].shape[1]
            sizes["h_dim"] = tensors["enc_rnn.weight_hh_l0"].shape[1]
    elif kind == "a TN-PCFG":
        t, s_dim = tensors["term_emb"].shape
        nt, rank = tensors["root_mlp.3.weight"].shape[0], tensors["parent_mlp.2.weight"].shape[0]
        sizes = {"nt": nt, "t": t, "rank": rank, "s_dim": s_dim}
    else:
        nt, s_dim = tensors["nt_emb"].shape
        z_dim = tensors["rule_mlp.weight"].shape[1] - s_dim
        sizes = {"nt": nt, "t": tensors["t_emb"].shape[0], "s_dim": s_dim, "z_dim": z_dim}
        if z_dim > 0:
            sizes["w_dim"] = tensors["enc_emb.weight"].shape[1]
            sizes["h_dim"] = tensors["enc_rnn.weight_hh_l0"].shape[1]
    return {k: int(v) for k, v in sizes.items()}


def _vocabulary_rows(tensors: dict[str, torch.Tensor]) -> int:
    """The vocabulary size the emission layer was built for."""
    for key, axis in (("vocab_emb", 1), ("term_mlp.3.weight", 0), ("vocab_mlp.3.weight", 0)):
        if key in tensors and tensors[key].dim() == 2:
            return int(tensors[key].shape[axis])
    raise InputError("no emission layer in the checkpoint", "")


def _words(
    path: str | os.PathLike[str], dictionary: str | os.PathLike[str] | None, trust: bool
) -> list[str]:
    """The vocabulary in id order: from ``dictionary`` (``word id`` lines or one word per
    line), else from the official pickle's ``idx2word``."""
    if dictionary is not None:
        return _read_word_ids(Path(dictionary))
    if not trust:
        raise ConfigError(
            "is needed with a state dict: the vocabulary (the official .dict file or a word "
            "list), or --trust-pickle to read it from the official checkpoint",
            setting="dictionary",
        )
    found: Any = load_code_pickle(Path(path))
    table = found.get("idx2word") if isinstance(found, dict) else None
    if not isinstance(table, dict) or not table:
        raise InputError("the checkpoint holds no idx2word: give its vocabulary", str(path))
    return [str(table[k]) for k in sorted(table)]


def _read_word_ids(file: Path) -> list[str]:
    """``preprocess.py``'s ``.dict`` (``word id`` per line, ids 0 .. V - 1) or a word list."""
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read the vocabulary: {err}", str(file)) from None
    pairs = [line.split(" ") for line in lines]
    if all(len(p) == 2 and p[1].isdigit() for p in pairs):
        ids = {int(i): w for w, i in pairs}
        if sorted(ids) != list(range(len(pairs))):
            raise InputError("the ids are not 0 .. V - 1, each once", str(file))
        return [ids[k] for k in range(len(pairs))]
    for number, line in enumerate(lines, 1):
        if not line or " " in line:
            raise InputError("expected one word per line, or 'word id'", str(file), number)
    if len(set(lines)) != len(lines):
        raise InputError("the vocabulary lists a word twice", str(file))
    return lines
