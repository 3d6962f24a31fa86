"""``induce parse``: options to :mod:`induce.parse`; output to stdout or an atomic file."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable

import typer

from induce.cli.common import check_weights, handle_errors, regular_file, warn
from induce.data.architectures import decoder_help
from induce.parse import Format, InputKind, Punct, Sentence


@handle_errors
def parse(
    input_path: str = typer.Argument(..., metavar="INPUT", help="Text or CoNLL-U; - for stdin."),
    model: str | None = typer.Option(
        None,
        "--model",
        "-m",
        help="Run directory from `induce train` [default: the most recent run].",
    ),
    fmt: Format = typer.Option(
        "conllu",
        "--format",
        "-f",
        help="conllu | ptb | jsonl | tree (a drawing for the terminal: arcs over the words, "
        "brackets under them) | html (one self-contained page of such drawings).",
    ),
    output: str | None = typer.Option(
        None, "--output", "-o", help="Write here (atomically) instead of stdout."
    ),
    pretokenized: bool = typer.Option(
        False, "--pretokenized", help="Tokens separated by spaces (no tokenizer)."
    ),
    normalized: bool | None = typer.Option(
        None,
        "--normalized/--raw",
        help="The input is normalised text, model tokens separated by spaces (a dataset's "
        "own SPLIT.txt), read as they stand; or raw, normalised as the model's dataset was "
        "(lower-cased, numbers as N).  Default: normalised for a dataset's SPLIT.txt whose "
        "text holds model tokens, raw otherwise.",
    ),
    conllu: bool = typer.Option(
        False, "--conllu", help="The input is CoNLL-U (also guessed from a .conllu suffix)."
    ),
    trees: bool = typer.Option(
        False,
        "--trees",
        help="The input is PTB trees (also guessed from a .trees/.mrg suffix): parse their "
        "words; a chart model keeps their tags.",
    ),
    decoder: str | None = typer.Option(
        None,
        "--decoder",
        help=f"{decoder_help()}.  Default: the run's protocol.test_decoder "
        "(mst-uniform-root for udgn-ptb-paper), else the model's.",
    ),
    punct: Punct = typer.Option(
        "attach",
        "--punct",
        help="Punctuation the model never saw: attach (to the word before it) | drop.",
    ),
    scores: bool = typer.Option(
        False,
        "--scores",
        help="jsonl: add the parser's scores (distances, heights, head distributions; "
        "a chart parser's spans).",
    ),
    batch_tokens: int | None = typer.Option(
        None,
        "--batch-tokens",
        help="Tokens per batch (default: the run's data.eval_batch_tokens: 8192 in the demo "
        "settings, 4096 in the masked LMs' paper presets, 256 in the PCFG presets).",
    ),
    device: str = typer.Option("auto", "--device", help="auto | cpu | cuda | cuda:N."),
    weights: str = typer.Option("best", "--weights", help="best | last checkpoint."),
    bf16: bool = typer.Option(
        False,
        "--bf16",
        help="The model in bfloat16 on CUDA or on a CPU with AMX/AVX512-BF16 (fp32 "
        "elsewhere): a chart parser's encoder, a masked LM's parser; trees may differ "
        "slightly from fp32.",
    ),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="No progress on stderr (warnings and errors still)."
    ),
) -> None:
    """Induced dependency and constituency trees for every sentence of INPUT, written as
    they are parsed (in input order, memory bounded whatever the input size).  A chart
    parser run gives labelled PTB trees (CoNLL-U: their penn2malt head-rule dependencies)."""
    from induce.data.dataset import holds_model_tokens
    from induce.data.errors import ConfigError
    from induce.data.files import open_output
    from induce.parse import Parser, format_parsed, page_frame

    if conllu and trees:
        raise ConfigError("--conllu and --trees name two formats: give one")
    kind: InputKind = "pretokenized" if pretokenized else "text"
    if conllu or input_path.endswith(".conllu"):
        kind = "conllu"
    elif trees or input_path.endswith((".trees", ".mrg")):
        kind = "trees"
    elif normalized or (normalized is None and holds_model_tokens(input_path)):
        kind = "normalized"  # normalising again would read every number N as n
    if normalized and kind != "normalized":
        raise ConfigError("--normalized is for text input, not CoNLL-U or trees")
    if pretokenized and kind in ("conllu", "trees"):  # their tokens are given already
        raise ConfigError("--pretokenized is for text input, not CoNLL-U or trees")
    if kind == "conllu" and punct == "drop":
        raise ConfigError("--punct drop would remove CoNLL-U tokens; use attach")
    if scores and fmt != "jsonl":  # no other format has a place for them
        raise ConfigError(f"--scores adds the scores to jsonl output, not to {fmt}")
    check_weights(weights)
    run = model or _latest_run()
    parser = Parser(run, device, weights, decoder, bf16)
    parser.check_format(fmt)
    parser.check_options(punct, scores)
    sentences, pending = _input(input_path, kind)
    source = "<stdin>" if input_path == "-" else input_path
    meter = _Progress(quiet, (output or "-") == "-" and sys.stdout.isatty())
    empty = 0
    head, tail = page_frame(fmt, source, run)
    with open_output(output or "-") as out:
        out.write(head)
        for parsed in parser.parse_stream(
            sentences, punct, scores, batch_tokens, source, meter.update, pending
        ):
            empty += not parsed.sentence.tokens
            out.write(format_parsed([parsed], fmt))
            if output is None:
                out.flush()
        out.write(tail)
    meter.close()
    if empty:
        warn(
            f"{empty} empty line(s): "
            + ("left out of the CoNLL-U output" if fmt == "conllu" else "written as empty records")
        )


def _input(path: str, kind: InputKind) -> tuple[Iterable[Sentence], Callable[[], bool] | None]:
    """The sentences of ``path``, and for a terminal or a pipe on standard input, read ahead
    with whether the next one is here (the parser then answers each line as it comes)."""
    from induce.parse import Prefetched, iter_sentences

    sniff = path == "-" and kind == "text"  # CoNLL-U on stdin, as a .conllu file
    sentences = iter_sentences(path, kind, sniff=sniff)
    if path != "-" or regular_file(sys.stdin):
        return sentences, None
    ahead = Prefetched(sentences)
    return ahead, ahead.pending


class _Progress:
    """Sentences parsed and sentences/s on stderr: one line updated in place on a terminal,
    a log line every 30 s otherwise; nothing with ``--quiet``.  ``shared``: the trees go
    to the same terminal, where a line updated in place would run into the next tree."""

    def __init__(self, quiet: bool, shared: bool = False) -> None:
        import time

        self.quiet, self.tty = quiet, sys.stderr.isatty() and not shared
        self.began = self.logged = time.perf_counter()
        self.done = 0

    def update(self, done: int) -> None:
        import time

        self.done = done
        now = time.perf_counter()
        if self.quiet or (not self.tty and now - self.logged < 30):
            return
        self.logged = now
        line = f"parsed {done:,} sentences, {done / max(now - self.began, 1e-9):,.0f} sentences/s"
        sys.stderr.write(f"\r{line}" if self.tty else line + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.tty and not self.quiet and self.done:
            sys.stderr.write("\n")


def _latest_run(advice: str = "train one (induce train --arch udgn) or give --model RUN") -> str:
    """The most recent run, said on stderr; without one, an error with ``advice``."""
    from induce.data.errors import InputError
    from induce.data.files import cache_dir, remember_input
    from induce.runs import latest_run
    from induce.runs.directory import LATEST

    try:
        model = str(latest_run())
    except InputError as err:
        raise InputError(f"{err.reason}: {advice}", err.path) from None
    # an input of this command (not in latest_run: a script's later remember_run may replace
    # the record, and the library's memory of inputs lasts as long as its process)
    remember_input(str(cache_dir() / LATEST))
    typer.echo(f"no --model: using the most recent run, {model}", err=True)
    return model
