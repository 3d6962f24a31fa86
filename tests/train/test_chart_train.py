"""``induce train --arch chart``: dev F1 by EVALB equal to scoring the parsed file, learning
the training trees, stop and resume, parse formats, the Python API, errors."""

from __future__ import annotations

import json
import random

import pytest
import torch
from typer.testing import CliRunner

import induce
from induce.cli.app import app
from induce.data.ptb import read_trees
from induce.runs.directory import open_run
from induce.train.chart import ChartTrainer
from induce.train.engine import TrainOptions, train
from tests.train.helpers import CHART_TINY, make_dataset, weights_file

TINY = [*CHART_TINY, "train.warmup=3"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("chart"))


@pytest.fixture(scope="module")
def run(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("chart-run") / "run"
    steps = TINY + ["train.max_steps=12", "train.eval_every=6", "optim.lr=3e-3"]
    assert train(TrainOptions(str(out), "chart", str(data), steps, device="cpu")) == "done"
    return out


def _cli(*args):
    return CliRunner().invoke(app, [*map(str, args)])


def test_dev_f1_equals_evalb_on_the_parsed_dev_file(run, data, tmp_path):
    evals = [r for r in open_run(run).history() if r.get("kind") == "eval"]
    assert [r["step"] for r in evals] == [6, 12]
    best = [r for r in evals if r["best"]][-1]
    pred = tmp_path / "pred.trees"
    result = _cli("parse", data / "valid.trees", "--model", run, "--format", "ptb", "-o", pred)
    assert result.exit_code == 0, result.output
    report = tmp_path / "r.json"
    args = ("evaluate", "brackets", data / "valid.trees", pred, "--param", "collins")
    result = _cli(*args, "--json", report)
    assert result.exit_code == 0, result.output
    scored = json.loads(report.read_text())["all"]
    assert round(scored["f1"], 2) == best["f1"]
    gold = read_trees(data / "valid.trees").trees
    parsed = read_trees(pred).trees
    assert len(parsed) == len(gold)
    for g, p in zip(gold, parsed):  # the gold words and tags, a labelled tree over them
        words = [(w, t) for w, t in g.pos() if t != "-NONE-"]
        assert p.pos() == words


def test_the_training_trees_are_learnt(data, tmp_path):
    out = tmp_path / "fit"
    steps = TINY + ["train.max_steps=400", "train.eval_every=0", "optim.lr=3e-3"]
    steps += ["model.d_model=64", "model.d_position=32", "model.d_ff=64"]
    steps += ["optim.plateau_patience=1000"]  # dev F1 of 5 trees must not halve the rate
    settings = steps + ["model.attn_dropout=0", "model.relu_dropout=0"]
    settings += ["model.residual_dropout=0", "model.char_dropout=0", "train.epochs=1000"]
    trainer = ChartTrainer(TrainOptions(str(out), "chart", str(data), settings, device="cpu"))
    try:
        trainer.fit()
    finally:
        trainer.lock.release()
    from induce.metrics.evalb import score_corpus
    from induce.metrics.evalb_params import load_params
    from induce.runs.chart import parse_words

    exs = trainer.train_examples
    trees = parse_words(
        trainer.model, trainer.encoder, [e.words for e in exs], [e.tags for e in exs]
    )
    result = score_corpus([e.tree for e in exs], trees, load_params("collins")).all
    assert result.f1 > 95.0


@pytest.mark.parametrize("shuffle", ["batches", "sentences"])
def test_a_stopped_run_resumes_to_the_same_weights(data, tmp_path, shuffle):
    """Stopped at update 3 of 8 (5 batches an epoch: the second epoch's batches too)."""
    steps = TINY + ["train.max_steps=8", "train.eval_every=4", f"data.shuffle={shuffle}"]
    if shuffle == "sentences":  # runs several sub-batches (batches run whole)
        steps += ["data.subbatch_tokens=40"]
    straight = tmp_path / "straight"
    train(TrainOptions(str(straight), "chart", str(data), steps, device="cpu"))
    stopped = tmp_path / "stopped"
    trainer = ChartTrainer(TrainOptions(str(stopped), "chart", str(data), steps, device="cpu"))

    def stop_at_3(kind, record):
        if kind == "train" and record["step"] == 3:
            trainer.request_stop()

    trainer.on_event = stop_at_3
    try:
        assert trainer.fit() == "interrupted"
    finally:
        trainer.lock.release()
    assert train(TrainOptions(str(stopped), resume=True, device="cpu")) == "done"
    a = induce.load(str(straight), "last", "cpu").parser.reader
    b = induce.load(str(stopped), "last", "cpu").parser.reader
    for (name, x), (_, y) in zip(a.model.state_dict().items(), b.model.state_dict().items()):
        assert torch.equal(x, y), name
    f1 = [
        [r["f1"] for r in open_run(p).history() if r.get("kind") == "eval"]
        for p in (straight, stopped)
    ]
    assert f1[0] == f1[1]
    assert weights_file(stopped).is_file()


def test_conllu_gives_head_rule_dependencies_and_jsonl_the_tree(run, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("The bill passed .\n\nIt rose\n")
    result = _cli("parse", src, "--model", run, "--format", "conllu", "--pretokenized")
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in result.stdout.splitlines() if line[:1].isdigit()]
    assert [r[1] for r in rows] == ["The", "bill", "passed", ".", "It", "rose"]
    heads = [int(r[6]) for r in rows]
    assert heads[:4].count(0) == 1 and heads[4:].count(0) == 1
    result = _cli("parse", src, "--model", run, "--format", "jsonl", "--pretokenized")
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert records[0]["words"] == ["The", "bill", "passed", "."]
    assert records[0]["tree"].startswith("(") and records[1]["tree"] == ""


def test_punctuation_drop_is_refused_not_ignored(run, tmp_path):
    """A chart parser parses punctuation as its treebank does: ``--punct drop`` is a one-line
    error before any output, not silently dropped."""
    src, out = tmp_path / "in.txt", tmp_path / "out.jsonl"
    src.write_text("The bill passed .\n")
    result = _cli("parse", src, "--model", run, "-f", "jsonl", "-o", out, "--punct", "drop")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --punct"), result.output
    assert not out.exists()


def test_scores_carry_every_span_and_cky_of_them_is_the_tree(run, tmp_path):
    """``parse -f jsonl --scores``: each span's best real label and score; the span scores'
    own read-out (CKY) gives the tree written beside them."""
    from induce.data.ptb import parse_trees
    from induce.decode.span_scores import SpanScores
    from induce.runs.chart import chart_scores
    from induce.structure.chart import labelled_spans

    src = tmp_path / "in.txt"
    src.write_text("The bill passed .\n\nIt rose\n")  # the blank line: an empty sentence
    result = _cli("parse", src, "--model", run, "-f", "jsonl", "--pretokenized", "--scores")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    spans = records[0]["scores"]["spans"]
    assert [s[:2] for s in spans] == [[i, j] for i in range(4) for j in range(i + 1, 5)]
    assert all(isinstance(s[2], str) and s[2] and isinstance(s[3], float) for s in spans)
    assert records[1]["scores"] == {} and len(records[2]["scores"]["spans"]) == 3
    chart = induce.load(str(run), device="cpu").parser.reader
    words = ["The", "bill", "passed", "."]
    ((_, found),) = chart_scores(chart.model, chart.encoder, [words])
    tree = found.read_out(words).tree  # the batch's CKY tree
    assert tree is not None
    assert isinstance(found, SpanScores) and found.scores.shape[:2] == (5, 5)
    read = SpanScores(found.scores, found.labels, found.tags).read_out(words).tree  # CKY anew
    written = parse_trees(records[0]["tree"]).trees[0]
    assert read is not None and written is not None and read.words() == words
    assert sorted(labelled_spans(read)) == sorted(labelled_spans(written))
    assert sorted(labelled_spans(tree)) == sorted(labelled_spans(written))
    # the same spans and labels; scores equal up to the batch's padding (alone vs with another)
    alone = found.to_json()["spans"]
    assert [s[:3] for s in alone] == [s[:3] for s in spans]
    assert [s[3] for s in alone] == pytest.approx([s[3] for s in spans], abs=1e-5)


def test_python_api_returns_labelled_trees(run):
    model = induce.load(str(run), device="cpu")
    parses = model.parse(
        [["The", "bill", "passed", "."], "It rose"], tags=[["DT", "NN", "VBD", "."], None]
    )
    assert parses[0].tree is not None and parses[0].tree.words() == ["The", "bill", "passed", "."]
    assert parses[0].tree.tags() == ["DT", "NN", "VBD", "."]  # the given tags are kept
    assert parses[1].tree is not None and parses[1].tree.label not in ("", "X")
    assert parses[0].heads is not None and len(parses[0].heads) == 4
    # a tag with a bracket or a space (STTS's $() left the tree unbalanced
    (odd,) = model.parse([["It", "(", "rose"]], tags=[["PPER", "$(", "V V"]])
    from induce.data.ptb import parse_trees

    tree = parse_trees(odd.to_ptb() + "\n", "p").trees[0]
    assert tree is not None and tree.tags() == ["PPER", "$-LRB-", "V_V"]


def test_a_dataset_without_trees_is_a_one_line_error(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("a b c\nb c a\n")
    data = tmp_path / "data"
    result = _cli("preprocess", "text", "--train", text, "--out", data)
    assert result.exit_code == 0, result.output
    result = _cli("train", "--arch", "chart", "--data", data, "--out", tmp_path / "r")
    assert result.exit_code == 2
    assert "train.trees" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "r").exists()


def test_bf16_parsing_gives_trees_over_the_same_words(run, data, tmp_path):
    fp32, bf16 = tmp_path / "fp32.ptb", tmp_path / "bf16.ptb"
    for out, extra in ((fp32, []), (bf16, ["--bf16"])):
        args = ["parse", data / "valid.trees", "--model", run, "-f", "ptb", "-o", out, *extra]
        result = _cli(*args)
        assert result.exit_code == 0, result.output
    a, b = read_trees(fp32).trees, read_trees(bf16).trees
    assert [t.pos() for t in a] == [t.pos() for t in b]


def test_bf16_parsing_of_masked_lms(data, tmp_path):
    """``--bf16`` runs a masked LM's parser in bf16 too: trees over the same words; a model
    without a parser is still refused, for that reason."""
    from tests.train.helpers import tiny

    sf, lm = tmp_path / "sf", tmp_path / "lm"
    for out, arch in ((sf, "structformer"), (lm, "transformer")):
        train(TrainOptions(str(out), arch, str(data), tiny(arch) + ["train.max_steps=1"]))
    trees = {}
    for name, extra in (("fp32", []), ("bf16", ["--bf16"])):
        trees[name] = tmp_path / f"{name}.ptb"
        args = ["parse", data / "valid.trees", "--model", sf, "-f", "ptb", "-o", trees[name]]
        result = _cli(*args, *extra)
        assert result.exit_code == 0, result.output
    a, b = read_trees(trees["fp32"]).trees, read_trees(trees["bf16"]).trees
    assert len(a) == len(b) > 0 and [t.words() for t in a] == [t.words() for t in b]
    src = tmp_path / "in.txt"
    src.write_text("a b\n")
    result = _cli("parse", src, "--model", lm, "--bf16")
    assert result.exit_code == 2 and "induces no structure" in result.output


def test_benepars_dropout_and_initialisation_train(data, tmp_path):
    """``model.dropout_kind: feature`` and ``model.init: benepar`` train end to end and the
    run records them (their effect on F1 is measured side by side with benepar, not here)."""
    out = tmp_path / "benepar"
    settings = TINY + ["train.max_steps=6", "model.dropout_kind=feature", "model.init=benepar"]
    assert train(TrainOptions(str(out), "chart", str(data), settings, device="cpu")) == "done"
    model = open_run(out).config.model
    assert model["dropout_kind"] == "feature" and model["init"] == "benepar"


def test_sub_batches_add_up_to_the_batch():
    """``data.shuffle: sentences`` runs a batch as sub-batches of similar length: every
    sentence once, each padded within the budget (or alone), and their losses and gradients
    sum to the whole batch's."""
    from induce.train.chart import chart_loss, sub_batches
    from tests.models.test_chart import build

    model, encoder, examples = build(tag_head=True)
    examples = examples * 3
    groups = sub_batches(examples, 24)
    assert len(groups) > 1
    assert sorted(map(id, sum(groups, []))) == sorted(map(id, examples))
    for group in groups:
        longest = max(len(ex.words) for ex in group) + 2
        assert len(group) == 1 or len(group) * longest <= 24
    tags = sum(len(ex.tags) for ex in examples)

    def gradients(parts):
        model.zero_grad(set_to_none=True)
        total = sum(
            chart_loss(model, encoder, part, random.Random(0), len(examples), tags).value
            for part in parts
        )
        total.backward()
        return total.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]

    whole, whole_grads = gradients([examples])
    split, split_grads = gradients(groups)
    assert torch.allclose(whole, split, rtol=1e-5)
    for a, b in zip(whole_grads, split_grads, strict=True):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-6)


