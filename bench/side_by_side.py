#!/usr/bin/env python3
"""Official StructFormer/UDGN code against ``induce``, side by side on this machine.

    python bench/side_by_side.py [--official PATH] [--archs structformer,udgn]
        [--sizes small,paper] [--device cpu|cuda] [--sides official,induce,induce-bf16]
        [--rounds 2] [--steps 6] [--warmup 2] [--threads 2] [--parse [--no-train]]
        [--parse-sentences 400] [--set KEY=VALUE ...] [--json FILE]

``PATH`` is a checkout of github.com/yikangshen/UDGN (its ``models.py`` holds the official
``StructFormer`` and ``UDGN``); nothing of it is copied or vendored: the measuring process
imports it from where the user put it (the side ``official`` needs it; without it, ``--sides
induce,induce-bf16`` compares ``induce``'s sides, ratios to the first). Every measurement is
a fresh process and the sides alternate (official, induce, induce-bf16, official, ...), so
that a machine that slows down during the run penalises every side. All sides get the same
model sizes (``paper``: our presets ``structformer-udgn-repo`` and ``udgn-ptb-paper``, which
are the official ``main.py`` defaults; ``small``: d_model 256, 4 layers), the same
4,096-token batches (the official ``batchify``: longest first, summed lengths below the
budget) of sentences with the lengths of WSJ section 22 (``../shared`` when it is there, a
WSJ-like distribution otherwise), the same masks (rate 0.3), Adam with clipping 0.25. The
``induce`` sides run the training engine's own loss function, optimizer and precision choice
(``induce.train``); ``induce-bf16`` adds ``train.bf16=true`` (CUDA autocast) or
``train.cpu_bf16=true`` (CPU); ``induce-tf32`` adds ``train.tf32=true`` (CUDA: float32
matrix products as TF32); ``--set`` passes further settings to every ``induce`` side. A side
ending in ``-graphs`` (CUDA only: ``induce-graphs``, ``induce-bf16-graphs``,
``induce-tf32-graphs``) runs the same step through CUDA graphs (``induce.train.graphs``: one
graph per bucket of batch shapes, captured in a first pass over every batch of the plan,
which is not timed and is reported as ``first_epoch_s``; ``peak_gpu_gib`` covers both
passes, ``steady_gpu_gib`` the timed one). A side with ``-compile`` (``induce-compile``,
``induce-bf16-compile`` and their ``-graphs``) runs the forward under ``torch.compile`` with
dynamic shapes (``train.compile``); ``-regions`` or ``-layers`` instead of ``-compile``
(``induce-bf16-regions-graphs``, ...) compiles by regions (``train.compile_scope``: each
layer of the stack once, and the parser apart or not at all). Every compiled side compiles
in the first pass on CUDA or the warm-up steps on CPU (give those steps the time it takes);
a line under its figures says where the compilation's time went and whether it came from
the on-disk cache (``compile`` in the JSON).

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
"""

from __future__ import annotations

import argparse
import json
import random
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

PRESETS = {"structformer": "structformer-udgn-repo", "udgn": "udgn-ptb-paper"}
SMALL = {"d_model": 256, "n_layers": 4}
WARM_PARSE = 64  # sentences each side parses before its timed parse
VOCAB, PAD, UNK, MASK = 10_000, 0, 1, 2


def corpus(shared: Path, count: int, seed: int = 0) -> list[list[int]]:
    """``count`` sentences of random word ids with WSJ section 22's lengths."""
    from train import lengths  # bench/train.py

    rng = random.Random(seed)
    return [[rng.randrange(3, VOCAB) for _ in range(n)] for n in lengths(shared, count, rng)]


def plan(sents: list[list[int]]) -> list[list[int]]:
    """The official ``batchify``'s 4,096-token batches (ours: ``data.batching: summed``)."""
    from induce.runs.batches import plan_batches

    return plan_batches([len(s) for s in sents], 4096, "summed")


