"""The PCFG family on the one training loop and the one parse path: batches of one length,
the curriculum, the negative ELBO and its parts in the records, validation by the ELBO
perplexity with UF1 beside it, resume, and parses with their span marginals."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from induce.cli.app import app
from induce.runs.config import DataConfig
from induce.runs.directory import open_run
from induce.runs.grammar import equal_length_batches
from induce.train.engine import TrainOptions, build_trainer, train
from induce.train.grammar import epoch_plan, length_limit
from tests.train.helpers import make_dataset, poison_weights, tiny, weights_file


def test_batches_hold_sentences_of_one_length_and_skip_single_words():
    lengths = [3, 1, 3, 5, 3, 2, 5, 9]
    batches = equal_length_batches(lengths, 2, 6)
    assert batches == [[5], [0, 2], [4], [3, 6]]  # no one-word sentence, nothing over 6
    assert equal_length_batches(lengths, 8, 0)[-1] == [7]  # 0: no limit


def test_length_groups_text_or_drawn_once_from_the_seed():
    """text: consecutive sentences of one length; shuffled (Kim et al.'s scrambled sort): the
    same sentences, batches of one length, the membership drawn from the seed and kept
    from epoch to epoch (only the batch order changes)."""
    lengths = [3, 5, 3, 3, 5, 3, 3, 5, 3, 5, 3, 3] * 5
    text = DataConfig(batch_sentences=3)
    mixed = DataConfig(batch_sentences=3, length_groups="shuffled")

    def members(plan: list[list[int]]) -> set[frozenset[int]]:
        return {frozenset(b) for b in plan}

    first = epoch_plan(lengths, text, 7, 0)
    assert sorted(first) == sorted(equal_length_batches(lengths, 3, 0))  # text order
    plans = [epoch_plan(lengths, mixed, 7, e) for e in (0, 1)]
    assert all(len({lengths[k] for k in b}) == 1 for b in plans[0])
    assert sorted(k for b in plans[0] for k in b) == list(range(len(lengths)))
    assert members(plans[0]) == members(plans[1]) != members(first)
    assert plans[0] != plans[1]  # the batch order is still drawn per epoch
    assert members(epoch_plan(lengths, mixed, 8, 0)) != members(plans[0])


def test_the_curriculum_of_kim_et_al():
    """train.py: 30 words in the first epoch, one more each epoch, at most 40."""
    assert [length_limit(e, 30, 1, 40) for e in (0, 1, 9, 10, 20)] == [30, 31, 39, 40, 40]
    assert length_limit(5, 0, 1, 40) == 0 and length_limit(5, 30, 1, 0) == 35


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("grammar"))


def _settings(arch: str, steps: int) -> list[str]:
    return [*tiny(arch), f"train.max_steps={steps}", "train.eval_every=3"]


@pytest.fixture(scope="module", params=["npcfg", "cpcfg", "tnpcfg", "simplepcfg", "scpcfg"])
def run(request, data, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param) / "run"
    options = TrainOptions(str(out), request.param, str(data), _settings(request.param, 6))
    assert train(options) == "done"
    return out


def _cli(*args):
    return CliRunner().invoke(app, [*map(str, args)])


def test_records_carry_the_elbo_its_parts_and_the_trees_scores(run):
    history = open_run(run).history()
    steps = [r for r in history if r["kind"] == "train"]
    assert [r["step"] for r in steps] == list(range(1, 7))
    for r in steps:
        assert r["loss"] == pytest.approx(r["nll"] + r["kl"], abs=1e-3)
        assert r["loss_kind"] == "-ELBO"
    compound = open_run(run).config.arch in ("cpcfg", "scpcfg")
    assert all((r["kl"] > 0) == compound for r in steps)
    evals = [r for r in history if r["kind"] == "eval"]
    assert [r["step"] for r in evals] == [3, 6]
    for r in evals:
        assert r["valid_ppl"] > 1 and 0 <= r["uf1"] <= 100
        assert r["valid_loss"] > 0 and r["valid_kl"] >= 0


def test_parses_carry_labels_and_span_marginals(run, tmp_path):
    """``parse -f jsonl --scores``: the induced labels (``NT-k``, ``T-k``) of the Viterbi
    tree; the span marginals of two words or more sum to ``n - 1`` (every binary tree has
    that many such spans); MBR gives unlabelled trees; one word is ``(NT (T w))``."""
    src = tmp_path / "in.txt"
    src.write_text("the company said it will buy shares\n\nshares\n")
    args = ["parse", src, "--model", run, "-f", "jsonl", "--pretokenized", "--scores"]
    out = _cli(*args, "--decoder", "viterbi")
    assert out.exit_code == 0, out.output
    records = [json.loads(line) for line in out.stdout.splitlines()]
    first = records[0]
    assert first["tree"].startswith("(NT-") and "(T-" in first["tree"]
    spans = first["scores"]["spans"]
    n = len(first["words"])
    assert [s[:2] for s in spans] == [[i, j] for i in range(n) for j in range(i + 2, n + 1)]
    assert sum(s[2] for s in spans) == pytest.approx(n - 1, abs=1e-4)
    assert records[1]["tree"] == "" and records[2]["tree"].startswith("(NT (T-")
    mbr = _cli("parse", src, "--model", run, "-f", "ptb", "--pretokenized", "--decoder", "mbr")
    assert mbr.exit_code == 0, mbr.output
    assert mbr.stdout.splitlines()[0].startswith("(NT (")


@pytest.mark.parametrize("fused", [False, True], ids=["loop", "fused-cpu"])
def test_a_stopped_run_resumes_to_the_same_weights(data, tmp_path, fused):
    """The same weights with Adam's default loop and with ``optim.fused_cpu`` (the resumed
    run builds its optimizer from the run's settings, so the kernel carries over)."""
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    settings = [*_settings("cpcfg", 6), f"optim.fused_cpu={str(fused).lower()}"]
    assert train(TrainOptions(str(straight), "cpcfg", str(data), settings)) == "done"
    trainer = build_trainer(TrainOptions(str(stopped), "cpcfg", str(data), settings))

    def stop_at_4(kind, record):
        if kind == "train" and record["step"] == 4:
            trainer.request_stop()

    trainer.on_event = stop_at_4
    assert all(bool(g["fused"]) == fused for g in trainer.optimizer.param_groups)
    try:
        assert trainer.fit() == "interrupted"
    finally:
        trainer.lock.release()
    assert train(TrainOptions(str(stopped), resume=True)) == "done"
    from safetensors.torch import load_file

    a, b = load_file(weights_file(straight)), load_file(weights_file(stopped))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_the_fused_cpu_kernel_is_a_named_departure(data, tmp_path):
    """``optim.fused_cpu`` rounds differently from the default loop: close weights, not the
    same bits (which is why it is off by default)."""
    outs = [tmp_path / "loop", tmp_path / "fused"]
    for out, fused in zip(outs, ("false", "true"), strict=True):
        settings = [*_settings("cpcfg", 6), f"optim.fused_cpu={fused}"]
        assert train(TrainOptions(str(out), "cpcfg", str(data), settings)) == "done"
    from safetensors.torch import load_file

    a, b = (load_file(weights_file(out)) for out in outs)
    assert any(not torch.equal(a[k], b[k]) for k in a)
    assert all(torch.allclose(a[k], b[k], atol=1e-4) for k in a)


def test_fused_cpu_on_a_torch_without_the_kernel_is_a_config_error(monkeypatch):
    from induce.data.errors import ConfigError
    from induce.runs.config import OptimConfig
    from induce.train import options

    monkeypatch.setattr(options, "_FUSED_ON_CPU", False)  # as torch 2.3
    model = torch.nn.Linear(3, 2)
    assert options.build_optimizer(model, OptimConfig())[0].param_groups[0]["fused"] is None
    with pytest.raises(ConfigError, match="fused_cpu needs torch >= 2.4"):
        options.build_optimizer(model, OptimConfig(fused_cpu=True))


def test_sentences_drawn_from_the_grammar(run, tmp_path):
    """``induce sample``: the same seed draws the same sentences, of the run's words, one per
    line; a bad count is one line and exit 2."""
    out = tmp_path / "drawn.txt"
    first = _cli("sample", run, "-n", 5, "--seed", 1, "--max-words", 12, "-o", out)
    assert first.exit_code == 0, first.output
    lines = out.read_text().splitlines()
    again = _cli("sample", run, "-n", 5, "--seed", 1, "--max-words", 12)
    assert len(lines) == 5 and again.stdout.splitlines() == lines
    vocab = set(open_run(run).vocab.tokens)
    assert all(2 <= len(line.split()) <= 12 and set(line.split()) <= vocab for line in lines)
    bad = _cli("sample", run, "-n", 0)
    assert bad.exit_code == 2 and "count" in bad.output and "Traceback" not in bad.output


def test_the_likelihood_of_nan_weights_is_one_error(run, data, tmp_path):
    """A report of NaN: a traceback with --json (JSON has no NaN), "perplexity nan" and exit
    0 without."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    poison_weights(copy)
    for extra in ([], ["--json", tmp_path / "ppl.json"]):
        result = _cli("evaluate", "likelihood", "--model", copy, "--data", data, *extra)
        assert result.exit_code == 2 and "is not a number: its best weights hold" in result.stderr
        assert "Traceback" not in result.output and not (tmp_path / "ppl.json").exists()


def test_the_perplexity_of_a_split_is_the_validations(run, data, tmp_path):
    """``induce evaluate likelihood``: the best checkpoint's ELBO perplexity of the
    validation split is the one training recorded for it."""
    report = tmp_path / "ppl.json"
    args = ["evaluate", "likelihood", "--model", run, "--data", data, "--split", "valid"]
    result = _cli(*args, "--json", report, "-q")
    assert result.exit_code == 0, result.output
    found = json.loads(report.read_text())
    best = [r for r in open_run(run).history() if r["kind"] == "eval" and r["best"]][-1]
    assert found["perplexity"] == pytest.approx(best["valid_ppl"], abs=1e-3)
    assert found["recon_perplexity"] <= found["perplexity"]
    from induce.data.dataset import load_dataset
    from induce.evaluate.common import words_digest

    words = load_dataset(str(data)).sentences("valid")
    assert found["settings"]["data_digest"] == words_digest(words)


@pytest.mark.parametrize("form", ["state-dict", "pickle"])
def test_an_official_checkpoint_imports_with_the_same_trees(run, tmp_path, form):
    """``convert checkpoint --arch npcfg|cpcfg|tnpcfg``: the official parameter names are
    ours, so a state dict with its vocabulary (``word id`` lines, as compound-pcfg's
    ``.dict``), or compound-pcfg's ``{args, model, word2idx, idx2word}`` pickle with
    ``--trust-pickle``, becomes a run that parses as the model did."""
    import induce

    arch = open_run(run).config.arch
    model = open_run(run).load_model("best", "cpu")
    words = open_run(run).vocab.tokens
    source = tmp_path / "official.pt"
    args = ["convert", "checkpoint", source, "--arch", arch, "-o", tmp_path / "imported"]
    if form == "state-dict":
        torch.save(model.state_dict(), source)
        vocab = tmp_path / "ptb.dict"
        vocab.write_text("".join(f"{w} {k}\n" for k, w in enumerate(words)))
        args += ["--dict", vocab]
    else:
        table = dict(enumerate(words))
        saved = {"args": {}, "model": model, "word2idx": {}, "idx2word": table}
        torch.save(saved, source)
        refused = _cli(*args)
        assert refused.exit_code == 2 and "--trust-pickle" in refused.output
        args += ["--trust-pickle"]
    for option in ("--relations", "--weight-act"):  # StructFormer's: no effect here
        ignored = _cli(*args, option, "softmax")
        assert ignored.exit_code == 2 and "is StructFormer's" in ignored.output, ignored.output
    result = _cli(*args)
    assert result.exit_code == 0, result.output
    assert f"wrote {tmp_path / 'imported'}" in result.stderr
    sentences = [["the", "company", "said", "it", "will", "buy", "shares"], ["shares", "rose"]]
    ours = induce.load(str(run), device="cpu").parse(sentences)
    theirs = induce.load(str(tmp_path / "imported"), device="cpu").parse(sentences)
    assert [p.tree for p in ours] == [p.tree for p in theirs]
    other = "cpcfg" if arch == "npcfg" else "npcfg"
    swapped = {arch: other, tmp_path / "imported": tmp_path / "other"}
    wrong = _cli(*[swapped.get(a, a) for a in args])
    why = f"not --arch {other}" if arch in ("npcfg", "cpcfg") else "give its --arch"
    assert wrong.exit_code == 2 and why in wrong.output, wrong.output
    assert not (tmp_path / "other").exists()


@pytest.mark.parametrize("setting", ["train.bf16", "train.cpu_bf16"])
def test_bf16_is_refused_not_ignored(data, tmp_path, setting):
    """The grammars train in float32 only: asking for bf16 is one line at exit 2, before
    anything is written (it used to be accepted and ignored)."""
    out = tmp_path / "run"
    args = ["train", "--arch", "npcfg", "--data", data, "--out", out, "--set", f"{setting}=true"]
    result = CliRunner().invoke(app, [*map(str, args), *_cli_settings("npcfg")])
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert f"{setting} is not for npcfg: it trains in float32 only" in lines[0]
    assert not out.exists()


def _cli_settings(arch: str) -> list[str]:
    return [item for setting in _settings(arch, 2) for item in ("--set", setting)]


def test_settings_that_leave_no_batch_in_any_epoch_are_refused(data, tmp_path):
    """A length limit under every sentence used to run empty epochs and end "done", the
    untrained model saved as the best."""
    from induce.data.errors import ConfigError

    options = TrainOptions(
        str(tmp_path / "r"), "npcfg", str(data), [*tiny("npcfg"), "data.max_length=1"]
    )
    with pytest.raises(ConfigError, match="no training batch of 4 sentences of one length"):
        build_trainer(options)
    # a curriculum that reaches the sentences by its last epoch is fine
    grows = ["data.max_length=1", "data.length_step=5", "train.epochs=3", "train.max_steps=1"]
    options = TrainOptions(str(tmp_path / "g"), "npcfg", str(data), tiny("npcfg") + grows)
    assert train(options) == "done"


def test_a_validation_split_of_one_word_sentences_is_refused_before_training(tmp_path):
    """A grammar scores sentences of two words or more: such a split has no validation loss,
    which was reported as a diverged run after the first epoch."""
    train_text, valid = tmp_path / "train.txt", tmp_path / "valid.txt"
    train_text.write_text("the cat sat\nthe dog ran\na cat ran\na dog sat\n" * 3)
    valid.write_text("cats\ndogs\n")
    data = tmp_path / "data"
    made = _cli("preprocess", "text", "--train", train_text, "--valid", valid, "-o", data)
    assert made.exit_code == 0, made.output
    out = tmp_path / "run"
    result = _cli("train", "--arch", "npcfg", "--data", data, "--out", out, *_cli_settings("npcfg"))
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        f"error: {data / 'valid.txt'}: no validation sentence of two words or more: a grammar "
        "scores none of them"
    )
    assert not out.exists()
