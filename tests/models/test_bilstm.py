"""UDGN's parser BiLSTM (``induce.models.bilstm``): each direction's weights moved into a
buffer of their own, laid out as cuDNN reads a one-layer LSTM, keep their values, their
parameters and what the LSTM computes (the GPU side of it, that cuDNN reads them in place, is
in tests/gpu); the dtype it runs in under autocast (``lstm_dtype``) and the casts that take
it there."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from induce.models import bilstm
from induce.models.bilstm import lstm_dtype, own_buffer, packed_bilstm, padded_bilstm
from induce.runs.device import cpu_has_fast_bf16

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
    from induce.runs.weights import load_weights, save_weights

    settings = {"d_model": 16, "n_layers": 1, "n_heads": 2, "head_size": 8}
    model = build_model("udgn", settings, 30, 0)
    _arrange(model.lstm)
    save_weights(model, tmp_path / "weights.safetensors")
    again = build_model("udgn", settings, 30, 0)
    load_weights(again, tmp_path / "weights.safetensors")
    for (name, p), q in zip(model.state_dict().items(), again.state_dict().values(), strict=True):
        assert torch.equal(p, q), name


def _batch() -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(1)
    keep = torch.arange(7)[None] < torch.tensor([7, 3, 1, 5])[:, None]
    return torch.randn(4, 7, 6), keep


def test_outside_a_cuda_bf16_autocast_only_float32_takes_the_lstm_out_of_autocast():
    cpu = torch.device("cpu")
    for precision in ("auto", "float32", "autocast"):
        assert lstm_dtype(precision, cpu) is None  # an fp32 run: nothing to decide
    with torch.autocast("cpu", dtype=torch.bfloat16):  # oneDNN's LSTM runs bf16 there
        assert lstm_dtype("auto", cpu) is None
        assert lstm_dtype("autocast", cpu) is None
        assert lstm_dtype("float32", cpu) is torch.float32


@pytest.mark.parametrize(
    ("autocast", "cudnn_bf16", "expected"),
    [
        (torch.bfloat16, True, {"auto": torch.bfloat16, "float32": torch.float32}),
        (torch.bfloat16, False, {"auto": torch.float32, "float32": torch.float32}),
        (torch.float16, True, {"auto": None, "float32": torch.float32}),  # asked for fp16
    ],
)
def test_on_cuda_under_bf16_autocast_auto_never_leaves_the_lstm_to_fp16(
    monkeypatch, autocast, cudnn_bf16, expected
):
    """PyTorch's autocast runs cuDNN's RNNs in fp16 whatever autocast's dtype: under bf16
    ``auto`` runs them in bf16 where cuDNN takes it, else fp32 (the CUDA state is stood in
    for: these machines have no GPU; tests/gpu asks the real one)."""
    cuda = torch.device("cuda")
    monkeypatch.setattr(bilstm, "autocast_active", lambda device: device.type == "cuda")
    monkeypatch.setattr(bilstm, "_autocast_dtype", lambda device: autocast)
    monkeypatch.setattr(bilstm, "cudnn_runs_bf16_rnns", lambda device: cudnn_bf16)
    for precision, dtype in expected.items():
        assert lstm_dtype(precision, cuda) is dtype, precision
    assert lstm_dtype("autocast", cuda) is None


def test_a_bf16_lstm_reads_its_weights_cast_into_one_buffer_and_trains_its_fp32_weights():
    lstm, x, keep = _lstm(), *_batch()
    reference = copy.deepcopy(lstm)
    want = padded_bilstm(reference, x, keep, nn.Identity())
    want.pow(2).sum().backward()
    got = padded_bilstm(lstm, x, keep, nn.Identity(), torch.bfloat16)
    assert got.dtype is torch.bfloat16
    torch.testing.assert_close(got.float(), want, atol=0.03, rtol=0.05)
    assert not got[~keep].any()
    got.float().pow(2).sum().backward()
    for (name, p), q in zip(lstm.named_parameters(), reference.parameters(), strict=True):
        assert p.dtype is torch.float32 and p.grad is not None and p.grad.dtype is torch.float32
        torch.testing.assert_close(p.grad, q.grad, atol=0.05, rtol=0.1, msg=name)
    views = bilstm._cast(bilstm._weights(lstm, 1, "_reverse"), torch.bfloat16)
    at = views[0].untyped_storage().data_ptr()
    for view in views:  # own_buffer's layout: where cuDNN reads them without a copy
        assert view.dtype is torch.bfloat16 and view.is_contiguous() and view.data_ptr() == at
        at += view.numel() * view.element_size()


def test_float32_under_autocast_computes_what_an_fp32_run_does_bit_for_bit():
    lstm, x, keep = _lstm(), *_batch()
    plain = padded_bilstm(lstm, x, keep, nn.Identity())
    packed = packed_bilstm(lstm, x, keep)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        if cpu_has_fast_bf16():  # oneDNN has no bf16 LSTM on a CPU without hardware bf16
            assert padded_bilstm(lstm, x, keep, nn.Identity()).dtype is torch.bfloat16
        dense = padded_bilstm(lstm, x.bfloat16(), keep, nn.Identity(), torch.float32)
        again = padded_bilstm(lstm, x, keep, nn.Identity(), torch.float32)
        packed_fp32 = packed_bilstm(lstm, x, keep, torch.float32)
    assert dense.dtype is torch.float32 and torch.equal(again, plain)
    torch.testing.assert_close(dense, plain, atol=0.02, rtol=0.02)  # its input was bf16
    assert torch.equal(packed_fp32, packed)


def _packed(x: torch.Tensor, keep: torch.Tensor) -> nn.utils.rnn.PackedSequence:
    lengths = keep.sum(1)
    return nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)


def test_lstm_call_in_the_weights_dtype_is_the_modules_own_call():
    lstm, x, keep = _lstm(), *_batch()
    lstm.eval()  # its dropout between layers off: both calls draw nothing
    want_out, (want_h, want_c) = lstm(_packed(x, keep))
    got_out, (got_h, got_c) = bilstm.lstm_call(lstm, _packed(x, keep), torch.float32)
    assert torch.equal(got_out.data, want_out.data)
    assert torch.equal(got_out.unsorted_indices, want_out.unsorted_indices)
    assert torch.equal(got_h, want_h) and torch.equal(got_c, want_c)  # the sentences' order


def test_lstm_call_in_bf16_gives_the_fp32_states_to_rounding_and_trains_the_fp32_weights():
    lstm, x, keep = _lstm(), *_batch()
    lstm.eval()
    reference = copy.deepcopy(lstm)
    _, (want, _) = reference(_packed(x, keep))
    want.pow(2).sum().backward()
    out, (got, _) = bilstm.lstm_call(lstm, _packed(x, keep), torch.bfloat16)
    assert out.data.dtype is torch.bfloat16 and got.dtype is torch.bfloat16
    torch.testing.assert_close(got.float(), want, atol=0.03, rtol=0.05)
    got.float().pow(2).sum().backward()
    for (name, p), q in zip(lstm.named_parameters(), reference.parameters(), strict=True):
        assert p.grad is not None and p.grad.dtype is torch.float32, name
        torch.testing.assert_close(p.grad, q.grad, atol=0.05, rtol=0.1, msg=name)
    dense = packed_bilstm(lstm, x, keep, torch.bfloat16)
    assert dense.dtype is torch.bfloat16
    torch.testing.assert_close(
        dense.float(), packed_bilstm(reference, x, keep), atol=0.03, rtol=0.05
    )
