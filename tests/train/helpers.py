"""A tiny dataset and tiny model settings for training tests."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.architectures import ARCHITECTURES
from tests.preprocess.fixtures import make_ptb

TINY = [
    "model.d_model=32",
    "model.n_layers=2",
    "model.n_heads=2",
    "data.batch_tokens=96",
    "data.eval_batch_tokens=256",
    "train.log_every=1",
    "train.checkpoint_every=0",
    "model.dropout=0.1",
]
EXTRA = {
    "transformer": ["model.d_ff=64"],
    "structformer": ["model.d_ff=64", "model.n_parser_layers=1", "model.conv_size=3"],
    "udgn": ["model.head_size=8", "model.n_parser_layers=1"],
    "combiner": ["model.d_ff=64"],
}


# the chart parser's tiny settings (its trainer reads sentences per batch, not tokens)
CHART_TINY = [
    "model.d_model=32",
    "model.d_position=16",
    "model.n_layers=1",
    "model.n_heads=2",
    "model.d_kv=8",
    "model.d_ff=32",
    "model.d_char=8",
    "model.d_label_hidden=16",
    "data.batch_sentences=4",
    "train.log_every=1",
    "train.checkpoint_every=0",
    "train.evals_per_epoch=0",
]


PCFG_TINY = [
    "model.nt=3",
    "model.t=4",
    "model.s_dim=8",
    "model.h_dim=8",
    "model.w_dim=8",
    "data.batch_sentences=4",
    "data.max_length=0",
    "data.length_step=0",
    "data.final_max_length=0",
    "train.log_every=1",
    "train.checkpoint_every=0",
]
PCFG_EXTRA = {"npcfg": [], "cpcfg": ["model.z_dim=4"]}
TNPCFG_TINY = ["model.nt=3", "model.t=4", "model.rank=4", "model.s_dim=8", *PCFG_TINY[5:]]
SIMPLE_TINY = ["model.nt=3", "model.t=6", "model.s_dim=8", *PCFG_TINY[5:]]  # T = 2N, as official

# the masked language models, whose tests share a batch format and the CUDA graphs
MASKED_LMS = [a.name for a in ARCHITECTURES if a.objective == "masked-lm"]


def tiny(arch: str) -> list[str]:
    if arch == "chart":
        return CHART_TINY
    if arch in PCFG_EXTRA:
        return PCFG_TINY + PCFG_EXTRA[arch]
    if arch == "tnpcfg":
        return TNPCFG_TINY
    if arch == "simplepcfg":
        return SIMPLE_TINY
    if arch == "scpcfg":
        return [*SIMPLE_TINY, "model.z_dim=4", "model.w_dim=8", "model.h_dim=8"]
    return TINY + EXTRA[arch]


def quiet_model(
    arch: str,
    d_model: int,
    n_heads: int,
    vocab: int,
    pad: int,
    n_layers: int = 2,
    settings: dict | None = None,
):
    """A small masked LM (``n_layers``, the test sizes of ``EXTRA`` scaled to ``d_model``,
    then ``settings``) with every dropout 0 unless ``settings`` sets one, in evaluation mode:
    training mode then computes the same function (what cuDNN's LSTM needs for a backward
    pass, and what equality tests want)."""
    import dataclasses

    import torch

    from induce.models import MODELS, build_model

    torch.manual_seed(0)
    sizes = {
        key.removeprefix("model."): int(value)
        * (d_model // 32 if key.endswith(("d_ff", "head_size")) else 1)
        for key, value in (item.split("=") for item in EXTRA[arch])
    }
    fields = {f.name for f in dataclasses.fields(MODELS[arch].config_class)}
    off = {name: 0.0 for name in fields if "dropout" in name}
    base = {"d_model": d_model, "n_layers": n_layers, "n_heads": n_heads, **sizes, **off}
    return build_model(arch, base | (settings or {}), vocab, pad).eval()


def make_dataset(root: Path) -> Path:
    """Sections 02 (train, 20 trees), 22 (valid, 5), 23 (test, 5) of the sample treebank."""
    make_ptb(root / "ptb", {"02": range(0, 20), "22": range(20, 25), "23": range(25, 30)})
    out = root / "data"
    result = CliRunner().invoke(app, ["preprocess", "ptb", "-t", str(root / "ptb"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def last_state(run: Path) -> dict:
    """The trainer state of the run's last checkpoint."""
    import torch

    from induce.runs.directory import STATE, read_pointer

    pointer = read_pointer(run)
    assert pointer is not None, f"{run} has no checkpoint"
    return torch.load(run / pointer["last"] / STATE, weights_only=True)


def weights_file(run: Path, which: str = "last") -> Path:
    from induce.runs.directory import open_run

    return open_run(run).weights(which)


def poison_weights(run: Path) -> None:
    """Put a NaN into the run's best weights, their metadata (the vocabulary's digest) kept."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    from induce.runs.directory import open_run

    path = open_run(run).weights("best")
    with safe_open(str(path), "pt") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 (safe_open has no iter)
        metadata = f.metadata()
    name = next(k for k, t in tensors.items() if t.is_floating_point())
    tensors[name].view(-1)[0] = float("nan")
    save_file(tensors, str(path), metadata=metadata)
