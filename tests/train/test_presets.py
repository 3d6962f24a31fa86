"""Protocol presets: every shipped preset loads and checks; ``extends`` chains; the values
that make a preset the paper's protocol; the reference initialisation and batching."""

from __future__ import annotations

import math

import pytest
import torch

from induce.data.architectures import names
from induce.data.errors import ConfigError
from induce.models import build_model
from induce.runs.batches import plan_batches
from induce.runs.config import architectures, load_config, presets


@pytest.mark.parametrize("name", presets())
def test_every_preset_loads(name):
    config = load_config(None, preset=name)
    assert config.protocol.name == name
    assert config.arch in architectures()


def test_paper_is_the_ptb_paper_preset_of_the_arch():
    assert load_config("udgn") == load_config(None, preset="udgn-ptb-paper")
    assert sorted(architectures()) == sorted(names())  # every architecture has its preset


def test_paper_presets_are_the_reference_protocol():
    udgn = load_config(None, preset="udgn-ptb-paper")
    assert (udgn.train.patience, udgn.train.bf16, udgn.data.eval_runs) == (0, False, 5)
    assert udgn.train.valid_decoder == "argmax"
    assert udgn.protocol.test_decoder == "mst-uniform-root"
    assert udgn.model["init"] == "xavier" and udgn.data.batching == "summed"
    sf = load_config(None, preset="structformer-ptb-paper")
    assert (sf.optim.lr, sf.model["dropout"], sf.data.eval_runs) == (3e-4, 0.1, 1)
    fast = load_config(None, preset="udgn-ptb-fast")
    assert (fast.train.patience, fast.train.bf16, fast.data.batching) == (10, True, "padded")
    assert fast.model == udgn.model and fast.optim == udgn.optim
    # the official code draws new validation masks at every evaluation; the -fast presets
    # keep one draw, so that early stopping watches the model, not the draw
    for name in ("udgn-ptb-paper", "structformer-ptb-paper", "transformer-ptb-paper"):
        assert load_config(None, preset=name).data.eval_masks == "fresh", name
    for name in ("udgn-ptb-fast", "structformer-ptb-fast"):
        assert load_config(None, preset=name).data.eval_masks == "fixed", name


def test_a_preset_that_changes_arch_replaces_the_model_block():
    variant = load_config(None, preset="structformer-udgn-repo")
    assert variant.arch == "structformer"
    assert "head_size" not in variant.model
    assert (variant.model["parser_dropout"], variant.model["position"]) == (0.2, "none")
    assert variant.optim.lr == 1e-3 and variant.data.eval_runs == 5  # UDGN's schedule


def test_preset_files_extend_and_refuse_cycles(tmp_path):
    own = tmp_path / "mine.yaml"
    own.write_text("extends: udgn-ptb-paper\noptim:\n  lr: 0.002\n")
    config = load_config(None, preset=str(own))
    assert config.optim.lr == 0.002 and config.model["head_size"] == 128
    own.write_text("extends: no-such-preset\n")
    with pytest.raises(ConfigError, match="no such preset"):
        load_config(None, preset=str(own))
    with pytest.raises(ConfigError, match="must be paper, demo, a preset"):
        load_config("udgn", preset="fast")
    with pytest.raises(ConfigError, match="the config is for 'udgn'"):
        load_config("structformer", preset="udgn-ptb-paper")


def test_protocol_decoder_is_checked():
    with pytest.raises(ConfigError, match="protocol.test_decoder must be one of"):
        load_config("udgn", ["protocol.test_decoder=cky"])


@pytest.mark.parametrize("arch", ["transformer", "structformer", "udgn"])
@torch.no_grad()
def test_xavier_init_is_the_reference_scale(arch):
    d = 64
    sizes = [f"model.d_model={d}", "model.n_layers=2", "model.n_heads=4"]
    sizes += ["model.head_size=16"] if arch == "udgn" else ["model.d_ff=128"]
    torch.manual_seed(0)
    ref = build_model(arch, load_config(arch, sizes).model, 50, 1)
    plain = build_model(arch, load_config(arch, sizes + ["model.init=torch"]).model, 50, 1)
    if arch == "udgn":
        fused = ref.layers[0].proj.weight
        assert float(fused.abs().max()) <= math.sqrt(6 / sum(fused.shape))  # one matrix
        proj = ref.layers[0].out.weight  # [D, H d]: where torch's default differs most
        bound = math.sqrt(6 / sum(proj.shape))
        assert float(ref.layers[0].proj.bias.abs().max()) == 0.0
    else:
        proj = ref.layers[0].attn.qkv.weight[:d]  # the query matrix alone
        bound = math.sqrt(6 / (2 * d))
        assert float(ref.layers[0].attn.qkv.bias.abs().max()) == 0.0
        conv = getattr(ref, "parser", None)
        if conv is not None:
            assert float(conv[0][0].conv.bias.abs().max()) == 0.0
    assert bound * 0.9 < float(proj.abs().max()) <= bound
    assert float(proj.std()) == pytest.approx(bound / math.sqrt(3), rel=0.1)
    assert float(plain_weight(plain, arch).abs().max()) < bound * 0.9


def plain_weight(model, arch):
    return model.layers[0].out.weight if arch == "udgn" else model.layers[0].attn.qkv.weight


def test_summed_batching_is_the_reference_batchify():
    lengths = [5, 9, 3, 9, 4, 7, 2]
    plan = plan_batches(lengths, 20, "summed")
    # longest first; a sentence joins while the summed lengths stay below 20
    assert [[lengths[i] for i in b] for b in plan] == [[9, 9], [7, 5, 4, 3], [2]]
    assert sorted(i for b in plan for i in b) == list(range(len(lengths)))
    assert plan_batches([30, 2], 20, "summed") == [[0], [1]]  # too long: alone
    padded = plan_batches(lengths, 20, "padded")
    assert all(len(b) * max(lengths[i] for i in b) <= 20 for b in padded if len(b) > 1)
