"""What the ``induce preprocess`` subcommands share: their options, the settings those make
(normalisation, vocabulary, subword tokenizer), and the summary of the dataset written."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import typer

from induce.cli.common import progress_bar, stdout_console, warn

P = ParamSpec("P")
R = TypeVar("R")

OUT = typer.Option(..., "--out", "-o", help="Dataset directory to create (written atomically).")
FORCE = typer.Option(False, "--force", help="Replace an existing dataset directory.")
MIN_FREQ = typer.Option(
    1, "--min-freq", min=1, help="Keep training words seen at least this many times."
)
MAX_VOCAB = typer.Option(
    None,
    "--max-vocab",
    min=4,
    help="At most this many vocabulary entries, <unk> <pad> <mask> included.",
)
VOCAB = typer.Option(
    None,
    "--vocab",
    help="Use this vocabulary instead of building one: a vocab.json, a run or dataset folder, "
    "the official code's dict.pkl, or a word list in id order (for a run's or imported "
    "model's own vocabulary).",
)
NO_LOWER = typer.Option(False, "--keep-case", help="Do not lower-case words.")
KEEP_DIGITS = typer.Option(False, "--keep-digits", help="Do not rewrite digit runs as N.")
NUMBERS = typer.Option(
    None,
    "--numbers",
    help="What one N replaces: runs (each run of digits: the StructFormer and UDGN readers'), "
    "whole (a number with its commas and points: the PCFG papers', and an imported PCFG's), or "
    "mikolov (a token that is a number, and %) [default: the preset's, or runs].",
)
SKIP_BAD = typer.Option(
    False, "--skip-bad", help="Skip malformed trees (and count them) instead of stopping."
)
WORKERS = typer.Option(1, "--workers", "-j", min=1, help="Processes reading treebank files.")
TOKENIZER = typer.Option(
    "words",
    "--tokenizer",
    help="words, gpt2 (byte-level BPE) or wordpiece (BERT's, for --init-from): subwords with "
    "word alignment.",
)
TOKENIZER_FILES = typer.Option(
    None,
    "--tokenizer-files",
    help="Folder with tokenizer.json, or vocab.json + merges.txt (gpt2), or vocab.txt (wordpiece).",
)
SPACE_FIRST = typer.Option(
    False, "--space-first-word", help="GPT-2 subwords: a space before the first word too."
)


def normalization(tagset: str, keep_case: bool, keep_digits: bool, numbers: str = "runs"):
    """The word normalisation that ``--tagset``, ``--keep-case``, ``--keep-digits`` and
    ``--numbers`` make."""
    from induce.data.normalize import Normalization, load_tagset

    tags = load_tagset(tagset)
    return Normalization(
        lowercase=not keep_case,
        digits=None if keep_digits else "N",
        word_tags=tags,
        tagset=None if tags is None else tagset,
        numbers=numbers,
    )


def fixed_vocab(path: str | None, min_freq: int | None, max_vocab: int | None, subwords: object):
    """The fixed vocabulary of ``--vocab``, which excludes building one."""
    if path is None:
        return None
    from induce.data.dictionaries import load_vocabulary
    from induce.data.errors import ConfigError

    if (min_freq or 1) != 1 or max_vocab is not None or subwords is not None:
        raise ConfigError(
            "gives the vocabulary: --min-freq, --max-vocab and subwords build one", "vocab"
        )
    return load_vocabulary(path)


def subword_tokenizer(kind: str, files: str | None, space_first: bool, lowercase: bool = True):
    from induce.data.errors import ConfigError

    if kind not in ("words", "gpt2", "wordpiece"):
        raise ConfigError(f"--tokenizer must be words, gpt2 or wordpiece, not {kind!r}")
    if space_first and kind != "gpt2":  # words and WordPiece pieces have no leading space
        raise ConfigError(f"--space-first-word is for --tokenizer gpt2, not {kind}")
    if kind == "words":
        if files:
            raise ConfigError("--tokenizer-files needs --tokenizer gpt2 or wordpiece")
        return None
    if not files:
        wanted = (
            "tokenizer.json, or vocab.json + merges.txt"
            if kind == "gpt2"
            else "tokenizer.json or BERT's vocab.txt"
        )
        raise ConfigError(
            f"--tokenizer {kind} needs --tokenizer-files DIR (a folder with {wanted}); "
            "nothing is downloaded"
        )
    from induce.preprocess.subwords import SubwordTokenizer

    return SubwordTokenizer(files, space_first, kind, lowercase)


def force_hint(command: Callable[P, R]) -> Callable[P, R]:
    """An existing output is refused with the flag that replaces it (the library names its
    ``force`` argument)."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from induce.data.dataset import OutputExists
        from induce.data.errors import InputError

        try:
            return command(*args, **kwargs)
        except OutputExists as err:
            raise InputError("already exists (use --force to replace it)", err.path) from None

    return wrapper


def write_dataset(out: str, job: Callable[[Any], dict[str, Any]]) -> None:
    """Run a preprocessing ``job(progress)`` (a progress bar on a terminal), then show the
    dataset it wrote."""
    with progress_bar() as progress:
        data = job(progress)
    show_summary(data, out)


def show_summary(data: dict, out: str) -> None:
    """The dataset written: a table of its splits' counts, then warnings for what it lacks."""
    from rich.table import Table

    table = Table(title=f"Dataset {out} ({data['kind']})", title_justify="left")
    for column in ("split", "sentences", "words", "tokens", "unknown", "dropped", "bad trees"):
        table.add_column(column, justify="left" if column == "split" else "right")
    for split, c in data["counts"].items():
        table.add_row(
            split,
            str(c["sentences"]),
            str(c["words"]),
            str(c["tokens"]),
            f"{100 * c['unknown_token_rate']:.2f}%",
            str(c["dropped_without_words"]),
            str(c["skipped_bad_trees"]),
        )
    console = stdout_console()
    console.print(table)
    console.print(f"vocabulary: {data['vocabulary']['size']} entries")
    for split, spec in data.get("splits", {}).items():
        if isinstance(spec, dict) and spec.get("missing_sections"):
            absent = spec["missing_sections"]
            warn(
                f"{split}: {len(absent)} section(s) not in the treebank: "
                f"{', '.join(absent[:8])}{' ...' if len(absent) > 8 else ''}"
            )
    if data.get("first_problem"):
        skipped = sum(c["skipped_bad_trees"] for c in data["counts"].values())
        warn(f"skipped {skipped} malformed tree(s); the first: {data['first_problem']}")
