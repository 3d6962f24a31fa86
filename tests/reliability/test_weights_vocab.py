"""A run's weights keep the digest of the vocabulary they were trained with: a ``vocab.json``
reordered, edited or copied from another run is refused in one line naming it, where it used
to give every word another word's embedding and wrong trees without a sign (``parse``,
``evaluate``, ``train --resume``).  Counts are not part of it, and weights saved before the
digest was recorded still load."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from safetensors import safe_open
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.vocab import Vocabulary
from induce.runs.directory import open_run
from induce.runs.weights import VOCAB_DIGEST, load_weights, save_weights
from tests.train.helpers import make_dataset, tiny


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("weightsvocab")
    data = make_dataset(root)
    sets = [x for s in tiny("udgn") + ["train.max_steps=2"] for x in ("--set", s)]
    result = _invoke("train", "--arch", "udgn", "--data", data, "--out", root / "run", *sets)
    assert result.exit_code == 0, result.output
    (root / "in.txt").write_text("the bill passed\nthe man ran\n")
    return root, data


def _invoke(*args: object):
    return CliRunner().invoke(app, [*map(str, args), "--device", "cpu"])


def _copy(root: Path, tmp_path: Path) -> Path:
    shutil.copytree(root / "run", tmp_path / "run")
    return tmp_path / "run"


def _edit_vocab(run: Path, change) -> None:
    vocab = json.loads((run / "vocab.json").read_text(encoding="utf-8"))
    (run / "vocab.json").write_text(json.dumps(change(vocab)), encoding="utf-8")


def _swap_two_words(vocab: dict) -> dict:
    tokens = list(vocab["tokens"])
    i, j = tokens.index("the"), len(tokens) - 1
    tokens[i], tokens[j] = tokens[j], tokens[i]
    return {**vocab, "tokens": tokens}


def test_every_checkpoint_keeps_the_digest_of_its_vocabulary(setup):
    root, _ = setup
    run = open_run(root / "run")
    for which in ("best", "last"):
        with safe_open(str(run.weights(which)), framework="pt") as handle:
            assert handle.metadata()[VOCAB_DIGEST] == run.vocab.digest()


def test_the_digest_is_of_the_tokens_in_order_only():
    vocab = Vocabulary(["<unk>", "<pad>", "<mask>", "a", "b"], {"a": 2, "b": 1})
    same = Vocabulary(list(vocab.tokens), {"a": 9}, settings={"min_freq": 3})
    other = Vocabulary(["<unk>", "<pad>", "<mask>", "b", "a"], dict(vocab.counts))
    assert vocab.digest() == same.digest() != other.digest()
    assert len(vocab.digest()) == 64


@pytest.mark.parametrize(
    "command",
    [
        lambda root, run: ["parse", root / "in.txt", "-m", run, "-o", run.parent / "out"],
        lambda root, run: ["evaluate", "mlm", "-m", run, "--data", root / "data"],
    ],
    ids=["parse", "evaluate"],
)
def test_a_reordered_vocabulary_is_refused_naming_it(setup, tmp_path, command):
    root, _ = setup
    run = _copy(root, tmp_path)
    _edit_vocab(run, _swap_two_words)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    result = _invoke(*command(root, run))
    assert result.exit_code == 2, result.output
    lines = [x for x in result.stderr.strip().splitlines() if not x.startswith("warning: ")]
    assert lines == [
        f"error: {run / 'vocab.json'}: not the vocabulary the run's weights "
        f"({open_run(run).weights('best').parent.name}/model.safetensors) were trained with: "
        "the file was edited, reordered or copied from another run"
    ]
    assert not (tmp_path / "out").exists()
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def test_a_resume_with_a_reordered_vocabulary_changes_nothing(setup, tmp_path):
    root, _ = setup
    run = _copy(root, tmp_path)
    _edit_vocab(run, _swap_two_words)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    result = _invoke("train", "--resume", run)
    assert result.exit_code == 2, result.output
    assert "vocab" in result.stderr
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def test_other_counts_are_no_other_vocabulary(setup, tmp_path):
    root, _ = setup
    run = _copy(root, tmp_path)
    _edit_vocab(run, lambda v: {**v, "counts": {}})
    result = _invoke("parse", root / "in.txt", "-m", run)
    assert result.exit_code == 0, result.output
    assert result.stdout.count("# text =") == 2


def test_weights_saved_without_a_digest_still_load(setup, tmp_path):
    """Runs saved before the digest was recorded (and weights of other tools) load as before:
    nothing tells what they were trained with."""
    root, _ = setup
    run = _copy(root, tmp_path)
    opened = open_run(run)
    model = opened.load_model(device="cpu")
    save_weights(model, opened.weights("best"))  # no vocabulary: no digest
    with safe_open(str(opened.weights("best")), framework="pt") as handle:
        assert VOCAB_DIGEST not in handle.metadata()
    _edit_vocab(run, _swap_two_words)
    result = _invoke("parse", root / "in.txt", "-m", run)
    assert result.exit_code == 0, result.output


def test_the_same_weights_are_the_same_bytes(setup, tmp_path):
    """safetensors writes its metadata in a random order each time; the header is rewritten
    with its keys sorted, so that the same training gives the same file byte for byte (eight
    saves of two keys in a random order would all agree once in 128 times)."""
    root, _ = setup
    run = open_run(root / "run")
    model = run.load_model(device="cpu")
    saved = set()
    for i in range(8):
        save_weights(model, tmp_path / f"{i}.safetensors", run.vocab)
        saved.add((tmp_path / f"{i}.safetensors").read_bytes())
    assert len(saved) == 1
    blob = saved.pop()
    header = json.loads(blob[8 : 8 + int.from_bytes(blob[:8], "little")])
    assert list(header["__metadata__"]) == sorted(["format", VOCAB_DIGEST])
    reloaded = run.build_model()
    load_weights(reloaded, tmp_path / "0.safetensors")
    assert all(
        (a == b).all() for a, b in zip(model.state_dict().values(), reloaded.state_dict().values())
    )


def test_sorting_the_header_makes_no_second_copy_of_the_weights(tmp_path):
    """The sorted header was joined to the tensors' bytes: a second copy of every weight in
    memory at each save (hundreds of MB for a paper-size grammar)."""
    import tracemalloc

    import torch

    model = torch.nn.Linear(1024, 2048)  # 8 MiB of float32 weights
    size = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    save_weights(model, tmp_path / "warm.safetensors", Vocabulary(["a"]))  # imports outside
    tracemalloc.start()
    try:
        save_weights(model, tmp_path / "w.safetensors", Vocabulary(["a"]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert size < peak < 1.5 * size  # safetensors' own serialisation, and nothing more
    written = (tmp_path / "w.safetensors").read_bytes()
    assert written == (tmp_path / "warm.safetensors").read_bytes()


@pytest.mark.parametrize(
    "flag, said",
    [
        ("--keep-case", "lowercase: False, not True"),
        ("--keep-digits", "digits: None, not N"),
        ("--numbers=whole", "numbers: whole, not runs): the model would read other words than "
         "it was trained on (preprocess --numbers runs)"),
    ],
)  # fmt: skip
def test_a_dataset_of_other_words_is_refused(setup, tmp_path, flag, said):
    """A dataset made with the run's vocabulary but another normalisation (``--keep-case``)
    has the run's ids and other words: The read as <unk>, and perplexity was figured over
    them without a sign."""
    root, _ = setup
    text = tmp_path / "text.txt"
    text.write_text("The bill passed 12 votes\nThe man ran\n")
    data = tmp_path / "data"
    args = ["preprocess", "text", "--train", text, "--valid", text, "--vocab", root / "run"]
    made = CliRunner().invoke(app, [*map(str, args), flag, "-o", str(data)])
    assert made.exit_code == 0, made.output
    result = _invoke("evaluate", "mlm", "-m", root / "run", "-d", data)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {data}: the dataset normalised its words otherwise")
    assert said in result.stderr
