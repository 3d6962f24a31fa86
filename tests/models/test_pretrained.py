"""Combiner from a local BERT checkpoint (a tiny random one made here, Hugging Face names),
with a WordPiece dataset of the same vocabulary; nothing downloaded, no transformers."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml
from safetensors.torch import save_file
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.dataset import load_dataset
from induce.data.vocab import MASK, PAD, UNK
from induce.models import build_model
from induce.runs.config import load_config

runner = CliRunner()
PIECES = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + (
    "the a cat dog sat ran on mat big small saw it . , and ##s ##ed n".split()
)
D, LAYERS, FF, POSITIONS = 16, 2, 32, 64


def make_bert(folder: Path, prefix: str = "bert.") -> dict[str, torch.Tensor]:
    """A BertForMaskedLM-shaped checkpoint of random tensors."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(PIECES) + "\n")
    config = {
        "hidden_size": D,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": 2,
        "intermediate_size": FF,
        "max_position_embeddings": POSITIONS,
        "vocab_size": len(PIECES),
        "hidden_act": "gelu",
    }
    (folder / "config.json").write_text(json.dumps(config))
    g = torch.Generator().manual_seed(7)
    shapes = {
        "embeddings.word_embeddings.weight": (len(PIECES), D),
        "embeddings.position_embeddings.weight": (POSITIONS, D),
        "embeddings.token_type_embeddings.weight": (2, D),
        "embeddings.LayerNorm.weight": (D,),
        "embeddings.LayerNorm.bias": (D,),
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value"):
            shapes |= {f"{p}{name}.weight": (D, D), f"{p}{name}.bias": (D,)}
        shapes |= {
            f"{p}attention.output.dense.weight": (D, D),
            f"{p}attention.output.dense.bias": (D,),
            f"{p}attention.output.LayerNorm.weight": (D,),
            f"{p}attention.output.LayerNorm.bias": (D,),
            f"{p}intermediate.dense.weight": (FF, D),
            f"{p}intermediate.dense.bias": (FF,),
            f"{p}output.dense.weight": (D, FF),
            f"{p}output.dense.bias": (D,),
            f"{p}output.LayerNorm.weight": (D,),
            f"{p}output.LayerNorm.bias": (D,),
        }
    tensors = {prefix + k: torch.randn(s, generator=g) for k, s in shapes.items()}
    tensors["cls.predictions.bias"] = torch.randn(len(PIECES), generator=g)
    tensors["cls.predictions.transform.LayerNorm.weight"] = torch.randn(D, generator=g)
    tensors["cls.predictions.transform.LayerNorm.bias"] = torch.randn(D, generator=g)
    save_file(tensors, str(folder / "model.safetensors"))
    return {k.removeprefix(prefix): v for k, v in tensors.items()}


def wordpiece_data(tmp_path: Path, bert: Path) -> Path:
    (tmp_path / "train.txt").write_text(
        "the cats sat on the mat .\na big dog ran , and saw it\n" * 4
    )
    (tmp_path / "valid.trees").write_text(
        "(S (NP (DT the) (NNS cats)) (VP (VBD sat) (PP (IN on) (NP (DT a) (NN mat)))))\n"
    )
    out = tmp_path / "data"
    made = runner.invoke(
        app,
        ["preprocess", "text", "--train", str(tmp_path / "train.txt")]
        + ["--valid-trees", str(tmp_path / "valid.trees"), "-o", str(out)]
        + ["--tokenizer", "wordpiece", "--tokenizer-files", str(bert)],
    )
    assert made.exit_code == 0, made.output
    return out


def test_wordpiece_data_keeps_berts_ids_under_our_special_names(tmp_path):
    make_bert(tmp_path / "bert")
    data = load_dataset(wordpiece_data(tmp_path, tmp_path / "bert"))
    assert data.vocab is not None
    expected = [{"[PAD]": PAD, "[UNK]": UNK, "[MASK]": MASK}.get(t, t) for t in PIECES]
    assert data.vocab.tokens == expected
    first = next(data.sentences("train"))
    assert first == ["the", "cat", "##s", "sat", "on", "the", "mat", "."]
    assert next(data.lines("train.align")) == "0 1 1 2 3 4 5 6"


@torch.no_grad()
def test_the_weights_are_berts(tmp_path):
    tensors = make_bert(tmp_path / "bert")
    sizes = ["model.d_model=16", "model.n_layers=2", "model.n_heads=2", "model.d_ff=32"]
    config = load_config("combiner", sizes + ["model.max_length=64"], preset="demo")
    model = build_model("combiner", config.model, len(PIECES), 0)
    model.load_pretrained(str(tmp_path / "bert"))
    assert torch.equal(model.embed.weight, tensors["embeddings.word_embeddings.weight"])
    positions = tensors["embeddings.position_embeddings.weight"]
    segment = tensors["embeddings.token_type_embeddings.weight"][0]
    assert torch.equal(model.positions.weight, positions + segment)
    layer = model.layers[1]
    q, k = (tensors[f"encoder.layer.1.attention.self.{n}.weight"] for n in ("query", "key"))
    assert torch.equal(layer.qk.weight, torch.cat([q, k]))
    assert torch.equal(layer.v.bias, tensors["encoder.layer.1.attention.self.value.bias"])
    assert torch.equal(layer.ff[2].weight, tensors["encoder.layer.1.output.dense.weight"])
    assert torch.equal(layer.norm_ff.bias, tensors["encoder.layer.1.output.LayerNorm.bias"])
    assert torch.equal(model.out_bias, tensors["cls.predictions.bias"])
    wrong = build_model("combiner", config.model, len(PIECES) + 1, 0)
    with pytest.raises(Exception, match="--tokenizer wordpiece"):
        wrong.load_pretrained(str(tmp_path / "bert"))


def test_train_init_from_takes_the_sizes_and_runs(tmp_path):
    bert = tmp_path / "bert"
    make_bert(bert, prefix="")  # a BertModel folder: no prefix, no MLM head
    data = wordpiece_data(tmp_path, bert)
    run = tmp_path / "run"
    args = ["train", "--arch", "combiner", "--data", str(data), "--out", str(run)]
    args += ["--config", "demo", "--init-from", str(bert), "--device", "cpu"]
    args += ["--set", "train.max_steps=2", "--set", "train.eval_every=2"]
    # a validation split of a few words: a rate that masks some (no masked token: refused)
    args += ["--set", "data.mask_rate=0.5"]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    model = yaml.safe_load((run / "config.yaml").read_text())["model"]
    assert (model["d_model"], model["n_layers"], model["d_ff"], model["max_length"]) == (
        16,
        2,
        32,
        64,
    )
    plain = runner.invoke(
        app,
        ["train", "--arch", "udgn", "--data", str(data), "--out", str(tmp_path / "u")]
        + ["--config", "demo", "--init-from", str(bert), "--device", "cpu"],
    )
    assert plain.exit_code == 2 and "cannot start from a BERT checkpoint" in plain.stderr


def test_bad_bert_folders_and_vocabularies_are_one_line_errors(tmp_path):
    bert = tmp_path / "bert"
    make_bert(bert)
    data = wordpiece_data(tmp_path, bert)
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = [
        # --init-from a folder without config.json
        ["train", "--arch", "combiner", "--data", str(data), "--out", str(tmp_path / "r1")]
        + ["--config", "demo", "--init-from", str(empty), "--device", "cpu"],
        # --tokenizer wordpiece from a folder without vocab.txt
        ["preprocess", "text", "--train", str(tmp_path / "train.txt"), "-o", str(tmp_path / "d")]
        + ["--tokenizer", "wordpiece", "--tokenizer-files", str(empty)],
        # --vocab that is not a vocabulary
        ["preprocess", "text", "--train", str(tmp_path / "train.txt"), "-o", str(tmp_path / "e")]
        + ["--vocab", str(bert / "model.safetensors")],
    ]
    for args in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert not (tmp_path / "r1").exists() and not (tmp_path / "d").exists()
    assert not (tmp_path / "e").exists()


def _init_from(tmp_path: Path, data: Path, bert: Path, out: str) -> Any:
    args = ["train", "--arch", "combiner", "--data", str(data), "--out", str(tmp_path / out)]
    return runner.invoke(
        app, [*args, "--config", "demo", "--init-from", str(bert), "--device", "cpu"]
    )


def test_a_bert_config_with_a_size_that_is_not_a_number_is_one_line(tmp_path):
    bert = tmp_path / "bert"
    make_bert(bert)
    data = wordpiece_data(tmp_path, bert)
    config = json.loads((bert / "config.json").read_text())
    for bad in ("sixty-four", -4, True, 2.5):
        config["hidden_size"] = bad
        (bert / "config.json").write_text(json.dumps(config))
        result = _init_from(tmp_path, data, bert, "r")
        assert result.exit_code == 2, result.output
        assert result.stderr.count("\n") == 1 and "hidden_size must be a positive integer" in (
            result.stderr
        )
    assert not (tmp_path / "r").exists()


def test_a_pickled_bert_binary_is_refused_in_our_words(tmp_path):
    bert = tmp_path / "bert"
    tensors = make_bert(bert)
    data = wordpiece_data(tmp_path, bert)
    (bert / "model.safetensors").unlink()

    # any Python object beyond tensors makes the file need unpickling
    torch.save({**tensors, "extra": argparse.Namespace(a=1)}, bert / "pytorch_model.bin")
    result = _init_from(tmp_path, data, bert, "r")
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and "model.safetensors" in result.stderr
    assert "weights_only" not in result.stderr
    assert not (tmp_path / "r").exists()
