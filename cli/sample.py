"""``induce sample``: sentences drawn from a trained grammar."""

from __future__ import annotations

import typer

from induce.cli.common import handle_errors
from induce.data.architectures import ARCHITECTURES

_GRAMMARS = ", ".join(a.name for a in ARCHITECTURES if a.samples)  # the registry's, not a list


@handle_errors
def sample(
    model: str | None = typer.Argument(
        None, help=f"Run directory of a grammar ({_GRAMMARS}) [default: the most recent run]."
    ),
    count: int = typer.Option(10, "--count", "-n", help="Sentences to draw."),
    seed: int = typer.Option(0, "--seed", help="The same seed draws the same sentences."),
    max_words: int = typer.Option(
        100,
        "--max-words",
        help="Longest sentence kept, 2 or more (a grammar's root rewrites to two symbols); a "
        "longer draw is drawn again (a PCFG may put mass on unbounded derivations).",
    ),
    output: str | None = typer.Option(None, "--output", "-o", help="File [default: stdout]."),
    weights: str = typer.Option("best", "--weights", help="best | last checkpoint."),
    device: str = typer.Option("cpu", "--device", help="cpu | cuda | cuda:N | auto."),
) -> None:
    """Sentences drawn from a trained grammar, one per line (a compound PCFG draws each
    sentence's z from its prior); a draw holding <pad>, <mask>, <s> or </s>, which no
    training sentence holds, is drawn again."""
    from induce.cli.parse import _latest_run
    from induce.data.files import open_output
    from induce.sample import sample_sentences

    run = model or _latest_run("train a grammar (induce train --arch npcfg) or name its run")
    sentences = sample_sentences(run, count, seed, max_words, weights, device)
    with open_output(output or "-") as out:
        out.write("".join(" ".join(words) + "\n" for words in sentences))