def test_shuffled_sentences_make_new_batches_each_epoch(data, tmp_path):
    settings = TINY + ["data.shuffle=sentences"]
    options = TrainOptions(str(tmp_path / "r"), "chart", str(data), settings, device="cpu")
    trainer = ChartTrainer(options)
    try:
        first, second = trainer._plan(0), trainer._plan(1)
    finally:
        trainer.lock.release()
    assert first != second and trainer._plan(0) == first
    assert len(first) == len(second) == len(trainer.plan)
    everyone = sorted(sum(trainer.plan, []))
    assert sorted(sum(first, [])) == everyone == sorted(sum(second, []))


def test_resuming_a_chart_run_under_another_architecture_is_refused(run):
    """The one loop's refusal: one line, exit 2, the run untouched."""
    before = sorted((p.name, p.stat().st_mtime_ns) for p in run.rglob("*"))
    result = _cli("train", "--resume", run, "--arch", "udgn", "--set", "train.max_steps=20")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "udgn differs from the run's architecture, chart" in lines[0]
    assert sorted((p.name, p.stat().st_mtime_ns) for p in run.rglob("*")) == before


def test_the_objective_logs_its_parts(run):
    """The model's loss comes with its figures: the chart parser logs its hinge loss (the
    whole loss without a tag head) in every train record."""
    records = [r for r in open_run(run).history() if r.get("kind") == "train"]
    assert records and all(r["hinge"] == pytest.approx(r["loss"], abs=1e-4) for r in records)
    assert all("tag_loss" not in r for r in records)


