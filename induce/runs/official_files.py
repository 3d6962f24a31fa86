"""Reading the checkpoints the official StructFormer and UDGN code saves: a state dict, or,
only when trusted, the training script's pickled model.  Its dictionary is read by
:mod:`induce.data.dictionaries` (no torch)."""

from __future__ import annotations

import os
import pickle
import warnings
from pathlib import Path
from typing import Any

import torch

from induce.data.errors import ConfigError, InputError
from induce.data.files import remember_input

# -- the checkpoint ------------------------------------------------------------------------


def read_state_dict(
    path: str | os.PathLike[str], trust_pickle: bool = False
) -> dict[str, torch.Tensor]:
    """The official model's tensors by name, from a state dict (torch or safetensors) or,
    with ``trust_pickle``, from the reference's pickled ``[model, criterion, ...]``."""
    file = Path(path)
    if file.is_dir():
        raise InputError("is a directory, expected a checkpoint file", str(file))
    if not file.is_file():
        raise InputError("no such file", str(file))
    remember_input(str(file))  # no output of this command may replace it
    if file.suffix == ".safetensors":
        from safetensors.torch import load_file

        try:
            return dict(load_file(str(file)))
        except Exception as err:
            raise InputError(f"cannot read the safetensors file: {err}", str(file)) from None
    if not _pickled(file):
        raise InputError(
            "not a PyTorch checkpoint: neither the zip archive nor the pickle that torch.save "
            "writes",
            str(file),
        )
    try:
        with warnings.catch_warnings():  # once per import, not in a loop of threads
            # a plain pickle.dump of a state dict: torch.load reads it, and warns in two
            # lines of its own that the protocol is not torch.save's
            warnings.filterwarnings("ignore", "Detected pickle protocol", UserWarning)
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
        raise InputError(f"not a PyTorch checkpoint: {_first_line(err)}", str(file)) from None
    return _tensors_of(obj, file)


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else err.__class__.__name__


def _pickled(file: Path) -> bool:
    """Whether ``file`` is what ``torch.save`` writes: a zip archive, or (the legacy format)
    a pickle, which starts with the PROTO opcode.  Text or random bytes are neither, and
    unpickling them fails for that reason, not for the classes a model pickle names."""
    import zipfile

    try:
        if zipfile.is_zipfile(file):
            return True
        with open(file, "rb") as handle:
            return handle.read(1) == b"\x80"
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", str(file)) from None


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
