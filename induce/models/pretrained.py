"""A local BERT checkpoint (a Hugging Face folder: ``config.json`` and ``model.safetensors``
or ``pytorch_model.bin``), read without the ``transformers`` library: the sizes it fixes and
its tensors by name.  Nothing is downloaded; ``BertModel`` and ``BertForMaskedLM`` folders
both work (the latter's names start with ``bert.``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from torch import nn

from induce.data.errors import ConfigError, InputError

_SIZES = {  # BERT config key -> induce model setting
    "hidden_size": "d_model",
    "num_hidden_layers": "n_layers",
    "num_attention_heads": "n_heads",
    "intermediate_size": "d_ff",
    "max_position_embeddings": "max_length",
}


def bert_settings(folder: str | Path) -> dict[str, Any]:
    """The model settings a BERT checkpoint fixes (``d_model``, ``n_layers``, ...)."""
    config = _config(Path(folder))
    if config.get("hidden_act", "gelu") != "gelu":
        raise ConfigError(f"a BERT with {config['hidden_act']!r} activations: induce uses gelu")
    path = str(Path(folder) / "config.json")
    missing = [key for key in _SIZES if key not in config]
    if missing:
        raise InputError(f"config.json has no {missing[0]}", path)
    for key in _SIZES:
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{key} must be a positive integer, got {value!r}", path)
    return {setting: config[key] for key, setting in _SIZES.items()} | {"position": "absolute"}


def bert_vocab_size(folder: str | Path) -> int:
    return int(_config(Path(folder)).get("vocab_size", 0))


def read_bert(folder: str | Path) -> dict[str, torch.Tensor]:
    """The checkpoint's tensors, names without the ``bert.`` prefix."""
    base = Path(folder)
    safe, binary = base / "model.safetensors", base / "pytorch_model.bin"
    try:
        if safe.is_file():
            from safetensors.torch import load_file

            tensors = dict(load_file(str(safe)))
        elif binary.is_file():
            tensors = _load_binary(binary)
        else:
            raise InputError("needs model.safetensors or pytorch_model.bin", str(base))
    except InputError:
        raise
    except Exception as err:
        raise InputError(f"cannot read the BERT weights: {err}", str(base)) from None
    return {k.removeprefix("bert."): v.float() for k, v in tensors.items()}


def _load_binary(path: Path) -> dict[str, torch.Tensor]:
    """``pytorch_model.bin`` as plain tensors; a file that needs Python objects unpickled is
    refused in our words (unpickling can run code, and induce never does it for a BERT)."""
    import pickle

    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise InputError(
            "holds pickled Python objects besides tensors, which induce does not load (a "
            "pickle can run code): save the checkpoint as model.safetensors beside it (with "
            "transformers: model.save_pretrained(folder, safe_serialization=True))",
            str(path),
        ) from None
    if not isinstance(loaded, dict) or not all(
        isinstance(v, torch.Tensor) for v in loaded.values()
    ):
        raise InputError("is not a state dict of named tensors", str(path))
    return loaded


def _config(base: Path) -> dict[str, Any]:
    path = base / "config.json"
    if not path.is_file():
        raise InputError("not a BERT folder: no config.json", str(base))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise InputError(f"config.json is not JSON ({err.__class__.__name__})", str(path)) from None
    if not isinstance(data, dict):
        raise InputError("config.json is not a JSON object", str(path))
    return data


class BertWeights:
    """A BERT checkpoint's tensors, copied into parameters with their shapes checked."""

    def __init__(self, tensors: dict[str, torch.Tensor], folder: str) -> None:
        self.tensors, self.folder = tensors, folder

    def take(self, name: str) -> torch.Tensor:
        if name not in self.tensors:
            raise InputError(f"the BERT checkpoint has no {name}", self.folder)
        return self.tensors[name]

    def copy(self, target: torch.Tensor, value: torch.Tensor, name: str) -> None:
        if target.shape != value.shape:
            raise ConfigError(
                f"{name} is {list(value.shape)} in the BERT checkpoint, {list(target.shape)} "
                "here: the dataset must be made with its WordPiece vocabulary (--tokenizer "
                "wordpiece) and the model sizes are the checkpoint's"
            )
        target.copy_(value)

    def into(self, target: torch.Tensor, name: str, plus: torch.Tensor | None = None) -> None:
        value = self.take(name)
        self.copy(target, value if plus is None else value + plus, name)

    def linear(self, target: nn.Linear, name: str) -> None:
        self.into(target.weight, f"{name}.weight")
        self.into(target.bias, f"{name}.bias")

    def has_norm(self, name: str) -> bool:
        return f"{name}.weight" in self.tensors or f"{name}.gamma" in self.tensors

    def norm(self, target: nn.LayerNorm, name: str) -> None:
        old = f"{name}.gamma" in self.tensors  # checkpoints converted from TensorFlow
        self.into(target.weight, f"{name}.{'gamma' if old else 'weight'}")
        self.into(target.bias, f"{name}.{'beta' if old else 'bias'}")
