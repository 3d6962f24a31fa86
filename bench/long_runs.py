#!/usr/bin/env python3
"""Long runs: the official StructFormer/UDGN code and ``induce`` trained to the end of the
same epoch budget on the same text, then scored by the same scorers (issue 32, item 3).

    python bench/long_runs.py --official UDGN_CHECKOUT --data DATASET --gold GOLD.conllu
        --out OUT [--archs structformer,udgn] [--seeds 1111,2222,3333] [--epochs 20]
        [--sides official,induce] [--device cuda] [--size paper|small|tiny] [--set KEY=VALUE ...]
        [--train-deadline SECONDS] [--epochs N | --epochs ARCH=N,ARCH=N] [--no-induce-read-out]

``DATASET`` is an ``induce preprocess text`` folder with a validation split made from gold
trees (``--valid-trees``: its ``valid.txt`` is parsed and ``valid.trees`` scores UF1);
``GOLD.conllu`` the validation trees' dependencies (``induce convert headrules``).  The
sides run one after the other; within a side, every (arch, seed) run is its own process and
all of them run at once (the models are small: one GPU holds them all), so each side's wall
time is that of its runs sharing the machine the same way.

Official side: the repository's ``models.py`` (``StructFormer``/``UDGN`` with ``main.py``'s
defaults), its ``utils.batchify`` (4,096 tokens, longest first, batches shuffled each
epoch), ``main.py``'s masking (Bernoulli 0.3, never padding or ``<unk>``), Adam (1e-3, eps
1e-9, weight decay 1.2e-6), clipping 0.25, ``ReduceLROnPlateau(0.5, patience 2)`` on the
validation loss averaged over 5 mask draws, the best epoch kept; then its test loop (one
sentence per forward) with the read-outs of the presets, so that only the models differ:
StructFormer trees by splitting at the largest distance (ties to the left), heads by argmax
parent with the highest word as root (``induce.decode.distances.argmax_heads``); UDGN heads
by ``dms`` (one Chu-Liu/Edmonds per root, ``ufal.chu_liu_edmonds``).  Two departures,
both neutral: the per-epoch ``evaluate_parser`` (argmax UAS, printed only) is skipped, as
``induce``'s per-epoch parse metrics are (``train.parse_metrics=false``); the parser loss,
which ``main.py`` multiplies by 0 without ``--parser_loss``, is not computed.  ``induce``
side: ``induce train --config PRESET`` with
``--set`` (bf16, ...), then ``induce parse`` of the same sentences (the preset's decoder)
and ``induce evaluate mlm`` (5 mask draws).  Both sides' outputs are scored by ``induce
evaluate unsupervised`` (UF1) and ``induce evaluate deps`` (UAS/UUAS).  Each official run's
best weights are also imported (``induce convert checkpoint``) and parsed as the ``induce``
runs are (the row "official, induce read-out"; ``--no-induce-read-out`` skips it): the same
scores as its own test loop's show that the read-outs agree.  Writes OUT/SIDE-ARCH-
SEED/ (outputs, logs, result.json) and OUT/long_runs.json; prints a table of mean (std)
(``bench/long_report.py``, which also puts the runs of several calls in one table).
``--train-deadline``: the official side starts no epoch after that many seconds of training
(a lent GPU's minutes are few); ``bench/gpu_long_runs.sh`` then gives the induce side, arch
by arch, the epochs the slowest official run reached (``--epochs structformer=17,udgn=14``),
so that both sides train each model for the same number of epochs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))  # its modules, when this file is imported elsewhere
from sides import PRESETS  # noqa: E402  (bench/ is not a package: found on the path above)

# (d_model, layers, heads, UDGN's head size) below the paper's 512, 8, 8, 128: runs on a CPU
SIZES = {"paper": (512, 8, 8, 128), "small": (128, 4, 4, 64), "tiny": (64, 2, 2, 32)}
# bench/ is not a package: its modules are imported from the path set above
from long_report import side_walls, table  # noqa: E402

INDUCE = [sys.executable, "-c", "import sys; from induce.cli.app import main; sys.exit(main())"]


def size_settings(arch: str, size: str) -> list[str]:
    """The ``induce`` side's settings for ``size`` (none at the paper's: the presets')."""
    if size == "paper":
        return []
    d, layers, heads, head_size = SIZES[size]
    extra = {"head_size": head_size} if arch == "udgn" else {"d_ff": 4 * d}
    sizes = {"d_model": d, "n_layers": layers, "n_heads": heads} | extra
    return [f"model.{k}={v}" for k, v in sizes.items()]