@pytest.mark.parametrize(
    "command, message",
    [
        (["evaluate", "mlm", "--data", "DATA"], "a chart model has no masked-LM perplexity"),
        (["evaluate", "pcc", "GOLD"], "a chart model records no attention weights"),
        (["evaluate", "likelihood", "--data", "DATA"], "a chart model is not a grammar"),
        (["sample"], "a chart model has no grammar to draw sentences from"),
    ],
)
def test_what_a_chart_model_cannot_do_is_one_line(run, data, tmp_path, command, message):
    """Capabilities are the registry's data: an evaluation the model cannot give is refused
    in one line, exit 2, before any model is loaded."""
    gold = tmp_path / "gold.conllu"
    gold.write_text("1\tA\t_\t_\t_\t_\t0\troot\t_\t_\n\n")
    args = [str(data) if a == "DATA" else str(gold) if a == "GOLD" else a for a in command]
    result = _cli(*args, *(["--model"] if args[0] != "sample" else []), run)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_bf16_training_runs_the_forward_in_bf16_and_the_loss_in_fp32(data, tmp_path, monkeypatch):
    """``train.cpu_bf16`` on a CPU with hardware bf16 (taken as present here; the CharLSTM
    is swapped for the concatenated characters, which oneDNN runs in bf16 on any CPU): the
    span scores reach the hinge loss in bfloat16, the loss is float32, validation parses,
    the weights stay float32.  Without hardware bf16 the setting changes nothing."""
    from induce.runs import device as device_module
    from induce.structs import spans

    seen: list[torch.dtype] = []
    hinge = spans.hinge_loss

    def watched(scores, gold, lengths):
        seen.append(scores.dtype)
        loss = hinge(scores, gold, lengths)
        assert loss.dtype == torch.float32
        return loss

    monkeypatch.setattr("induce.models.chart.hinge_loss", watched)
    settings = TINY + ["model.chars=concat", "train.max_steps=4", "train.eval_every=2"]
    for fast, name in ((True, "bf16"), (False, "fp32")):
        monkeypatch.setattr(device_module, "cpu_has_fast_bf16", lambda fast=fast: fast)
        seen.clear()
        out = tmp_path / name
        extra = [*settings, "train.cpu_bf16=true"]
        options = TrainOptions(str(out), "chart", str(data), extra, device="cpu")
        assert train(options) == "done"
        assert seen and set(seen) == {torch.bfloat16 if fast else torch.float32}
        evals = [r for r in open_run(out).history() if r.get("kind") == "eval"]
        assert [r["step"] for r in evals] == [2, 4] and all(r["f1"] >= 0 for r in evals)
        weights = open_run(out).load_model("last", "cpu").parameters()
        assert all(p.dtype == torch.float32 for p in weights)
