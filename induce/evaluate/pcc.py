"""``induce evaluate pcc``: which attention heads track which dependency relations.

The model reads the gold sentences (punctuation it never saw left out, as ``parse`` does);
over every gold edge between two kept words, each head of each layer gives the edge a weight -
UDGN: the head's competition probability (Eq. 10) for the edge's direction; StructFormer and
the Transformer: the head's attention weight - and the Pearson correlation of that weight with
each label's indicator is computed (UDGN §4.3, Table 3).  Labels are cut to their universal
part (``nsubj:pass`` -> ``nsubj``) unless ``subtypes`` is set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np

from induce.data.architectures import architecture
from induce.data.conll import DepFile, read_deps
from induce.data.errors import ConfigError, InputError
from induce.data.normalize import is_punctuation
from induce.data.types import DepTree
from induce.data.vocab import Vocabulary
from induce.metrics.correlation import pearson_matrix
from induce.runs.directory import Run, open_run
from induce.runs.inference import attention_maps

Direction = Literal["child-to-parent", "parent-to-child"]
DIRECTIONS: tuple[Direction, ...] = get_args(Direction)


def head_label_correlation(
    run_path: str,
    gold_path: str,
    direction: Direction = "child-to-parent",
    device: str = "auto",
    weights: str = "best",
    subtypes: bool = False,
    batch_tokens: int = 8192,
    top: int = 10,
) -> dict[str, Any]:
    """Pearson r of every head's weight on the gold edges with each label's indicator, and
    the best head of the ``top`` most frequent labels."""
    if direction not in DIRECTIONS:
        raise ConfigError(f"must be one of {', '.join(DIRECTIONS)}", setting="direction")
    if top < 1:  # a slice by 0 or less would drop labels without a word
        raise ConfigError(f"must be 1 or more, got {top}", setting="top")
    run = open_run(run_path)
    if not architecture(run.config.arch).attention:
        raise ConfigError(f"a {run.config.arch} model records no attention weights to correlate")
    gold = read_deps(gold_path)  # before the model loads: a gold it cannot use is refused
    if not any(label not in ("_", "") for tree in gold.sentences for label in tree.labels or ()):
        raise InputError(
            "the gold dependencies carry no labels (DEPREL is _ throughout): nothing to "
            "correlate the heads with",
            gold_path,
        )
    model = run.load_language_model(weights, device)
    edges = _Edges(direction, subtypes)
    sentences = [_kept_words(tree, run) for tree in gold.sentences]
    order = [k for k, (_, ids) in enumerate(sentences) if len(ids) > 1]
    if not order:
        raise InputError("no sentence with two or more words to read", gold_path)
    dev = next(model.parameters()).device
    maps = attention_maps(model, [sentences[k][1] for k in order], run.specials, batch_tokens, dev)
    n_layers = 0
    for index, layers in maps:
        k = order[index]
        edges.add(gold.sentences[k], sentences[k][0], layers)
        n_layers = layers.shape[0]
    if len(edges.rows) < 2:
        raise InputError("fewer than two gold edges between words the model reads", gold_path)
    if len(set(edges.labels)) < 2:  # a constant indicator correlates with nothing: all nan
        raise InputError(
            f"the gold edges between words the model reads carry one label "
            f"({edges.labels[0]}): a head is correlated with a label against the others",
            gold_path,
        )
    settings = _settings(run, gold, direction, weights, subtypes)
    return {"settings": settings, **_correlations(edges, n_layers, top)}


def _kept_words(tree: DepTree, run: Run) -> tuple[list[int], list[int]]:
    """The token positions the model reads (no punctuation) and their ids."""
    vocab: Vocabulary = run.vocab
    words = run.normalization.words(list(tree.words))
    labels = tree.labels or ("_",) * len(tree)
    kept = [
        i
        for i, (t, w, label) in enumerate(zip(tree.words, words, labels))
        if label.split(":")[0] != "punct" and not (is_punctuation(t) and w not in vocab)
    ]
    return kept, vocab.ids([words[i] for i in kept])


@dataclass
class _Edges:
    """One row of head weights ``[layers * heads]`` and one label per gold edge."""

    direction: Direction
    subtypes: bool
    rows: list[np.ndarray] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    def add(self, tree: DepTree, kept: list[int], layers: np.ndarray) -> None:
        """``layers [layers, H, L, L]``: the attention of the sentence of ``tree``."""
        position = {token: i for i, token in enumerate(kept)}
        labels = tree.labels or ("_",) * len(tree)
        for token in kept:
            head = tree.heads[token] - 1
            if head < 0 or head not in position:
                continue
            c, h = position[token], position[head]
            q, key = (c, h) if self.direction == "child-to-parent" else (h, c)
            self.rows.append(layers[:, :, q, key].reshape(-1))
            label = labels[token]
            self.labels.append(label if self.subtypes else label.split(":")[0])


def _correlations(edges: _Edges, n_layers: int, top: int) -> dict[str, Any]:
    n_heads = edges.rows[0].size // n_layers
    names, r = pearson_matrix(np.stack(edges.rows), edges.labels)
    head_names = [
        f"L{layer + 1}H{head + 1}" for layer in range(n_layers) for head in range(n_heads)
    ]
    counts = {name: edges.labels.count(name) for name in names}
    best = []
    for j, name in enumerate(names[:top]):
        column = r[:, j]
        if np.all(np.isnan(column)):
            continue
        i = int(np.nanargmax(column))
        best.append(
            {
                "label": name,
                "edges": counts[name],
                "head": head_names[i],
                "r": round(float(column[i]), 4),
            }
        )
    return {
        "edges": len(edges.labels),
        "labels": names,
        "label_counts": counts,
        "heads": head_names,
        "matrix": [[None if math.isnan(v) else round(float(v), 6) for v in row] for row in r],
        "best": best,
    }


def _settings(
    run: Run, gold: DepFile, direction: str, weights: str, subtypes: bool
) -> dict[str, Any]:
    return {
        "metric": "pcc",
        "model": str(run.path),
        "arch": run.config.arch,
        "gold": gold.path,
        "direction": direction,
        "weights": weights,
        "subtypes": subtypes,
    }


def plot_heatmap(report: dict[str, Any], path: str, top: int = 20) -> None:
    """Heads x the ``top`` most frequent labels, as a PNG (needs matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError("needs matplotlib: pip install 'induce[plot]'", setting="plot") from None
    from induce.data.files import atomic_path

    labels = report["labels"][:top]
    data = np.array(
        [[np.nan if v is None else v for v in row[: len(labels)]] for row in report["matrix"]]
    )
    fig, ax = plt.subplots(figsize=(1 + 0.45 * len(labels), 1 + 0.22 * len(data)))
    image = ax.imshow(data, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    ax.set_xticks(range(len(labels)), labels, rotation=90)
    ax.set_yticks(range(len(report["heads"])), report["heads"], fontsize=6)
    fig.colorbar(image, ax=ax, label="Pearson r")
    ax.set_title(
        f"{report['settings']['arch']}: heads vs labels ({report['settings']['direction']})"
    )
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120)
    plt.close(fig)
