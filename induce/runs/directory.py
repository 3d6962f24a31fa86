"""The run directory: written by ``induce train``, read by ``parse``, ``evaluate`` and
``report`` through this module alone (none of them imports the trainer).

::

    RUN/config.yaml               the resolved settings (architecture, model, data, optim, train)
    RUN/vocab.json                the dataset's vocabulary
    RUN/dataset.yaml              the dataset: path, normalisation, sources (from its manifest)
    RUN/checkpoint.json           names the last checkpoint and the best (lowest validation
                                  perplexity); replaced in one rename
    RUN/checkpoints/STEP-TAG/     model.safetensors, and trainer_state.pt for the last one:
                                  optimizer, scheduler, RNG states, progress (plain tensors
                                  and numbers: torch.load(weights_only=True))
    RUN/metrics.jsonl             one JSON record per log line and per validation

(Runs of the earlier layout keep ``best/``, ``last/`` and ``trainer_state.pt`` at the top;
they are read the same way.)

Every file is written atomically.  The most recent run is recorded in the user cache
(:func:`remember_run`, :func:`latest_run`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from induce.data.config import check_choice, parse_yaml
from induce.data.dataset import Dataset, load_dataset
from induce.data.errors import ConfigError, InputError
from induce.data.files import atomic_write, cache_dir, remember_input
from induce.data.normalize import Normalization
from induce.data.reading import check_text, decode_utf8, read_text
from induce.data.vocab import Vocabulary
from induce.runs.config import WEIGHT_CHOICES, RunConfig, load_config

if TYPE_CHECKING:
    from induce.models.base import Model
    from induce.models.masked_lm import MaskedLM
    from induce.runs.batches import Specials

CONFIG, VOCAB, DATASET, STATE, METRICS = (
    "config.yaml",
    "vocab.json",
    "dataset.yaml",
    "trainer_state.pt",
    "metrics.jsonl",
)
WEIGHTS = "model.safetensors"
POINTER, CHECKPOINTS = "checkpoint.json", "checkpoints"
LOCK = ".lock"  # the process training the run: PID HOST START (induce.data.locks)
LATEST = "latest-run"  # in the user cache: the path of the most recent run


@dataclass
class Run:
    """An opened run directory: its settings, vocabulary and dataset record."""

    path: Path
    config: RunConfig  # the settings, with the overrides it was opened with
    vocab: Vocabulary
    dataset: dict[str, Any]
    recorded: RunConfig  # the settings as config.yaml holds them

    def weights(self, which: str = "best") -> Path:
        """The weights file of the ``best`` or ``last`` checkpoint."""
        check_choice(which, WEIGHT_CHOICES, "weights")
        pointer = read_pointer(self.path)
        if pointer is not None and pointer.get(which):
            return self.path / pointer[which] / WEIGHTS
        earlier = self.path / which / WEIGHTS  # the earlier layout: RUN/best/, RUN/last/
        if earlier.is_file() or pointer is None and (self.path / which).is_dir():
            return earlier
        if which == "best" and pointer is not None and pointer.get("last"):
            raise InputError(
                "no best checkpoint yet (no validation has run): --weights last reads the last one",
                str(self.path),
            )
        raise InputError("no checkpoint yet: the run has saved no weights", str(self.path))

    @property
    def normalization(self) -> Normalization:
        """How the run's dataset normalised words (applied again by parse and evaluate)."""
        return Normalization.from_dict(self.dataset.get("normalization") or {})

    @property
    def specials(self) -> Specials:
        from induce.runs.batches import Specials

        return Specials.of(self.vocab)

    def history(self) -> list[dict[str, Any]]:
        """The records of ``metrics.jsonl`` (train log lines and validations), in order."""
        return read_metrics(self.path / METRICS)

    def open_dataset(self) -> Dataset | None:
        """The dataset the run was trained on, if it is still where it was."""
        path = self.dataset.get("path")
        if not path or not Path(path).is_dir():
            return None
        return load_dataset(path, verify=False)

    def build_model(self) -> Model:
        """A freshly initialised model of the run's architecture and vocabulary."""
        from induce.models import build_model

        return build_model(self.config.arch, self.config.model, len(self.vocab), self.pad_id)

    @property
    def pad_id(self) -> int:
        from induce.data.vocab import PAD

        return self.vocab.id(PAD)

    def split_of(self, data: str, split: str) -> Dataset:
        """The dataset ``data`` to evaluate the run on, once its vocabulary is the run's and
        it has ``split``."""
        dataset = load_dataset(data)
        if dataset.vocab is None or dataset.vocab.tokens != self.vocab.tokens:
            raise InputError(
                "the dataset's vocabulary differs from the run's: the model can only "
                "be evaluated on data preprocessed with its vocabulary",
                data,
            )
        ours, theirs = self.normalization, dataset.normalization
        for name in ("lowercase", "digits", "numbers"):  # what a word is; the vocabulary's
            if getattr(ours, name) != getattr(theirs, name):  # ids alone cannot tell it
                how = f" (preprocess --numbers {ours.numbers})" if name == "numbers" else ""
                raise InputError(
                    f"the dataset normalised its words otherwise than the run's ({name}: "
                    f"{getattr(theirs, name)}, not {getattr(ours, name)}): the model would "
                    f"read other words than it was trained on{how}",
                    data,
                )
        if not dataset.has(f"{split}.txt"):
            raise InputError(f"the dataset has no {split} split", data)
        return dataset

    def load_model(self, which: str = "best", device: str = "auto") -> Model:
        """The model with the ``which`` weights, in eval mode on ``device``."""
        from induce.runs.device import pick_device
        from induce.runs.weights import load_weights

        model = self.build_model()
        load_weights(model, self.weights(which), vocab=(self.vocab, self.path / VOCAB))
        return model.to(pick_device(device)).eval()

    def load_language_model(self, which: str = "best", device: str = "auto") -> MaskedLM:
        """:meth:`load_model` for what needs a masked language model (perplexity, attention
        maps, the induced parsers' read-outs): a clear error for a run of another kind."""
        from induce.models.masked_lm import MaskedLM

        model = self.load_model(which, device)
        if not isinstance(model, MaskedLM):
            raise ConfigError(f"a {self.config.arch} run is not a masked language model")
        return model


