"""UDGN's parser BiLSTM (``induce.models.bilstm``): each direction's weights moved into a
buffer of their own, laid out as cuDNN reads a one-layer LSTM, keep their values, their
parameters and what the LSTM computes (the GPU side of it, that cuDNN reads them in place, is
in tests/gpu)."""

from __future__ import annotations

import copy

import torch
from torch import nn

from induce.models.bilstm import own_buffer, padded_bilstm

SUFFIXES = ("", "_reverse")


def _lstm() -> nn.LSTM:
    torch.manual_seed(0)
    return nn.LSTM(6, 5, num_layers=3, bidirectional=True, batch_first=True)


def _arrange(lstm: nn.LSTM) -> None:
    for layer in range(lstm.num_layers):
        for suffix in SUFFIXES:
            own_buffer(lstm, layer, suffix)


def _pointers(lstm: nn.LSTM) -> dict[str, int]:
    return {name: p.data_ptr() for name, p in lstm.named_parameters()}


def test_each_direction_of_each_layer_lies_in_a_buffer_of_its_own_in_cudnns_order():
    lstm = _lstm()
    before = copy.deepcopy(lstm)
    objects = {name: id(p) for name, p in lstm.named_parameters()}
    _arrange(lstm)
    assert {name: id(p) for name, p in lstm.named_parameters()} == objects
    for (name, p), q in zip(lstm.named_parameters(), before.parameters(), strict=True):
        assert torch.equal(p, q), name
    for layer in range(3):
        for suffix in SUFFIXES:
            names = [
                f"{n}_l{layer}{suffix}" for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
            ]
            params = [getattr(lstm, n) for n in names]
            storage = params[0].untyped_storage()
            at = storage.data_ptr()
            for p in params:
                assert p.untyped_storage().data_ptr() == storage.data_ptr()
                assert p.data_ptr() == at and p.is_contiguous()
                at += p.numel() * p.element_size()
            assert storage.nbytes() == at - storage.data_ptr()  # nothing else in it
    pointers = _pointers(lstm)
    _arrange(lstm)  # already so: nothing moves
    assert _pointers(lstm) == pointers


def test_the_arranged_lstm_computes_trains_and_saves_as_before():
    lstm, plain = _lstm(), _lstm()
    optimizers = [torch.optim.Adam(m.parameters(), lr=0.1) for m in (lstm, plain)]
    _arrange(lstm)  # after the optimizer was built, as on a GPU's first call
    keep = torch.arange(7)[None] < torch.tensor([7, 3, 1, 5])[:, None]
    x = torch.randn(4, 7, 6)
    for _ in range(2):
        outs = []
        for model, opt in zip((lstm, plain), optimizers, strict=True):
            opt.zero_grad()
            out = padded_bilstm(model, x, keep, nn.Identity())
            out.pow(2).sum().backward()
            opt.step()
            outs.append(out.detach())
        assert torch.equal(outs[0], outs[1])
    for p, q in zip(lstm.parameters(), plain.parameters(), strict=True):
        assert torch.equal(p, q)  # the optimizer updated the buffers the LSTM reads
    pointers = _pointers(lstm)
    lstm.load_state_dict(plain.state_dict())  # copied in place: the layout stays
    assert _pointers(lstm) == pointers
    fresh = nn.LSTM(6, 5, num_layers=3, bidirectional=True, batch_first=True)
    fresh.load_state_dict(lstm.state_dict())
    for p, q in zip(fresh.parameters(), plain.parameters(), strict=True):
        assert torch.equal(p, q)


def test_a_model_with_its_lstm_arranged_saves_and_loads_its_weights(tmp_path):
    from induce.models import build_model
    from induce.runs.directory import load_weights, save_weights

    settings = {"d_model": 16, "n_layers": 1, "n_heads": 2, "head_size": 8}
    model = build_model("udgn", settings, 30, 0)
    _arrange(model.lstm)
    save_weights(model, tmp_path / "weights.safetensors")
    again = build_model("udgn", settings, 30, 0)
    load_weights(again, tmp_path / "weights.safetensors")
    for (name, p), q in zip(model.state_dict().items(), again.state_dict().values(), strict=True):
        assert torch.equal(p, q), name
