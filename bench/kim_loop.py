"""Kim et al.'s own training loop on an ``induce`` dataset, for ``bench/grammar_curves.py
--arch cpcfg`` (issue 31).

The official side of the C-PCFG's curves is ``train.py``'s ``main`` itself, from the user's
checkout of github.com/harvardnlp/compound-pcfg (imported, never copied): its seeding
(``np.random.seed``, ``torch.manual_seed``), its ``CompPCFG`` with xavier initialisation, its
Adam, its epoch loop (batches in ``np.random.permutation`` order, the curriculum's length
filter, ``model(sents, argmax=True)``, clipping, the update).  It reads its data as
``preprocess.py`` writes it (:func:`write_dataset`: the sentences with ``<s>``/``</s>``,
sorted by ``np.argsort`` of their lengths, cut into batches of one length), made here from
the ``induce`` dataset's training split through ``induce``'s vocabulary (the one neutral
departure, as on the TN-PCFG side: ``preprocess.py`` would build its own from the same
text).  Three stand-ins let it run on a CPU and report a curve: ``.cuda()`` and
``cuda.set_device`` do nothing; ``torch.optim.Adam`` counts the updates and, every
``eval_every`` of them, hands the weights to the caller's validation (its time is not
counted as training) and stops the loop after the last; ``train.eval`` (its per-epoch
validation and checkpoint) is replaced by ``induce``'s, so it saves nothing.  The stand-ins
stay for the rest of the process: :func:`run` is meant for a process of its own (as
``grammar_curves.py`` starts one per side and seed).
"""

from __future__ import annotations

import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BOS, EOS = 1, 1  # stripped by data.Dataset before the model sees them; any non-pad id
NO_LIMIT = 10**6  # train.py's length limits for induce's 0 (no limit)


class _Done(Exception):
    """The last update has been validated: leave ``train.main``."""


def write_dataset(
    train: list[list[int]], vocab_size: int, batch: int, path: Path, shuffle: int | None = None
) -> None:
    """``preprocess.py``'s training pickle: ``source`` rows ``<s> w1 .. wn </s>`` padded with
    0, sorted by ``np.argsort`` of their lengths (its default sort, as there), batches of
    ``batch`` sentences of one length (``batch_idx``/``batch_l``/``source_l``); the gold
    spans in ``other_data`` are empty (the training text has no trees: ``train.py`` only
    counts them for its training F1).  ``shuffle``: as ``preprocess.py --shuffle 1``, the
    sentences permuted before the sort by a generator seeded with it, so that other
    sentences of one length share a batch."""
    import numpy as np

    if shuffle is not None:
        train = [train[k] for k in np.random.RandomState(shuffle).permutation(len(train))]
    sents, lengths = _rows(train)
    order = np.argsort(lengths)
    sents, lengths = sents[order], lengths[order]
    starts, sizes = [], []
    for k in range(len(order)):
        if not sizes or lengths[k] != lengths[starts[-1]] or sizes[-1] == batch:
            starts.append(k)
            sizes.append(0)
        sizes[-1] += 1
    _save(sents, lengths, starts, sizes, vocab_size, path)


def write_plan(train: list[list[int]], plan: list[list[int]], vocab_size: int, path: Path) -> None:
    """The training pickle with the batches of ``plan`` (sentence indices, each batch of one
    length), in its order."""
    import numpy as np

    sents, lengths = _rows([train[k] for batch in plan for k in batch])
    sizes = [len(batch) for batch in plan]
    starts = np.cumsum([0, *sizes[:-1]]).tolist()
    _save(sents, lengths, starts, sizes, vocab_size, path)


def _rows(sentences: list[list[int]]) -> tuple[Any, Any]:
    """``[K, longest + 2]`` rows ``<s> words </s> 0 ..`` and their lengths ``[K]``."""
    import numpy as np

    lengths = np.array([len(s) + 2 for s in sentences], dtype=int)
    sents = np.zeros((len(sentences), int(lengths.max())), dtype=int)
    for k, words in enumerate(sentences):
        sents[k, : len(words) + 2] = [BOS, *words, EOS]
    return sents, lengths


