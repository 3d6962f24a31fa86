"""The run directory that ``induce train`` writes and ``parse`` / ``evaluate mlm`` read.

::

    RUN/config.yaml               the resolved settings (architecture, model, data, optim, train)
    RUN/vocab.json                the dataset's vocabulary
    RUN/dataset.yaml              the dataset: path, normalisation, sources (from its manifest)
    RUN/best/model.safetensors    weights with the best validation perplexity
    RUN/last/model.safetensors    weights at the last checkpoint
    RUN/trainer_state.pt          optimizer, scheduler, RNG states, step, epoch, position
                                  (plain tensors and numbers: torch.load(weights_only=True))
    RUN/metrics.jsonl             one JSON record per log line and per validation

Every file is written atomically.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from induce.data.errors import InputError
from induce.data.files import atomic_path, atomic_write, read_text
from induce.data.vocab import Vocabulary
from induce.train.config import RunConfig, load_config

CONFIG, VOCAB, DATASET, STATE, METRICS = (
    "config.yaml",
    "vocab.json",
    "dataset.yaml",
    "trainer_state.pt",
    "metrics.jsonl",
)
WEIGHTS = "model.safetensors"


@dataclass
class Run:
    path: Path
    config: RunConfig
    vocab: Vocabulary
    dataset: dict[str, Any]

    def weights(self, which: str = "best") -> Path:
        return self.path / which / WEIGHTS

    @property
    def normalization(self):
        from induce.data.normalize import Normalization

        return Normalization.from_dict(self.dataset.get("normalization") or {})


def dump_yaml(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def write_run_files(
    path: Path, config: RunConfig, vocab: Vocabulary, dataset: dict[str, Any]
) -> None:
    atomic_write(path / CONFIG, dump_yaml(config.to_dict()))
    atomic_write(path / VOCAB, vocab.to_json())
    atomic_write(path / DATASET, dump_yaml(dataset))


def load_run(path: str | os.PathLike[str], overrides: list[str] | None = None) -> Run:
    """Open a run directory (``overrides``: ``key=value`` settings applied on top)."""
    import yaml

    folder = Path(path)
    if not (folder / CONFIG).is_file():
        raise InputError(f"not an induce run directory: no {CONFIG}", str(folder))
    try:
        raw = yaml.safe_load(read_text(folder / CONFIG))
        dataset = (
            yaml.safe_load(read_text(folder / DATASET)) if (folder / DATASET).is_file() else {}
        )
    except yaml.YAMLError:
        raise InputError("the run's settings are not valid YAML", str(folder)) from None
    if not isinstance(raw, dict) or "arch" not in raw:
        raise InputError(f"{CONFIG} names no architecture", str(folder))
    config = load_config(str(raw["arch"]), overrides, base=raw)
    if not (folder / VOCAB).is_file():
        raise InputError(f"the run has no {VOCAB}", str(folder))
    vocab = Vocabulary.from_json(read_text(folder / VOCAB), str(folder / VOCAB))
    return Run(folder, config, vocab, dataset or {})


def save_weights(model, path: Path) -> None:
    from safetensors.torch import save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    with atomic_path(path) as tmp:
        save_file(tensors, tmp, metadata={"format": "induce-run/1"})


def load_weights(model, path: Path, device: str | None = None) -> None:
    from safetensors.torch import load_file

    if not path.is_file():
        raise InputError("no weights: the run has not saved this checkpoint yet", str(path))
    try:
        tensors = load_file(str(path), device=device or "cpu")
    except Exception as err:  # safetensors raises its own error types
        raise InputError(f"cannot read the weights: {err}", str(path)) from None
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    if missing or unexpected:
        raise InputError(
            f"the weights do not fit the model (missing {sorted(missing)[:3]}, "
            f"unexpected {sorted(unexpected)[:3]})",
            str(path),
        )


def save_state(state: dict[str, Any], path: Path) -> None:
    import torch

    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def load_state(path: Path) -> dict[str, Any]:
    import torch

    if not path.is_file():
        raise InputError("the run has no checkpoint to resume from", str(path))
    try:
        return torch.load(path, weights_only=True, map_location="cpu")
    except Exception as err:
        raise InputError(f"cannot read the trainer state: {err}", str(path)) from None
