#!/usr/bin/env python3
"""Where a parse's time goes on the host: a run's parser forward passes (with the copy of
each batch's scores to the host) against its read-outs, sentence by sentence.

    python bench/readout.py --model RUN --text WSJ22.txt [--decoder D] [--rounds 5]
        [--threads 1] [--device cpu]

``TEXT``: one pre-tokenised sentence a line, read as the model's tokens (a dataset's
``valid.txt``).  Each round times the batches of ``induce.parse.Parser``'s reader, then the
read-out that makes the tree (``Scores.read_out``, as ``induce parse -f ptb`` does) and the
heads alone (``Scores.read_heads``, as ``-f conllu`` does), in turn; the medians over the
rounds are printed in ms a sentence and sentences/s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="a run directory")
    ap.add_argument("--text", required=True, help="one pre-tokenised sentence a line")
    ap.add_argument("--decoder", default=None, help="default: the run's test decoder")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()

    import torch

    from induce.parse import Parser, Sentence

    torch.set_num_threads(args.threads)
    parser = Parser(args.model, args.device, decoder=args.decoder)
    lines = Path(args.text).read_text(encoding="utf-8").splitlines()
    items = [Sentence(t.split(), k, t, normalized=True) for k, t in enumerate(lines, 1) if t]
    words = [parser.reader.words(s) for s in items]
    budget = parser.run.config.data.eval_batch_tokens
    parser.parse(items[:64])  # lazy set-up (oneDNN, CUDA) outside the timing
    times: dict[str, list[float]] = {"forward": [], "read_out": [], "read_heads": []}
    for _ in range(args.rounds):
        began = time.perf_counter()
        rows = list(parser.reader.scores(items, words, budget))
        times["forward"].append(time.perf_counter() - began)
        for how in ("read_out", "read_heads"):
            rows = list(parser.reader.scores(items, words, budget))  # no read-out cached
            began = time.perf_counter()
            for index, scores in rows:
                getattr(scores, how)(words[index], parser.decoder)
            times[how].append(time.perf_counter() - began)
    print(
        f"{len(items)} sentences, decoder {parser.decoder}, {args.threads} threads, "
        f"device {args.device}, medians of {args.rounds} rounds"
    )
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(
            f"{name:<11} {1e3 * median / len(items):8.3f} ms a sentence "
            f"{len(items) / median:>10,.0f} sentences/s"
        )


if __name__ == "__main__":
    main()
