"""``induce parse``: options to :mod:`induce.parse`; output to stdout or an atomic file."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from induce.cli.common import handle_errors, warn
from induce.parse import Format, InputKind, Punct

if TYPE_CHECKING:
    from induce.parse import Parsed, Parser, Sentence


@handle_errors
def parse(
    input_path: str = typer.Argument(..., metavar="INPUT", help="Text or CoNLL-U; - for stdin."),
    model: str | None = typer.Option(
        None,
        "--model",
        "-m",
        help="Run directory from `induce train` [default: the most recent run].",
    ),
    fmt: Format = typer.Option("conllu", "--format", "-f", help="conllu | ptb | jsonl."),
    output: str | None = typer.Option(
        None, "--output", "-o", help="Write here (atomically) instead of stdout."
    ),
    pretokenized: bool = typer.Option(
        False, "--pretokenized", help="Tokens separated by spaces (no tokenizer)."
    ),
    conllu: bool = typer.Option(
        False, "--conllu", help="The input is CoNLL-U (also guessed from a .conllu suffix)."
    ),
    decoder: str | None = typer.Option(
        None,
        "--decoder",
        help="structformer: argmax (default) | algorithm3; udgn: mst (default) | argmax | eisner.",
    ),
    punct: Punct = typer.Option(
        "attach",
        "--punct",
        help="Punctuation the model never saw: attach (to the word before it) | drop.",
    ),
    scores: bool = typer.Option(
        False, "--scores", help="jsonl: add distances, heights and head distributions."
    ),
    batch_tokens: int = typer.Option(8192, "--batch-tokens", help="Tokens per batch."),
    device: str = typer.Option("auto", "--device", help="auto | cpu | cuda | cuda:N."),
    weights: str = typer.Option("best", "--weights", help="best | last checkpoint."),
) -> None:
    """Induced dependency and constituency trees for every sentence of INPUT."""
    from induce.data.errors import ConfigError
    from induce.data.files import atomic_write
    from induce.parse import Parser, format_parsed, read_sentences

    kind: InputKind = "pretokenized" if pretokenized else "text"
    if conllu or input_path.endswith(".conllu"):
        kind = "conllu"
    if kind == "conllu" and punct == "drop":
        raise ConfigError("--punct drop would remove CoNLL-U tokens; use attach")
    parser = Parser(model or _latest_run(), device, weights, decoder)
    sentences = read_sentences(input_path, kind)
    source = "<stdin>" if input_path == "-" else input_path
    parsed = _parse(parser, sentences, punct, scores, batch_tokens, source)
    text = format_parsed(parsed, fmt)
    empty = sum(1 for s in sentences if not s.tokens)
    if empty:
        warn(
            f"{empty} empty line(s): "
            + ("left out of the CoNLL-U output" if fmt == "conllu" else "written as empty records")
        )
    if output:
        atomic_write(output, text)
    else:
        sys.stdout.write(text)


def _latest_run() -> str:
    """The most recent run, said on stderr."""
    from induce.data.errors import InputError
    from induce.runs import latest_run

    try:
        model = str(latest_run())
    except InputError as err:
        raise InputError(
            f"{err.reason}: train one (induce train --arch udgn) or give --model RUN", err.path
        ) from None
    typer.echo(f"no --model: using the most recent run, {model}", err=True)
    return model


def _parse(
    parser: Parser,
    sentences: list[Sentence],
    punct: Punct,
    scores: bool,
    batch_tokens: int,
    source: str,
) -> list[Parsed]:
    """Parse, with a progress bar for long inputs on a terminal."""
    if not (sys.stderr.isatty() and len(sentences) > 2000):
        return parser.parse(sentences, punct, scores, batch_tokens, source)
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task("parse", total=len(sentences))
        return parser.parse(
            sentences,
            punct,
            scores,
            batch_tokens,
            source,
            lambda done, total: bar.update(task, completed=done),
        )