# -- the official side ------------------------------------------------------------------------
def epochs_of(spec: str, arch: str) -> int:
    """``--epochs``: one number for every arch, or ``arch=N,arch=N``."""
    if "=" not in spec:
        return int(spec)
    found = dict(item.split("=") for item in spec.split(","))
    if arch not in found:
        raise SystemExit(f"--epochs {spec}: no epochs for {arch}")
    return int(found[arch])


def official_run(args: argparse.Namespace, arch: str, seed: int, out: Path) -> dict[str, Any]:
    import numpy
    import torch
    from official import official_model  # bench/official.py: main.py's model

    from induce.train.loop import Trainer

    random.seed(seed)
    numpy.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    data = Trainer.__new__(Trainer)
    data.load_text(args.data)  # the same ids as the induce side (its vocabulary)
    pad, unk, mask_id = data.specials.pad, data.specials.unk, data.specials.mask
    sys.path.insert(0, args.official)
    from utils import batchify  # type: ignore[import-not-found]  # the official utils.py

    model = official_model(args.official, arch, len(data.vocab), pad, SIZES[args.size])
    model = model.to(device)
    params = list(model.parameters())
    opt = torch.optim.Adam(params, lr=1e-3, eps=1e-9, weight_decay=1.2e-6)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, "min", 0.5, patience=2, threshold=0)
    bernoulli = torch.distributions.Bernoulli(0.3)

    def masked(x: Any) -> tuple[Any, Any]:  # main.py's mask_data
        m = bernoulli.sample(x.shape).to(device).bool() * (x != pad) * (x != unk)
        return x.masked_fill(m, mask_id), x.masked_fill(~m, pad)

    def roots(ids: list[list[int]]) -> list[list[int]]:  # heads the ignored parser loss reads
        return [list(range(len(s))) for s in ids]

    valid, _ = batchify(data.valid_ids, roots(data.valid_ids), 4096, device, pad, shuffle=False)
    began, best, best_state, epochs, log = time.perf_counter(), math.inf, None, [], []
    for epoch in range(1, epochs_of(args.epochs, arch) + 1):
        model.train()
        train, _ = batchify(data.train_ids, roots(data.train_ids), 4096, device, pad)
        for x in train:
            inputs, targets = masked(x)
            pos = torch.arange(x.size(1), device=device)[None, :]
            opt.zero_grad()
            loss = model(inputs, targets, pos)[0]
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 0.25)
            opt.step()
        loss = validation_loss(model, valid, masked, pad, device)
        log.append({"epoch": epoch, "valid_loss": loss, "s": time.perf_counter() - began})
        if loss < best:
            best, epochs = loss, epoch
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        plateau.step(loss)
        if args.train_deadline and time.perf_counter() - began > args.train_deadline:
            break  # the epochs reached are in the log: the induce side then runs as many
    train_s = time.perf_counter() - began
    assert best_state is not None
    model.load_state_dict(best_state)
    # kept for the induce read-out of the same weights (imported_read_out)
    torch.save({k: v.cpu() for k, v in best_state.items()}, out / "official.pt")
    (out / "words.txt").write_text("".join(f"{t}\n" for t in data.vocab.tokens))
    began = time.perf_counter()
    write_official_parses(model, arch, data, device, out)
    return {
        "train_s": train_s,
        "parse_s": time.perf_counter() - began,
        "best_epoch": epochs,
        "epochs_run": len(log),
        "valid_ppl": math.exp(best),
        "epochs": log,
    }


