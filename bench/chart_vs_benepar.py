#!/usr/bin/env python3
"""The chart parser against benepar's own training and parsing code, side by side on this
machine: dev F1 after the same number of updates, training updates/s and parsing speed.

    python bench/chart_vs_benepar.py [--benepar PATH] [--shared ../shared] [--updates 1000]
        [--check-every 250] [--seeds 1,2,3] [--sides benepar,induce[,induce-bf16]]
        [--device cpu|cuda] [--threads 2] [--dev-sentences 0] [--set KEY=VALUE ...]
        [--json FILE]

``PATH`` is a checkout of github.com/nikitakit/self-attentive-parser (v0.2.0: ``src/main.py``,
``src/benepar``); nothing of it is copied or vendored: the measuring process imports it from
where the user put it, in a Python that has its dependencies (nltk, torch-struct and
transformers; pytokenizations is optional, see the patches).  Both sides train on the same
trees (the WSJ sample, ``ptb-sample/trees``, 1,921 sentences) and validate on WSJ section 22
(``wsj/dev22.trees``), each in a fresh process, alternating (benepar, induce, induce,
benepar, ... by seed).  Every dev F1 is EVALB with COLLINS.prm computed by ``induce``'s
EVALB (exact to the C program) on both sides' trees, so that the two sides differ only in
training.

Equal settings (``EQUAL``: benepar's hyper-parameter beside the ``induce`` setting): content
128 + position 128 (factored), 4 layers, 8 heads, d_kv 32, d_ff 1024, CharLSTM with 32-dim
characters, label MLP 256, no tag head, the paper's dropouts, Adam (0.9, 0.98) at 1e-3 after
160 warm-up updates, no clipping, 32-sentence batches, 2,000-token sub-batches.  ``induce``
starts from the preset ``chart-ptb-paper`` (benepar's random batches, feature dropout and
initialisation); ``--set`` adds settings to it (e.g. ``--set data.shuffle=batches``).  The
side ``induce-bf16`` is ``induce`` under bfloat16 autocast, training and parsing
(``train.bf16`` on CUDA, ``train.cpu_bf16`` on a CPU, where it needs AVX512-BF16 or AMX);
benepar trains and parses in float32, as it ships.

``--device cuda``: both sides on the GPU (benepar's own ``parser.cuda()``, as its
``main.py`` does when CUDA is available), PyTorch's default matmul precision on both; the
figures add peak GPU memory (``torch.cuda.max_memory_allocated``), and the clocks read after
the GPU's queue has drained.

benepar's side is its ``run_train`` loop (``src/main.py``) with its own data loader, model,
loss, sub-batching, scheduler and parser, rewritten here only where a benchmark must differ:
it checks dev every ``--check-every`` updates rather than four times an epoch, scores with
``induce``'s EVALB rather than the C binary, and saves no model.  Patches applied at run time
(printed with the results):

1. ``tokenizations`` (pytokenizations, a Rust extension that ``treebanks.py`` imports to read
   CoNLL-U text, which PTB trees never use) is an empty module when it is not installed.
2. nltk 3.9 and later read a corpus file only under the reader's root (``load_trees``
   gives ``""``, the working directory) and under ``nltk.data.path``: the tree files are
   read from their own folder, which is added to ``nltk.data.path``.
3. ``ReduceLROnPlateau`` takes no ``verbose`` argument on current torch: benepar's
   ``WarmupThenReduceLROnPlateau`` is built without it.

Figures: dev F1 at every check (mean and standard deviation over the seeds), training
updates/s and sentences/s (dev checks excluded), parsing of the dev sentences after training
(sentences/s, each side's own parse function at its default batching), peak RSS (and peak
GPU memory on CUDA).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# benepar hyper-parameter -> (its value, the induce setting of the same value)
EQUAL: dict[str, tuple[Any, str]] = {
    "d_model": (256, "model.d_model=256"),
    "num_layers": (4, "model.n_layers=4"),
    "num_heads": (8, "model.n_heads=8"),
    "d_kv": (32, "model.d_kv=32"),
    "d_ff": (1024, "model.d_ff=1024"),
    "use_chars_lstm": (True, "model.chars=lstm"),
    "d_char_emb": (32, "model.d_char=32"),
    "d_label_hidden": (256, "model.d_label_hidden=256"),
    "predict_tags": (False, "model.tag_head=false"),
    "use_encoder": (True, "model.factored=true"),
    "attention_dropout": (0.2, "model.attn_dropout=0.2"),
    "relu_dropout": (0.1, "model.relu_dropout=0.1"),
    "residual_dropout": (0.2, "model.residual_dropout=0.2"),
    "char_lstm_input_dropout": (0.2, "model.char_dropout=0.2"),
    "morpho_emb_dropout": (0.2, "model.char_dropout=0.2"),  # one rate for both, as benepar
    "learning_rate": (1e-3, "optim.lr=1e-3"),
    "learning_rate_warmup_steps": (160, "train.warmup=160"),
    "clip_grad_norm": (0.0, "optim.clip=0"),
    "batch_size": (32, "data.batch_sentences=32"),
    "max_len_train": (0, "data.max_length=0"),
}
INDUCE_EXTRA = ["model.d_position=128", "data.subbatch_tokens=2000"]
SUBBATCH_TOKENS = 2000  # benepar's --subbatch-max-tokens default, training and parsing
PATCHES = [
    "tokenizations: an empty module when pytokenizations is not installed",
    "trees read from their own folder, added to nltk.data.path (nltk >= 3.9)",
    "WarmupThenReduceLROnPlateau: built without ReduceLROnPlateau's removed verbose argument",
]


def prepare(shared: Path, folder: Path, dev_sentences: int) -> tuple[Path, Path, Path]:
    """The same trees for both sides: an ``induce`` dataset (the sample's trees for training,
    section 22 for validation) and benepar's one-tree-per-line files of the same trees,
    cleaned as the chart parser cleans them (empty elements and function tags removed) under
    a ``TOP`` root."""
    from typer.testing import CliRunner

    from induce.cli.app import app
    from induce.data.ptb import read_trees
    from induce.structure.chart import clean_tree

    treebank = folder / "treebank"
    treebank.mkdir(parents=True)
    for tree_file in sorted((shared / "data" / "ptb-sample" / "trees").glob("wsj_00*.mrg")):
        (treebank / tree_file.name).symlink_to(tree_file)
    dev = (shared / "data" / "wsj" / "dev22.trees").read_text().splitlines()
    (treebank / "22.mrg").write_text("\n".join(dev[: dev_sentences or None]) + "\n")
    data = folder / "data"
    args = ["preprocess", "ptb", "-t", str(treebank), "-o", str(data)]
    done = CliRunner().invoke(app, [*args, "--train", "00", "--valid", "22", "--test", "22"])
    if done.exit_code:
        sys.exit(f"error: preprocess: {done.output.strip()}")
    files = []
    for split in ("train", "valid"):
        lines = []
        for tree in read_trees(data / f"{split}.trees").trees:
            clean = clean_tree(tree) if tree is not None else None
            if clean is not None:
                lines.append(f"(TOP {clean.to_string()})")
        path = folder / f"benepar-{split}.trees"
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    return data, files[0], files[1]


def _patch_imports() -> None:
    import types

    try:
        import tokenizations  # noqa: F401
    except ImportError:
        sys.modules["tokenizations"] = types.ModuleType("tokenizations")


def _evalb(gold_file: Path, predicted: list[str]) -> float:
    from induce.data.ptb import parse_trees, read_trees
    from induce.metrics.evalb import score_corpus
    from induce.metrics.evalb_params import load_params

    gold = read_trees(gold_file).trees
    test = parse_trees("\n".join(predicted) + "\n", "<benepar>").trees
    return float(score_corpus(gold, test, load_params("collins")).all.f1)


def _drained(device: str) -> float:
    """``time.perf_counter()`` once the GPU has finished what it was given (on CUDA)."""
    if device == "cuda":
        import torch

        torch.cuda.synchronize()
    return time.perf_counter()


def benepar_side(args: argparse.Namespace, seed: int, train: Path, dev: Path) -> dict[str, Any]:
    """benepar's ``run_train`` (src/main.py) for ``args.updates`` updates, dev checks every
    ``args.check_every``."""
    import functools

    sys.path.insert(0, str(Path(args.benepar).resolve() / "src"))
    _patch_imports()
    import learning_rates  # benepar's src/
    import main as benepar_main
    import numpy as np
    import torch
    import treebanks
    from benepar import char_lstm, decode_chart, parse_chart

    torch.set_num_threads(args.threads)
    np.random.seed(seed)
    torch.manual_seed(np.random.randint(2147483648))
    hparams = benepar_main.make_hparams()
    for name, (value, _) in EQUAL.items():
        hparams[name] = value
    # nltk >= 3.9 reads corpus files only under the reader's root (benepar's is "", the
    # working directory) and under nltk.data.path: read them from their own folder, allowed
    import nltk

    os.chdir(train.parent)
    nltk.data.path.append(str(train.parent.resolve()))
    train_tb = treebanks.load_trees(train.name, None, "default")
    dev_tb = treebanks.load_trees(dev.name, None, "default")
    label_vocab = decode_chart.ChartDecoder.build_vocab(train_tb.trees)
    char_vocab = char_lstm.RetokenizerForCharLSTM.build_vocab(train_tb.sents)
    tags = sorted({tag for tree in train_tb.trees for _, tag in tree.pos()})
    tag_vocab = {label: i for i, label in enumerate(["UNK", *tags])}
    hparams.force_root_constituent = decode_chart.ChartDecoder.infer_force_root_constituent(
        train_tb.trees
    )
    parser = parse_chart.ChartParser(tag_vocab, label_vocab, char_vocab, hparams)
    if args.device == "cuda":
        parser.cuda()  # as main.py does when CUDA is available
    params = [p for p in parser.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=hparams.learning_rate, betas=(0.9, 0.98), eps=1e-9)
    scheduler = learning_rates.WarmupThenReduceLROnPlateau(
        optimizer,
        hparams.learning_rate_warmup_steps,
        mode="max",
        factor=hparams.step_decay_factor,
        patience=hparams.step_decay_patience * hparams.checks_per_epoch,
    )
    loader = torch.utils.data.DataLoader(
        train_tb,
        batch_size=hparams.batch_size,
        shuffle=True,
        collate_fn=functools.partial(
            parser.encode_and_collate_subbatches, subbatch_max_tokens=SUBBATCH_TOKENS
        ),
    )
    checks, best, updates, sentences, training = [], -1.0, 0, 0, 0.0
    while updates < args.updates:
        began = time.perf_counter()
        for batch in loader:
            optimizer.zero_grad()
            parser.train()
            for size, subbatch in batch:
                loss = parser.compute_loss(subbatch)
                if float(loss.data.cpu().numpy()) > 0:
                    loss.backward()
                del loss
                sentences += size
            torch.nn.utils.clip_grad_norm_(params, np.inf)  # clip_grad_norm 0: none
            optimizer.step()
            updates += 1
            if updates % args.check_every == 0 or updates == args.updates:
                training += _drained(args.device) - began
                predicted = parser.parse(
                    dev_tb.without_gold_annotations(), subbatch_max_tokens=SUBBATCH_TOKENS
                )
                f1 = _evalb(dev, [t.pformat(margin=1e100) for t in predicted])
                best = max(best, f1)
                checks.append({"update": updates, "f1": round(f1, 2), "train_s": training})
                scheduler.step(metrics=best)
                began = time.perf_counter()
            else:
                scheduler.step()
            if updates == args.updates:
                break
        training += _drained(args.device) - began
    began = _drained(args.device)
    parser.parse(dev_tb.without_gold_annotations(), subbatch_max_tokens=SUBBATCH_TOKENS)
    parse_s = _drained(args.device) - began
    return _figures(checks, updates, sentences, len(dev_tb), parse_s, args.device)


def induce_side(
    args: argparse.Namespace, side: str, seed: int, data: Path, dev: Path
) -> dict[str, Any]:
    """``induce train --arch chart`` (the preset ``chart-ptb-paper`` with ``EQUAL``'s
    settings) for ``args.updates`` updates, dev F1 every ``args.check_every``; ``side``
    ``induce-bf16``: training, validation and the final parse under bfloat16 autocast."""
    import torch

    from induce.data.ptb import read_trees
    from induce.runs.chart import Encoder, parse_words
    from induce.runs.directory import open_run
    from induce.structure.chart import clean_tree
    from induce.train import chart as chart_module
    from induce.train.engine import TrainOptions, train

    torch.set_num_threads(args.threads)
    settings = [setting for _, setting in EQUAL.values()] + INDUCE_EXTRA + args.set
    settings += [
        f"train.seed={seed}",
        f"train.max_steps={args.updates}",
        f"train.eval_every={args.check_every}",
        "train.evals_per_epoch=0",
        "train.checkpoint_every=0",
        f"train.threads={args.threads}",
    ]
    bf16 = side == "induce-bf16"
    if bf16:
        settings.append("train.bf16=true" if args.device == "cuda" else "train.cpu_bf16=true")
    checks: list[dict[str, Any]] = []
    evaluating, sentences = [0.0], [0]
    step = chart_module.ChartTrainer.train_step

    def counted(self: Any, batch: tuple[list[int], Any]) -> Any:  # the sentences trained on
        sentences[0] += len(batch[0])
        return step(self, batch)

    chart_module.ChartTrainer.train_step = counted  # type: ignore[method-assign]

    def on_event(kind: str, record: dict[str, Any]) -> None:
        if kind == "start":  # the clock starts at the first update, as benepar's
            began[0] = time.perf_counter()
        if kind == "eval":  # after validation, whose parses drained the GPU's queue
            evaluating[0] += record["eval_seconds"]
            training = time.perf_counter() - began[0] - evaluating[0]
            checks.append({"update": record["step"], "f1": record["f1"], "train_s": training})

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "run"
        began = [time.perf_counter()]
        options = TrainOptions(str(out), "chart", str(data), settings, device=args.device)
        if train(options, on_event) != "done":
            sys.exit("error: the induce run stopped early")
        run = open_run(out)
        model = run.load_model("last", args.device)
        encoder = Encoder(model, run.vocab)
        examples = [clean_tree(t) for t in read_trees(dev).trees if t is not None]
        words = [t.words() for t in examples if t is not None]
        parsing = _drained(args.device)
        parse_words(model, encoder, words, None, 8192, bf16)  # `induce parse`'s --batch-tokens
        parse_s = _drained(args.device) - parsing
    return _figures(checks, args.updates, sentences[0], len(words), parse_s, args.device)


def _figures(
    checks: list[dict[str, Any]],
    updates: int,
    sentences: int,
    dev: int,
    parse_s: float,
    device: str,
) -> dict[str, Any]:
    seconds = checks[-1]["train_s"]
    figures = {
        "checks": [{k: c[k] for k in ("update", "f1")} for c in checks],
        "updates_per_s": updates / seconds,
        "train_sentences_per_s": sentences / seconds,
        "parse_sentences_per_s": dev / parse_s,
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }
    if device == "cuda":
        import torch

        figures["peak_gpu_gib"] = torch.cuda.max_memory_allocated() / 2**30
    return figures


def run_child(
    args: argparse.Namespace, side: str, seed: int, files: list[Path]
) -> dict[str, Any] | str:
    command = [sys.executable, __file__, "--one", side, str(seed), *map(str, files)]
    command += ["--benepar", args.benepar or "", "--updates", str(args.updates)]
    command += ["--check-every", str(args.check_every), "--threads", str(args.threads)]
    command += ["--device", args.device]
    for item in args.set:
        command += ["--set", item]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        return "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _mean_std(values: list[float]) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.mean(values):.2f} ({statistics.stdev(values):.2f})"


def summary(seen: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Dev F1 at each check, mean (std) over seeds; speeds as medians."""
    updates = sorted({c["update"] for runs in seen.values() for r in runs for c in r["checks"]})
    lines = [f"{'side':<11} " + " ".join(f"{u:>14}" for u in updates)]
    for side, runs in seen.items():
        cells = []
        for u in updates:
            f1 = [c["f1"] for r in runs for c in r["checks"] if c["update"] == u]
            cells.append(f"{_mean_std(f1):>14}")
        lines.append(f"{side:<11} " + " ".join(cells))
    lines.append("")
    gpu = any("peak_gpu_gib" in r for runs in seen.values() for r in runs)
    head = f"{'side':<11} {'updates/s':>10} {'train sent/s':>13} {'parse sent/s':>13}"
    lines.append(head + f" {'RSS GiB':>8}" + (f" {'GPU GiB':>8}" if gpu else ""))
    for side, runs in seen.items():
        if not runs:
            continue

        def med(key: str, runs: list[dict[str, Any]] = runs) -> float:
            return statistics.median(r[key] for r in runs)

        line = (
            f"{side:<11} {med('updates_per_s'):>10.2f} {med('train_sentences_per_s'):>13.1f} "
            f"{med('parse_sentences_per_s'):>13.1f} {med('peak_rss_gib'):>8.2f}"
        )
        lines.append(line + (f" {med('peak_gpu_gib'):>8.2f}" if gpu else ""))
    return lines


