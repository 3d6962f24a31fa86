#!/usr/bin/env python3
"""Official StructFormer/UDGN code against ``induce``, side by side on this machine.

    python bench/side_by_side.py [--official PATH] [--archs structformer,udgn]
        [--sizes small,paper] [--device cpu|cuda] [--sides official,induce,induce-bf16]
        [--rounds 2] [--steps 6] [--warmup 2] [--threads 2] [--parse [--no-train]]
        [--parse-sentences 400] [--set KEY=VALUE ...] [--json FILE]

``PATH`` is a checkout of github.com/yikangshen/UDGN, imported from where the user put it
(``bench/official.py``; the side ``official`` needs it; without it, ``--sides
induce,induce-bf16`` compares ``induce``'s sides, ratios to the first).  Every measurement is
a fresh process and the sides alternate (official, induce, induce-bf16, official, ...), so
that a machine that slows down during the run penalises every side.  All sides get the same
model sizes (``paper``: our presets ``structformer-udgn-repo`` and ``udgn-ptb-paper``, which
are the official ``main.py`` defaults; ``small``: d_model 256, 4 layers), the same batches
(``bench/workload.py``: the official ``batchify``'s 4,096 tokens, WSJ section 22's lengths,
masks at 0.3), Adam with clipping 0.25.  The ``induce`` sides run the training engine's own
loss function, optimizer and precision choice (``induce.train``); a side's name says what
it adds (``bench/sides.py``: ``-bf16``, ``-tf32``, ``-compile``, ``-regions``, ``-layers``);
``--set`` passes further settings to every ``induce`` side.  A side ending in ``-graphs``
(CUDA) runs the same step through CUDA graphs (``induce.train.graphs``: one graph per
bucket of batch shapes, captured in a first pass over every batch of the plan, which is not
timed and is reported as ``first_epoch_s``; ``peak_gpu_gib`` covers both passes,
``steady_gpu_gib`` the timed one).  Every compiled side compiles in the first pass on CUDA,
or without one on the timed batches, each trained on once before the warm-up steps: a
compilation can hold for a range of sizes only (on a CPU, inductor's C++ code guards on
4,096 summed values: batches of more cells, sentences of more than 64 words, compile again),
and a batch of a new range would compile inside the timed steps.  A line under a compiled
side's figures says where the compilation's time went, whether it came from the on-disk
cache, and how many frames compiled inside the timed steps, if any (``compile`` in the
JSON).

``--device cuda``: the official side keeps its batches on the GPU from the start, as its
``batchify`` does; ``induce`` moves each batch when it trains on it, as the engine does
(page-locked, asynchronous).  No side reads a number back during the timed steps.

Training: tokens/s over the timed steps (real tokens, padding excluded), the process's peak
RSS and, on CUDA, peak GPU memory (``torch.cuda.max_memory_allocated``).  On CUDA every side
first trains once on every batch of the plan, untimed (``--first-pass``), so that the peaks
of all sides cover the same batches.  ``--parse``:
sentences/s of the official test loop (one sentence per forward of the whole model; UDGN
then decodes with ``dms``, one Chu-Liu/Edmonds per candidate root via
``ufal.chu_liu_edmonds`` when installed) against ``induce``'s batched parser read-out
(``induce.runs.inference.sentence_scores`` + the protocol's test decoder), fresh weights.
Each side makes what its test loop reports: StructFormer's tree and heads; UDGN's heads
alone (its official test scores DDA/UDA and makes no tree, so ``induce`` reads the heads
with ``Scores.read_heads``, as ``induce parse -f conllu`` does, skipping the Eisner pass of
the constituency read-out).
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
sys.path.insert(0, str(ROOT / "bench"))

# bench/ is not a package: its modules are imported from the path set above
from official import dms, official_model, split  # noqa: E402
from sides import (  # noqa: E402
    SIDE_WIDTH,
    SIDES,
    chosen_sides,
    compile_report,
    compile_scope,
    compiled_frames,
    compiling,
    induce_side,
    sized,
    training_net,
)
from workload import PAD, VOCAB, batches, corpus, padding, plan, specials  # noqa: E402

WARM_PARSE = 64  # sentences each side parses before its timed parse


def _sync(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _peaks(device: Any) -> dict[str, float]:
    import torch

    out = {"peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}
    if device.type == "cuda":
        out["peak_gpu_gib"] = torch.cuda.max_memory_allocated(device) / 2**30
    return out


def train_one(args: argparse.Namespace, side: str, arch: str, size: str) -> dict[str, Any]:
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    device = torch.device(args.device)
    sents = corpus(Path(args.shared), 20_000)
    work = batches(sents, args.warmup + args.steps)
    if side == "official":
        model = official_model(args.official, arch, VOCAB, PAD, sized(size)).to(device).train()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-9, weight_decay=1.2e-6)
        # batchify puts every batch on the device before training
        on_device = {id(b): b.to(device) for b in work}

        def loss_of(b: Any) -> Any:
            b = on_device.get(id(b)) or b.to(device)
            targets = torch.full_like(b.ids, PAD).masked_scatter(b.masked, b.targets)
            pos = torch.arange(b.ids.shape[1], device=device)[None, :]
            return model(b.ids, targets, pos)[0]

        clip = 0.25
    elif side.endswith("-graphs"):
        return train_graphed(args, side, arch, size, work)
    else:
        from induce.runs.device import autocast
        from induce.runs.inference import masked_lm_training_loss
        from induce.train.engine import build_optimizer

        model, config = induce_side(side, arch, size, args)
        opt = build_optimizer(model, config.optim)[0]
        t, clip = config.train, config.optim.clip
        net = training_net(model, t)

        def loss_of(b: Any) -> Any:  # the engine's train_step: the batch moves here
            return masked_lm_training_loss(
                net, model, b.to(device), lambda: autocast(device, t.bf16, t.cpu_bf16)
            )

    def update(b: Any) -> Any:
        loss = loss_of(b)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        return loss.detach()  # read after the timed steps: no wait per step

    if first_pass(args):
        for b in batches(sents, len(plan(sents))):
            update(b)
    elif compile_scope(side):  # the timed batches once, untimed: each compiles here if ever
        for b in work[args.warmup :]:
            update(b)
    tokens, began, losses, frames = 0, 0.0, [], 0
    for k, b in enumerate(work):
        if k == args.warmup:
            _sync(device)
            began, tokens, frames = time.perf_counter(), 0, compiled_frames()
        losses.append(update(b))
        tokens += b.tokens
    return _trained(device, model, tokens, began, losses) | late_frames(side, frames)


def first_pass(args: argparse.Namespace) -> bool:
    """Whether every side trains on every batch of the plan once before its timed steps:
    by default on CUDA (the graph sides must, to capture their graphs, and the peak memory
    of every side then covers the same batches), not on CPU (minutes at paper size)."""
    return args.first_pass if args.first_pass is not None else args.device.startswith("cuda")


def train_graphed(
    args: argparse.Namespace, side: str, arch: str, size: str, work: list[Any]
) -> dict[str, Any]:
    """The ``induce`` step through CUDA graphs (``induce.train.graphs``): every batch of the
    plan once first, which captures one graph per bucket (the steady state of a training
    run, whose epochs repeat those shapes), then the same timed batches as the other sides."""
    from contextlib import nullcontext

    import torch

    from induce.train.engine import build_optimizer
    from induce.train.graphs import GraphedLoss

    device = torch.device(args.device)
    model, config = induce_side(side.removesuffix("-graphs"), arch, size, args)
    net = training_net(model, config.train)
    opt = build_optimizer(model, config.optim)[0]

    def cast() -> Any:
        if config.train.bf16:
            return torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False)
        return nullcontext()

    graphed = GraphedLoss(net, model, cast, specials(), device)
    sents = corpus(Path(args.shared), 20_000)

    def step(b: Any) -> Any:
        opt.zero_grad(set_to_none=False)
        loss = graphed(b)
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.optim.clip)
        opt.step()
        return loss

    began = time.perf_counter()
    for b in batches(sents, len(plan(sents))):
        step(b)
    _sync(device)
    capture_s = time.perf_counter() - began
    capture_peak = torch.cuda.max_memory_allocated(device) / 2**30
    torch.cuda.reset_peak_memory_stats(device)  # the timed steps' own peak, as steady_gpu_gib
    timed = work[args.warmup :]
    began, tokens, losses, frames = time.perf_counter(), 0, [], compiled_frames()
    for b in timed:
        losses.append(step(b))
        tokens += b.tokens
    result = _trained(device, model, tokens, began, losses) | late_frames(side, frames)
    return result | {
        "graphs": len(graphed.graphs),
        "first_epoch_s": capture_s,
        "peak_gpu_gib": max(capture_peak, result["peak_gpu_gib"]),
        "steady_gpu_gib": result["peak_gpu_gib"],
        "reserved_gpu_gib": torch.cuda.memory_reserved(device) / 2**30,
    }


def late_frames(side: str, before: int) -> dict[str, int]:
    """A compiled side's frames compiled since ``before`` (the timed steps' start), for
    :func:`sides.compile_report`: none, unless a batch of the timed steps needed a
    compilation that the warm-up did not make."""
    return {"timed_frames": compiled_frames() - before} if compile_scope(side) else {}


def _trained(
    device: Any, model: Any, tokens: int, began: float, losses: list[Any]
) -> dict[str, Any]:
    """The figures of a timed stretch that began at ``began`` (the device's queue drained
    first): tokens/s, peaks, parameters, the first and last losses."""
    _sync(device)
    seconds = time.perf_counter() - began
    return {
        "tokens_per_s": tokens / seconds,
        **_peaks(device),
        "parameters": sum(p.numel() for p in model.parameters()),
        "first_loss": float(losses[0]),
        "last_loss": float(losses[-1]),
    }


def parse_one(args: argparse.Namespace, side: str, arch: str, size: str) -> dict[str, Any]:
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    device = torch.device(args.device)
    sents = corpus(Path(args.shared), args.parse_sentences, seed=2)
    warm = sents[:WARM_PARSE]  # parsed untimed first on every side: CUDA's lazy set-up
    if side == "official":
        model = official_model(args.official, arch, VOCAB, PAD, sized(size)).to(device).eval()
        decoded = 0
        with torch.no_grad():
            for k, s in enumerate(warm + sents):
                if k == len(warm):
                    _sync(device)
                    began, decoded = time.perf_counter(), 0
                x = torch.tensor([s], device=device)
                _, p = model(x, x, torch.arange(len(s), device=device)[None, :])
                head = p["head"][0].cpu().numpy()
                if arch == "udgn":
                    try:
                        dms(head.astype("float64"))
                        decoded += 1
                    except ImportError:
                        head.argmax(1)
                else:
                    head.argmax(1)
                    split(p["distance"][0].tolist(), 0, len(s))
                    decoded += 1
        note = "dms" if arch == "udgn" and decoded else "argmax"
    else:
        from induce.runs.device import inference_autocast
        from induce.runs.inference import sentence_scores

        model, config = induce_side(side, arch, size, args)
        decoder = config.protocol.test_decoder if arch == "udgn" else None
        bf16 = config.train.bf16 or config.train.cpu_bf16
        words = [[str(t) for t in s] for s in sents]
        began = 0.0
        for part in (warm, sents):
            _sync(device)
            began, reading = time.perf_counter(), 0.0
            for index, scores in sentence_scores(
                model,
                part,
                specials(),
                config.data.eval_batch_tokens,
                device,
                lambda: inference_autocast(device, bf16),
            ):
                read = time.perf_counter()
                if arch == "udgn":  # the official loop's output: heads, no tree
                    scores.read_heads(words[index], decoder)
                else:
                    scores.read_out(words[index], decoder)
                reading += time.perf_counter() - read
        note = decoder or "default"
    _sync(device)
    seconds = time.perf_counter() - began
    result = {"sentences_per_s": len(sents) / seconds, **_peaks(device), "decoder": note}
    if side != "official":  # the host's decoding, the rest being the batches' forward passes
        result["readout_share"] = reading / seconds
    return result


def run_child(args: argparse.Namespace, job: list[str]) -> dict[str, Any] | str:
    command = [sys.executable, __file__, "--one", *job]
    if args.official:
        command += ["--official", args.official]
    command += ["--steps", str(args.steps), "--warmup", str(args.warmup)]
    command += ["--threads", str(args.threads), "--shared", args.shared]
    command += ["--parse-sentences", str(args.parse_sentences), "--device", args.device]
    if args.first_pass is not None:
        command.append("--first-pass" if args.first_pass else "--no-first-pass")
    for item in args.set:
        command += ["--set", item]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        return "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--official", help="a checkout of github.com/yikangshen/UDGN (for the official side)"
    )
    ap.add_argument("--archs", default="structformer,udgn")
    ap.add_argument("--sizes", default="small,paper")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    ap.add_argument(
        "--sides",
        help=f"from {', '.join(SIDES)} (default: the first two on CPU, three on CUDA)",
    )
    ap.add_argument(
        "--first-pass",
        action=argparse.BooleanOptionalAction,
        help="train on every batch of the plan once, untimed, before the timed steps "
        "(default: on CUDA only; the graph sides always do)",
    )
    ap.add_argument("--parse", action="store_true", help="also time parsing")
    ap.add_argument("--no-train", action="store_true", help="time parsing only (with --parse)")
    ap.add_argument("--parse-sentences", type=int, default=400)
    ap.add_argument("--set", action="append", default=[], help="induce setting KEY=VALUE")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--json", help="write every measurement to this file")
    ap.add_argument("--one", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        task, side, arch, size = args.one
        one = train_one if task == "train" else parse_one
        result = one(args, side, arch, size)
        if task == "train" and compile_scope(side):  # eager and graph sides alike
            result["compile"] = compile_report() | {"timed_frames": result.pop("timed_frames")}
        print(json.dumps(result))
        return
    sides = chosen_sides(args)
    tasks = ([] if args.no_train else ["train"]) + (["parse"] if args.parse else [])
    print(
        f"device {device_name(args.device)}; {args.threads} threads; training: 4,096-token "
        f"batches, {args.steps} timed steps after {args.warmup}; parsing: "
        f"{args.parse_sentences} sentences; induce settings: {' '.join(args.set) or 'the presets'}"
        f"; {args.rounds} alternating rounds; padding "
        f"{100 * padding(corpus(Path(args.shared), 20_000)):.1f}% of batch cells"
    )
    records: list[dict[str, Any]] = []
    for task in tasks:
        unit = "tokens_per_s" if task == "train" else "sentences_per_s"
        print(f"\n{task}: {unit.replace('_per_s', '/s')} per round, median, ratio to {sides[0]}")
        print(
            f"{'arch':<13} {'size':<6} {'side':<{SIDE_WIDTH}} {'rounds':>22} {'median':>9} "
            f"{'ratio':>7} {'RSS GiB':>8} {'GPU GiB':>8}"
        )
        for arch in args.archs.split(","):
            for size in args.sizes.split(","):
                seen: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
                for _ in range(args.rounds):
                    for side in sides:
                        result = run_child(args, [task, side, arch, size])
                        if isinstance(result, str):
                            print(f"{arch:<13} {size:<6} {side:<{SIDE_WIDTH}} {result}", flush=True)
                            continue
                        seen[side].append(result)
                        records.append(
                            {"task": task, "side": side, "arch": arch, "size": size} | result
                        )
                        if args.json:  # after every measurement: a cut-off run keeps its figures
                            Path(args.json).write_text(json.dumps(records, indent=1) + "\n")
                for line in summary(arch, size, seen, unit):
                    print(line, flush=True)


def device_name(device: str) -> str:
    if not device.startswith("cuda"):
        return device
    import torch

    return f"{device} ({torch.cuda.get_device_name(torch.device(device))})"


def summary(arch: str, size: str, seen: dict[str, list[dict[str, Any]]], unit: str) -> list[str]:
    """One line per side: each round's rate, the median, its ratio to the first side's
    median (the official side's, which comes first when it runs), the largest peak RSS and
    peak GPU memory."""
    first = next(iter(seen.values()), [])
    base = statistics.median(r[unit] for r in first) if first else None  # no base: no ratio
    lines = []
    for side, results in seen.items():
        if not results:
            continue
        rates = [r[unit] for r in results]
        rss = max(r["peak_rss_gib"] for r in results)
        gpu = max((r.get("peak_gpu_gib", 0.0) for r in results), default=0.0)
        median = statistics.median(rates)
        shown = "/".join(f"{x:.0f}" for x in rates)
        lines.append(
            f"{arch:<13} {size:<6} {side:<{SIDE_WIDTH}} {shown:>22} {median:>9.0f} "
            f"{f'{median / base:.2f}x' if base else '-':>7} {rss:>8.2f} {gpu:>8.2f}"
        )
        lines += [f"  compiling: {compiling(r['compile'])}" for r in results if "compile" in r]
        shares = [r["readout_share"] for r in results if "readout_share" in r]
        if shares:  # parsing: how much of the time the host's read-out took
            lines.append(f"  read-out on the host: {'/'.join(f'{x:.0%}' for x in shares)}")
    return lines


if __name__ == "__main__":
    main()