def validation_loss(model: Any, valid: list[Any], masked: Any, pad: int, device: Any) -> float:
    """``main.py``'s ``evaluate``: the masked loss over 5 mask draws, token-weighted."""
    import torch

    model.eval()
    total = count = 0.0
    with torch.no_grad():
        for _ in range(5):
            for x in valid:
                inputs, targets = masked(x)
                pos = torch.arange(x.size(1), device=device)[None, :]
                n = float((targets != pad).sum())
                total += float(model(inputs, targets, pos)[0]) * n
                count += n
    return total / count


def write_official_parses(model: Any, arch: str, data: Any, device: Any, out: Path) -> None:
    """The official test loop (one sentence per forward) over the validation sentences:
    ``valid.conllu`` (heads) and, for StructFormer, ``valid.ptb`` (distance trees)."""
    import numpy
    import torch
    from official import dms, split  # bench/official.py: the official read-outs

    from induce.decode.distances import argmax_heads

    model.eval()
    trees, blocks = [], []
    with torch.no_grad():
        for words, ids in zip(data.dataset.sentences("valid"), data.valid_ids, strict=True):
            x = torch.tensor([ids], device=device)
            _, p = model(x, x, torch.arange(len(ids), device=device)[None, :])
            head = p["head"][0].float().cpu().numpy()
            if arch == "udgn":
                heads = dms(head.astype(numpy.float64))[1:]  # 0 = root, else 1-based
            else:  # the induce side's read-out of StructFormer: argmax parent, root highest
                heads = argmax_heads(head, p["height"][0].float().cpu().numpy())
                root = split(p["distance"][0].tolist(), 0, len(ids))
                # a one-word tree as induce parse writes it: a root over the word's leaf
                trees.append(bracket((root,) if isinstance(root, int) else root, words))
            blocks.append(conllu(words, heads))
    (out / "valid.conllu").write_text("".join(blocks))
    if trees:
        (out / "valid.ptb").write_text("".join(f"{t}\n" for t in trees))


def bracket(node: Any, words: list[str]) -> str:
    if isinstance(node, int):
        return f"(X {words[node]})"
    return "(X " + " ".join(bracket(child, words) for child in node) + ")"


def conllu(words: list[str], heads: list[int]) -> str:
    rows = [f"{i}\t{w}\t_\t_\t_\t_\t{h}\t_\t_\t_" for i, (w, h) in enumerate(zip(words, heads), 1)]
    return "\n".join(rows) + "\n\n"


# -- the induce side --------------------------------------------------------------------------
def induce_run(args: argparse.Namespace, arch: str, seed: int, out: Path) -> dict[str, Any]:
    run = out / "run"
    sets = [f"train.epochs={epochs_of(args.epochs, arch)}", "train.parse_metrics=false"]
    sets += args.set
    sets += size_settings(arch, args.size)
    train = ["train", "--config", PRESETS[arch], "--data", args.data, "--out", str(run)]
    train += ["--seed", str(seed), *(x for s in sets for x in ("--set", s))]
    began = time.perf_counter()
    cli(train, out / "train.log")
    train_s = time.perf_counter() - began
    began = time.perf_counter()
    parse_valid(args, arch, run, out)
    parse_s = time.perf_counter() - began
    valid_ppl = perplexity(args, run, out)
    records = [json.loads(r) for r in (run / "metrics.jsonl").read_text().splitlines()]
    valids = [r for r in records if r.get("kind") == "eval"]
    return {
        "train_s": train_s,
        "parse_s": parse_s,
        "valid_ppl": valid_ppl,
        "epochs_run": len(valids),
        "epochs": valids,
    }


