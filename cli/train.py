"""``induce train``: options to :func:`induce.train.engine.train`, progress on the terminal."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from induce.cli.common import handle_errors, stdout_console
from induce.data.architectures import names
from induce.data.config import resource_names
from induce.data.errors import ConfigError

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


def _fmt(record: dict[str, Any]) -> str:
    keys = ("valid_ppl", "uf1", "corpus_uf1", "uas", "uuas", "f1", "recall", "precision")
    return "  ".join(f"{k} {record[k]}" for k in keys if k in record)


class _Display:
    """A rich progress bar with loss, perplexity, tokens/s and ETA on a terminal; plain log
    lines on stderr otherwise (pipes, files, batch jobs)."""

    def __init__(self, preface: list[str] | None = None) -> None:
        self.tty = sys.stderr.isatty()
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        # lines said once training starts (a refusal before then is the only line)
        self.preface = list(preface or [])

    def __call__(self, kind: str, record: dict[str, Any]) -> None:
        getattr(self, f"_on_{kind}")(record)

    def _on_start(self, record: dict[str, Any]) -> None:
        for line in self.preface:
            self._say(line)
        self._say(
            f"training on {record['device']} x{record['world']}: "
            f"{record['parameters']:,} parameters, {record['steps_per_epoch']} updates per "
            f"epoch, run directory {record['path']}"
            + (f" (resumed at update {record['resumed_at']})" if record["resumed_at"] else "")
        )
        if record.get("compiled"):  # why the first updates are slow
            self._say(
                "train.compile: the first batches compile the step (a minute or more; later "
                "runs read torch's compile cache)"
            )
        if not self.tty:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn("train"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.bar.start()
        self.task = self.bar.add_task(
            "train", total=record["total_steps"], completed=record["resumed_at"], info=""
        )

    def _on_train(self, record: dict[str, Any]) -> None:
        kind = record.get("loss_kind")
        if kind is not None:  # not a masked LM's: no perplexity of the loss
            info = f"{kind} loss {record['loss']:.3f} {record['tokens_per_s']:.0f} words/s"
        else:
            info = (
                f"loss {record['loss']:.3f} ppl {math.exp(min(record['loss'], 50)):.1f} "
                f"{record['tokens_per_s']:.0f} tok/s"
            )
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=record["step"], info=info)
        else:
            self._say(
                f"step {record['step']}/{record['total_steps']} epoch {record['epoch']} "
                f"{info} lr {record['lr']:.2e}"
            )

    def _on_eval(self, record: dict[str, Any]) -> None:
        self._say(
            f"valid step {record['step']} epoch {record['epoch']}: {_fmt(record)}"
            + ("  (best)" if record["best"] else "")
        )

    def _on_done(self, record: dict[str, Any]) -> None:
        if self.bar is not None:
            self.bar.stop()
        self._say(f"done after {record['step']} updates")

    def _on_interrupted(self, record: dict[str, Any]) -> None:
        if self.bar is not None:
            self.bar.stop()
        self._say(
            f"interrupted at update {record['step']}: checkpoint saved; continue with "
            "induce train --resume RUN"
        )

    def _say(self, text: str) -> None:
        if self.bar is not None:
            self.bar.console.print(text, highlight=False)
        else:
            typer.echo(text, err=True)


@handle_errors
def train(
    arch: str | None = typer.Option(
        None,
        "--arch",
        "-a",
        help=f"Architecture: {' | '.join(names())} (chart: the supervised chart parser, "
        "trained on the dataset's gold trees) [default: udgn; with --resume, the run's].",
    ),
    data: str | None = typer.Option(
        None,
        "--data",
        "-d",
        help="Dataset directory from `induce preprocess`; "
        "without it, the built-in synthetic treebank "
        "(generated once into the user cache).",
    ),
    out: str | None = typer.Option(
        None, "--out", "-o", help="New run directory [default: runs/ARCH-DATE-TIME]."
    ),
    resume: str | None = typer.Option(None, "--resume", help="Continue the run in this directory."),
    config: str | None = typer.Option(
        None,
        "--config",
        "-c",
        help="paper (the paper preset of --arch), demo (a few minutes on a CPU), a preset "
        f"({', '.join(resource_names('configs', 'presets'))}) or a YAML file "
        "[default: paper with --data, else demo].",
    ),
    set_: list[str] = typer.Option(
        [], "--set", help="Override a setting: key.sub=value (repeatable), e.g. model.d_model=256."
    ),
    device: str = typer.Option("auto", "--device", help="auto | cpu | cuda | cuda:N."),
    seed: int | None = typer.Option(None, "--seed", help="Same as --set train.seed=N."),
    init_from: str | None = typer.Option(
        None,
        "--init-from",
        help="Start from a local BERT folder (config.json + model.safetensors or "
        "pytorch_model.bin; combiner only; the data made with --tokenizer wordpiece from the "
        "same folder). Same as --set train.init_from=DIR.",
    ),
    deterministic: bool = typer.Option(
        False,
        "--deterministic",
        help="Deterministic algorithms only (CPU runs are bit-reproducible with or without it).",
    ),
) -> None:
    """Train a grammar inducer (masked LM or PCFG) or the supervised chart parser; Ctrl-C or
    SIGTERM saves a checkpoint and stops.

    With no --data it trains on the built-in synthetic treebank with the demo settings and
    ends with validation UF1 and UAS/UUAS next to trivial baselines."""
    import time

    from induce.runs import remember_run
    from induce.runs.config import load_config
    from induce.train.engine import RunExistsError, TrainOptions
    from induce.train.engine import train as run_training

    if out is not None and resume is not None:
        raise ConfigError("give --out RUN for a new run or --resume RUN to continue one")
    if resume is not None and config is not None:  # it was read for new runs only
        raise ConfigError(
            "is for a new run: a resumed run continues with its own settings (change one "
            "with --set)",
            "config",
        )
    if seed is not None and any(item.startswith("train.seed=") for item in set_):
        raise ConfigError("and --set train.seed= both set the seed: give one", "seed")
    if resume is None and config in (None, "paper", "demo"):
        arch = arch or "udgn"  # a named preset or a config file says its own
    overrides = list(set_) + ([f"train.seed={seed}"] if seed is not None else [])
    overrides += [f"train.init_from={Path(init_from).resolve()}"] if init_from else []
    preface: list[str] = []
    if resume is None and data is None:
        config = config or "demo"
        load_config(arch, overrides, preset=config)  # a wrong setting before the data is made
        data, said = _builtin_data()
        preface.append(said)
    if resume is None and out is None:
        name = arch or Path(config or "run").stem
        out = f"runs/{name}-{time.strftime('%Y%m%d-%H%M%S')}"
    options = TrainOptions(
        out=out or resume or "",
        arch=arch,
        data=data,
        overrides=overrides,
        resume=resume is not None,
        device=device,
        deterministic=deterministic,
        config=config or "paper",
    )
    try:
        outcome = run_training(options, _Display(preface))
    except RunExistsError as err:
        raise ConfigError(
            f"{err.path}: {err.reason}; use --resume to continue it or choose another --out"
        ) from None
    if os.environ.get("RANK", "0") == "0":  # under torchrun: rank 0 reports, once
        remember_run(options.out)
        _final_table(options.out)
    if outcome == "interrupted":
        raise typer.Exit(130)


def _builtin_data() -> tuple[str, str]:
    """The built-in dataset (generated into the user cache the first time) and the line
    that says so."""
    import time

    from induce.preprocess.builtin import builtin_dataset

    began = time.perf_counter()
    path, generated = builtin_dataset()
    if generated:
        return str(
            path
        ), f"built-in dataset: generated {path} in {time.perf_counter() - began:.1f} s"
    return str(path), f"built-in dataset: {path}"


def _final_table(run: str) -> None:
    """The run's validation scores (best and last) next to the baselines, on stdout: every
    run ends with a table, whatever its model and dataset measure (perplexity at least)."""
    from rich.table import Table

    from induce.reporting import baseline_rows, run_dataset, run_rows

    best, last = run_rows(run)
    rows = [r for r in (best, last) if r is not None]
    if not rows:
        typer.echo("no validation record yet (the run stopped before its first validation)")
        typer.echo(f"run directory: {run}")
        return
    trees = any(r.uf1 is not None or r.uas is not None for r in rows)
    dataset = run_dataset(run) if trees else None
    if dataset is not None and dataset.has("valid.trees"):
        rows += baseline_rows(dataset)
    columns = [
        (name, key)
        for name, key in (
            ("PPL", "ppl"),
            ("F1", "f1"),
            ("UF1", "uf1"),
            ("UAS", "uas"),
            ("UUAS", "uuas"),
        )
        if any(getattr(r, key) is not None for r in rows)
    ]
    table = Table(title="Validation", title_justify="left")
    table.add_column("")
    for name, _ in columns:
        table.add_column(name, justify="right")
    for r in rows:
        step = r.detail.split(",")[0] if r.detail else ""
        label = f"{r.name} ({step})" if step else r.name
        values = (getattr(r, key) for _, key in columns)
        table.add_row(label, *("" if v is None else f"{v:.2f}" for v in values))
    stdout_console().print(table)
    hint = f"   (parse with: induce parse FILE --model {run})" if trees else ""
    typer.echo(f"run directory: {run}{hint}")
