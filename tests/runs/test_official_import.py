"""Official StructFormer / UDGN checkpoints imported as run directories.

The fixtures were made out of tree by the official code (google-research ``structformer/``
and the UDGN repository), tiny models (width 8, 2 layers, 2 heads, 17 words) with weights
rounded to float16 so that they are stored exactly: ``NAME.safetensors.gz`` is the official
state dict, ``NAME.json.gz`` the official outputs in eval mode, one sentence at a time
(StructFormer: distances, heights, the parent distribution ``head``; UDGN: ``p_dict['head']``;
both: the masked-LM loss of a fixed mask), ``words.txt`` the dictionary in id order.
"""

from __future__ import annotations

import gzip
import json
import pickle
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load, save_file
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.dictionaries import read_dictionary
from induce.data.errors import ConfigError, InputError
from induce.runs import open_run
from induce.runs.official import import_checkpoint
from induce.runs.official_files import read_state_dict

FIXTURES = Path(__file__).parent / "fixtures"
WORDS = FIXTURES / "words.txt"
MASK_ID = 2
CASES = {  # fixture: (arch, extra arguments)
    "google_structformer_abs": ("structformer", {}),
    "google_structformer_rel_sigmoid": ("structformer", {"weight_act": "sigmoid"}),
    "udgnrepo_structformer": ("structformer", {}),
    "udgn": ("udgn", {}),
}
runner = CliRunner()


def official(name: str) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    tensors = load(gzip.decompress((FIXTURES / f"{name}.safetensors.gz").read_bytes()))
    expected = json.loads(gzip.decompress((FIXTURES / f"{name}.json.gz").read_bytes()))
    return tensors, expected


def checkpoint(tmp_path: Path, name: str, tensors: dict[str, torch.Tensor] | None = None) -> Path:
    path = tmp_path / f"{name}.safetensors"
    save_file(tensors if tensors is not None else official(name)[0], str(path))
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_equal_the_official_model(tmp_path: Path, name: str) -> None:
    arch, extra = CASES[name]
    run = import_checkpoint(checkpoint(tmp_path, name), arch, tmp_path / "run", WORDS, **extra)
    model = open_run(run).load_model(device="cpu")
    _, expected = official(name)
    for ids, masked_at, want in zip(expected["sentences"], expected["masks"], expected["results"]):
        x = torch.tensor([ids])
        keep = torch.ones_like(x, dtype=torch.bool)
        with torch.no_grad():
            scores = model.structure(x, keep)
            assert scores is not None
            close(scores.parents[0], want["head"])
            if arch == "structformer":
                close(scores.distances[0], want["distance"])
                close(scores.heights[0], want["height"])
            masked = torch.zeros_like(keep)
            masked[0, masked_at] = True
            hidden = model(x.masked_fill(masked, MASK_ID), keep).hidden
            loss = F.cross_entropy(model.logits(hidden[masked]), x[masked])
        assert loss.item() == pytest.approx(want["loss"], abs=1e-5)


def close(got: torch.Tensor, want: list) -> None:
    torch.testing.assert_close(got.float(), torch.tensor(want), atol=1e-5, rtol=1e-5)


def test_settings_are_read_from_the_shapes(tmp_path: Path) -> None:
    run = open_run(
        import_checkpoint(
            checkpoint(tmp_path, "google_structformer_rel_sigmoid"),
            "structformer",
            tmp_path / "run",
            WORDS,
            weight_act="sigmoid",
        )
    )
    m = run.config.model
    assert (m["d_model"], m["n_layers"], m["n_heads"], m["d_ff"]) == (8, 2, 2, 32)
    assert (m["position"], m["n_parser_layers"], m["conv_size"]) == ("relative", 1, 3)
    assert m["relations"] == ["parent", "dependent"] and m["relation_weight"] == "sigmoid"
    assert run.vocab.tokens == WORDS.read_text().split()
    pointer = json.loads((run.path / "checkpoint.json").read_text())
    assert pointer["best"] == pointer["last"] and run.weights().is_file()


