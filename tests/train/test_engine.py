"""The training engine: learning, exact resume, interruption, run directory, DDP on gloo."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.errors import ConfigError
from induce.evaluate.mlm import evaluate_mlm
from induce.runs.config import load_config
from induce.train.engine import TrainOptions, build_optimizer, build_trainer, train
from induce.train.validation import validation_seed
from tests.train.helpers import last_state, make_dataset, tiny, weights_file


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("train"))


def _records(run, kind):
    return [
        json.loads(line)
        for line in (run / "metrics.jsonl").read_text().splitlines()
        if json.loads(line)["kind"] == kind
    ]


@pytest.mark.parametrize("arch", ["transformer", "structformer", "udgn"])
def test_loss_goes_down(data, tmp_path, arch):
    out = tmp_path / "run"
    # UDGN (residual updates only, no feed-forward block) learns more slowly at this size
    lr, ratio = ("1e-2", 0.92) if arch == "udgn" else ("3e-3", 0.85)
    options = TrainOptions(
        str(out),
        arch,
        str(data),
        tiny(arch)
        + ["train.max_steps=60", "train.eval_every=30", f"optim.lr={lr}", "model.dropout=0.0"],
        device="cpu",
    )
    assert train(options) == "done"
    losses = [r["loss"] for r in _records(out, "train")]
    assert sum(losses[-10:]) / 10 < ratio * sum(losses[:5]) / 5
    evals = _records(out, "eval")
    assert len(evals) == 2 and evals[0]["best"]  # (20 sentences: it overfits after that)
    assert evals[0]["valid_loss"] < sum(losses[:5]) / 5
    if arch != "transformer":  # parse metrics on the gold trees of the valid split
        assert {"uf1", "corpus_uf1", "uas", "uuas"} <= set(evals[0])
    for name in ("config.yaml", "vocab.json", "dataset.yaml", "checkpoint.json"):
        assert (out / name).is_file(), name
    assert weights_file(out, "best").is_file() and weights_file(out, "last").is_file()
    assert last_state(out)["progress"]["step"] == 60


def _final_weights(run):
    return load_file(str(weights_file(run, "last")))


def _stopped_then_resumed(part, data, settings, stop):
    """A structformer run asked to stop after update ``stop`` (its checkpoint says so), then
    resumed to the end: its run directory."""
    holder = {}

    def stop_there(kind, record):
        if kind == "train" and record["step"] == stop:
            holder["trainer"].request_stop()

    trainer = build_trainer(
        TrainOptions(str(part), "structformer", str(data), settings, device="cpu"), stop_there
    )
    holder["trainer"] = trainer
    assert trainer.fit() == "interrupted"
    assert last_state(part)["progress"]["step"] == stop
    assert train(TrainOptions(str(part), resume=True, device="cpu")) == "done"
    return part


@pytest.mark.parametrize("masks", ["fixed", "fresh"])
def test_a_resumed_run_ends_bit_identical(data, tmp_path, masks):
    settings = tiny("structformer") + [
        "train.max_steps=14",
        "train.eval_every=5",
        f"data.eval_masks={masks}",
    ]
    whole = tmp_path / "whole"
    train(TrainOptions(str(whole), "structformer", str(data), settings, device="cpu"))

    part = _stopped_then_resumed(tmp_path / "part", data, settings, stop=7)
    a, b = _final_weights(whole), _final_weights(part)
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert _records(whole, "eval") == _records(part, "eval")
    assert [r["loss"] for r in _records(whole, "train")] == [
        r["loss"] for r in _records(part, "train")
    ]


def test_fresh_validation_masks_are_new_at_each_update_count_and_repeat_on_it(data, tmp_path):
    """``data.eval_masks: fresh`` draws validation's masks anew at every evaluation, as the
    official code does, from the update count (so a resumed run repeats them); ``fixed``
    draws the same ones every time."""
    losses = {}
    for masks in ("fixed", "fresh"):
        settings = tiny("structformer") + [f"data.eval_masks={masks}", "data.eval_runs=2"]
        trainer = build_trainer(
            TrainOptions(str(tmp_path / masks), "structformer", str(data), settings, device="cpu")
        )
        losses[masks] = []
        for step in (10, 20, 10):  # the same weights evaluated "after" 10, 20, 10 updates
            trainer.state["step"] = step
            losses[masks].append(trainer.evaluate()[1])
    fixed, fresh = losses["fixed"], losses["fresh"]
    assert fixed[0] == fixed[1] == fixed[2]
    assert fresh[0] != fresh[1] and fresh[0] == fresh[2]
    assert fresh[0] != fixed[0]
    with pytest.raises(ConfigError, match="eval_masks"):
        load_config("udgn", ["data.eval_masks=random"])


def _ramp(warmup: int, steps: int, *extra: str) -> list[str]:
    """Settings of a short run that logs the rate of every update, warm-up of ``warmup``."""
    return tiny("structformer") + [
        f"train.max_steps={steps}",
        "train.log_every=1",
        f"train.warmup={warmup}",
        "optim.lr=2e-3",
        *extra,
    ]


def _rates(run, data, settings: list[str]) -> list[float]:
    train(TrainOptions(str(run), "structformer", str(data), settings, device="cpu"))
    return [r["lr"] for r in _records(run, "train")]


def test_learning_rate_warms_up_linearly_and_resumes_on_the_ramp(data, tmp_path):
    settings = _ramp(8, 12, "train.eval_every=3", "optim.plateau_patience=0")
    whole = tmp_path / "whole"
    rates = _rates(whole, data, settings)
    assert rates[:8] == pytest.approx([2e-3 * k / 8 for k in range(1, 9)])
    # the plateau schedule (patience 0) starts only after the warm-up
    assert rates[8] == pytest.approx(2e-3)

    part = _stopped_then_resumed(tmp_path / "part", data, settings, stop=5)
    assert [r["lr"] for r in _records(part, "train")] == rates
    a, b = _final_weights(whole), _final_weights(part)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_the_warm_up_can_start_at_rate_zero_as_benepar(data, tmp_path):
    """``train.warmup_from_zero``: update k runs at lr * (k - 1) / warmup, so the first at 0
    and the (warmup + 1)-th at the full rate (benepar's WarmupThenReduceLROnPlateau)."""
    rates = _rates(tmp_path / "run", data, _ramp(4, 6, "train.warmup_from_zero=true"))
    assert rates == pytest.approx([0.0, 5e-4, 1e-3, 1.5e-3, 2e-3, 2e-3])


def test_settings_are_checked(data, tmp_path):
    with pytest.raises(ConfigError, match="unknown setting"):
        load_config("structformer", ["optim.learning_rate=1"])
    with pytest.raises(ConfigError, match="expected a finite number"):
        load_config("transformer", ["optim.lr=fast"])
    with pytest.raises(ConfigError, match="unknown architecture"):
        load_config("lstm")
    assert load_config("structformer", ["model.d_model=256"]).model["d_model"] == 256
    # the soft merge levels need neighbour links: the demo has them, the paper preset not
    assert load_config("combiner", preset="demo").protocol.test_decoder == "levels"
    with pytest.raises(ConfigError, match="levels needs model.hierarchy: constituent"):
        load_config("combiner", ["train.valid_decoder=levels"], preset="paper")
    with pytest.raises(ConfigError, match="conv_sise"):
        build_trainer(
            TrainOptions(
                str(tmp_path / "r"), "structformer", str(data), ["model.conv_sise=3"], device="cpu"
            )
        )


def test_command_line(data, tmp_path):
    run = CliRunner().invoke
    out = tmp_path / "run"
    args = [
        "train",
        "--arch",
        "transformer",
        "--data",
        str(data),
        "--out",
        str(out),
        "--device",
        "cpu",
    ] + [a for s in tiny("transformer") + ["train.max_steps=4"] for a in ("--set", s)]
    first = run(app, args)
    assert first.exit_code == 0, first.output
    again = run(app, args)
    assert again.exit_code == 2 and "--resume" in again.stderr
    missing = run(app, ["train", "--resume", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "not an induce run" in missing.stderr
    both = run(app, ["train", "--out", str(tmp_path / "x"), "--resume", str(out)])
    assert both.exit_code == 2 and "--out RUN for a new run or --resume" in both.stderr
    ppl = [
        run(
            app,
            [
                "evaluate",
                "mlm",
                "-m",
                str(out),
                "-d",
                str(data),
                "--split",
                split,
                "-f",
                "json",
                "--device",
                "cpu",
            ],
        )
        for split in ("valid", "valid", "train")
    ]
    assert all(r.exit_code == 0 for r in ppl), ppl[0].output
    reports = [json.loads(r.stdout) for r in ppl]
    assert reports[0] == reports[1] and reports[2]["perplexity"] > 1
    best = [r for r in _records(out, "eval") if r["best"]][-1]
    # the paper preset's validation masks are drawn anew at each evaluation (eval_masks:
    # fresh); evaluate mlm with that evaluation's seed gives its perplexity back
    settings = load_config("transformer")
    assert settings.data.eval_masks == "fresh"
    again = evaluate_mlm(
        str(out),
        str(data),
        "valid",
        device="cpu",
        seed=validation_seed(settings.data, best["step"]),
    )
    assert again["perplexity"] == pytest.approx(best["valid_ppl"], rel=1e-4)
    assert reports[0]["perplexity"] != pytest.approx(best["valid_ppl"], rel=1e-4)
    # --runs N: the mean of N draws' losses, draw r from seed + r
    draws = [
        evaluate_mlm(str(out), str(data), "valid", device="cpu", seed=s, runs=1)
        for s in (1234, 1235, 1236)
    ]
    three = evaluate_mlm(str(out), str(data), "valid", device="cpu", seed=1234, runs=3)
    assert three["loss"] == pytest.approx(sum(d["loss"] for d in draws) / 3, abs=2e-6)
    assert three["masked_tokens"] == sum(d["masked_tokens"] for d in draws)
    # the text's identity, for report: the same split wherever it lies, not another split
    import shutil

    moved = shutil.copytree(data, tmp_path / "moved")
    there = evaluate_mlm(str(out), str(moved), "valid", device="cpu")["settings"]
    other = evaluate_mlm(str(out), str(data), "train", device="cpu")["settings"]
    assert (
        len(there["data_digest"]) == 16 and there["data_digest"] == again["settings"]["data_digest"]
    )
    assert other["data_digest"] != there["data_digest"]


def test_sigterm_saves_a_checkpoint_and_resume_finishes(data, tmp_path):
    out = tmp_path / "run"
    code = (
        "import os, signal\n"
        "from induce.train.engine import TrainOptions, train\n"
        "def kill_at_3(kind, record):\n"
        "    if kind == 'train' and record['step'] == 3:\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        f"print(train(TrainOptions({str(out)!r}, 'transformer', {str(data)!r}, "
        f"{tiny('transformer') + ['train.max_steps=6']!r}, device='cpu'), kill_at_3))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "interrupted", done.stderr
    assert last_state(out)["progress"]["step"] == 3
    assert train(TrainOptions(str(out), resume=True, device="cpu")) == "done"
    assert [r["step"] for r in _records(out, "train")] == [1, 2, 3, 4, 5, 6]


def test_optimizer_settings_changed_on_a_resume_take_effect(data, tmp_path):
    """Loading the checkpoint's optimizer and schedule states brought the recorded values
    back: ``--resume --set optim.lr=...`` was written to config.yaml and ignored."""
    out, settings = tmp_path / "run", tiny("structformer") + ["train.eval_every=2"]
    assert (
        train(
            TrainOptions(
                str(out), "structformer", str(data), [*settings, "train.max_steps=4"], device="cpu"
            )
        )
        == "done"
    )
    changes = [
        "optim.lr=0.0123",
        "optim.weight_decay=0.5",
        "optim.betas=[0.8,0.9]",
        "optim.eps=1e-3",
        "optim.plateau_patience=7",
        "optim.plateau_factor=0.25",
        "optim.min_lr=1e-5",
    ]
    trainer = build_trainer(
        TrainOptions(str(out), overrides=["train.max_steps=6", *changes], resume=True, device="cpu")
    )
    group, schedule = trainer.optimizer.param_groups[0], trainer.scheduler
    assert (group["lr"], group["weight_decay"], group["betas"], group["eps"]) == (
        0.0123,
        0.5,
        (0.8, 0.9),
        1e-3,
    )
    assert (schedule.patience, schedule.factor, schedule.min_lrs) == (7, 0.25, [1e-5])
    assert trainer.fit() == "done"
    trainer.lock.release()
    assert [r["lr"] for r in _records(out, "train") if r["step"] > 4] == [0.0123, 0.0123]


def test_a_changed_setting_holds_after_a_kill_before_its_first_checkpoint(data, tmp_path):
    """config.yaml records the change as the resume starts; killed before a checkpoint held
    it, the next resume compared config.yaml with itself and ran the old rate on."""
    out, settings = tmp_path / "run", tiny("structformer") + ["train.eval_every=2"]
    first = TrainOptions(
        str(out), "structformer", str(data), [*settings, "train.max_steps=4"], device="cpu"
    )
    assert train(first) == "done"

    class Killed(Exception):
        pass

    def kill(kind: str, record: dict) -> None:
        if kind == "start":  # before any update or checkpoint of the resumed run
            raise Killed

    changed = ["train.max_steps=6", "optim.lr=0.0123"]
    with pytest.raises(Killed):
        train(TrainOptions(str(out), overrides=changed, resume=True, device="cpu"), kill)
    trainer = build_trainer(TrainOptions(str(out), resume=True, device="cpu"))
    trainer.lock.release()
    assert trainer.optimizer.param_groups[0]["lr"] == 0.0123


def test_a_resume_that_changes_no_optimizer_setting_keeps_the_schedules_rate():
    from induce.runs.config import OptimConfig
    from induce.train.options import optim_settings, retune

    recorded = OptimConfig(lr=1e-3, plateau_patience=2)
    optimizer, schedule = build_optimizer(torch.nn.Linear(2, 2), recorded)
    optimizer.param_groups[0]["lr"] = 2.5e-4  # reduced twice by the schedule
    ran_with = optim_settings(recorded)
    retune(optimizer, schedule, ran_with, OptimConfig(lr=1e-3, plateau_patience=5))
    assert optimizer.param_groups[0]["lr"] == 2.5e-4 and schedule.patience == 5


def test_a_run_stopped_before_its_first_checkpoint_starts_again(data, tmp_path):
    from induce.data.dataset import load_dataset
    from induce.runs.directory import dataset_record, write_run_files

    (tmp_path / "r").mkdir()
    ds = load_dataset(data)
    config = load_config("transformer", tiny("transformer") + ["train.max_steps=2"])
    write_run_files(tmp_path / "r", config, ds.vocab, dataset_record(ds))
    (tmp_path / "r" / "metrics.jsonl").write_text('{"kind": "train", "step": 1}\n{"kin')
    with pytest.warns(UserWarning, match="starts again"):
        assert train(TrainOptions(str(tmp_path / "r"), resume=True, device="cpu")) == "done"
    assert [r["step"] for r in _records(tmp_path / "r", "train")] == [1, 2]


@pytest.mark.skipif(not torch.distributed.is_available(), reason="no torch.distributed")
@pytest.mark.parametrize("arch", ["structformer", "chart"])
def test_two_process_gloo_run(data, tmp_path, arch):
    """Every objective trains under torchrun on the one loop (the chart parser too)."""
    out = tmp_path / "ddp"
    sets = [
        a for s in tiny(arch) + ["train.max_steps=4", "train.eval_every=2"] for a in ("--set", s)
    ]
    env = dict(os.environ, OMP_NUM_THREADS="1", INDUCE_DIST_TIMEOUT_S="60")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            "2",
            "--standalone",
            "-m",
            "induce.cli.app",
            "train",
            "--arch",
            arch,
            "--data",
            str(data),
            "--out",
            str(out),
            "--device",
            "cpu",
        ]
        + sets,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    evals = _records(out, "eval")
    assert [r["step"] for r in evals] == [2, 4]
    assert weights_file(out, "best").is_file()
    assert [r["step"] for r in _records(out, "train")] == [1, 2, 3, 4]  # written once


def test_a_run_of_the_earlier_layout_resumes(data, tmp_path):
    """best/, last/ and trainer_state.pt at the top, as runs were written before."""
    import shutil

    from induce.runs.directory import read_pointer

    out = tmp_path / "old"
    settings = tiny("transformer") + ["train.max_steps=4", "train.eval_every=2"]
    assert train(TrainOptions(str(out), "transformer", str(data), settings, device="cpu")) == "done"
    pointer = read_pointer(out)
    assert pointer is not None
    state = torch.load(out / pointer["last"] / "trainer_state.pt", weights_only=True)
    del state["progress"]["metrics_bytes"], state["progress"]["meter"]
    torch.save(state, out / "trainer_state.pt")
    (out / "last").mkdir()
    shutil.copy(out / pointer["last"] / "model.safetensors", out / "last")
    (out / "best").mkdir()
    shutil.copy(out / pointer["best"] / "model.safetensors", out / "best")
    shutil.rmtree(out / "checkpoints")
    (out / "checkpoint.json").unlink()
    resumed = TrainOptions(str(out), resume=True, device="cpu", overrides=["train.max_steps=6"])
    assert train(resumed) == "done"
    assert [r["step"] for r in _records(out, "train")] == [1, 2, 3, 4, 5, 6]
    assert weights_file(out, "best").is_file() and weights_file(out, "last").is_file()


def test_validation_decoder_is_a_setting(data, tmp_path):
    with pytest.raises(ConfigError, match="train.valid_decoder must be one of mst, argmax"):
        load_config("udgn", ["train.valid_decoder=cky"])
    with pytest.raises(ConfigError, match="has no parser"):
        load_config("transformer", ["train.valid_decoder=mst"])
    scores = {}
    for decoder in ("mst", "argmax"):
        out = tmp_path / decoder
        settings = tiny("udgn") + ["train.max_steps=2", f"train.valid_decoder={decoder}"]
        assert train(TrainOptions(str(out), "udgn", str(data), settings, device="cpu")) == "done"
        scores[decoder] = _records(out, "eval")[-1]
    assert scores["mst"]["valid_ppl"] == scores["argmax"]["valid_ppl"]  # only the read-out
    assert "uas" in scores["argmax"]


def test_the_last_update_is_validated_even_when_a_checkpoint_was_just_written(data, tmp_path):
    """max_steps a multiple of checkpoint_every: the checkpoint at the last step used to stand
    in for the final validation, so the last weights were never scored."""
    out = tmp_path / "run"
    steps = ["train.max_steps=4", "train.checkpoint_every=2", "train.eval_every=0"]
    assert train(TrainOptions(str(out), "transformer", str(data), tiny("transformer") + steps)) == (
        "done"
    )
    assert [r["step"] for r in _records(out, "eval")][-1] == 4


@pytest.mark.parametrize(
    "extra, found",
    [
        (["train.log_every=1"], "the training loss is nan"),
        (["train.log_every=100", "train.eval_every=2"], "the validation figure is nan"),
    ],
)
def test_a_diverged_run_stops_with_an_error_and_no_nan_best(data, tmp_path, extra, found):
    """A loss that is no longer a number ended "done" with exit 0, its nan weights saved as
    the best; the run now stops at the first nan it reads, keeping what was saved before."""
    out = tmp_path / "run"
    settings = tiny("structformer") + ["train.max_steps=6", "optim.lr=1e30", *extra]
    with pytest.raises(ConfigError, match=f"training diverged after .*: {found}; a lower optim"):
        train(TrainOptions(str(out), "structformer", str(data), settings, device="cpu"))
    assert not (out / "checkpoint.json").exists()  # nothing of it saved, as best or last


def test_fixed_validation_masks_that_mask_no_token_are_refused_before_training(data, tmp_path):
    """They were refused at the first validation, after an epoch of training."""
    settings = tiny("structformer") + ["data.mask_rate=1e-6", "data.eval_masks=fixed"]
    out = tmp_path / "r"
    with pytest.raises(ConfigError, match="data.mask_rate 1e-06 masks no token of the valid"):
        build_trainer(TrainOptions(str(out), "structformer", str(data), settings, device="cpu"))
    assert not out.exists()


def test_fresh_validation_masks_that_mask_no_token_are_refused_when_drawn(data, tmp_path):
    """Their draws depend on the update: checked at the validation that draws them (a
    check of other draws before training refused runs whose own draws mask tokens)."""
    settings = tiny("structformer") + [
        "train.max_steps=2",
        "data.mask_rate=1e-6",
        "data.eval_masks=fresh",
    ]
    with pytest.raises(ConfigError, match="data.mask_rate 1e-06 masked no token of the valid"):
        train(TrainOptions(str(tmp_path / "r"), "structformer", str(data), settings, device="cpu"))


def test_no_masked_token_names_the_unknown_words_never_masked(data, tmp_path):
    """A validation split mostly outside the vocabulary (a small training split, another
    corpus) has few tokens to mask: the error said only "masked no token", as if the rate
    alone were at fault (UDGN's five draws on the test data: 27 of 36 tokens are <unk>)."""
    settings = tiny("structformer") + ["data.mask_rate=1e-6", "data.eval_masks=fixed"]
    with pytest.raises(ConfigError, match=r"\(\d+ of its \d+ tokens are <unk>, which is never"):
        build_trainer(TrainOptions(str(tmp_path / "r"), "structformer", str(data), settings))


def test_a_length_limit_under_every_sentence_is_refused(data, tmp_path):
    settings = tiny("udgn") + ["data.max_length=1"]
    with pytest.raises(ConfigError, match="data.max_length 1 leaves no training sentence"):
        build_trainer(TrainOptions(str(tmp_path / "r"), "udgn", str(data), settings, device="cpu"))


@pytest.mark.parametrize("when", ["build", "step"])
def test_out_of_memory_is_one_line_naming_what_to_lower(data, tmp_path, monkeypatch, when):
    """torch's allocator error was a traceback (a paper-size model on a small machine)."""
    from induce.train import masked_lm

    def refused(*args, **kwargs):
        raise RuntimeError(
            "[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate "
            "memory: you tried to allocate 123456789012 bytes. Error code 12"
        )

    if when == "build":
        monkeypatch.setattr(masked_lm, "build_model", refused)
    else:
        monkeypatch.setattr(masked_lm.MaskedLMTrainer, "train_step", refused)
    out = tmp_path / "run"
    sets = [x for s in [*tiny("udgn"), "train.max_steps=2"] for x in ("--set", s)]
    args = ["train", "--arch", "udgn", "--data", data, "--out", out, "--device", "cpu", *sets]
    result = CliRunner().invoke(app, [*map(str, args)])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        "error: out of memory on this machine: lower the model's sizes (model.*) or the "
        "batches (data.batch_tokens, data.batch_sentences, data.eval_batch_tokens); the "
        "checkpoints saved before are kept"
    ], result.stderr
    assert out.exists() is (when == "step")
