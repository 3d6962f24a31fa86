"""The dataset directory that ``induce preprocess`` writes and ``train``/``parse``/``evaluate``
read.

::

    DIR/manifest.yaml      what was done: sources and their checksums, splits, filters,
                           normalisation, counts, tool version, and every file below with its
                           line count and SHA-256
    DIR/vocab.json         token list (id order, <unk> <pad> <mask> first) and training counts
    DIR/{split}.txt        one sentence per line, model tokens separated by spaces
    DIR/{split}.trees      gold trees of the same sentences, one per line (when known)
    DIR/{split}.words      the words, when the model tokens are subwords
    DIR/{split}.align      for each subword, the index of its word (when subwords)
    DIR/tokenizer.json     the subword tokenizer (when subwords)

Splits are ``train``, ``valid`` and ``test``.  A dataset is written into a temporary sibling
directory and renamed into place only when complete, so an interrupted run never leaves a
directory that looks finished; loading checks every file against the manifest.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

from induce.data.config import parse_yaml
from induce.data.errors import InputError
from induce.data.files import current_umask, remember_input
from induce.data.locks import FileLock
from induce.data.reading import read_text
from induce.data.vocab import Vocabulary

if TYPE_CHECKING:
    from induce.data.normalize import Normalization

FORMAT = "induce-dataset/1"
SPLITS = ("train", "valid", "test")
MANIFEST = "manifest.yaml"
VOCAB = "vocab.json"


class OutputExists(InputError):
    """The output directory exists and ``force`` was not given: callers may say how to
    replace it in their own terms (the command line names its flag)."""


class _CountingWriter:
    """A text file that tracks its line count and SHA-256 while it is written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[bytes] = open(path, "wb")
        self._hash = hashlib.sha256()
        self.lines = 0

    def write_line(self, text: str) -> None:
        data = (text + "\n").encode("utf-8")
        self._handle.write(data)
        self._hash.update(data)
        self.lines += 1

    def write_lines(self, lines: list[str]) -> None:
        if not lines:
            return
        data = ("\n".join(lines) + "\n").encode("utf-8")
        self._handle.write(data)
        self._hash.update(data)
        self.lines += len(lines)

    def close(self) -> dict[str, Any]:
        self._handle.close()
        return {"lines": self.lines, "sha256": self._hash.hexdigest()}


