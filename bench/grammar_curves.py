#!/usr/bin/env python3
"""Training curves of the TN-PCFG and the C-PCFG: the official repositories' own training
code against ``induce train``, the same data and the same number of updates, several seeds
(issue 31).

    python bench/grammar_curves.py [--arch tnpcfg|cpcfg] --official CHECKOUT --data DATASET
        --out OUT [--seeds 1111,2222,3333] [--steps 1500] [--eval-every 500]
        [--sides official,induce] [--threads 1] [--jobs 2] [--set KEY=VALUE ...]

``DATASET`` is an ``induce preprocess`` folder whose validation split has gold trees (e.g.
the shared WSJ text with ``--valid-trees dev22.trees``).  Both sides take their settings
from one config: the preset ``ARCH-ptb-paper`` with the ``--set`` overrides (sizes, the
length limit, the learning rate) and ``--steps``/``--eval-every``.

Official side of ``tnpcfg`` (``CHECKOUT``: github.com/sustcsonglin/TN-PCFG, imported from
where the user put it, never copied): its ``TNPCFG`` (``parser/model/TN_PCFG.py``) with its
pure-PyTorch inside (``TDPCFG``: its Triton module is replaced by a stand-in that is never
called), drawn after ``torch.manual_seed(seed)`` (the repository sets no seed), its
optimiser (``parser/helper/util.get_optimizer``: Adam with ``mu``/``nu``) and its training
loop itself (``parser/cmds/cmd.CMD.train``: loss, backward, clipping, step), fed batches
as its ``ByLengthSampler`` makes them (sentences of one length, ``batch_size`` at a time,
the batch order shuffled each epoch by ``random`` seeded with ``seed``), sentences of one
word or longer than ``data.max_length`` left out as its ``DataModule`` does; one departure,
neutral: both sides read the words through ``induce``'s vocabulary of the dataset (the
repository's ``DataModule`` builds its own from the same training text).  Official side of
``cpcfg`` (``CHECKOUT``: github.com/harvardnlp/compound-pcfg): Kim et al.'s ``train.py``
``main`` itself on ``preprocess.py``'s data format, seeded with ``seed``
(``bench/kim_loop.py`` says how it is driven).  Every ``--eval-every`` updates the official
weights are loaded into ``induce``'s model (the same parameter names; the same functions,
``bench/lowrank_vs_official.py`` and ``bench/pcfg_vs_official.py`` show) and validated by
``induce``'s own validation: the ELBO perplexity per word with one end of sentence per
sentence (``induce.runs.grammar.grammar_sums``) and the validation trees' UF1 by the
config's ``train.valid_decoder`` (``induce.train.validation.parse_split``), exactly as
``induce train`` validates its own runs.  ``induce`` side: ``induce train --config
ARCH-ptb-paper --seed SEED`` with the same settings; its ``metrics.jsonl``.

Each (side, seed) is a process with ``--threads`` threads; ``--jobs`` of them run at once,
the sides interleaved so that both share the machine alike.  Writes OUT/SIDE-SEED.json (the
curve and the wall time) and OUT/curves.json; prints, at each validation step, each side's
validation perplexity and UF1 as mean (std) over the seeds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
INDUCE = [sys.executable, "-c", "import sys; from induce.cli.app import main; sys.exit(main())"]
PRESETS = {"tnpcfg": "tnpcfg-ptb-paper", "cpcfg": "cpcfg-ptb-paper"}
FASTNLP = [f"fastNLP{s}" for s in ("", ".core", ".core.dataset", ".core.batch", ".core.vocabulary",
                                   ".core.sampler", ".embeddings")]  # fmt: skip


def settings(args: argparse.Namespace) -> list[str]:
    """The overrides both sides train under."""
    return [
        *args.set,
        f"train.max_steps={args.steps}",
        f"train.eval_every={args.eval_every}",
        "train.epochs=1000",  # the updates end a run, not the epochs
        "train.patience=0",
        f"train.threads={args.threads}",
    ]


# -- the official side ------------------------------------------------------------------------
def official_batches(lengths: list[int], size: int, limit: int) -> list[list[int]]:
    """``ByLengthSampler``'s batches before its shuffle: the sentences grouped by length in
    the order each length first occurs, cut into chunks of ``size``."""
    groups: dict[int, list[int]] = {}
    for k, n in enumerate(lengths):
        if 2 <= n and (not limit or n <= limit):
            groups.setdefault(n, []).append(k)
    return [g[i : i + size] for g in groups.values() for i in range(0, len(g), size)]


def validate(model: Any, state: dict[str, Any], run: dict[str, Any]) -> dict[str, float]:
    """``induce``'s validation of the weights ``state`` (a grammar's perplexity and UF1)."""
    import contextlib
    import math

    import torch

    from induce.runs.grammar import grammar_sums
    from induce.train.validation import parse_split

    model.load_state_dict(state)
    config, cpu = run["config"], torch.device("cpu")
    nll, kl, words, _ = grammar_sums(
        model, run["valid"], run["specials"].pad, config.data.batch_sentences * 4, cpu
    )
    found = {"valid_ppl": round(math.exp((nll + kl) / words), 3)}
    found |= parse_split(
        model,
        run["dataset"],
        "valid",
        run["valid"],
        run["gold"],
        run["specials"],
        config.data,
        cpu,
        contextlib.nullcontext,
        config.train.valid_decoder,
    )
    return found


def official_run(args: argparse.Namespace, seed: int) -> dict[str, Any]:
    import torch
    from lowrank_vs_official import _Absent, official_classes

    from induce.data.dataset import load_dataset
    from induce.metrics.validation import load_gold
    from induce.models import build_model
    from induce.runs.batches import Specials
    from induce.runs.config import load_config

    torch.set_num_threads(args.threads)
    config = load_config(None, settings(args), preset=PRESETS[args.arch])
    dataset = load_dataset(args.data)
    vocab = dataset.vocab
    run = {
        "config": config,
        "dataset": dataset,
        "specials": Specials.of(vocab),
        "valid": [vocab.ids(s) for s in dataset.sentences("valid")],
        "gold": load_gold(dataset, "valid"),
    }
    train = [vocab.ids(s) for s in dataset.sentences("train")]
    if args.arch == "cpcfg":
        return kim_run(args, seed, run, train)
    classes = official_classes(args.official)
    # parser/cmds/__init__.py imports its data module, which needs the vendored fastNLP
    # and its own requirements: never used here, so stand-ins
    for name in FASTNLP:
        sys.modules.setdefault(name, _Absent(name))
    from parser.cmds.cmd import CMD  # type: ignore[import-not-found]  # the checkout's
    from parser.helper.util import get_optimizer  # type: ignore[import-not-found]

    ours = build_model("tnpcfg", config.model, len(vocab), run["specials"].pad)
    m = ours.config  # the preset's sizes with the overrides
    hyper = types.SimpleNamespace(
        NT=m.nt, T=m.t, s_dim=m.s_dim, r_dim=m.rank, word_emb_size=m.s_dim
    )  # fmt: skip
    torch.manual_seed(seed)
    random.seed(seed)
    official = classes["tnpcfg"](hyper, types.SimpleNamespace(device="cpu", word_vocab=vocab))
    o = config.optim
    loop = CMD()
    loop.model = official
    loop.optimizer = get_optimizer(
        types.SimpleNamespace(name="adam", lr=o.lr, mu=o.betas[0], nu=o.betas[1]), official
    )
    loop.args = types.SimpleNamespace(train=types.SimpleNamespace(clip=o.clip))
    plan = official_batches([len(s) for s in train], config.data.batch_sentences,
                            config.data.max_length)  # fmt: skip
    curve, queue, pending = [], [], []
    trained, began = 0.0, time.perf_counter()
    for step in range(1, args.steps + 1):
        if not queue:  # a new epoch: ByLengthSampler.__iter__ shuffles its batches
            random.shuffle(plan)
            queue = list(plan)
        ids = torch.tensor([train[k] for k in queue.pop(0)])
        pending.append(({"word": ids, "seq_len": torch.full((len(ids),), ids.shape[1])}, None))
        if step % args.eval_every == 0 or step == args.steps:
            start = time.perf_counter()
            loop.train(pending)  # the repository's loop over these batches
            trained += time.perf_counter() - start
            pending = []
            curve.append({"step": step, **validate(ours, official.state_dict(), run)})
    return {"curve": curve, "train_s": trained, "wall_s": time.perf_counter() - began}


def kim_run(
    args: argparse.Namespace, seed: int, run: dict[str, Any], train: list[list[int]]
) -> dict[str, Any]:
    """The C-PCFG's official side: Kim et al.'s ``train.main`` (``bench/kim_loop.py``)."""
    import kim_loop

    from induce.models import build_model

    config, vocab = run["config"], run["dataset"].vocab
    ours = build_model("cpcfg", config.model, len(vocab), run["specials"].pad)
    scratch = Path(args.out) / f"official-{seed}"
    scratch.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    plan = None
    if args.same_batches:  # induce's batches for this seed, epoch after epoch
        from induce.train.grammar import epoch_plan

        plan, epoch = [], 0
        while len(plan) < args.steps:
            plan += epoch_plan([len(s) for s in train], config.data, seed, epoch)
            epoch += 1
    found = kim_loop.run(
        args.official, config, train, len(vocab), seed, args.steps, args.eval_every, scratch,
        lambda state: validate(ours, state, run), plan,
        seed if args.official_shuffle else None,
    )  # fmt: skip
    return found | {"wall_s": time.perf_counter() - began}


# -- the induce side --------------------------------------------------------------------------
def induce_run(args: argparse.Namespace, seed: int) -> dict[str, Any]:
    out = Path(args.out) / f"induce-{seed}"
    command = [*INDUCE, "train", "--config", PRESETS[args.arch], "--data", args.data,
               "--out", str(out), "--seed", str(seed)]  # fmt: skip
    for item in settings(args):
        command += ["--set", item]
    began = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - began
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    curve = [
        {"step": r["step"], "valid_ppl": r["valid_ppl"], "uf1": r["uf1"]}
        for r in rows
        if r.get("kind") == "eval"
    ]
    return {"curve": curve, "wall_s": wall}


# -- both -------------------------------------------------------------------------------------
def table(results: dict[str, list[dict[str, Any]]]) -> list[str]:
    def cell(values: list[float]) -> str:
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{statistics.mean(values):.2f} ({spread:.2f})"

    lines = ["| step | side | valid PPL | UF1 |", "|---:|---|---:|---:|"]
    steps = sorted({p["step"] for runs in results.values() for r in runs for p in r["curve"]})
    for step in steps:
        for side, runs in results.items():
            points = [p for r in runs for p in r["curve"] if p["step"] == step]
            if points:
                ppl, uf1 = cell([p["valid_ppl"] for p in points]), cell([p["uf1"] for p in points])
                lines.append(f"| {step} | {side} | {ppl} | {uf1} |")
    for side, runs in results.items():
        lines.append(f"{side}: wall {cell([r['wall_s'] for r in runs])} s per run")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", choices=sorted(PRESETS), default="tnpcfg")
    ap.add_argument(
        "--official",
        required=True,
        help="a checkout of sustcsonglin/TN-PCFG (tnpcfg) or harvardnlp/compound-pcfg (cpcfg)",
    )
    ap.add_argument("--data", required=True, help="an induce dataset with valid.trees")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", default="1111,2222,3333")
    ap.add_argument("--sides", default="official,induce")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--eval-every", type=int, default=500)
    ap.add_argument("--threads", type=int, default=1, help="CPU threads of each run")
    ap.add_argument("--jobs", type=int, default=2, help="runs at once")
    ap.add_argument("--set", action="append", default=[], help="a setting KEY=VALUE")
    ap.add_argument(
        "--same-batches",
        action="store_true",
        help="cpcfg: the official loop trains on induce's batches for the seed, in its order",
    )
    ap.add_argument(
        "--official-shuffle",
        action="store_true",
        help="cpcfg: Kim's preprocess.py --shuffle 1 (the sentences permuted before the sort, "
        "by the run's seed), so which sentences share a batch varies with the seed",
    )
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        side, seed = args.one
        found = (official_run if side == "official" else induce_run)(args, int(seed))
        Path(args.out, f"{side}-{seed}.json").write_text(json.dumps(found, indent=1) + "\n")
        return
    Path(args.out).mkdir(parents=True, exist_ok=True)
    sides, seeds = args.sides.split(","), args.seeds.split(",")
    order = [(side, seed) for seed in seeds for side in sides]  # the sides interleaved
    env = os.environ | {"TQDM_DISABLE": "1"}  # the official loop's progress bar
    jobs: dict[str, subprocess.Popen[bytes]] = {}
    for side, seed in order:
        while sum(job.poll() is None for job in jobs.values()) >= args.jobs:
            time.sleep(1)
        with open(Path(args.out) / f"{side}-{seed}.log", "w") as log:
            jobs[f"{side}-{seed}"] = subprocess.Popen(
                [sys.executable, __file__, *sys.argv[1:], "--one", side, seed],
                stdout=log, stderr=subprocess.STDOUT, env=env,
            )  # fmt: skip
    for name, job in jobs.items():
        if job.wait():
            print(f"{name}: failed (see {args.out}/{name}.log)")
    results: dict[str, list[dict[str, Any]]] = {}
    for side, seed in order:
        found = Path(args.out) / f"{side}-{seed}.json"
        if found.exists():
            results.setdefault(side, []).append(json.loads(found.read_text()))
    summary = {"settings": vars(args), "results": results}
    (Path(args.out) / "curves.json").write_text(json.dumps(summary, indent=1) + "\n")
    print("\n".join(table(results)))


if __name__ == "__main__":
    main()
