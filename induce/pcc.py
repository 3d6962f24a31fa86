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
from typing import Any

import numpy as np
import torch

from induce.data.conll import read_deps
from induce.data.errors import ConfigError, InputError
from induce.metrics.correlation import pearson_matrix
from induce.parse import is_punctuation
from induce.train.batches import Specials, evaluation_batches

DIRECTIONS = ("child-to-parent", "parent-to-child")


def head_label_correlation(
    run_path: str,
    gold_path: str,
    direction: str = "child-to-parent",
    device: str = "auto",
    weights: str = "best",
    subtypes: bool = False,
    batch_tokens: int = 8192,
    top: int = 10,
) -> dict[str, Any]:
    from induce.train.mlm import load_trained

    if direction not in DIRECTIONS:
        raise ConfigError(f"--direction must be one of {', '.join(DIRECTIONS)}")
    run, model = load_trained(run_path, weights, device)
    gold = read_deps(gold_path)
    vocab, norm = run.vocab, run.normalization
    specials = Specials(vocab.id("<pad>"), vocab.id("<unk>"), vocab.id("<mask>"))
    ids, kept_of = [], []
    for tree in gold.sentences:
        words = norm.words(list(tree.words))
        labels = tree.labels or ("_",) * len(tree)
        kept = [
            i
            for i, (t, w, label) in enumerate(zip(tree.words, words, labels))
            if label.split(":")[0] != "punct" and not (is_punctuation(t) and w not in vocab)
        ]
        kept_of.append(kept)
        ids.append(vocab.ids([words[i] for i in kept]))
    order = [k for k, s in enumerate(ids) if len(s) > 1]
    if not order:
        raise InputError("no sentence with two or more words to read", gold_path)
    device_ = next(model.parameters()).device
    rows: list[np.ndarray] = []
    edge_labels: list[str] = []
    model.record_attention(True)
    with torch.no_grad():
        for batch in evaluation_batches([ids[k] for k in order], batch_tokens, specials, None, 0):
            model(batch.ids.to(device_), batch.keep.to(device_))
            layers = torch.stack([a.float() for a in model.attention()], 1).cpu().numpy()
            for row, index in enumerate(batch.index):
                k = order[index]
                tree, kept = gold.sentences[k], kept_of[k]
                position = {token: i for i, token in enumerate(kept)}
                labels = tree.labels or ("_",) * len(tree)
                for token in kept:
                    head = tree.heads[token] - 1
                    if head < 0 or head not in position:
                        continue
                    c, h = position[token], position[head]
                    q, key = (c, h) if direction == "child-to-parent" else (h, c)
                    rows.append(layers[row, :, :, q, key].reshape(-1))  # [layers * heads]
                    label = labels[token]
                    edge_labels.append(label if subtypes else label.split(":")[0])
    model.record_attention(False)
    if len(rows) < 2:
        raise InputError("fewer than two gold edges between words the model reads", gold_path)
    n_layers = len(model.attention())
    n_heads = rows[0].size // n_layers
    names, r = pearson_matrix(np.stack(rows), edge_labels)
    head_names = [
        f"L{layer + 1}H{head + 1}" for layer in range(n_layers) for head in range(n_heads)
    ]
    counts = {name: edge_labels.count(name) for name in names}
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
        "settings": {
            "metric": "pcc",
            "model": str(run.path),
            "arch": run.config.arch,
            "gold": gold.path,
            "direction": direction,
            "weights": weights,
            "subtypes": subtypes,
        },
        "edges": len(edge_labels),
        "labels": names,
        "label_counts": counts,
        "heads": head_names,
        "matrix": [[None if math.isnan(v) else round(float(v), 6) for v in row] for row in r],
        "best": best,
    }


def plot_heatmap(report: dict[str, Any], path: str, top: int = 20) -> None:
    """Heads x the ``top`` most frequent labels, as a PNG (needs matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError("--plot needs matplotlib: pip install 'induce[plot]'") from None
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