def perplexity(args: argparse.Namespace, run: Path, out: Path) -> float:
    """The run's validation perplexity by ``induce evaluate mlm`` (5 mask draws)."""
    mlm = ["evaluate", "mlm", "--model", str(run), "--data", args.data, "--split", "valid"]
    cli([*mlm, "--device", args.device, "-q", "--json", str(out / "mlm.json")], out / "mlm.log")
    return float(json.loads((out / "mlm.json").read_text())["perplexity"])


def parse_valid(args: argparse.Namespace, arch: str, run: Path, out: Path) -> None:
    """``induce parse`` of the validation sentences with the run's decoder: ``out/valid.conllu``
    and, for StructFormer, ``out/valid.ptb``."""
    parse = ["parse", f"{args.data}/valid.txt", "--model", str(run), "--normalized", "-q"]
    parse += ["--device", args.device]  # --normalized: the dataset's words, as training read them
    cli([*parse, "-f", "conllu", "-o", str(out / "valid.conllu")], out / "parse.log")
    if arch == "structformer":
        cli([*parse, "-f", "ptb", "-o", str(out / "valid.ptb")], out / "parse.log")


def imported_read_out(args: argparse.Namespace, arch: str, out: Path) -> dict[str, float]:
    """An official run's best weights read by ``induce``: imported (``induce convert
    checkpoint``), parsed as the ``induce`` side's runs are and scored the same way, into
    ``out/imported``, and its validation perplexity taken as the ``induce`` runs' is.  The same
    scores as the official loops' mean the two read-outs agree, so that a difference between
    the sides is their training's; ``same_heads`` is the share of words given the same head
    by both (perplexity differs by the mask draws alone: the official loop draws at random)."""
    run, mine = out / "imported" / "run", out / "imported"
    convert = ["convert", "checkpoint", str(out / "official.pt"), "--arch", arch]
    cli([*convert, "--dict", str(out / "words.txt"), "-o", str(run)], out / "imported.log")
    parse_valid(args, arch, run, mine)
    found = score(args, mine) | {"valid_ppl": perplexity(args, run, mine)}
    found = {f"{key}_induce_read_out": value for key, value in found.items()}
    return found | {"same_heads": same_heads(out / "valid.conllu", mine / "valid.conllu")}


def same_heads(a: Path, b: Path) -> float:
    """The percentage of words whose head is the same in two CoNLL-U files of the same
    sentences (heads as predicted: cycles allowed)."""
    from induce.data.conll import parse_conllu

    def heads(path: Path) -> list[int]:
        found = parse_conllu(path.read_text(), str(path), trees=False).sentences
        return [h for sentence in found for h in sentence.heads]

    mine, theirs = heads(a), heads(b)
    if len(mine) != len(theirs):
        raise SystemExit(f"{a} and {b}: not the same words ({len(mine)} and {len(theirs)})")
    return 100.0 * sum(x == y for x, y in zip(mine, theirs, strict=True)) / max(len(mine), 1)


def cli(command: list[str], log: Path) -> None:
    with log.open("a") as f:
        done = subprocess.run([*INDUCE, *command], stdout=f, stderr=subprocess.STDOUT)
    if done.returncode:
        raise SystemExit(f"induce {' '.join(command[:2])} failed: see {log}")


# -- scoring and the table --------------------------------------------------------------------
def score(args: argparse.Namespace, out: Path) -> dict[str, float]:
    """UF1 and UAS/UUAS of a run's outputs, by ``induce evaluate``."""
    found: dict[str, float] = {}
    if (out / "valid.ptb").exists():
        ev = ["evaluate", "unsupervised", f"{args.data}/valid.trees", str(out / "valid.ptb")]
        cli([*ev, "-q", "--json", str(out / "uf1.json")], out / "score.log")
        found["uf1"] = json.loads((out / "uf1.json").read_text())["sentence_f1"]
    ev = ["evaluate", "deps", args.gold, str(out / "valid.conllu"), "--gold-scheme", "penn2malt"]
    cli([*ev, "-q", "--json", str(out / "deps.json")], out / "score.log")
    deps = json.loads((out / "deps.json").read_text())
    found |= {"uas": deps["uas"], "uuas": deps["uuas"]}
    return found