def _save(
    sents: Any, lengths: Any, starts: list[int], sizes: list[int], vocab: int, path: Path
) -> None:
    import numpy as np

    data = {
        "source": sents,
        "other_data": [[" ".join(map(str, s)), [], [], [], [], [], ""] for s in sents],
        "source_l": np.array([lengths[k] for k in starts], dtype=int),
        "batch_l": np.array(sizes, dtype=int),
        "batch_idx": np.array(starts, dtype=int),
        "vocab_size": np.array([vocab]),
        "idx2word": {},
        "word2idx": {},
    }
    with open(path, "wb") as f:
        pickle.dump(data, f)


def run(
    official: str,
    config: Any,
    train: list[list[int]],
    vocab_size: int,
    seed: int,
    steps: int,
    eval_every: int,
    scratch: Path,
    validate: Callable[[dict[str, Any]], dict[str, float]],
    plan: list[list[int]] | None = None,
    shuffle: int | None = None,
) -> dict[str, Any]:
    """``train.main`` for ``steps`` updates at ``config``'s settings (a ``cpcfg`` preset with
    its overrides); ``validate(state_dict)`` every ``eval_every`` updates.  ``plan``: train
    on these batches (sentence indices) in this order instead of ``preprocess.py``'s batches
    in ``np.random.permutation`` order (the permutation becomes the identity): the same
    batches as an ``induce`` run, for a check that the two loops compute the same updates.
    ``shuffle``: :func:`write_dataset`'s.
    Returns the curve and the seconds of training (validation excluded)."""
    import numpy as np
    import torch

    from induce.models import model_config

    data = scratch / "kim-train.pkl"
    if plan is None:
        write_dataset(train, vocab_size, config.data.batch_sentences, data, shuffle)
    else:
        write_plan(train, plan, vocab_size, data)
        np.random.permutation = lambda n: np.arange(n)  # type: ignore[assignment]
    sys.path.insert(0, official)
    import train as kim  # type: ignore[import-not-found]  # the checkout's train.py

    # no GPU here: train.py's .cuda() calls become no-ops
    torch.cuda.set_device = lambda *_: None  # type: ignore[assignment]
    torch.Tensor.cuda = lambda self, *_, **__: self  # type: ignore[method-assign]
    torch.nn.Module.cuda = lambda self, *_, **__: self  # type: ignore[method-assign]
    kim.eval = lambda *_: (float("inf"), 0.0)  # its validation: induce's, below
    made: list[Any] = []
    build = kim.CompPCFG
    kim.CompPCFG = lambda **kw: made.append(build(**kw)) or made[-1]
    curve: list[dict[str, Any]] = []
    clock = {"updates": 0, "trained": 0.0, "since": time.perf_counter()}

    class Counted(torch.optim.Adam):
        def step(self, closure: Any = None) -> Any:
            out = super().step(closure)
            clock["updates"] += 1
            k = clock["updates"]
            if k % eval_every == 0 or k == steps:
                clock["trained"] += time.perf_counter() - clock["since"]
                curve.append({"step": k, **validate(made[0].state_dict())})
                clock["since"] = time.perf_counter()
                if k == steps:
                    raise _Done
            return out

    torch.optim.Adam = Counted  # type: ignore[misc]
    m, d, o = model_config("cpcfg", config.model), config.data, config.optim
    # induce's length limit 0 (none) would make train.py skip every batch: NO_LIMIT
    flags = {
        "train_file": data, "val_file": data, "save_path": scratch / "kim.pt", "seed": seed,
        "z_dim": m.z_dim, "t_states": m.t, "nt_states": m.nt, "state_dim": m.s_dim,
        "h_dim": m.h_dim, "w_dim": m.w_dim, "num_epochs": 10**6, "lr": o.lr,
        "max_grad_norm": o.clip, "max_length": d.max_length or NO_LIMIT,
        "len_incr": d.length_step, "final_max_length": d.final_max_length or NO_LIMIT,
        "beta1": o.betas[0], "beta2": o.betas[1], "print_every": 10**9,
    }  # fmt: skip
    args = kim.parser.parse_args([f"--{k}={v}" for k, v in flags.items()])
    try:
        kim.main(args)
    except _Done:
        pass
    return {"curve": curve, "train_s": clock["trained"]}
