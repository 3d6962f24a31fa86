#!/usr/bin/env python3
"""The TN-PCFG repository's grammars against ``induce``'s on the same weights, and its
pure-PyTorch training step against ours (issue 31).

    python bench/lowrank_vs_official.py --official TNPCFG_CHECKOUT --data DATASET
        [--split valid] [--archs tnpcfg,simplepcfg,scpcfg] [--simple-nt 128]
        [--skip K] [--limit N] [--words 2-22] [--only 3,9] [--float64] [--device cpu|cuda]
        [--speed --lengths 10,20,30,40 --rounds 2 --steps 3 --threads 2] [--memory 40,80,120]

``TNPCFG_CHECKOUT`` is a checkout of github.com/sustcsonglin/TN-PCFG; nothing of it is
copied: this process imports its ``parser/model`` classes (``TNPCFG``, ``Simple_N_PCFG``,
``Simple_C_PCFG``) and its pure-PyTorch inside algorithm (``parser/pcfgs/tdpcfg.py``,
``TDPCFG``).  Its modules import Triton at load, which a CPU does not run: without CUDA the
import is given a stand-in for its kernels' module (none is then called).  ``DATASET`` is an
``induce preprocess`` folder; its vocabulary sizes the models and its ``--split`` gives the
sentences (e.g. WSJ section 22 as ``valid``; ``--skip``/``--limit`` a stretch of them,
``--words`` those of some lengths, ``--only`` positions among those of two or more words;
the report lists the positions whose trees differ).

Check (with ``--data``): the official model built at its configuration's sizes (TN-PCFG NT 250, T
500, rank 500; the Simple PCFGs at NT ``--simple-nt``, T twice that: their official inside
is Triton-only, and through ``TDPCFG`` with the nonterminals as ranks the paper's NT 4096
needs tens of GB), drawn as its code draws it; ``induce``'s model given its state dict by
name. Per sentence, batches of one length (up to 16): the official log-partition and MBR
tree from one ``TDPCFG.decode(mbr=True)`` (the Simple PCFGs' rules passed as a rank
decomposition whose ranks are the nonterminals, the compound one at ``z`` = its mean,
``forward(evaluating=True)``) against ``induce``'s ``log_likelihood`` and
``parse(decoder="mbr")``; in float32, or both sides in float64
(``--float64``: equal up to its rounding, and no float32 ties between trees); on
``--device`` (``cuda``: minutes for all of section 22 in float64, hours on a CPU). ``--speed``:
training steps (forward, backward, Adam at 2e-3, β (0.75, 0.999), clip 3) of 16 sentences
of each length, each of ``--archs`` at its official size (the Simple PCFGs at
``--simple-nt``), official against ``induce``, fresh processes alternating: tokens/s and
peak RSS.  The official step is ``TNPCFG.loss`` (through ``TDPCFG``); the Simple PCFGs'
``loss`` calls a Triton kernel, so on a CPU theirs is the same formula over ``TDPCFG`` on
their rules in rank form (``official_loss``): the repository's pure-PyTorch path as near as
it has one for them. With ``--device cuda`` every official step is its model's own ``loss``
(the Simple PCFGs' Triton kernels) and the peak is of GPU memory. ``--memory``: one
training step of each of ``induce``'s ``--archs`` at its paper preset's size (SN-PCFG NT
4096) on one sentence of each length, in a fresh process: seconds and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BATCH = 16


class _Absent(types.ModuleType):
    """A stand-in for a module the official code imports names from but never calls here:
    its Triton kernels (``parser/triton/fn.py``, without CUDA) and ``turtle`` (imported for
    nothing by ``simple_pcfg.py``); every name exists."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return None


def official_classes(path: str) -> dict[str, Any]:
    import torch

    sys.path.insert(0, path)
    import parser  # type: ignore[import-not-found]  # the checkout's package, then its parts

    absent = ["turtle"] + (
        [] if torch.cuda.is_available() else ["parser.triton", "parser.triton.fn"]
    )
    for name in absent:
        sys.modules.setdefault(name, _Absent(name))
    assert Path(parser.__file__).resolve().parent == (Path(path) / "parser").resolve(), path
    from parser.model.SC_PCFG import Simple_C_PCFG  # type: ignore[import-not-found]
    from parser.model.SN_PCFG import Simple_N_PCFG  # type: ignore[import-not-found]
    from parser.model.TN_PCFG import TNPCFG  # type: ignore[import-not-found]
    from parser.pcfgs.tdpcfg import TDPCFG  # type: ignore[import-not-found]

    return {"tnpcfg": TNPCFG, "simplepcfg": Simple_N_PCFG, "scpcfg": Simple_C_PCFG, "td": TDPCFG}