class DatasetWriter:
    """Write a dataset directory atomically: ``with DatasetWriter(out) as w: ...``.

    Files go to a temporary directory beside ``out``; :meth:`finish` writes the vocabulary
    and the manifest and renames the directory into place.  Leaving the ``with`` block
    without :meth:`finish` (an error, Ctrl-C) removes everything written.
    """

    def __init__(self, out: str | os.PathLike[str], force: bool = False) -> None:
        self.out = Path(out).absolute()
        parent = self.out.parent
        try:  # writing data/ptb on a fresh checkout: make data/
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise InputError(f"cannot create the folder: {err.strerror}", str(parent)) from None
        # one writer per output: a second one is refused, naming the first one's pid
        self.lock = FileLock(parent / f".{self.out.name}.lock", f"the dataset {self.out}")
        self.lock.acquire()
        try:
            self._check_output(force)
            _remove_stale_temporaries(parent, self.out.name)
        except BaseException:
            self.lock.release()
            raise
        self.force = force
        try:
            self.tmp = Path(
                tempfile.mkdtemp(prefix=f".{self.out.name}.", suffix=".tmp", dir=parent)
            )
        except OSError as err:
            self.lock.release()
            raise InputError(f"cannot write here: {err.strerror}", str(parent)) from None
        self._open: dict[str, _CountingWriter] = {}
        self.files: dict[str, dict[str, Any]] = {}
        self.done = False

    def _check_output(self, force: bool) -> None:
        if self.out.exists():
            if not force:
                raise OutputExists("already exists (replace it with force=True)", str(self.out))
            if not (self.out.is_dir() and (self.out / MANIFEST).is_file()):
                raise InputError(
                    "exists and is not an induce dataset: only a dataset is replaced",
                    str(self.out),
                )
            foreign = _foreign_entries(self.out)
            if foreign is None:
                raise InputError(
                    f"its {MANIFEST} cannot be read, so which files are the dataset's is not "
                    "known: remove the folder yourself to replace it",
                    str(self.out),
                )
            if foreign:
                raise InputError(
                    f"holds {', '.join(foreign[:3])}{', ...' if len(foreign) > 3 else ''}, "
                    "which the dataset's manifest does not list: replacing the dataset would "
                    "delete them; move them out first",
                    str(self.out),
                )

    def __enter__(self) -> DatasetWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for writer in self._open.values():
            writer._handle.close()
        if not self.done:
            shutil.rmtree(self.tmp, ignore_errors=True)
        self.lock.release()

    def write_line(self, name: str, text: str) -> None:
        """Append a line to file ``name`` of the dataset (``train.txt``, ``valid.trees``)."""
        self._writer(name).write_line(text)

    def write_lines(self, name: str, lines: list[str]) -> None:
        """Append several lines at once (one encoding, hashing and write); no lines, no file."""
        if lines:
            self._writer(name).write_lines(lines)

    def _writer(self, name: str) -> _CountingWriter:
        writer = self._open.get(name)
        if writer is None:
            writer = self._open[name] = _CountingWriter(self.tmp / name)
        return writer

    def copy_file(self, source: str | os.PathLike[str], name: str) -> None:
        shutil.copyfile(source, self.tmp / name)
        self.files[name] = _describe(self.tmp / name)

    def finish(self, manifest: dict[str, Any], vocab: Vocabulary | None) -> Path:
        """Close the files, write vocab.json and manifest.yaml, move the directory in place."""
        import yaml

        for name, writer in self._open.items():
            self.files[name] = writer.close()
        self._open.clear()
        if vocab is not None:
            (self.tmp / VOCAB).write_text(vocab.to_json(), encoding="utf-8")
            self.files[VOCAB] = _describe(self.tmp / VOCAB)
        full = {
            "format": FORMAT,
            **manifest,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "files": dict(sorted(self.files.items())),
        }
        (self.tmp / MANIFEST).write_text(
            yaml.safe_dump(full, sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
        os.chmod(self.tmp, 0o777 & ~current_umask())
        if self.out.exists():  # replacing a dataset (force): swap, then remove the old one
            old = self.tmp.with_suffix(".old")
            os.replace(self.out, old)
            os.replace(self.tmp, self.out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(self.tmp, self.out)
        self.done = True
        return self.out


def _remove_stale_temporaries(parent: Path, name: str) -> None:
    """Remove the temporary folders of earlier writers of the dataset ``name`` that were
    killed (SIGKILL, a power cut) before they could: under its lock no writer of ``name``
    is alive.  Only ``tempfile.mkdtemp``'s own names for it match (eight characters of its
    alphabet), never another dataset's (``name.x``)."""
    pattern = re.compile(rf"\.{re.escape(name)}\.[a-z0-9_]{{8}}\.tmp")
    for entry in parent.iterdir():
        if pattern.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)


def _foreign_entries(folder: Path) -> list[str] | None:
    """What is in the dataset ``folder`` besides its manifest and the files it lists (sorted;
    folders end in ``/``); ``None`` when the manifest cannot be read."""
    import yaml

    try:
        manifest = yaml.safe_load((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict):
        return None
    known = {MANIFEST, *map(str, files)}
    return sorted(
        entry.name + ("/" if entry.is_dir() else "")
        for entry in folder.iterdir()
        if entry.name not in known
    )


def _describe(path: Path) -> dict[str, Any]:
    digest = hashlib.sha256()
    lines = 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            lines += block.count(b"\n")
    return {"lines": lines, "sha256": digest.hexdigest()}


@dataclass
class Dataset:
    """A dataset directory whose files were checked against its manifest."""

    path: Path
    manifest: dict[str, Any]
    vocab: Vocabulary | None
    files: dict[str, dict[str, Any]] = field(default_factory=dict)

    def has(self, name: str) -> bool:
        return name in self.files

    def lines(self, name: str) -> Iterator[str]:
        """The lines of file ``name`` without their newline (streamed)."""
        if name not in self.files:
            raise InputError(f"the dataset has no {name}", str(self.path))
        with open(self.path / name, encoding="utf-8") as handle:
            for line in handle:
                yield line.rstrip("\n")

    def sentences(self, split: str) -> Iterator[list[str]]:
        """Model tokens of each sentence of ``split``: the words of ``SPLIT.txt``, normalised
        here when the manifest says the text keeps the trees' words (``text_normalized:
        false``, the synthetic datasets: their text reads like their trees)."""
        norm = None if self.text_normalized else self.normalization
        for line in self.lines(f"{split}.txt"):
            words = line.split()
            yield words if norm is None else norm.words(words)

    @property
    def text_normalized(self) -> bool:
        """Whether ``SPLIT.txt`` holds model tokens (so does every dataset older than the key)."""
        return bool(self.manifest.get("text_normalized", True))

    @property
    def normalization(self) -> Normalization:
        from induce.data.normalize import Normalization

        return Normalization.from_dict(self.manifest.get("normalization", {}))


def holds_model_tokens(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a dataset's own split text holding model tokens (``SPLIT.txt`` of a
    dataset whose text is normalised): ``induce parse`` reads such words as they stand.  A
    file of no dataset, or of one that cannot be read, is not."""
    target = Path(path)
    if target.suffix != ".txt" or not (target.parent / MANIFEST).is_file():
        return False
    try:
        dataset = load_dataset(target.parent, verify=False)
    except InputError:
        return False
    return dataset.has(target.name) and dataset.text_normalized


def load_dataset(path: str | os.PathLike[str], verify: bool = True) -> Dataset:
    """Open a dataset directory; with ``verify``, every file must have the line count and
    SHA-256 the manifest records (a truncated or edited directory is refused)."""

    folder = Path(path)
    if not folder.is_dir():
        raise InputError("no such dataset directory", str(folder))
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise InputError(
            f"not an induce dataset: no {MANIFEST} (an interrupted preprocess leaves none)",
            str(folder),
        )
    manifest = parse_yaml(read_text(manifest_path), str(manifest_path))
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InputError(f"unknown dataset format (expected {FORMAT})", str(manifest_path))
    files = manifest.get("files") or {}
    if not isinstance(files, dict) or not all(
        isinstance(v, dict) and {"lines", "sha256"} <= set(v) for v in files.values()
    ):
        raise InputError("the manifest's file list is damaged", str(manifest_path))
    for name, expected in files.items():
        target = folder / str(name)
        if not target.is_file():
            raise InputError(f"{name} is missing", str(folder))
        remember_input(str(target))  # no output of this command may replace the data
        if verify:
            found = _describe(target)
            if found != expected:
                what = (
                    f"{found['lines']} lines, expected {expected['lines']}"
                    if found["lines"] != expected["lines"]
                    else "its content differs"
                )
                raise InputError(
                    f"{name} does not match the manifest ({what}): the dataset "
                    "is truncated or was changed; preprocess it again",
                    str(folder),
                )
    vocab = None
    if VOCAB in files:
        vocab = Vocabulary.from_json(read_text(folder / VOCAB), str(folder / VOCAB))
    return Dataset(folder, manifest, vocab, files)
