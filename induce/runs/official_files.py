"""Reading the checkpoints the official StructFormer and UDGN code saves: a state dict, or,
only when trusted, the training script's pickled model.  Its dictionary is read by
:mod:`induce.data.dictionaries` (no torch)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import torch

from induce.data.errors import ConfigError, InputError

# -- the checkpoint ------------------------------------------------------------------------


def read_state_dict(
    path: str | os.PathLike[str], trust_pickle: bool = False
) -> dict[str, torch.Tensor]:
    """The official model's tensors by name, from a state dict (torch or safetensors) or,
    with ``trust_pickle``, from the reference's pickled ``[model, criterion, ...]``."""
    file = Path(path)
    if not file.is_file():
        raise InputError("no such file", str(file))
    if file.suffix == ".safetensors":
        from safetensors.torch import load_file

        try:
            return dict(load_file(str(file)))
        except Exception as err:
            raise InputError(f"cannot read the safetensors file: {err}", str(file)) from None
    try:
        obj = torch.load(file, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:  # it names classes: a whole pickled model
        if not trust_pickle:
            raise ConfigError(
                f"is needed to read {file}: it is a pickled model, and loading it runs code "
                "named in the file (pass it only for a checkpoint from a source you trust, "
                "with the official code on PYTHONPATH)",
                setting="trust_pickle",
            ) from None
        obj = load_code_pickle(file)
    except Exception as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else err.__class__.__name__
        raise InputError(f"not a PyTorch checkpoint: {first}", str(file)) from None
    return _tensors_of(obj, file)


def load_code_pickle(file: Path) -> Any:
    try:
        return torch.load(file, map_location="cpu", weights_only=False)
    except (ImportError, AttributeError) as err:
        raise InputError(
            f"the pickled model needs the official code ({err}): put the folder of its "
            "models.py / structformer package on PYTHONPATH",
            str(file),
        ) from None
    except Exception as err:
        raise InputError(f"cannot unpickle ({err.__class__.__name__})", str(file)) from None


def _tensors_of(obj: Any, file: Path) -> dict[str, torch.Tensor]:
    if isinstance(obj, (list, tuple)) and obj:  # [model, criterion, optimizer, scheduler]
        obj = obj[0]
    if isinstance(obj, dict) and "model" in obj and "idx2word" in obj:
        obj = obj["model"]  # compound-pcfg's train.py: {args, model, word2idx, idx2word}
    if isinstance(obj, torch.nn.Module):
        obj = obj.state_dict()
    if isinstance(obj, dict) and isinstance(obj.get("state_dict"), dict):
        obj = obj["state_dict"]
    if not isinstance(obj, dict) or not obj:
        raise InputError("holds no model weights (expected a state dict)", str(file))
    bad = [k for k, v in obj.items() if not isinstance(k, str) or not isinstance(v, torch.Tensor)]
    if bad:
        raise InputError(f"not a state dict: {bad[0]!r} is not a named tensor", str(file))
    return {k: v.detach().float() for k, v in obj.items()}
