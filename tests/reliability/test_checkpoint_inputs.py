"""``induce convert checkpoint`` with a damaged input: the official weights (safetensors or a
torch file) or the dictionary truncated, emptied, replaced by text or binary junk, a folder,
or missing.  Each case: exit code 2, one ``error:`` line, no run folder, the input as it
was."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from induce.cli.app import app
from tests.reliability.test_bad_runs import _one_error
from tests.runs.test_official_import import WORDS, checkpoint, official


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _text(path: Path) -> None:
    path.write_text("this is not a checkpoint\n")


def _junk(path: Path) -> None:
    path.write_bytes(os.urandom(3000))


def _folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _missing(path: Path) -> None:
    path.unlink()


DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate,
    "empty": _empty,
    "text": _text,
    "binary junk": _junk,
    "a folder": _folder,
    "missing": _missing,
}
WEIGHTS = ("safetensors", "torch file")
CASES = [(f, d) for f in (*WEIGHTS, "dictionary") for d in DAMAGE]


def _inputs(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    if kind == "torch file":
        weights = tmp_path / "model.pt"
        torch.save(official("udgn")[0], weights)  # a plain state dict: loads without trust
    else:
        weights = checkpoint(tmp_path, "udgn")
    words = tmp_path / "words.txt"
    shutil.copy(WORDS, words)
    return weights, words


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("what, damage", CASES, ids=[f"{w}|{d}" for w, d in CASES])
def test_a_damaged_checkpoint_input_is_one_line(tmp_path, what, damage):
    inputs = tmp_path / "in"
    inputs.mkdir()
    weights, words = _inputs(inputs, "torch file" if what == "torch file" else "safetensors")
    DAMAGE[damage](words if what == "dictionary" else weights)
    before = _snapshot(inputs)
    run = tmp_path / "run"
    args = ["convert", "checkpoint", str(weights), "--arch", "udgn", "--dict", str(words)]
    _one_error(CliRunner().invoke(app, [*args, "--out", str(run)]))
    assert not run.exists()
    assert _snapshot(inputs) == before


@pytest.mark.parametrize(
    "damage, message",
    [
        ("text", "not a PyTorch checkpoint: neither the zip archive nor the pickle"),
        ("empty", "not a PyTorch checkpoint: neither the zip archive nor the pickle"),
        ("a folder", "is a directory, expected a checkpoint file"),
    ],
)
def test_what_is_not_a_torch_file_is_said_so(tmp_path, damage, message):
    """Text is not a pickled model that ``--trust-pickle`` would open; a folder is not a
    missing file."""
    weights, words = _inputs(tmp_path, "torch file")
    DAMAGE[damage](weights)
    args = ["convert", "checkpoint", str(weights), "--arch", "udgn", "--dict", str(words)]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run")])
    _one_error(result)
    assert result.stderr.startswith(f"error: {weights}: {message}")


@pytest.mark.parametrize("kind", WEIGHTS)
def test_the_undamaged_inputs_convert(tmp_path, kind):
    weights, words = _inputs(tmp_path, kind)
    args = ["convert", "checkpoint", str(weights), "--arch", "udgn", "--dict", str(words)]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output


def _grammar(arch: str, **changes: object) -> dict[str, torch.Tensor]:
    """The state dict of a tiny freshly built ``arch`` (its names are the official code's)."""
    from induce.models import build_model, model_config
    from induce.runs.config import load_config

    base = load_config(arch).model
    known = {f.name for f in dataclasses.fields(model_config(arch, base))}
    small = {"nt": 2, "t": 4, "s_dim": 6, "z_dim": 2, "w_dim": 5, "h_dim": 3, "rank": 3}
    sizes = {k: v for k, v in small.items() if k in known}
    if arch == "npcfg":
        sizes["z_dim"] = 0
    config = dataclasses.asdict(model_config(arch, {**base, **sizes}))
    tensors = build_model(arch, config, len(WORDS.read_text().split()), 1).state_dict()
    for key, value in changes.items():
        if value is None:
            del tensors[key]
        else:
            tensors[key] = value  # type: ignore[assignment]
    return tensors


def _official(name: str, **changes: torch.Tensor | None) -> dict[str, torch.Tensor]:
    tensors = official(name)[0]
    for key, value in changes.items():
        if value is None:
            del tensors[key]
        else:
            tensors[key] = value
    return tensors


z = torch.zeros
# (arch, the state dict, what the one line must say): wrong ranks, empty axes, missing keys
# and sizes that disagree, for each family of official checkpoints
MALFORMED: dict[str, tuple[str, Callable[[], dict[str, torch.Tensor]], str]] = {
    "udgn 1-d embeddings": ("udgn", lambda: {"emb.weight": z(5)}, "emb.weight is of shape [5]"),
    "udgn 1-d rels_bias": (
        "udgn",
        lambda: _official("udgn", **{"layers.0.self_attn.rels_bias": z(2)}),
        "layers.0.self_attn.rels_bias is of shape [2], expected [2, H]",
    ),
    "udgn no heads": (
        "udgn",
        lambda: _official("udgn", **{"layers.0.self_attn.rels_bias": z(2, 0)}),
        "layers.0.self_attn.rels_bias is of shape [2, 0]",
    ),
    "udgn another width": (
        "udgn",
        lambda: _official("udgn", **{"parser_ff.weight": z(16, 15)}),
        "parser_ff.weight is of shape [16, 15]",
    ),
    "structformer 2-d _rel_weight": (
        "structformer",
        lambda: {"_rel_weight": z(2, 2), "emb.weight": z(5, 4)},
        "_rel_weight is of shape [2, 2], expected [L, H, R]",
    ),
    "structformer q/k/v differ": (
        "structformer",
        lambda: _official("google_structformer_abs", **{"layers.1.self_attn.k_proj.weight": z(8)}),
        "layers.1.self_attn.q/k/v_proj.weight are of shapes [8, 8], [8], [8, 8]",
    ),
    "structformer relative bias missing": (
        "structformer",
        lambda: _official(
            "google_structformer_rel_sigmoid", **{"layers.1.self_attn.relative_bias": None}
        ),
        "missing ['layers.1.self_attn.relative_bias']",
    ),
    "structformer heads that do not divide": (
        "structformer",
        lambda: _official("google_structformer_abs", _rel_weight=z(2, 3, 2)),
        "sizes make no valid structformer",
    ),
    "cpcfg without its encoder": (
        "cpcfg",
        lambda: {
            "nt_emb": z(4, 3),
            "t_emb": z(4, 3),
            "rule_mlp.weight": z(10, 5),
            "vocab_mlp.3.weight": z(5, 3),
        },
        "not an official compound-pcfg checkpoint: no enc_emb.weight",
    ),
    "npcfg 1-d nt_emb": ("npcfg", lambda: _grammar("npcfg", nt_emb=z(6)), "nt_emb is of shape [6]"),
    "cpcfg an emission bias of another vocabulary": (
        "cpcfg",
        lambda: _grammar("cpcfg", **{"vocab_mlp.3.bias": z(19)}),
        "vocab_mlp.3.bias is of shape [19], where the sizes of the other tensors make it [18]",
    ),
    "tnpcfg 1-d term_emb": (
        "tnpcfg",
        lambda: _grammar("tnpcfg", term_emb=z(4)),
        "not an official TN-PCFG checkpoint: term_emb is of shape [4], expected [T, S]",
    ),
    "simplepcfg 1-d rule_state_emb": (
        "simplepcfg",
        lambda: _grammar("simplepcfg", rule_state_emb=z(6)),
        "rule_state_emb is of shape [6]",
    ),
    "scpcfg without enc_rnn": (
        "scpcfg",
        lambda: _grammar("scpcfg", **{"enc_rnn.weight_hh_l0": None}),
        "no enc_rnn.weight_hh_l0",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_state_dict_is_one_line_naming_the_tensor(tmp_path, case):
    """Tensors of the wrong rank, empty, missing or of sizes that disagree: one line naming
    the file and the tensor (they used to be IndexError, ZeroDivisionError, ValueError and
    KeyError tracebacks from the mappers)."""
    arch, tensors, fragment = MALFORMED[case]
    inputs = tmp_path / "in"
    inputs.mkdir()
    weights = inputs / "model.pt"
    torch.save(tensors(), weights)
    words = inputs / "words.txt"
    shutil.copy(WORDS, words)
    before = _snapshot(inputs)
    run = tmp_path / "run"
    args = ["convert", "checkpoint", str(weights), "--arch", arch, "--dict", str(words)]
    result = CliRunner().invoke(app, [*args, "--out", str(run)])
    _one_error(result)
    assert result.stderr.startswith(f"error: {weights}: ") and fragment in result.stderr
    assert not run.exists() and _snapshot(inputs) == before


def test_a_grammar_vocabulary_without_unk_is_refused(tmp_path):
    """A run's vocabulary needs <unk> (every unknown word's id; vocab.json without it is
    refused on reading): the import says so about the dictionary, and writes no run."""
    weights = tmp_path / "model.pt"
    torch.save(_grammar("tnpcfg"), weights)
    words = tmp_path / "words.txt"
    words.write_text(WORDS.read_text().replace("<unk>\n", "<UNK>\n"))
    run = tmp_path / "run"
    args = ["convert", "checkpoint", str(weights), "--arch", "tnpcfg", "--dict", str(words)]
    result = CliRunner().invoke(app, [*args, "--out", str(run)])
    _one_error(result)
    assert f"error: {words}: the vocabulary has no <unk> token" in result.stderr
    assert not run.exists()


def _weights_of(arch: str, folder: Path) -> Path:
    weights = folder / "model.pt"
    torch.save(official("udgn")[0] if arch == "udgn" else _grammar(arch), weights)
    return weights


# (the damage, its line): each reader of a word list (the masked LMs' dictionary, the
# grammars' ``word id`` list) refuses what every text reader refuses, at its line: a NUL
# passed as a word character, and a lone CR split one word in two (the grammars' reader
# used str.splitlines), shifting every id after it
BAD_WORDS = {"a NUL byte": (b"\0", 3), "a lone carriage return": (b"\r", 2)}


@pytest.mark.parametrize("arch", ["udgn", "tnpcfg"])
@pytest.mark.parametrize("bad", list(BAD_WORDS))
def test_a_word_list_with_a_nul_or_a_lone_cr_is_refused_at_its_line(tmp_path, arch, bad):
    byte, line = BAD_WORDS[bad]
    words = tmp_path / "words.txt"
    lines = WORDS.read_bytes().split(b"\n")
    lines[line - 1] = lines[line - 1][:1] + byte + lines[line - 1][1:]
    words.write_bytes(b"\n".join(lines))
    weights = _weights_of(arch, tmp_path)
    run = tmp_path / "run"
    args = ["convert", "checkpoint", str(weights), "--arch", arch, "--dict", str(words)]
    result = CliRunner().invoke(app, [*args, "--out", str(run)])
    _one_error(result)
    assert result.stderr.startswith(f"error: {words}:{line}: a ")
    assert ("NUL" in result.stderr) == (bad == "a NUL byte") and not run.exists()


@pytest.mark.parametrize("arch", ["udgn", "tnpcfg"])
def test_a_word_list_with_crlf_line_ends_reads_as_with_lf(tmp_path, arch):
    """A word list saved on Windows is the same list (the masked LMs' reader refused it:
    'expected one word per line, without spaces')."""
    vocabularies = []
    for name, text in (
        ("lf", WORDS.read_bytes()),
        ("crlf", WORDS.read_bytes().replace(b"\n", b"\r\n")),
    ):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "words.txt").write_bytes(b"\xef\xbb\xbf" + text if name == "crlf" else text)
        weights = _weights_of(arch, folder)
        args = ["convert", "checkpoint", str(weights), "--arch", arch]
        args += ["--dict", str(folder / "words.txt"), "--out", str(folder / "run")]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        vocabularies.append(json.loads((folder / "run" / "vocab.json").read_bytes())["tokens"])
    assert vocabularies[0] == vocabularies[1]


@pytest.mark.parametrize(
    "arch, change, line, fragment",
    [
        ("udgn", lambda lines: lines + [lines[2]], None, "twice"),
        ("tnpcfg", lambda lines: lines + [lines[2]], None, "twice"),
        # the official PCFG dictionary's 'word id' lines: a word or an id given twice
        (
            "tnpcfg",
            lambda lines: [f"{w} {k}" for k, w in enumerate(lines + [lines[2]])],
            None,
            "twice",
        ),
        ("tnpcfg", lambda lines: [f"{w} {min(k, 3)}" for k, w in enumerate(lines)], 5, "the id 3 "),
    ],
    ids=["masked-lm", "word-list", "word-id", "id"],
)
def test_a_word_listed_twice_is_named_at_its_line(tmp_path, arch, change, line, fragment):
    """'the dictionary lists a word twice' named neither the word nor its line, and the
    'word id' format took a word given two ids."""
    lines = change(WORDS.read_text().splitlines())
    words = tmp_path / "words.txt"
    words.write_text("\n".join(lines) + "\n")
    weights = _weights_of(arch, tmp_path)
    run = tmp_path / "run"
    args = ["convert", "checkpoint", str(weights), "--arch", arch, "--dict", str(words)]
    result = CliRunner().invoke(app, [*args, "--out", str(run)])
    _one_error(result)
    at = len(lines) if line is None else line  # None: the last line
    assert result.stderr.startswith(f"error: {words}:{at}: ") and fragment in result.stderr
    assert not run.exists()
