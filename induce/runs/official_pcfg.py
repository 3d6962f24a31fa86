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

import os
from pathlib import Path
from typing import Any

import torch

from induce.data.architectures import ARCHITECTURES
from induce.data.dictionaries import refuse_repeat, word_lines
from induce.data.errors import ConfigError, InputError
from induce.data.normalize import Normalization, load_tagset
from induce.data.vocab import PAD, UNK, Vocabulary
from induce.models import build_model, model_config
from induce.runs.config import load_config
from induce.runs.official import fill_weights, model_settings, shape_of, write_imported_run
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
    if UNK not in words:  # every unknown word's id: a run without it cannot parse
        raise InputError(f"the vocabulary has no {UNK} token", str(dictionary or path))
    sizes = _sizes(tensors, str(path), arch)
    if "z_dim" in sizes:
        compound = model_config(arch, {}).z_dim > 0  # the architecture's: N-PCFG z_dim 0
        if (sizes["z_dim"] > 0) != compound:
            kind = "a compound PCFG" if sizes["z_dim"] else "an N-PCFG"
            raise InputError(f"the checkpoint is {kind}, not --arch {arch}", str(path))
    rows = _vocabulary_rows(tensors, str(path))
    if rows != len(words):
        why = f"{len(words)} words, the checkpoint {rows}: another corpus's dictionary"
        raise InputError(why, str(dictionary or path))
    base = load_config(arch).to_dict()
    base["model"] = model_settings(arch, {**base["model"], **sizes}, str(path))
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

# the official code each kind of checkpoint comes from, for messages
_OFFICIAL = {
    "a compound Simple PCFG": "TN-PCFG (SC-PCFG)",
    "a Simple PCFG": "TN-PCFG (Simple PCFG)",
    "a TN-PCFG": "TN-PCFG",
    "a compound-pcfg model": "compound-pcfg",
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
    what = _OFFICIAL[kind]

    def shape(key: str, dims: str) -> tuple[int, ...]:
        return shape_of(tensors, key, dims, file, what)

    sizes: dict[str, Any]
    if kind in ("a Simple PCFG", "a compound Simple PCFG"):
        symbols, s_dim = shape("rule_state_emb", "N + T, S")
        if symbols % 3:
            raise InputError(f"{symbols} symbols: not the official T = 2N", file)
        sizes = {"nt": symbols // 3, "t": 2 * symbols // 3, "s_dim": s_dim}
        if kind == "a compound Simple PCFG":
            sizes["z_dim"] = shape("enc_out.weight", "2 Z, 2 H")[0] // 2
            sizes["w_dim"] = shape("enc_emb.weight", "V, W")[1]
            sizes["h_dim"] = shape("enc_rnn.weight_hh_l0", "4 H, H")[1]
    elif kind == "a TN-PCFG":
        t, s_dim = shape("term_emb", "T, S")
        nt, rank = shape("root_mlp.3.weight", "N, S")[0], shape("parent_mlp.2.weight", "R, S")[0]
        sizes = {"nt": nt, "t": t, "rank": rank, "s_dim": s_dim}
    else:
        nt, s_dim = shape("nt_emb", "N, S")
        z_dim = shape("rule_mlp.weight", "N (N+T)^2, S + Z")[1] - s_dim
        if z_dim < 0:
            raise InputError(
                f"rule_mlp.weight takes {z_dim + s_dim} inputs, fewer than nt_emb's {s_dim}",
                file,
            )
        sizes = {"nt": nt, "t": shape("t_emb", "T, S")[0], "s_dim": s_dim, "z_dim": z_dim}
        if z_dim > 0:
            sizes["w_dim"] = shape("enc_emb.weight", "V, W")[1]
            sizes["h_dim"] = shape("enc_rnn.weight_hh_l0", "4 H, H")[1]
    return {k: int(v) for k, v in sizes.items()}


def _vocabulary_rows(tensors: dict[str, torch.Tensor], file: str) -> int:
    """The vocabulary size the emission layer was built for."""
    for key, axis in (("vocab_emb", 1), ("term_mlp.3.weight", 0), ("vocab_mlp.3.weight", 0)):
        if key in tensors:
            dims = "S, V" if axis else "V, S"
            return int(shape_of(tensors, key, dims, file, "PCFG")[axis])
    raise InputError("no emission layer in the checkpoint", file)


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
        data = file.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read the vocabulary: {err.strerror}", str(file)) from None
    lines = word_lines(data, str(file))
    pairs = [line.split(" ") for line in lines]
    if all(len(p) == 2 and p[1].isdigit() for p in pairs):
        refuse_repeat([w for w, _ in pairs], "the vocabulary lists {} twice", file)
        refuse_repeat([int(i) for _, i in pairs], "the id {} is given twice", file)
        ids = {int(i): w for w, i in pairs}
        if sorted(ids) != list(range(len(pairs))):
            raise InputError("the ids are not 0 .. V - 1", str(file))
        return [ids[k] for k in range(len(pairs))]
    for number, line in enumerate(lines, 1):
        if not line or " " in line:
            raise InputError("expected one word per line, or 'word id'", str(file), number)
    refuse_repeat(lines, "the vocabulary lists {} twice", file)
    return lines