def one(args: argparse.Namespace, side: str, arch: str, seed: int) -> None:
    out = Path(args.out) / f"{side}-{arch}-{seed}"
    out.mkdir(parents=True, exist_ok=True)
    run = official_run if side == "official" else induce_run
    result = {"side": side, "arch": arch, "seed": seed} | run(args, arch, seed, out)
    result |= score(args, out)
    (out / "result.json").write_text(json.dumps(result, indent=1) + "\n")
    if side == "official" and args.induce_read_out:  # after the run's own result is safe
        result |= imported_read_out(args, arch, out)
        (out / "result.json").write_text(json.dumps(result, indent=1) + "\n")


def child(args: argparse.Namespace, side: str, arch: str, seed: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, __file__, "--one", side, arch, str(seed)]
    keys = ("official", "data", "gold", "out", "epochs", "device", "size", "threads")
    for key in (*keys, "train_deadline"):
        command += [f"--{key.replace('_', '-')}", str(getattr(args, key))]
    for item in args.set:
        command += ["--set", item]
    command += [] if args.induce_read_out else ["--no-induce-read-out"]
    log = Path(args.out) / f"{side}-{arch}-{seed}.log"
    # --threads for both sides: the induce side's commands (train, parse, evaluate) read it
    # from OMP_NUM_THREADS, which they inherit (else each would take every core, and runs
    # sharing a CPU would oversubscribe it)
    env = os.environ | {"OMP_NUM_THREADS": str(args.threads)}
    return subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--official", required=True, help="a checkout of github.com/yikangshen/UDGN")
    ap.add_argument("--data", required=True, help="an induce dataset with valid.trees")
    ap.add_argument("--gold", required=True, help="the validation trees' dependencies")
    ap.add_argument("--out", required=True)
    ap.add_argument("--archs", default="structformer,udgn")
    ap.add_argument("--seeds", default="1111,2222,3333")
    ap.add_argument("--sides", default="official,induce")
    ap.add_argument("--epochs", default="20", help="N, or ARCH=N,ARCH=N")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--size", choices=tuple(SIZES), default="paper")
    ap.add_argument("--threads", type=int, default=1, help="CPU threads of each run")
    ap.add_argument(
        "--train-deadline",
        type=float,
        default=0,
        help="official side: no new epoch after this many seconds of training (0: none)",
    )
    ap.add_argument("--set", action="append", default=[], help="induce setting KEY=VALUE")
    ap.add_argument(
        "--induce-read-out",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="official runs: also import their weights and parse them with induce",
    )
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        side, arch, seed = args.one
        one(args, side, arch, int(seed))
        return
    Path(args.out).mkdir(parents=True, exist_ok=True)
    results, walls = [], {}
    for side in args.sides.split(","):
        began = time.perf_counter()
        jobs = [
            (arch, seed, child(args, side, arch, int(seed)))
            for arch in args.archs.split(",")
            for seed in args.seeds.split(",")
        ]
        for arch, seed, job in jobs:
            if job.wait():
                print(f"{side} {arch} {seed}: failed (see {args.out}/{side}-{arch}-{seed}.log)")
        walls[side] = time.perf_counter() - began
        for arch, seed, _ in jobs:
            found = Path(args.out) / f"{side}-{arch}-{seed}" / "result.json"
            if found.exists():
                results.append(json.loads(found.read_text()))
        print(f"{side}: {walls[side]:.0f} s", flush=True)
        summary = {"walls": walls, "runs": results, "settings": vars(args)}
        (Path(args.out) / "long_runs.json").write_text(json.dumps(summary, indent=1) + "\n")
    print("\n".join(table(results, *side_walls([{"walls": walls, "runs": results}]))))


if __name__ == "__main__":
    main()