def sizes(arch: str, simple_nt: int) -> dict[str, int]:
    """The official configuration's sizes (``config/tnpcfg_r500_nt250_t500_curriculum0.yaml``,
    ``config/simplepcfg/*.yaml`` at ``simple_nt``)."""
    if arch == "tnpcfg":
        return {"nt": 250, "t": 500, "rank": 500, "s_dim": 256}
    found = {"nt": simple_nt, "t": 2 * simple_nt, "s_dim": 512}
    return found | ({"z_dim": 64, "w_dim": 512, "h_dim": 512} if arch == "scpcfg" else {})


def both_models(
    classes: dict[str, Any], arch: str, size: dict[str, int], vocab: int, device: str = "cpu"
) -> tuple:
    """The official model as its code draws it, and ``induce``'s with its state dict, both
    on ``device``."""
    from induce.models import build_model

    args = types.SimpleNamespace(
        NT=size["nt"], T=size["t"], s_dim=size["s_dim"], r_dim=size.get("rank", -1),
        word_emb_size=size["s_dim"], w_dim=512, h_dim=512, z_dim=size.get("z_dim", 0),
    )  # fmt: skip
    dataset = types.SimpleNamespace(device=device, word_vocab=range(vocab))
    official = classes[arch](args, dataset).eval()
    ours = build_model(arch, size, vocab, 0).eval()
    ours.load_state_dict(official.state_dict())  # the same names, all of them
    return official.to(device), ours.to(device)


def official_rules(
    official: Any, arch: str, x: Any, lens: Any, evaluating: bool = True
) -> dict[str, Any]:
    """The official model's rules in ``TDPCFG``'s rank form: the Simple PCFGs' children
    distributions given each parent (probabilities, children x parents) become the factors
    ``left``/``right [B, S, r]`` with the nonterminals as ranks and ``head`` the identity.
    ``evaluating``: the compound model's ``z`` at its mean (else one sample, as in
    training); its KL term is under ``kl``."""
    import torch

    rules = official({"word": x, "seq_len": lens}, evaluating=evaluating)
    if arch == "tnpcfg":
        return rules  # type: ignore[no-any-return]
    b, nt = x.shape[0], rules["left_m"].shape[-1]
    eye = torch.full((nt, nt), -1e9, dtype=rules["unary"].dtype).fill_diagonal_(0.0)

    def factor(side: str) -> Any:  # SN: [S, N] for all; SC: [B, S, N], each sentence's
        both = torch.cat([rules[f"{side}_m"], rules[f"{side}_p"]], -2)
        return both.expand(b, -1, -1).log()

    return {
        "unary": rules["unary"],
        "root": rules["root"],
        "head": eye.expand(b, nt, nt),
        "left": factor("left"),
        "right": factor("right"),
        "kl": rules["kl"],
    }


def check(args: argparse.Namespace, arch: str, classes: dict[str, Any], data: Any) -> str:
    import torch
    from pcfg_vs_official import chosen_positions

    from induce.runs.grammar import equal_length_batches

    torch.manual_seed(0)
    size = sizes(arch, args.simple_nt)
    official, ours = both_models(classes, arch, size, len(data.vocab), args.device)
    if args.float64:  # equal up to float64 rounding: the same function, not only close
        official, ours = official.double(), ours.double()
    td = classes["td"]()
    every = [s for s in data.sentences if len(s) >= 2]  # positions count these sentences
    wanted = chosen_positions(args, every)
    sents = [every[k] for k in wanted]
    worst, relative, same, ties, seconds = 0.0, 0.0, 0, 0.0, [0.0, 0.0]
    differ: list[int] = []
    for chosen in equal_length_batches([len(s) for s in sents], BATCH, 0):
        x = torch.tensor([sents[i] for i in chosen], device=args.device)
        lens = torch.full((x.shape[0],), x.shape[1], device=args.device)
        began = time.perf_counter()
        rules = official_rules(official, arch, x, lens)
        found = td.decode(rules, lens, mbr=True)  # one inside: its partition and MBR trees
        theirs, trees = found["partition"].detach().cpu(), found["prediction"]
        seconds[0] += time.perf_counter() - began
        began = time.perf_counter()
        with torch.no_grad():  # timed: one inside and its derivative, as the official decode
            rows = ours.structure(x, torch.ones_like(x, dtype=torch.bool)).sentences(lens.tolist())
        seconds[1] += time.perf_counter() - began
        with torch.no_grad():  # untimed: a second inside, for the log-partition
            mine = ours.log_likelihood(x, lens).cpu()
        gap = (theirs - mine).abs()
        worst = max(worst, float(gap.max()))
        relative = max(relative, float((gap / theirs.abs()).max()))
        for index, tree, row in zip(chosen, trees, rows, strict=True):
            wide = {(i, j) for i, j in tree if j - i >= 2}
            mbr = {(i, j) for i, j, _ in row.spans("mbr")}
            same += wide == mbr
            differ += [] if wide == mbr else [wanted[index]]
            if wide != mbr:  # how far apart the two trees' summed marginals are
                total = [sum(float(row.marginals[i, j]) for i, j in t) for t in (wide, mbr)]
                ties = max(ties, abs(total[0] - total[1]))
    return (
        f"{arch:<11} {len(sents):>6} sentences{' (float64)' if args.float64 else ''}: "
        "log-partition largest |difference| "
        f"{worst:.2e} (relative {relative:.1e}); MBR trees identical {same}/{len(sents)}"
        + (f" (the others' summed marginals within {ties:.1e} of ours)" if ties else "")
        + (f", differing at positions {','.join(map(str, sorted(differ)))}" if differ else "")
        + "; "
        f"official {seconds[0]:.1f} s, "
        f"induce {seconds[1]:.1f} s"
    )


