"""A run's checkpoint files: the model's weights (safetensors, tied by a digest to the
vocabulary they were trained with) and the trainer's state (``torch.save`` of plain tensors
and numbers, read with ``weights_only=True``).  Every file is written atomically."""

from __future__ import annotations

import codecs
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from induce.data.errors import InputError
from induce.data.files import atomic_path, remember_input

if TYPE_CHECKING:  # torch is imported only where weights are read or written
    import torch

    from induce.data.vocab import Vocabulary

VOCAB_DIGEST = "vocab-sha256"  # the weights' metadata key: Vocabulary.digest() of their vocab


def save_weights(model: torch.nn.Module, path: Path, vocab: Vocabulary | None = None) -> None:
    """The model's tensors as safetensors; ``vocab``'s digest in the metadata ties them to the
    vocabulary they were trained with (:func:`load_weights` checks it).  Serialised in memory
    and written here, so that a full disk is an ``OSError`` (one line), not the writer's own
    error without its cause."""
    from safetensors.torch import save

    path.parent.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    metadata = {"format": "induce-run/1"}
    if vocab is not None:
        metadata[VOCAB_DIGEST] = vocab.digest()
    _write_bytes(path, *_sort_metadata(save(tensors, metadata=metadata)))


def _write_bytes(path: Path, *pieces: bytes | memoryview) -> None:
    """The ``pieces`` one after the other as the run's own file ``path``, atomically (a
    failed write: one line)."""
    with atomic_path(path, own=True) as tmp, open(tmp, "wb") as handle:
        for piece in pieces:
            handle.write(piece)


def _sort_metadata(data: bytes) -> tuple[bytes | memoryview, ...]:
    """A safetensors file's bytes with the header's metadata keys sorted, in pieces (the
    tensors as a view, not a second copy of them): safetensors writes the keys in a random
    order each time, and the same training must give the same file, byte for byte.  The
    header keeps its length (the same keys and values), so the tensors stay where they are;
    a header this cannot reproduce exactly is left."""
    size = int.from_bytes(data[:8], "little")
    raw = data[8 : 8 + size]
    header = json.loads(raw)
    metadata = header.pop("__metadata__", None)
    if not metadata:
        return (data,)
    ordered = {"__metadata__": dict(sorted(metadata.items())), **header}
    text = json.dumps(ordered, ensure_ascii=False, separators=(",", ":")).encode()
    if len(text) > size or json.loads(text) != json.loads(raw):
        return (data,)
    # safetensors pads its header with spaces
    return data[:8], text.ljust(size, b" "), memoryview(data)[8 + size :]


def load_weights(
    model: torch.nn.Module,
    path: Path,
    device: str | None = None,
    vocab: tuple[Vocabulary, Path] | None = None,
) -> None:
    """The weights at ``path`` into ``model``, read once: the header, then the tensors.
    ``vocab``: the vocabulary the model reads with and the file it came from; weights whose
    metadata records another vocabulary's digest are refused, naming that file (an edited,
    reordered or swapped ``vocab.json`` would give every word another word's embedding, and
    every tree and figure would be wrong without a sign).  Weights without a digest (saved
    before it was recorded) pass."""
    from safetensors import safe_open

    if path.is_dir():
        raise InputError("a folder, not a weights file", str(path))
    if not path.is_file():
        raise InputError("no weights: the run has not saved this checkpoint yet", str(path))
    try:
        handle = safe_open(str(path), framework="pt", device=device or "cpu")
    except Exception as err:  # safetensors raises its own error types
        raise InputError(f"cannot read the weights: {err}", str(path)) from None
    with handle:
        if vocab is not None:
            _check_vocab(handle.metadata() or {}, path, *vocab)
        try:
            tensors = {key: handle.get_tensor(key) for key in handle.keys()}
        except Exception as err:
            raise InputError(f"cannot read the weights: {err}", str(path)) from None
    remember_input(str(path))  # no output of this command may replace the model it runs
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    wrong = [k for k, v in tensors.items() if k in expected and tuple(v.shape) != expected[k]]
    if wrong:
        key = wrong[0]
        raise InputError(
            f"the weights do not fit the model: {len(wrong)} tensor(s) differ in shape, e.g. "
            f"{key} is {tuple(tensors[key].shape)} in the file, {expected[key]} in the model "
            "(were the model settings changed?)",
            str(path),
        )
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    if missing or unexpected:
        raise InputError(
            f"the weights do not fit the model (missing {sorted(missing)[:3]}, "
            f"unexpected {sorted(unexpected)[:3]})",
            str(path),
        )


def _check_vocab(metadata: dict[str, str], path: Path, vocab: Vocabulary, vocab_file: Path) -> None:
    recorded = metadata.get(VOCAB_DIGEST)
    if recorded is not None and recorded != vocab.digest():
        raise InputError(
            f"not the vocabulary the run's weights ({path.parent.name}/{path.name}) were "
            "trained with: the file was edited, reordered or copied from another run",
            str(vocab_file),
        )


def save_state(state: dict[str, Any], path: Path) -> None:
    import torch

    buffer = io.BytesIO()  # written here: torch.save's error for a full disk names no cause
    torch.save(state, buffer)
    _write_bytes(path, buffer.getbuffer())  # no second copy of the state


STATE_PARTS = ("optimizer", "scheduler", "progress", "rng")  # what save() puts in a state


def load_state(path: Path) -> dict[str, Any]:
    """The trainer state at ``path``: a mapping of :data:`STATE_PARTS` (their contents are
    checked by the trainer, which knows what they must fit)."""
    import torch

    if not path.is_file():
        raise InputError("the run has no checkpoint to resume from", str(path))
    not_torch = _not_a_torch_file(path)
    if not_torch:
        raise InputError(f"not a trainer state of induce ({not_torch})", str(path))
    try:
        state = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as err:  # torch raises many kinds for a damaged archive
        reason = (str(err).strip().splitlines() or [""])[0].split(". ")[0][:120]
        raise InputError(
            f"not a trainer state of induce (a damaged file: {type(err).__name__}: {reason})",
            str(path),
        ) from None
    remember_input(str(path))
    if not isinstance(state, dict):
        raise InputError(
            f"not a trainer state of induce (a {type(state).__name__}, not a mapping)", str(path)
        )
    missing = [part for part in STATE_PARTS if part not in state]
    if missing:
        raise InputError(
            f"not a trainer state of induce (missing: {', '.join(missing)})", str(path)
        )
    return state


def _not_a_torch_file(path: Path) -> str | None:
    """Why ``path`` cannot be a file that ``torch.save`` wrote (a zip archive, or a pickle
    in the legacy format), or ``None``: torch's own errors for these are a key or an errno."""
    import zipfile

    try:
        with open(path, "rb") as handle:
            head = handle.read(512)
        if zipfile.is_zipfile(path) or head[:1] == b"\x80":
            return None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", str(path)) from None
    if not head:
        return "an empty file"
    if head.startswith(b"PK"):
        return "a truncated or torn archive"
    try:  # incremental: a character cut at the end of the head is no fault
        codecs.getincrementaldecoder("utf-8")().decode(head)
    except UnicodeDecodeError:
        return "not a file torch.save writes"
    return "a text file"
