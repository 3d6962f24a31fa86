"""Training curves of runs: loss, validation perplexity and the validation parsing scores
against updates, the seeds of a setting as their mean and a band of one standard deviation.

The numbers come from each run's ``metrics.jsonl`` (``kind: train`` lines for the loss,
``kind: eval`` lines for the validations); runs are grouped into settings as ``induce
report`` groups them, and named the same way.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from induce.data.errors import ConfigError
from induce.reporting.results import read_runs
from induce.reporting.table import setting_labels
from induce.runs.directory import METRICS as METRICS_FILE
from induce.runs.directory import read_metrics

# what can be drawn: name -> (record kind, key, axis title)
METRICS: dict[str, tuple[str, str, str]] = {
    "loss": ("train", "loss", "training loss"),
    "ppl": ("eval", "valid_ppl", "validation perplexity"),
    "f1": ("eval", "f1", "validation F1 (EVALB)"),
    "uf1": ("eval", "uf1", "validation UF1"),
    "uas": ("eval", "uas", "validation UAS"),
    "uuas": ("eval", "uuas", "validation UUAS"),
}
FORMATS = (".png", ".svg", ".pdf")


@dataclass
class Curve:
    """One setting's values of one metric: at each step, the mean over the runs that logged
    it and (two runs or more) the sample standard deviation."""

    setting: str
    metric: str
    steps: list[int]
    mean: list[float]
    std: list[float | None]
    runs: int


def curves(runs: list[str | Path]) -> list[Curve]:
    """Every metric the runs logged, one curve per setting and metric."""
    results = read_runs(runs)
    groups: dict[str, list[int]] = {}
    for k, result in enumerate(results):
        groups.setdefault(result.setting, []).append(k)
    labels = setting_labels([results[members[0]] for members in groups.values()])
    histories = [read_metrics(Path(run) / METRICS_FILE) for run in runs]
    out = []
    for members, label in zip(groups.values(), labels):
        for metric, (kind, key, _) in METRICS.items():
            series = [_series(histories[k], kind, key) for k in members]
            curve = _combine(label, metric, series)
            if curve is not None:
                out.append(curve)
    return out


def _series(history: list[dict], kind: str, key: str) -> dict[int, float]:
    """Step -> value of ``key`` in the records of ``kind`` (the last record of a step wins:
    a resumed run may log a step again)."""
    out: dict[int, float] = {}
    for record in history:
        value, step = record.get(key), record.get("step")
        if record.get("kind") != kind or not isinstance(step, int):
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if math.isfinite(value):
                out[step] = float(value)
    return out


def _combine(label: str, metric: str, series: list[dict[int, float]]) -> Curve | None:
    steps = sorted({step for s in series for step in s})
    if not steps:
        return None
    mean, std = [], []
    for step in steps:
        values = [s[step] for s in series if step in s]
        mean.append(statistics.fmean(values))
        std.append(statistics.stdev(values) if len(values) > 1 else None)
    return Curve(label, metric, steps, mean, std, sum(1 for s in series if s))


def check_path(path: str | Path) -> str:
    """The picture format named by ``path``'s suffix (``png``, ``svg``, ``pdf``)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ConfigError(
            f"must end in {', '.join(FORMATS)} (the picture's format), not {suffix or 'nothing'}",
            setting="plot",
        )
    return suffix[1:]


def write_picture(picture: bytes, path: str | Path) -> None:
    """A picture :func:`draw_curves` drew, written atomically."""
    from induce.data.files import atomic_path

    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(picture)


def draw_curves(found: list[Curve], path: str | Path) -> bytes:
    """One panel per metric, a line per setting with its band: the PNG, SVG or PDF named by
    the suffix of ``path``, drawn in memory (``induce report`` draws it before it writes any
    of its outputs, so that one that cannot be drawn leaves none).  Needs matplotlib (``pip
    install 'induce[plot]'``)."""
    fmt = check_path(path)
    if not found:
        raise ConfigError("the runs have logged nothing to draw: no records in metrics.jsonl")
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = [m for m in METRICS if any(c.metric == m for c in found)]
    columns = min(3, len(metrics))
    rows = math.ceil(len(metrics) / columns)
    settings = list(dict.fromkeys(c.setting for c in found))
    across = 1 if max(len(s) for s in settings) > 45 else min(3, len(settings))
    legend = 0.25 * math.ceil(len(settings) / across) + 0.15  # inches under the panels
    height = 3.4 * rows + legend
    fig, axes = plt.subplots(rows, columns, figsize=(4.6 * columns, height), squeeze=False)
    colours = plt.get_cmap("tab10")
    for ax, metric in zip(axes.flat, metrics):
        for curve in (c for c in found if c.metric == metric):
            colour = colours(settings.index(curve.setting) % 10)
            name = curve.setting + (f" ({curve.runs} runs)" if curve.runs > 1 else "")
            name = name.replace("$", r"\$")  # text, not mathtext ("data$x$" is a folder)
            # a marker where a curve has one point: a line of one point draws nothing
            marker = "o" if len(curve.steps) == 1 else None
            ax.plot(curve.steps, curve.mean, color=colour, label=name, linewidth=1.6, marker=marker)
            band = [(s, m, d) for s, m, d in zip(curve.steps, curve.mean, curve.std) if d]
            if band:
                ax.fill_between(
                    [s for s, _, _ in band],
                    [m - d for _, m, d in band],
                    [m + d for _, m, d in band],
                    color=colour,
                    alpha=0.2,
                    linewidth=0,
                )
        ax.set_title(METRICS[metric][2], fontsize=10)
        ax.set_xlabel("updates")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(metrics) :]:
        ax.axis("off")
    named: dict[str, Any] = {}
    for ax in axes.flat:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            named.setdefault(name, handle)
    fig.legend(
        list(named.values()),
        list(named),
        loc="lower center",
        ncol=across,
        fontsize=9,
        frameon=False,
    )
    fig.tight_layout(rect=(0, legend / height, 1, 1))
    picture = io.BytesIO()
    try:
        fig.savefig(picture, format=fmt, dpi=120)
    finally:
        plt.close(fig)
    return picture.getvalue()