def check(args: argparse.Namespace, sides: list[str]) -> None:
    """Refuse in one line what cannot be run as asked."""
    if not set(sides) <= {"benepar", "induce", "induce-bf16"}:
        sys.exit("error: --sides: benepar, induce and/or induce-bf16")
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            sys.exit("error: --device cuda: CUDA is not available on this machine")
    elif "induce-bf16" in sides:
        from induce.runs.device import cpu_has_fast_bf16

        if not cpu_has_fast_bf16():  # train.cpu_bf16 would be ignored: fp32 named bf16
            sys.exit("error: --sides induce-bf16: this CPU has no AVX512-BF16 or AMX")
    if "benepar" in sides and not (Path(args.benepar or "") / "src" / "main.py").exists():
        sys.exit(f"error: --benepar {args.benepar}: no src/main.py (self-attentive-parser?)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--benepar", help="a checkout of nikitakit/self-attentive-parser (for --sides benepar)"
    )
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--updates", type=int, default=1000)
    ap.add_argument("--check-every", type=int, default=250)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--sides", default="benepar,induce")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dev-sentences", type=int, default=0, help="the first N of section 22")
    ap.add_argument("--set", action="append", default=[], help="induce setting KEY=VALUE")
    ap.add_argument("--json", help="write every run's figures to this file")
    ap.add_argument("--one", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        side, seed, data, train, dev = args.one
        if side == "benepar":
            result = benepar_side(args, int(seed), Path(train), Path(dev))
        else:
            result = induce_side(args, side, int(seed), Path(data), Path(dev))
        print(json.dumps(result))
        return
    sides = args.sides.split(",")
    check(args, sides)
    seeds = [int(s) for s in args.seeds.split(",")]
    print(
        f"{args.updates} updates, dev F1 (EVALB COLLINS) every {args.check_every}; seeds "
        f"{seeds}; {args.device}, {args.threads} threads; induce settings: the equal ones "
        f"{' '.join(args.set)}\nbenepar patches: " + "; ".join(PATCHES)
    )
    seen: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    records = []
    with tempfile.TemporaryDirectory() as folder:
        files = list(prepare(Path(args.shared).resolve(), Path(folder), args.dev_sentences))
        for k, seed in enumerate(seeds):
            for side in sides if k % 2 == 0 else sides[::-1]:  # alternate who goes first
                got = run_child(args, side, seed, files)
                if isinstance(got, str):
                    print(f"{side} seed {seed}: {got}", flush=True)
                    continue
                print(f"{side} seed {seed}: {json.dumps(got)}", flush=True)
                seen[side].append(got)
                records.append({"side": side, "seed": seed, **got})
                if args.json:
                    Path(args.json).write_text(json.dumps(records, indent=1) + "\n")
    print()
    for line in summary(seen):
        print(line)


if __name__ == "__main__":
    main()