def official_loss(classes: dict[str, Any], model: Any, arch: str, x: Any, lens: Any) -> Any:
    """The official training loss of a batch: the model's ``loss`` itself for the TN-PCFG,
    and on CUDA for every model (the Simple PCFGs' Triton inside); on a CPU the Simple
    PCFGs' own loss formula (``SN_PCFG.loss``, ``SC_PCFG.loss``: mean of minus the
    log-partition, plus the KL) over the repository's pure-PyTorch inside (``TDPCFG``) on
    their rules in rank form (``official_rules``, one sample of ``z``)."""
    if arch == "tnpcfg" or x.is_cuda:
        return model.loss({"word": x, "seq_len": lens})
    rules = official_rules(model, arch, x, lens, evaluating=False)
    return (-classes["td"]()._inside(rules, lens)["partition"] + rules["kl"]).mean()


def speed_one(args: argparse.Namespace, side: str, n: int) -> dict[str, Any]:
    """Training steps of 16 random sentences of ``n`` words of ``--archs`` (one) at its
    official size (the Simple PCFGs at ``--simple-nt``)."""
    import torch

    from induce.models.grammar import WordBatch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    classes, arch, cuda = official_classes(args.official), args.archs, args.device == "cuda"
    size = sizes(arch, args.simple_nt)
    official, ours = both_models(classes, arch, size, 10_003, args.device)
    model = official.train() if side == "official" else ours.train()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3, betas=(0.75, 0.999))
    lens = torch.full((BATCH,), n, device=args.device)
    tokens, began = 0, 0.0
    for step in range(args.warmup + args.steps):
        if step == args.warmup:
            if cuda:  # the warm-up's kernels finished before the clock starts
                torch.cuda.synchronize()
            began, tokens = time.perf_counter(), 0
        x = torch.randint(2, 10_003, (BATCH, n), device=args.device)
        if side == "official":
            loss = official_loss(classes, model, arch, x, lens)
        else:
            loss = model.loss(WordBatch(x, lens)).value
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 3.0)
        opt.step()
        tokens += BATCH * n
    if cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - began
    if cuda:  # the peak of GPU memory, not of the host's
        return {
            "tokens_per_s": tokens / seconds,
            "peak_gib": torch.cuda.max_memory_allocated() / 2**30,
        }
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return {"tokens_per_s": tokens / seconds, "peak_gib": rss}


def memory_one(arch: str, n: int, threads: int) -> dict[str, Any]:
    """One training step of ``induce``'s ``arch`` at the paper's size on one sentence of
    ``n`` words: seconds and peak RSS."""
    import torch

    from induce.models import build_model
    from induce.models.grammar import WordBatch
    from induce.runs.config import load_config

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = build_model(arch, load_config(arch).model, 10_003, 0).train()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3, betas=(0.75, 0.999))
    began = time.perf_counter()
    loss = model.loss(WordBatch(torch.randint(2, 10_003, (1, n)), torch.tensor([n]))).value
    opt.zero_grad()
    loss.backward()
    opt.step()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return {"seconds": time.perf_counter() - began, "peak_rss_gib": rss}