def padding(sents: list[list[int]]) -> float:
    """The fraction of padding in those batches."""
    cells = sum(len(b) * max(len(sents[i]) for i in b) for b in plan(sents))
    return 1 - sum(len(s) for s in sents) / cells


def batches(sents: list[list[int]], count: int) -> list[Any]:
    """``count`` masked batches, the same on both sides (fixed seeds)."""
    import torch

    from induce.runs.batches import Specials, make_batch

    plan_ = plan(sents)
    random.Random(1).shuffle(plan_)
    specials = Specials(pad=PAD, unk=UNK, mask=MASK)
    return [
        make_batch(sents, plan_[k % len(plan_)], specials, 0.3, torch.Generator().manual_seed(k))
        for k in range(count)
    ]


def official_model(
    path: str,
    arch: str,
    vocab: int = VOCAB,
    pad: int = PAD,
    sizes: tuple[int, int, int, int] = (512, 8, 8, 128),
    dropout: float = 0.2,
) -> Any:
    """The official model with ``main.py``'s defaults: ``sizes`` (``--nemb 512 --nlayers 8
    --nheads 8 --head_size 128``), ``--dropout 0.2`` (UDGN's parser dropout too) with
    ``--dropatt 0.1`` (0 with ``dropout`` 0), ``--n_parser_layers 3``, no ``--pos_emb``;
    ``bench/long_runs.py`` and ``bench/step_parity.py`` build theirs here too."""
    sys.path.insert(0, path)
    import models  # type: ignore[import-not-found]  # the official models.py

    emb, layers, heads, head_size = sizes
    common = dict(emb_size=emb, nlayers=layers, ntokens=vocab, nhead=heads, dropout=dropout)
    common.update(dropatt=0.1 if dropout else 0.0, pos_emb=False, pad=pad, n_parser_layers=3)
    if arch == "udgn":
        return models.UDGN(head_size=head_size, parser_dropout=dropout, **common)
    return models.StructFormer(**common)


def sized(size: str) -> tuple[int, int, int, int]:
    """``official_model``'s sizes at ``--size paper|small``."""
    return (512, 8, 8, 128) if size == "paper" else (SMALL["d_model"], SMALL["n_layers"], 8, 128)


def induce_model(arch: str, size: str, overrides: list[str]) -> tuple[Any, Any]:
    from induce.models import build_model
    from induce.runs.config import load_config

    extra = [f"model.{k}={v}" for k, v in SMALL.items()] if size == "small" else []
    config = load_config(arch, extra + overrides, preset=PRESETS[arch])
    return build_model(arch, config.model, VOCAB, PAD), config


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


SIDES = (
    "official",
    "induce",
    "induce-bf16",
    "induce-tf32",
    "induce-graphs",
    "induce-bf16-graphs",
    "induce-tf32-graphs",
    "induce-compile",
    "induce-bf16-compile",
    "induce-compile-graphs",
    "induce-bf16-compile-graphs",
    # train.compile with train.compile_scope regions / layers (each layer compiled once)
    *(
        f"induce{bf16}-{scope}{graphs}"
        for scope in ("regions", "layers")
        for bf16 in ("", "-bf16")
        for graphs in ("", "-graphs")
    ),
)
# a side's word for what train.compile compiles (train.compile_scope)
COMPILE_WORDS = {"-compile": "model", "-regions": "regions", "-layers": "layers"}
SIDE_WIDTH = max(map(len, SIDES))  # the tables' side column


def side_settings(side: str, device: str, overrides: list[str]) -> list[str]:
    """``induce``'s settings for a side: ``-bf16`` autocasts to bfloat16, ``-tf32``
    multiplies float32 matrices as TF32 (CUDA), ``-compile`` runs the forward under
    ``torch.compile`` (``train.compile``), ``-regions`` and ``-layers`` too, by regions
    (``train.compile_scope``); ``-graphs`` is :func:`train_graphed`'s."""
    extra = []
    if "-bf16" in side:
        extra.append("train.bf16=true" if device.startswith("cuda") else "train.cpu_bf16=true")
    if "-tf32" in side:
        extra.append("train.tf32=true")
    scope = compile_scope(side)
    if scope:
        extra += ["train.compile=true", f"train.compile_scope={scope}"]
    return [*overrides, *extra]