@pytest.mark.parametrize(
    ("name", "protocol"),
    [
        ("google_structformer_abs", "structformer-ptb-paper"),
        ("udgnrepo_structformer", "structformer-udgn-repo"),
        ("udgn", "udgn-ptb-paper"),
    ],
)
def test_the_settings_of_the_reference_protocol(tmp_path: Path, name: str, protocol: str) -> None:
    arch, _ = CASES[name]
    config = open_run(
        import_checkpoint(checkpoint(tmp_path, name), arch, tmp_path / "run", WORDS)
    ).config
    assert config.protocol.name == protocol and config.model["d_model"] == 8
    if name == "udgn":  # parse decodes as the official test script unless told otherwise
        assert config.protocol.test_decoder == "mst-uniform-root"
    if name == "udgnrepo_structformer":
        assert config.model["embed_dropout"] == config.model["parser_dropout"] == 0.2
        assert config.model["norm_affine"] is False  # its TransformerLayer's LayerNorms
    if arch == "structformer":  # both repositories calibrate by the batch's largest margin
        assert config.model["calibration"] == "batch"


def test_missing_and_unexpected_keys_are_named(tmp_path: Path) -> None:
    tensors, _ = official("udgn")
    tensors.pop("layers.1.self_attn.out_proj.bias")
    tensors["layers.0.self_attn.extra"] = torch.zeros(2)
    with pytest.raises(InputError, match=r"missing \['layers.1.self_attn.out_proj.bias'\]") as err:
        import_checkpoint(checkpoint(tmp_path, "x", tensors), "udgn", tmp_path / "run", WORDS)
    assert "unexpected ['layers.0.self_attn.extra']" in str(err.value)
    assert not (tmp_path / "run").exists()


def test_weights_holding_nan_are_refused(tmp_path: Path) -> None:
    """A diverged run's checkpoint imported, exit 0; every score of the run was NaN then
    (``evaluate likelihood --json`` a traceback)."""
    tensors, _ = official("udgn")
    tensors["layers.1.self_attn.out_proj.bias"][3] = float("nan")
    with pytest.raises(InputError, match=r"out_proj.bias holds NaN or infinite values: a div"):
        import_checkpoint(checkpoint(tmp_path, "x", tensors), "udgn", tmp_path / "run", WORDS)
    assert not (tmp_path / "run").exists()


def test_the_wrong_architecture_is_refused(tmp_path: Path) -> None:
    path = checkpoint(tmp_path, "udgn")
    with pytest.raises(InputError, match="not an official StructFormer checkpoint"):
        import_checkpoint(path, "structformer", tmp_path / "run", WORDS)


