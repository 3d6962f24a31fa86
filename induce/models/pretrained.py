"""A local BERT checkpoint (a Hugging Face folder: ``config.json`` and ``model.safetensors``
or ``pytorch_model.bin``), read without the ``transformers`` library: the sizes it fixes and
its tensors by name.  Nothing is downloaded; ``BertModel`` and ``BertForMaskedLM`` folders
both work (the latter's names start with ``bert.``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

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
    missing = [key for key in _SIZES if key not in config]
    if missing:
        raise InputError(f"config.json has no {missing[0]}", str(Path(folder) / "config.json"))
    return {setting: int(config[key]) for key, setting in _SIZES.items()} | {"position": "absolute"}


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
            tensors = torch.load(binary, map_location="cpu", weights_only=True)
        else:
            raise InputError("needs model.safetensors or pytorch_model.bin", str(base))
    except InputError:
        raise
    except Exception as err:
        raise InputError(f"cannot read the BERT weights: {err}", str(base)) from None
    return {k.removeprefix("bert."): v.float() for k, v in tensors.items()}


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