def child(command: list[str]) -> dict[str, Any] | str:
    """What a measuring process printed (JSON), or why it failed (its exit code and last
    line of stderr): one failure (a kernel, memory at the longest length) costs its own
    figure, not those measured before it."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"failed (exit {done.returncode}): {last[:160]}"
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def memory(args: argparse.Namespace) -> Iterator[str]:
    """One line per architecture, each printed as it is measured."""
    for arch in args.archs.split(","):
        found = []
        for n in map(int, args.memory.split(",")):
            command = [sys.executable, __file__, "--official", args.official, "--memory-one",
                       arch, str(n), "--threads", str(args.threads)]  # fmt: skip
            r = child(command)
            found.append(
                f"{n} words {r}"
                if isinstance(r, str)
                else f"{n} words {r['seconds']:.1f} s ({r['peak_rss_gib']:.2f} GiB)"
            )
        yield f"{arch:<11} one training step, paper size: " + ", ".join(found)


def speed(args: argparse.Namespace) -> Iterator[str]:
    """The table's lines, each given as soon as it is measured (a call cut off by its time
    limit keeps the lines before)."""
    peak = "GPU GiB" if args.device == "cuda" else "RSS GiB"
    head = f"{'words':>5} {f'official tok/s ({peak})':>26} {f'induce tok/s ({peak})':>24} ratio"
    for arch in args.archs.split(","):
        yield f"{arch} (training steps, official size{speed_size(arch, args)})"
        yield head
        for n in map(int, args.lengths.split(",")):
            yield speed_line(args, arch, n)


def speed_size(arch: str, args: argparse.Namespace) -> str:
    return "" if arch == "tnpcfg" else f"; NT {args.simple_nt}, T {2 * args.simple_nt}"


def speed_line(args: argparse.Namespace, arch: str, n: int) -> str:
    """Both sides' training speed at ``n`` words: fresh processes alternating, medians."""
    seen: dict[str, list[dict[str, Any]]] = {"official": [], "induce": []}
    for _ in range(args.rounds):
        for side in seen:
            command = [sys.executable, __file__, "--official", args.official, "--one", side,
                       str(n), "--archs", arch, "--simple-nt", str(args.simple_nt),
                       "--device", args.device,
                       "--steps", str(args.steps), "--warmup", str(args.warmup),
                       "--threads", str(args.threads)]  # fmt: skip
            r = child(command)
            if isinstance(r, str):
                return f"{n:>5} {side} {r}"
            seen[side].append(r)
    rate = {s: statistics.median(r["tokens_per_s"] for r in rs) for s, rs in seen.items()}
    peak = {s: max(r["peak_gib"] for r in rs) for s, rs in seen.items()}
    ratio = rate["induce"] / rate["official"]
    return (
        f"{n:>5} {rate['official']:>17.1f} ({peak['official']:.2f}) "
        f"{rate['induce']:>15.1f} ({peak['induce']:.2f}) {ratio:.1f}x"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--official", required=True, help="a checkout of sustcsonglin/TN-PCFG")
    ap.add_argument("--data", help="an induce dataset (its vocabulary and --split)")
    ap.add_argument("--split", default="valid")
    ap.add_argument("--archs", default="tnpcfg,simplepcfg,scpcfg")
    ap.add_argument("--simple-nt", type=int, default=128)
    ap.add_argument("--float64", action="store_true", help="check both sides in float64")
    ap.add_argument("--skip", type=int, default=0, help="leave out the first K sentences")
    ap.add_argument("--limit", type=int, default=0, help="at most this many sentences")
    ap.add_argument("--only", help="only the sentences at these positions (e.g. 3,9)")
    ap.add_argument("--words", help="only the sentences of these lengths, e.g. 2-22 or 35-")
    ap.add_argument("--device", default="cpu", help="the check's and --speed's device: cpu or cuda")
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--lengths", default="10,20,30,40")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--memory", help="word counts: induce's step at the paper size, e.g. 40,80")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--memory-one", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(speed_one(args, args.one[0], int(args.one[1]))))
        return
    if args.memory_one:
        arch, n = args.memory_one
        print(json.dumps(memory_one(arch, int(n), args.threads)))
        return
    if not (args.data or args.speed or args.memory):
        print(
            "lowrank_vs_official: nothing to do: give --data, --speed or --memory", file=sys.stderr
        )
        sys.exit(2)
    import torch

    torch.set_num_threads(args.threads)
    if args.data:
        from induce.data.dataset import load_dataset

        dataset = load_dataset(args.data)
        vocab = dataset.vocab
        sentences = [vocab.ids(s) for s in dataset.sentences(args.split)]
        data = types.SimpleNamespace(vocab=vocab, sentences=sentences)
        classes = official_classes(args.official)
        for arch in args.archs.split(","):
            print(check(args, arch, classes, data), flush=True)
    for wanted, lines in ((args.speed, speed), (args.memory, memory)):
        if wanted:
            for line in lines(args):
                print(line, flush=True)


if __name__ == "__main__":
    main()
