"""``induce evaluate pcc``: which attention heads track which dependency relations.

The model reads the gold sentences (punctuation it never saw left out, as ``parse`` does);
over the gold edges, each head of each layer gives each edge a weight - UDGN: the head's
competition probability (Eq. 10) for the edge's direction; StructFormer and the Transformer:
the head's attention weight - and a statistic of that weight and each label's indicator is
computed (UDGN §4.3, Table 3):

- ``official`` (the default), as UDGN's ``test_phrase_grammar.py`` computes it: the head's
  mean weight on the label's edges, over every word the model reads; a word whose gold head
  is a word it does not read takes that word's nearest ancestor it reads, and a word left
  with none (the root) counts as an edge to itself, with its own label (``root``);
- ``pearson``: Pearson's r, over the gold edges between two words the model reads.

Labels are cut to their universal part (``nsubj:pass`` -> ``nsubj``) unless ``subtypes`` is
set.  The official script chooses the words by PTB tag (its training data's words); here they
are the words the model reads, as ``parse`` chooses them.
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
from induce.evaluate.common import require_sentences
from induce.metrics.correlation import mean_matrix, pearson_matrix
from induce.runs.directory import Run, open_run
from induce.runs.inference import attention_maps

Direction = Literal["child-to-parent", "parent-to-child"]
DIRECTIONS: tuple[Direction, ...] = get_args(Direction)
Statistic = Literal["official", "pearson"]
STATISTICS: tuple[Statistic, ...] = get_args(Statistic)
_VALUE = {"official": "mean", "pearson": "r"}  # the statistic's name in the report


def head_label_correlation(
    run_path: str,
    gold_path: str,
    direction: Direction = "child-to-parent",
    device: str = "auto",
    weights: str = "best",
    subtypes: bool = False,
    batch_tokens: int = 8192,
    top: int = 10,
    statistic: Statistic = "official",
) -> dict[str, Any]:
    """The ``statistic`` of every head's weight on the gold edges and each label's indicator,
    and the best head of the ``top`` most frequent labels."""
    if direction not in DIRECTIONS:
        raise ConfigError(f"must be one of {', '.join(DIRECTIONS)}", setting="direction")
    if statistic not in STATISTICS:
        raise ConfigError(f"must be one of {', '.join(STATISTICS)}", setting="statistic")
    if top < 1:  # a slice by 0 or less would drop labels without a word
        raise ConfigError(f"must be 1 or more, got {top}", setting="top")
    run = open_run(run_path)
    if not architecture(run.config.arch).attention:
        raise ConfigError(f"a {run.config.arch} model records no attention weights to correlate")
    gold = read_deps(gold_path)  # before the model loads: a gold it cannot use is refused
    require_sentences(len(gold.sentences), gold.path)
    if not any(label not in ("_", "") for tree in gold.sentences for label in tree.labels or ()):
        raise InputError(
            "the gold dependencies carry no labels (DEPREL is _ throughout): nothing to "
            "correlate the heads with",
            gold_path,
        )
    model = run.load_language_model(weights, device)
    edges = _Edges(direction, subtypes, climb=statistic == "official")
    sentences = [_kept_words(tree, run) for tree in gold.sentences]
    # the official script reads every sentence with a word (a one-word sentence's root is an
    # edge to itself); Pearson's edges join two words
    least = 1 if statistic == "official" else 2
    order = [k for k, (_, ids) in enumerate(sentences) if len(ids) >= least]
    if not order:
        words = "a word" if least == 1 else "two or more words"
        raise InputError(f"no sentence with {words} to read", gold_path)
    dev = next(model.parameters()).device
    maps = attention_maps(model, [sentences[k][1] for k in order], run.specials, batch_tokens, dev)
    n_layers = 0
    for index, layers in maps:
        k = order[index]
        edges.add(gold.sentences[k], sentences[k][0], layers)
        n_layers = layers.shape[0]
    if statistic == "pearson":
        _check_correlatable(edges, gold_path)
    settings = _settings(run, gold, direction, weights, subtypes, statistic)
    return {"settings": settings, **_table(edges, n_layers, top, statistic)}


def _check_correlatable(edges: _Edges, gold_path: str) -> None:
    """Pearson's r needs two edges and two labels (a constant column correlates with nothing)."""
    if len(edges.rows) < 2:
        raise InputError("fewer than two gold edges between words the model reads", gold_path)
    if len(set(edges.labels)) < 2:
        raise InputError(
            f"the gold edges between words the model reads carry one label "
            f"({edges.labels[0]}): a head is correlated with a label against the others",
            gold_path,
        )


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
    climb: bool = False  # the official script's edges: heads climbed to a kept word, roots
    rows: list[np.ndarray] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    def add(self, tree: DepTree, kept: list[int], layers: np.ndarray) -> None:
        """``layers [layers, H, L, L]``: the attention of the sentence of ``tree``."""
        position = {token: i for i, token in enumerate(kept)}
        labels = tree.labels or ("_",) * len(tree)
        for token in kept:
            head = tree.heads[token] - 1
            if self.climb:
                for _ in range(len(tree)):  # at most the sentence's length: no cycle hangs
                    if head < 0 or head in position:
                        break
                    head = tree.heads[head] - 1
                head = token if head < 0 or head not in position else head
            elif head < 0 or head not in position:
                continue
            c, h = position[token], position[head]
            q, key = (c, h) if self.direction == "child-to-parent" else (h, c)
            self.rows.append(layers[:, :, q, key].reshape(-1))
            label = labels[token]
            self.labels.append(label if self.subtypes else label.split(":")[0])


def _table(edges: _Edges, n_layers: int, top: int, statistic: Statistic) -> dict[str, Any]:
    n_heads = edges.rows[0].size // n_layers
    matrix = mean_matrix if statistic == "official" else pearson_matrix
    names, r = matrix(np.stack(edges.rows), edges.labels)
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
                _VALUE[statistic]: round(float(column[i]), 4),
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
    run: Run, gold: DepFile, direction: str, weights: str, subtypes: bool, statistic: str
) -> dict[str, Any]:
    return {
        "statistic": statistic,
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
    pearson = report["settings"].get("statistic") == "pearson"
    low, colours = (-1, "RdBu_r") if pearson else (0, "viridis")
    image = ax.imshow(data, cmap=colours, vmin=low, vmax=1, aspect="auto")
    ax.set_xticks(range(len(labels)), labels, rotation=90)
    ax.set_yticks(range(len(report["heads"])), report["heads"], fontsize=6)
    fig.colorbar(image, ax=ax, label="Pearson r" if pearson else "mean weight on the edges")
    ax.set_title(
        f"{report['settings']['arch']}: heads vs labels ({report['settings']['direction']})"
    )
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120)
    plt.close(fig)