def compile_scope(side: str) -> str | None:
    """What a side compiles (``train.compile_scope``), ``None`` when it does not compile."""
    return next((scope for word, scope in COMPILE_WORDS.items() if word in side), None)


def training_net(model: Any, train: Any) -> Any:
    """What a side trains through: ``model``, or under ``train.compile`` the model compiled
    as its ``train.compile_scope`` says."""
    from induce.train.graphs import compiled

    return compiled(model, model.compile_regions(train.compile_scope)) if train.compile else model


def induce_side(side: str, arch: str, size: str, args: argparse.Namespace) -> tuple[Any, Any]:
    """The side's model on ``args.device`` and its config, the matmul precision set."""
    import torch

    from induce.runs.device import set_matmul_precision

    device = torch.device(args.device)
    model, config = induce_model(arch, size, side_settings(side, args.device, args.set))
    set_matmul_precision(device, config.train.tf32)
    return model.to(device), config


def train_one(args: argparse.Namespace, side: str, arch: str, size: str) -> dict[str, Any]:
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    device = torch.device(args.device)
    sents = corpus(Path(args.shared), 20_000)
    work = batches(sents, args.warmup + args.steps)
    if side == "official":
        model = official_model(args.official, arch, sizes=sized(size)).to(device).train()
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
    tokens, began, losses = 0, 0.0, []
    for k, b in enumerate(work):
        if k == args.warmup:
            _sync(device)
            began, tokens = time.perf_counter(), 0
        losses.append(update(b))
        tokens += b.tokens
    return _trained(device, model, tokens, began, losses)


def compile_report() -> dict[str, Any]:
    """What ``torch.compile`` spent in this process (a ``-compile`` side): the frames it
    compiled, seconds per timed phase of at least half a second (Dynamo's tracing,
    AOTAutograd, inductor's code generation, the wait on Triton's or the C++ compiler, the
    kernels' autotuning), and its cache counters (hits of the on-disk caches that
    ``bench/gpu_env.sh`` carries between sittings)."""
    from torch._dynamo.utils import compilation_time_metrics, counters

    phases = {name: sum(times) for name, times in compilation_time_metrics.items()}
    caches = {
        f"{group}.{name}": count
        for group in ("inductor", "aot_autograd")
        for name, count in counters[group].items()
        if "cache" in name
    }
    return {
        "frames": len(compilation_time_metrics.get("_compile.compile_inner", [])),
        "seconds": {
            k: round(v, 2) for k, v in sorted(phases.items(), key=lambda kv: -kv[1]) if v >= 0.5
        },
        "caches": caches,
    }


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

    from induce.runs.batches import Specials
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

    graphed = GraphedLoss(net, model, cast, Specials(pad=PAD, unk=UNK, mask=MASK), device)
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
    began, tokens, losses = time.perf_counter(), 0, []
    for b in timed:
        losses.append(step(b))
        tokens += b.tokens
    result = _trained(device, model, tokens, began, losses)
    return result | {
        "graphs": len(graphed.graphs),
        "first_epoch_s": capture_s,
        "peak_gpu_gib": max(capture_peak, result["peak_gpu_gib"]),
        "steady_gpu_gib": result["peak_gpu_gib"],
        "reserved_gpu_gib": torch.cuda.memory_reserved(device) / 2**30,
    }


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


def _dms(head: Any) -> list[int]:
    """The official test decoder: one Chu-Liu/Edmonds per candidate root."""
    import numpy
    from ufal.chu_liu_edmonds import chu_liu_edmonds  # type: ignore[import-not-found]

    weights = numpy.pad(numpy.log(head + 1e-9), ((1, 0), (1, 0)), mode="constant")
    best, heads = -numpy.inf, None
    for i in range(1, weights.shape[0]):
        w = weights.copy()
        w[:, 0] = numpy.nan
        w[i, 0] = 0.0
        found, score = chu_liu_edmonds(w)
        if score > best:
            best, heads = score, found
    return list(heads or [])