def test_a_dictionary_of_another_size_is_refused(tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text(WORDS.read_text() + "extra\n")
    with pytest.raises(InputError, match="another corpus"):
        import_checkpoint(checkpoint(tmp_path, "udgn"), "udgn", tmp_path / "run", words)


def test_a_sibling_relation_cannot_be_expressed(tmp_path: Path) -> None:
    path = checkpoint(tmp_path, "google_structformer_abs")
    with pytest.raises(ConfigError, match="cibling"):
        import_checkpoint(
            path, "structformer", tmp_path / "run", WORDS, relations=["head", "cibling"]
        )


class SavedModel(torch.nn.Module):
    """What the official training script pickles: a whole model (here, its tensors)."""

    def __init__(self, tensors: dict[str, torch.Tensor]) -> None:
        super().__init__()
        self.tensors = tensors

    def state_dict(self, *args: Any, **kwargs: Any) -> dict[str, torch.Tensor]:  # type: ignore[override]
        return dict(self.tensors)


def test_a_code_pickle_needs_trust(tmp_path: Path) -> None:
    tensors, _ = official("udgn")
    path = tmp_path / "model.pt"
    torch.save([SavedModel(tensors), None, None, None], path)
    with pytest.raises(ConfigError, match="trust_pickle is needed.*runs code"):
        read_state_dict(path)
    assert read_state_dict(path, trust_pickle=True).keys() == tensors.keys()


def test_a_code_pickle_without_its_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "gone_models.py").write_text(
        "import torch\nclass UDGN(torch.nn.Module):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import gone_models  # type: ignore[import-not-found]

    torch.save([gone_models.UDGN()], tmp_path / "model.pt")
    monkeypatch.delitem(sys.modules, "gone_models")
    (tmp_path / "gone_models.py").unlink()
    with pytest.raises(InputError, match="needs the official code"):
        read_state_dict(tmp_path / "model.pt", trust_pickle=True)


def test_a_plain_state_dict_loads_without_trust(tmp_path: Path) -> None:
    tensors, _ = official("udgn")
    torch.save(tensors, tmp_path / "sd.pt")
    assert read_state_dict(tmp_path / "sd.pt").keys() == tensors.keys()


def test_the_pickled_official_dictionary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "data_dep.py").write_text(
        "class Dictionary:\n"
        "    def __init__(self, words):\n"
        "        self.idx2word = list(words)\n"
        "        self.word2idx = {w: i for i, w in enumerate(words)}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import data_dep  # type: ignore[import-not-found]

    words = WORDS.read_text().split()
    (tmp_path / "ptb-dict.pkl").write_bytes(pickle.dumps(data_dep.Dictionary(words)))
    monkeypatch.delitem(sys.modules, "data_dep")
    assert read_dictionary(tmp_path / "ptb-dict.pkl") == words
    assert "data_dep" not in sys.modules  # read without importing the official module
    # a word twice: a pickle's list has no lines, so its position is in the message
    (tmp_path / "twice.pkl").write_bytes(pickle.dumps([*words, words[2]]))
    with pytest.raises(InputError) as err:
        read_dictionary(tmp_path / "twice.pkl")
    position = f"(item {len(words) + 1} of idx2word)"
    assert (
        str(err.value)
        == f"{tmp_path / 'twice.pkl'}: the dictionary lists {words[2]!r} twice {position}"
    )


@pytest.mark.parametrize("gap", ["repeat", "gap"])
def test_a_bare_word2idx_whose_ids_do_not_run_is_refused(tmp_path: Path, gap: str) -> None:
    """Its words were sorted by id unchecked: a repeated id or a gap gave every later word
    the embedding row of another (the import of a checkpoint of as many rows passed)."""
    words = WORDS.read_text().split()
    ids = {w: k for k, w in enumerate(words)}
    if gap == "repeat":
        ids[words[4]] = 3
    else:
        ids = {w: (k if k < 5 else k + 1) for w, k in ids.items()}
    (tmp_path / "w2i.pkl").write_bytes(pickle.dumps(ids))
    with pytest.raises(InputError, match=r"ids must run 0, 1, 2, \.\.\. without a gap"):
        read_dictionary(tmp_path / "w2i.pkl")
    (tmp_path / "fine.pkl").write_bytes(pickle.dumps({w: k for k, w in enumerate(words)}))
    assert read_dictionary(tmp_path / "fine.pkl") == words


class Evil:
    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (print, ("pwned",))


def test_the_dictionary_unpickler_refuses_code(tmp_path: Path) -> None:
    (tmp_path / "dict.pkl").write_bytes(pickle.dumps({"idx2word": Evil()}))
    with pytest.raises(InputError, match="refused to load builtins.print"):
        read_dictionary(tmp_path / "dict.pkl")


def test_cli_convert_then_parse_and_report(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("INDUCE_CACHE_DIR", str(tmp_path / "cache"))
    path = checkpoint(tmp_path, "udgn")
    run = tmp_path / "run"
    args = ["convert", "checkpoint", str(path), "--arch", "udgn", "--dict", str(WORDS)]
    done = runner.invoke(app, [*args, "--out", str(run)])
    assert done.exit_code == 0, done.output
    from safetensors import safe_open

    from induce.runs.directory import open_run
    from induce.runs.weights import VOCAB_DIGEST

    imported = open_run(run)  # the imported weights keep their dictionary's digest
    with safe_open(str(imported.weights()), framework="pt") as handle:
        assert handle.metadata()[VOCAB_DIGEST] == imported.vocab.digest()
    text = tmp_path / "in.txt"
    text.write_text("the cat sat on the mat .\nthe dog ran\n")
    parsed = runner.invoke(
        app, ["parse", str(text), "--model", str(run), "--decoder", "mst-uniform-root"]
    )
    assert parsed.exit_code == 0, parsed.output
    heads = [line.split("\t")[6] for line in parsed.stdout.splitlines() if line[:1].isdigit()]
    assert len(heads) == 10 and heads.count("0") == 2
    assert runner.invoke(app, ["report", str(run)]).exit_code == 0
    again = runner.invoke(app, [*args, "--out", str(run)])
    assert again.exit_code == 2 and "not empty" in again.output


def test_cli_refuses_a_code_pickle_in_one_line(tmp_path: Path) -> None:
    tensors, _ = official("udgn")
    torch.save([SavedModel(tensors)], tmp_path / "model.pt")
    args = ["convert", "checkpoint", str(tmp_path / "model.pt"), "--arch", "udgn"]
    done = runner.invoke(app, [*args, "--dict", str(WORDS), "--out", str(tmp_path / "run")])
    assert done.exit_code == 2
    assert (
        done.output.startswith("error: --trust-pickle is needed") and done.output.count("\n") == 1
    )
    # a state dict written by pickle.dump: torch warned of its protocol in two lines first
    with open(tmp_path / "plain.pt", "wb") as handle:
        pickle.dump(tensors, handle, protocol=4)
    args[2] = str(tmp_path / "plain.pt")
    import warnings

    with warnings.catch_warnings(record=True) as caught:  # what a process prints on stderr
        warnings.simplefilter("always")
        done = runner.invoke(app, [*args, "--dict", str(WORDS), "--out", str(tmp_path / "run")])
    assert done.exit_code == 2 and done.output.count("\n") == 1, done.output
    assert not [w for w in caught if "pickle protocol" in str(w.message)]


def test_evaluate_mlm_on_data_of_the_official_vocabulary(tmp_path: Path) -> None:
    run = import_checkpoint(checkpoint(tmp_path, "udgn"), "udgn", tmp_path / "run", WORDS)
    (tmp_path / "train.txt").write_text("the cat sat on the mat .\n" * 3)
    (tmp_path / "test.txt").write_text("the dog ran .\na big cat saw it .\n")
    text = ["preprocess", "text", "--train", str(tmp_path / "train.txt")]
    text += ["--test", str(tmp_path / "test.txt")]
    # --vocab: the official dictionary (here its word list), or the run's own vocab.json
    for source, data in ((WORDS, tmp_path / "d1"), (run, tmp_path / "d2")):
        made = runner.invoke(app, text + ["-o", str(data), "--vocab", str(source)])
        assert made.exit_code == 0, made.output
        assert (
            json.loads((data / "vocab.json").read_text())["tokens"]
            == json.loads((run / "vocab.json").read_text())["tokens"]
        )
        done = runner.invoke(
            app, ["evaluate", "mlm", "--model", str(run), "--data", str(data), "--device", "cpu"]
        )
        assert done.exit_code == 0, done.output
    both = runner.invoke(
        app, text + ["-o", str(tmp_path / "x"), "--vocab", str(run)] + ["--min-freq", "2"]
    )
    assert both.exit_code == 2 and "--vocab gives the vocabulary" in both.stderr
