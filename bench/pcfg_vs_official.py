#!/usr/bin/env python3
"""The compound PCFG against Kim et al.'s official code, side by side on this machine.

    python bench/pcfg_vs_official.py --official PATH [--lengths 10,20,30,40] [--batch 4]
        [--steps 4] [--warmup 1] [--rounds 2] [--threads 2] [--z-dim 64] [--vocab 10004]
        [--device cpu|cuda] [--epoch DATASET --max-words 30 --batches 24] [--fused-cpu]
        [--check [--data DATASET --split valid --skip K --limit N --words 35- --only 3,9
        --float64]] [--memory 40,80,120] [--json FILE]

``PATH`` is a checkout of github.com/harvardnlp/compound-pcfg (``models.py``, ``PCFG.py``);
nothing of it is copied or vendored: the measuring process imports it from where the user put
it.  Both sides at the official sizes (``train.py``'s defaults: 30 nonterminals, 60
preterminals, symbol embeddings 256, z 64, BiLSTM 512 over 512-dim words, a 10,004-word
vocabulary), the official optimiser (Adam 1e-3, betas (0.75, 0.999), clip 3) and its
batches (``--batch`` sentences of one length, random word ids from a fixed seed).  Every
measurement is a fresh process and the sides alternate (official, induce, induce, official,
...) over ``--rounds``; a step is forward, backward and the update.

Figures: training tokens/s per sentence length (median over rounds) and their ratio, peak
RSS (with ``--device cuda``: peak GPU memory, the official code's own device; both sides
fp32). ``--check``: both modules built from one seed, the official weights loaded into ours,
log-likelihoods and KL (``z`` at the mean) compared in float32 and float64 on random
batches, and Viterbi trees; with ``--data`` (an ``induce preprocess`` folder: its
vocabulary sizes the models), every sentence of two or more words of its ``--split`` as
well, in float32 (``--float64``: both sides in float64), batches of up to 16 sentences of
one length, shortest first (progress on stderr; ``--words``/``--only`` choose sentences by
length or position): the largest per-sentence log-likelihood
difference, the Viterbi trees identical and the positions of those that differ, with how far
apart the two trees' scores are under our grammar (a tie: equal up to rounding).
``--epoch DATASET``: instead of one length, the mix of one epoch: ``--batches`` batches drawn
(seed 0) from the dataset's training batches of up to ``--max-words`` words (the official
first epoch's curriculum, 30), both sides on the same lengths in the same order, tokens/s
over them all.  ``--fused-cpu``: ``induce``'s Adam as under ``optim.fused_cpu``.
``--memory``: ``induce``'s peak RSS for one training step on one sentence of each length
(the official inside is not run there: its Python loops take minutes at 120 words).
``--z-dim 0``: the N-PCFG on both sides (without CUDA, the official module's one ``.cuda()``
call, on its unused zero ``z``, leaves the tensor on the CPU).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SIZES = {"nt": 30, "t": 60, "s_dim": 256, "h_dim": 512, "w_dim": 512}


def _models(official: str, z_dim: int, vocab: int, seed: int = 3435) -> tuple[Any, Any]:
    """The official module (xavier-initialised as ``train.py`` does) and ours holding its
    weights."""
    import torch

    from induce.models.pcfg import CompoundPCFG, PCFGConfig

    sys.path.insert(0, official)
    from models import CompPCFG  # the official module, from the user's checkout

    if z_dim == 0 and not torch.cuda.is_available():
        # The official N-PCFG stores an unused ``[B, 1]`` zero z made with ``.cuda()``
        # (``models.py``); without CUDA that tensor stays on the CPU, nothing else changes.
        torch.Tensor.cuda = lambda self, *args, **kwargs: self  # type: ignore[method-assign]
    torch.manual_seed(seed)
    theirs = CompPCFG(
        vocab=vocab,
        h_dim=SIZES["h_dim"],
        w_dim=SIZES["w_dim"],
        z_dim=z_dim,
        state_dim=SIZES["s_dim"],
        t_states=SIZES["t"],
        nt_states=SIZES["nt"],
    )
    for param in theirs.parameters():
        if param.dim() > 1:
            torch.nn.init.xavier_uniform_(param)
    ours = CompoundPCFG(PCFGConfig(z_dim=z_dim, **SIZES), vocab, 0)
    ours.load_state_dict(theirs.state_dict())
    return theirs, ours


def epoch_lengths(args: argparse.Namespace) -> list[int]:
    """``--epoch``: the lengths of ``--batches`` batches drawn (seed 0) from the training
    split's batches of ``--batch`` sentences of one length up to ``--max-words``, the
    batches one epoch of the official loop runs (its first: curriculum 30 words)."""
    import random

    from induce.data.dataset import load_dataset
    from induce.runs.grammar import equal_length_batches

    lengths = [len(s) for s in load_dataset(args.epoch).sentences("train")]
    batches = equal_length_batches(lengths, args.batch, args.max_words)
    drawn = random.Random(0).sample(batches, min(args.batches, len(batches)))
    return [lengths[b[0]] for b in drawn]


def train_speed(args: argparse.Namespace, side: str, lengths: list[int]) -> dict[str, Any]:
    """Forward, backward and update on batches of ``--batch`` random sentences, one batch of
    each of ``lengths`` in order after ``--warmup`` steps at the first length."""
    import torch

    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    theirs, ours = _models(args.official, args.z_dim, args.vocab)
    model = (theirs if side == "official" else ours).to(device)
    model.train()
    # --fused-cpu: induce's Adam as under ``optim.fused_cpu`` (the official side keeps its own)
    fused = True if side == "induce" and args.fused_cpu else None
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.75, 0.999), fused=fused)
    g = torch.Generator().manual_seed(lengths[0])

    from induce.models.grammar import WordBatch

    def step(length: int) -> None:
        ids = torch.randint(4, args.vocab, (args.batch, length), generator=g).to(device)
        optimizer.zero_grad()
        if side == "official":
            nll, kl = model(ids)
            loss = (nll + kl).mean()
        else:
            n = torch.full((args.batch,), length, device=device)
            loss = model.loss(WordBatch(ids, n)).value
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 3.0)
        optimizer.step()

    for _ in range(args.warmup):
        step(lengths[0])
    _sync(device)
    began = time.perf_counter()
    for length in lengths:
        step(length)
    _sync(device)
    seconds = time.perf_counter() - began
    return {
        "tokens_per_s": args.batch * sum(lengths) / seconds,
        "step_s": seconds / len(lengths),
        **_peak(device),
    }


def _sync(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _peak(device: Any) -> dict[str, float]:
    """``peak_gpu_gib`` (allocated by torch) on CUDA, else the process's ``peak_rss_gib``."""
    import torch

    if device.type == "cuda":
        return {"peak_gpu_gib": torch.cuda.max_memory_allocated(device) / 2**30}
    return {"peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}


def check(args: argparse.Namespace) -> dict[str, Any]:
    """Same weights: log-likelihood and KL differences, and Viterbi trees."""
    import torch

    torch.set_num_threads(args.threads)
    out: dict[str, Any] = {}
    for dtype in (torch.float32, torch.float64):
        theirs, ours = _models(args.official, args.z_dim, args.vocab)
        theirs.to(dtype).eval()
        ours.to(dtype).eval()
        worst, trees, same = 0.0, 0, 0
        for length in (2, 5, 10, 20):
            g = torch.Generator().manual_seed(100 + length)
            ids = torch.randint(4, args.vocab, (args.batch, length), generator=g)
            lengths = torch.full((args.batch,), length)
            with torch.no_grad():  # one official forward: its inside, KL and Viterbi
                nll, kl, _, spans = theirs(ids, argmax=True, use_mean=True)
                ll = ours.log_likelihood(ids, lengths)
                worst = max(worst, float((nll + ll).abs().max()))
                if args.z_dim > 0:  # the N-PCFG has no KL term
                    mean, logvar = ours.encode(ids, lengths)
                    worst = max(worst, float((kl - ours.kl(mean, logvar)).abs().max()))
            for want, got in zip(spans, ours.parse(ids, lengths), strict=True):
                converted = [(i, j + 1, f"NT-{a + 1}") for i, j, a in want if j > i]
                trees += 1
                same += sorted(converted, key=lambda s: (s[0], -s[1])) == got
        out[str(dtype).removeprefix("torch.")] = {
            "max_abs_diff": worst,
            "trees_identical": f"{same}/{trees}",
        }
    return out


def chosen_positions(args: argparse.Namespace, sentences: list[list[int]]) -> list[int]:
    """The positions chosen by ``--only``, or by ``--skip``/``--limit`` and ``--words``."""
    if args.only:
        return [int(p) for p in args.only.split(",")]
    low, _, high = (getattr(args, "words", None) or "2-").partition("-")
    within = range(int(low or 2), int(high) + 1 if high else 1 << 30)
    chosen = range(len(sentences))[args.skip :][: args.limit or None]
    return [p for p in chosen if len(sentences[p]) in within]


def tree_scores(model: Any, ids: Any, trees: list[list[tuple[int, int, str]]]) -> list[float]:
    """The score of each labelled tree (spans of two or more words with ``NT-k`` labels; the
    preterminals at their best) under ``model``'s grammar of the sentence ``ids [n]``: the
    max-semiring inside with every other span and label at ``-inf``.  Two trees of equal
    score are a tie, whatever the rounding of either side's search."""
    import torch

    from induce.structs import MAX
    from induce.structs.pcfg import inside

    n = ids.shape[0]
    ids, lengths = ids[None], torch.tensor([n])
    with torch.no_grad():
        z, _ = model._z(ids, lengths, sample=False)
        g = model.grammar(ids, z)
        scores = []
        for tree in trees:
            allowed = g.terms.new_full((1, n + 1, n + 1, g.roots.shape[1]), float("-inf"))
            for i, j, label in tree:
                allowed[0, i, j, int(label.removeprefix("NT-")) - 1] = 0.0
            scores.append(float(inside(g.terms, g.rules, g.roots, lengths, MAX, allowed)))
    return scores


def check_data(args: argparse.Namespace) -> dict[str, Any]:
    """Same weights on a dataset's split: per-sentence log-likelihoods and Viterbi trees."""
    import torch

    from induce.data.dataset import load_dataset
    from induce.runs.grammar import equal_length_batches

    torch.set_num_threads(args.threads)
    dataset = load_dataset(args.data)
    vocab = dataset.vocab
    every = [vocab.ids(s) for s in dataset.sentences(args.split)]
    every = [s for s in every if len(s) >= 2]  # positions below count these sentences only
    wanted = chosen_positions(args, every)
    sentences = [every[p] for p in wanted]
    theirs, ours = _models(args.official, args.z_dim, len(vocab))
    dtype = torch.float64 if args.float64 else torch.float32
    theirs.to(dtype).eval()
    ours.to(dtype).eval()
    worst, relative, same, seconds, ties = 0.0, 0.0, 0, [0.0, 0.0], 0.0
    differ: list[int] = []  # positions of the sentences whose trees differ
    batches = equal_length_batches([len(s) for s in sentences], 16, 0)
    for b, chosen in enumerate(batches):
        ids = torch.tensor([sentences[i] for i in chosen])
        n = ids.shape[1]
        lengths = torch.full((ids.shape[0],), n)
        began = time.perf_counter()
        with torch.no_grad():  # one official forward: its inside, then its Viterbi
            nll, _, _, spans = theirs(ids, argmax=True, use_mean=True)
        seconds[0] += time.perf_counter() - began
        began = time.perf_counter()
        with torch.no_grad():
            ll = ours.log_likelihood(ids, lengths)
            got = ours.parse(ids, lengths)
        seconds[1] += time.perf_counter() - began
        gap = (nll + ll).abs()
        worst = max(worst, float(gap.max()))
        relative = max(relative, float((gap / nll.abs()).max()))
        for row, (index, want, mine) in enumerate(zip(chosen, spans, got, strict=True)):
            converted = [(i, j + 1, f"NT-{a + 1}") for i, j, a in want if j > i]
            equal = sorted(converted, key=lambda s: (s[0], -s[1])) == mine
            same += equal
            differ += [] if equal else [wanted[index]]
            if not equal:  # how far apart the two trees' scores are under our grammar
                theirs_score, ours_score = tree_scores(ours, ids[row], [converted, mine])
                ties = max(ties, abs(theirs_score - ours_score) / abs(ours_score))
        if b + 1 == len(batches) or len(sentences[batches[b + 1][0]]) != n:
            print(
                f"{n} words: {same} identical so far, largest {worst:.2e}, differing {differ}"
                f" (their scores within {ties:.1e}, relative)",
                file=sys.stderr,
                flush=True,
            )
    return {
        "dtype": str(dtype).removeprefix("torch."),
        "differing": differ,
        "sentences": len(sentences),
        "max_abs_diff": worst,
        "max_rel_diff": relative,
        "trees_identical": f"{same}/{len(sentences)}",
        "differing_scores_rel_diff": ties,
        "official_s": round(seconds[0], 1),
        "induce_s": round(seconds[1], 1),
    }


def memory(args: argparse.Namespace, length: int) -> dict[str, Any]:
    """``induce``'s peak RSS for one training step on one sentence of ``length`` words."""
    import torch

    from induce.models.grammar import WordBatch
    from induce.models.pcfg import CompoundPCFG, PCFGConfig

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    device = torch.device(args.device)
    model = CompoundPCFG(PCFGConfig(z_dim=args.z_dim, **SIZES), args.vocab, 0).train().to(device)
    ids = torch.randint(4, args.vocab, (1, length)).to(device)
    began = time.perf_counter()
    loss = model.loss(WordBatch(ids, torch.tensor([length], device=device))).value
    loss.backward()
    _sync(device)
    return {
        "length": length,
        "step_s": time.perf_counter() - began,
        **_peak(device),
    }


def _child(args: argparse.Namespace, *what: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "--one", *what, "--official", args.official]
    for flag in ("batch", "steps", "warmup", "threads", "z_dim", "vocab", "device"):
        command += [f"--{flag.replace('_', '-')}", str(getattr(args, flag))]
    command += ["--fused-cpu"] if args.fused_cpu else []
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _timed_sides(args: argparse.Namespace, lengths: list[int]) -> dict[str, list[Any]]:
    """Both sides on the same batch lengths, fresh processes alternating over rounds."""
    sides = ["official", "induce"]
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    plan = ",".join(map(str, lengths))
    for r in range(args.rounds):
        for side in sides if r % 2 == 0 else sides[::-1]:
            runs[side].append(_child(args, "train", side, plan))
    return runs


def _speed_line(args: argparse.Namespace, runs: dict[str, list[dict[str, Any]]]) -> str:
    """Median tokens/s of each side, its peak memory and the ratio."""
    sides = ("official", "induce")
    rates = {s: statistics.median(x.get("tokens_per_s", 0.0) for x in runs[s]) for s in sides}
    key = "peak_gpu_gib" if args.device.startswith("cuda") else "peak_rss_gib"
    rss = {s: max(x.get(key, 0.0) for x in runs[s]) for s in sides}
    ratio = rates["induce"] / rates["official"] if rates["official"] else float("nan")
    return (
        f"official {rates['official']:8.1f} tok/s ({rss['official']:.2f} GiB)  "
        f"induce {rates['induce']:8.1f} tok/s ({rss['induce']:.2f} GiB)  {ratio:.1f}x"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--official", required=True, help="a checkout of harvardnlp/compound-pcfg")
    ap.add_argument("--lengths", default="10,20,30,40")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epoch", help="an induce dataset: time its training batches' mix instead")
    ap.add_argument("--max-words", type=int, default=30, help="--epoch: the curriculum's limit")
    ap.add_argument("--batches", type=int, default=24, help="--epoch: how many batches")
    ap.add_argument("--fused-cpu", action="store_true", help="induce's Adam fused on the CPU")
    ap.add_argument("--z-dim", type=int, default=64)
    ap.add_argument("--device", default="cpu", help="the timed steps' device: cpu or cuda")
    ap.add_argument("--vocab", type=int, default=10004)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--data", help="--check on this induce dataset's --split as well")
    ap.add_argument("--split", default="valid")
    ap.add_argument("--skip", type=int, default=0, help="leave out the first K sentences")
    ap.add_argument("--float64", action="store_true", help="--data: both sides in float64")
    ap.add_argument("--limit", type=int, default=0, help="at most this many sentences")
    ap.add_argument("--words", help="--data: only sentences of this many words (35-, 2-34)")
    ap.add_argument("--only", help="--data: only the sentences at these positions (1,5,9)")
    ap.add_argument("--memory", default="", help="induce's peak memory at these lengths")
    ap.add_argument("--json", help="write every figure to this file")
    ap.add_argument("--one", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not (Path(args.official) / "models.py").is_file():
        sys.exit(f"error: --official {args.official}: no models.py (compound-pcfg checkout?)")
    if args.one:
        kind, *rest = args.one
        if kind == "train":
            result = train_speed(args, rest[0], [int(x) for x in rest[1].split(",")])
        elif kind == "memory":
            result = memory(args, int(rest[0]))
        else:
            result = check(args)
        print(json.dumps(result))
        return
    figures: dict[str, Any] = {"train": {}, "memory": [], "check": None}
    if args.check:
        figures["check"] = _child(args, "check")
        print("same weights:", json.dumps(figures["check"]), flush=True)
    if args.check and args.data:  # in this process: nothing here is timed against the other
        figures["check_data"] = check_data(args)
        print(f"same weights, {args.data} {args.split}:", json.dumps(figures["check_data"]))
    plans = {f"{n} words": [n] * args.steps for n in (int(x) for x in args.lengths.split(",") if x)}
    if args.epoch:
        drawn = epoch_lengths(args)
        mean = statistics.mean(drawn)
        plans = {f"epoch mix ({len(drawn)} batches, mean {mean:.1f} words)": drawn}
    for name, lengths in plans.items():
        figures["train"][name] = _timed_sides(args, lengths)
        print(f"{name}: {_speed_line(args, figures['train'][name])}", flush=True)
    for length in [int(x) for x in args.memory.split(",") if x]:
        got = _child(args, "memory", str(length))
        figures["memory"].append(got)
        print(f"induce, one sentence of {length} words: {json.dumps(got)}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