def _split(distance: list[float], lo: int, hi: int) -> Any:
    """The official read-out's recursion: split at the largest distance."""
    if hi - lo <= 1:
        return lo
    k = max(range(lo, hi - 1), key=lambda i: distance[i])
    return (_split(distance, lo, k + 1), _split(distance, k + 1, hi))


def parse_one(args: argparse.Namespace, side: str, arch: str, size: str) -> dict[str, Any]:
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    device = torch.device(args.device)
    sents = corpus(Path(args.shared), args.parse_sentences, seed=2)
    warm = sents[:WARM_PARSE]  # parsed untimed first on every side: CUDA's lazy set-up
    if side == "official":
        model = official_model(args.official, arch, sizes=sized(size)).to(device).eval()
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
                        _dms(head.astype("float64"))
                        decoded += 1
                    except ImportError:
                        head.argmax(1)
                else:
                    head.argmax(1)
                    _split(p["distance"][0].tolist(), 0, len(s))
                    decoded += 1
        note = "dms" if arch == "udgn" and decoded else "argmax"
    else:
        from induce.runs.batches import Specials
        from induce.runs.device import inference_autocast
        from induce.runs.inference import sentence_scores

        model, config = induce_side(side, arch, size, args)
        decoder = config.protocol.test_decoder if arch == "udgn" else None
        bf16 = config.train.bf16 or config.train.cpu_bf16
        words = [[str(t) for t in s] for s in sents]
        began = 0.0
        for part in (warm, sents):
            _sync(device)
            began = time.perf_counter()
            for index, scores in sentence_scores(
                model,
                part,
                Specials(pad=PAD, unk=UNK, mask=MASK),
                config.data.eval_batch_tokens,
                device,
                lambda: inference_autocast(device, bf16),
            ):
                scores.read_out(words[index], decoder)
        note = decoder or "default"
    _sync(device)
    seconds = time.perf_counter() - began
    return {"sentences_per_s": len(sents) / seconds, **_peaks(device), "decoder": note}


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
            result["compile"] = compile_report()
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


def chosen_sides(args: argparse.Namespace) -> list[str]:
    """``--sides`` checked (the default: official and induce, and induce-bf16 on CUDA):
    known names, each once, and a checkout of the official code when its side is asked
    for.  The official side, or else the first one given, is the ratios' base."""
    default = "official,induce,induce-bf16" if args.device.startswith("cuda") else "official,induce"
    sides = (args.sides or default).split(",")
    unknown = [side for side in sides if side not in SIDES]
    if unknown:
        sys.exit(f"error: --sides: unknown side {unknown[0]!r}; from {', '.join(SIDES)}")
    if len(set(sides)) < len(sides):
        sys.exit("error: --sides: each side at most once")
    if "official" in sides:
        if not args.official:
            sys.exit("error: the official side needs --official (a checkout of yikangshen/UDGN)")
        if not (Path(args.official) / "models.py").exists():
            sys.exit(f"error: {args.official}: no models.py (a checkout of yikangshen/UDGN?)")
        sides.remove("official")
        sides.insert(0, "official")
    return sides


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
    return lines


def compiling(report: dict[str, Any]) -> str:
    """One line of :func:`compile_report`: the total, the longest phases, the caches."""
    seconds = report["seconds"]
    total = seconds.get("_compile.compile_inner", 0.0)
    longest = [(k, v) for k, v in seconds.items() if k != "_compile.compile_inner"][:6]
    caches = ", ".join(f"{k} {v}" for k, v in report["caches"].items()) or "no cache counts"
    return (
        f"{report['frames']} frames, {total:.1f} s in Dynamo's compile ("
        + ", ".join(f"{k} {v:.1f}" for k, v in longest)
        + f"); {caches}"
    )


if __name__ == "__main__":
    main()