def dump_yaml(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def write_run_files(
    path: Path, config: RunConfig, vocab: Vocabulary, dataset: dict[str, Any]
) -> None:
    """The run's settings, vocabulary and dataset record (rewritten when a resumed run
    changes its settings: they are the run's own files, read by the same command)."""
    settings = SETTINGS_HEAD + dump_yaml(config.to_dict()) + SETTINGS_END
    atomic_write(path / CONFIG, settings, own=True)
    atomic_write(path / VOCAB, vocab.to_json(), own=True)
    atomic_write(path / DATASET, dump_yaml(dataset), own=True)


def create_run_files(
    path: Path, config: RunConfig, vocab: Vocabulary, dataset: dict[str, Any]
) -> None:
    """A new run's files in its empty, locked folder: :func:`write_run_files` and an empty
    ``metrics.jsonl``.  Taken back if one cannot be written (a full disk) or a signal stops
    the command: a folder holding some of them would be neither resumable nor free for a new
    run."""
    try:
        write_run_files(path, config, vocab, dataset)
        atomic_write(path / METRICS, "", own=True)
    except BaseException:
        for name in (CONFIG, VOCAB, DATASET, METRICS):
            with contextlib.suppress(OSError):
                (path / name).unlink()
        raise


def read_settings(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The run's ``config.yaml`` as written (no defaults filled in, nothing checked)."""
    folder = Path(path)
    file = folder / CONFIG
    if not file.is_file():
        raise InputError(f"not an induce run directory: no {CONFIG}", str(folder))
    raw = parse_yaml(read_text(file), str(file))
    _remember_run_files(folder)
    if not isinstance(raw, dict):
        kinds = {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}
        what = "empty" if raw is None else f"a YAML {kinds.get(type(raw), type(raw).__name__)}"
        raise InputError(f"not a mapping of settings ({what})", str(file))
    return raw


# config.yaml's first and last lines (YAML comments): a file that begins with the first and
# lacks the last was cut short; a file without the first was written before them
SETTINGS_HEAD = "# induce run settings; the file ends with the line '# end'\n"
SETTINGS_END = "# end\n"
# the groups every config.yaml that induce wrote holds (``protocol`` came later: not required)
_GROUPS = ("arch", "model", "data", "optim", "train")


def check_whole_settings(path: str | os.PathLike[str]) -> None:
    """Refuse a run's ``config.yaml`` that was cut short before the run resumes with it: the
    settings it lost would come back as defaults (other epochs, another schedule) without a
    word.  induce writes it whole, between :data:`SETTINGS_HEAD` and :data:`SETTINGS_END`;
    a file written before those lines must end with a line end and hold every group."""
    file = Path(path) / CONFIG
    text = read_text(file) if file.is_file() else ""
    if text.startswith(SETTINGS_HEAD):  # before it is parsed: a cut may leave no YAML
        what = "" if text.endswith(f"\n{SETTINGS_END}") else "its last line '# end' is lost"
    else:
        raw = read_settings(path)
        lacking = [group for group in _GROUPS if group not in raw]
        what = f"it has no {lacking[0]} settings" if lacking else ""
        what = what or ("" if text.endswith("\n") else "its last line has no end")
    if what:
        raise InputError(
            f"cut short ({what}): a resume would take defaults for what is lost; put "
            "the run's settings back (an edited file: keep its last line)",
            str(file),
        )


def open_run(path: str | os.PathLike[str], overrides: list[str] | None = None) -> Run:
    """Open a run directory (``overrides``: ``key=value`` settings applied on top)."""

    folder = Path(path)
    raw = read_settings(folder)
    file = folder / DATASET
    dataset = parse_yaml(read_text(file), str(file)) if file.is_file() else {}
    if "arch" not in raw:
        raise InputError(f"{CONFIG} names no architecture", str(folder))
    try:  # the file's own settings first: a fault there is the file's, not an override's
        recorded = load_config(str(raw["arch"]), None, base=raw)
    except ConfigError as err:
        raise InputError(str(err), str(folder / CONFIG)) from None
    config = load_config(str(raw["arch"]), overrides, base=raw) if overrides else recorded
    if not (folder / VOCAB).is_file():
        raise InputError(f"the run has no {VOCAB}", str(folder))
    vocab = Vocabulary.from_json(read_text(folder / VOCAB), str(folder / VOCAB))
    return Run(folder, config, vocab, dataset or {}, recorded)


def _remember_run_files(folder: Path) -> None:
    """Every file of the run as an input of the running command: no output of it may replace
    the run's history, weights or trainer state (``parse -o RUN/metrics.jsonl``)."""
    for name in (METRICS, STATE):
        remember_input(str(folder / name))
    for sub in (CHECKPOINTS, "best", "last"):  # "best", "last": the earlier layout
        for top, _, names in os.walk(folder / sub):
            for name in names:
                remember_input(os.path.join(top, name))


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """The JSON records of a ``metrics.jsonl`` file (none if it does not exist):
    :func:`metrics_records` of its bytes."""
    if not path.exists():
        return []
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", str(path)) from None
    remember_input(str(path))  # no output of this command may replace it
    return metrics_records(data, path)


def metrics_records(data: bytes, path: Path) -> list[dict[str, Any]]:
    """The JSON records of ``data``, the bytes of the ``metrics.jsonl`` file ``path``.

    A last line without its newline that is not a JSON record is a write cut short (the
    run was killed while logging): it is left out.  Any other line that is not a JSON
    object is an :class:`InputError` naming the line."""

    def record(line: str, number: int) -> dict[str, Any] | None:
        if not line.strip():
            return None
        try:
            value = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as err:
            reason = err.msg if isinstance(err, json.JSONDecodeError) else "nested too deeply"
            raise InputError(f"not JSON: {reason}", str(path), number) from None
        if not isinstance(value, dict):
            raise InputError("not a JSON record: expected an object {...}", str(path), number)
        return value

    complete, newline, tail = data.rpartition(b"\n")
    lines = decode_utf8(complete + newline, str(path)).split("\n")[:-1] if newline else []
    records = [record(line, number) for number, line in enumerate(lines, 1)]
    if b"\r" in tail:  # a kill tears a record; CR line ends (never written here) are damage
        check_text(tail.decode("utf-8", "replace"), str(path), len(lines) + 1)
    try:
        records.append(record(decode_utf8(tail, str(path)), len(lines) + 1))
    except InputError:
        pass  # torn: cut in the middle of a record (or of a character)
    return [r for r in records if r is not None]


def keep_metrics_until(path: Path, step: int) -> None:
    """Forget the records written after update ``step`` (a resumed run redoes them)."""
    kept = [r for r in read_metrics(path) if r.get("step", 0) <= step]
    atomic_write(path, "".join(json.dumps(r) + "\n" for r in kept), own=True)


def write_pointer(run: Path, step: int, last: str, best: str | None) -> None:
    """Make ``last`` (and ``best``) the run's current checkpoints: one atomic rename of
    ``checkpoint.json``."""
    pointer = {"step": step, "last": last, "best": best}
    atomic_write(run / POINTER, json.dumps(pointer, indent=1) + "\n", own=True)


def read_pointer(run: Path) -> dict[str, Any] | None:
    """The run's ``checkpoint.json`` (``step``, ``last``, ``best``), or ``None`` before the
    first checkpoint (and for runs of the earlier layout)."""
    path = run / POINTER
    if not path.is_file():
        return None
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as err:
        raise InputError(f"not JSON: {err.msg}", str(path), err.lineno) from None
    if not isinstance(data, dict) or not isinstance(data.get("last"), str):
        raise InputError("names no last checkpoint", str(path))
    for key in ("last", "best"):
        name = data.get(key)
        legacy = key == "best" and name in (None, "best")  # the earlier layout's best folder
        if not legacy and not (isinstance(name, str) and _CHECKPOINT.fullmatch(name)):
            raise InputError(
                f"its {key} checkpoint {name!r} is not a folder of this run's "
                f"{CHECKPOINTS}/: the pointer was edited or belongs to another run",
                str(path),
            )
    if not isinstance(data.get("step"), int):
        raise InputError("names no step", str(path))
    return data


# one folder directly inside the run's checkpoints/ (training names them STEP-HEX, a
# converted checkpoint STEP-import): never a path that leaves the run
_CHECKPOINT = re.compile(rf"{CHECKPOINTS}/(?!\.\.?$)[\w.-]+")


def dataset_record(dataset: Dataset) -> dict[str, Any]:
    """What a run records of its dataset (``dataset.yaml``)."""
    m = dataset.manifest
    return {
        "path": str(dataset.path.resolve()),
        "format": m.get("format"),
        "normalization": m.get("normalization", {}),
        "tokenizer": m["tokens"] if isinstance(m.get("tokens"), dict) else None,  # subwords
        "counts": m.get("counts"),
        "sources": m.get("source", m.get("sources")),
    }


def remember_run(path: str | Path) -> None:
    """Record ``path`` as the most recent run (what parse uses when no run is named)."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / LATEST, str(Path(path).resolve()) + "\n")


def latest_run() -> Path:
    """The most recent run recorded by :func:`remember_run`."""
    record = cache_dir() / LATEST
    if not record.is_file():
        raise InputError("no run yet", str(record))
    path = Path(record.read_text(encoding="utf-8").strip())
    if not (path / CONFIG).is_file():
        raise InputError(f"the most recent run {path} is gone", str(record))
    return path
