"""The built-in dataset: the English-like grammar's synthetic treebank (``induce preprocess
synthetic`` with fixed settings), generated once into the user cache
(:func:`induce.data.files.cache_dir`) and reused by every later run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from induce.data.errors import InputError
from induce.data.files import cache_dir
from induce.data.locks import LockedError
from induce.data.normalize import Normalization, load_tagset
from induce.preprocess.synthetic import SyntheticOptions, preprocess_synthetic

# the built-in dataset: the english grammar, seed 0 (see `induce preprocess synthetic`)
BUILTIN: dict[str, Any] = {
    "sentences": 20_000,
    "valid": 1_000,
    "test": 1_000,
    "seed": 0,
    "grammar": "english",
}


def builtin_dataset() -> tuple[Path, bool]:
    """The built-in dataset's folder, generated when absent; ``(path, generated now)``."""
    b = BUILTIN
    # "-cased": the text keeps the trees' words (older caches hold lower-cased text)
    name = f"synthetic-{b['grammar']}-n{b['sentences']}-s{b['seed']}-cased"
    path = cache_dir() / "datasets" / name
    if (path / "manifest.yaml").is_file():
        return path, False
    path.parent.mkdir(parents=True, exist_ok=True)
    tags = load_tagset("ptb_word_tags")
    options = SyntheticOptions(
        sentences=b["sentences"],
        valid=b["valid"],
        test=b["test"],
        seed=b["seed"],
        grammar=b["grammar"],
        normalization=Normalization(word_tags=tags, tagset="ptb_word_tags"),
    )
    try:
        preprocess_synthetic(str(path), options)
    except LockedError:  # another process (a torchrun rank) is writing it: wait for it
        for _ in range(600):
            if (path / "manifest.yaml").is_file():
                return path, False
            time.sleep(0.5)
        raise
    except InputError:
        if not (path / "manifest.yaml").is_file():  # not another process finishing first
            raise
    return path, True
