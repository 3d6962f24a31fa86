"""UDGN's parser BiLSTM over padded sentences: the packed sequences of the reference, and a
dense path (one call per direction and layer, each sentence reversed within its length for
the backward direction; on a GPU the two directions on two streams) that CUDA and bf16
autocast run; and the dtype the models' LSTMs run in under autocast (``lstm_dtype``, for
this one and the chart parser's character LSTM, through ``lstm_call``).

Shapes: ``B`` batch, ``L`` padded length, ``D`` input width.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from typing import Literal

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence

from induce.models.layers import autocast_active, full_precision

# how the parser BiLSTM runs under autocast (UDGNConfig.lstm_precision): see lstm_dtype
Precision = Literal["auto", "float32", "autocast"]


def lstm_dtype(precision: Precision, device: torch.device) -> torch.dtype | None:
    """The dtype the BiLSTM runs in on ``device``, or None to leave it to autocast (and to
    fp32 runs, which have none).

    PyTorch's autocast runs cuDNN's RNNs in fp16 whatever autocast's dtype (its wrapper for
    ``_cudnn_rnn`` casts to half), and a bf16 run has no loss scaling to guard fp16's narrow
    range, so ``auto`` takes the LSTM out of autocast on CUDA under bf16: bf16 where cuDNN
    runs bf16 RNNs, else fp32 (a bf16 LSTM that cuDNN refuses falls back to a slow loop).
    On a CPU autocast already runs oneDNN's LSTM in bf16: ``auto`` leaves it.  ``float32``:
    the LSTM in fp32 under any autocast; ``autocast``: as PyTorch casts (fp16 on CUDA, as
    every GPU run before this setting was)."""
    if precision == "autocast" or not autocast_active(device):
        return None
    if precision == "float32":
        return torch.float32
    if device.type != "cuda" or _autocast_dtype(device) != torch.bfloat16:
        return None
    return torch.bfloat16 if cudnn_runs_bf16_rnns(device) else torch.float32


def _autocast_dtype(device: torch.device) -> torch.dtype:
    try:
        return torch.get_autocast_dtype(device.type)  # torch >= 2.4
    except AttributeError:  # torch 2.3
        return torch.get_autocast_gpu_dtype()


@torch.compiler.assume_constant_result  # a fact of the build and the GPU: no graph break
def cudnn_runs_bf16_rnns(device: torch.device) -> bool:
    """Whether PyTorch hands bf16 LSTMs to cuDNN on ``device`` (its RNN code's test: built
    with cuDNN 9.13 or later, for NVIDIA's cuDNN, on a GPU of compute capability 8.0 or
    more)."""
    try:
        from torch._C import _cudnn
    except ImportError:  # a build without cuDNN
        return False
    if not (torch.backends.cudnn.is_available() and getattr(_cudnn, "is_cuda", False)):
        return False
    built = tuple(_cudnn.getCompileVersion())
    return built >= (9, 13, 0) and torch.cuda.get_device_capability(device)[0] >= 8


def padded_bilstm(
    lstm: nn.LSTM,
    x: torch.Tensor,
    keep: torch.Tensor,
    drop: nn.Module,
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """A bidirectional, batch-first ``nn.LSTM`` (with biases, no projection) over padded
    sentences, with its own parameters: ``x [B, L, D]``, ``keep [B, L]`` (words first) ->
    ``[B, L, 2 x hidden]``, zero at padding, the values of ``pack_padded_sequence`` + ``lstm``
    (to float rounding).

    Each direction of each layer is one dense single-layer call; the backward direction reads
    every sentence reversed within its length, so in both directions the padding comes after
    the words and never reaches their states.  Dense calls take the fused oneDNN kernel that
    packed sequences miss on CPU (one-thread fp32 training of UDGN's paper-size parser: 26%
    less time, bf16: 12%).  ``drop`` is applied between layers, as ``nn.LSTM``'s dropout.

    Float rounding differs from the packed kernel's, and training amplifies it (the UDGN demo
    ended at ppl 44.66 instead of 45.97), so on a CPU models call this only under autocast,
    where numbers differ from fp32 anyway; fp32 there keeps ``packed_bilstm`` and its earlier
    results bit for bit.  On CUDA (no host read of the lengths) they always call this.

    ``dtype`` (``lstm_dtype``'s answer): the LSTM runs in it outside autocast, its weights
    cast at each call into one buffer laid out as cuDNN reads them (so it copies nothing
    more), the output in that dtype; None leaves the dtypes to autocast."""
    b, n, _ = x.shape
    steps = torch.arange(n, device=x.device)
    back = keep.sum(1, keepdim=True) - 1 - steps  # [B, L]: position read at each step
    order = torch.where(back >= 0, back, steps)[..., None]  # [B, L, 1], padding stays put
    with _outside_autocast(x.device, dtype):
        h = x if dtype is None else x.to(dtype)
        zeros = h.new_zeros(1, b, lstm.hidden_size)
        for layer in range(lstm.num_layers):
            if layer:
                h = drop(h)
            if h.is_cuda:
                forward, backward = _both_directions(lstm, layer, h, order, zeros)
            else:
                forward = _direction(lstm, layer, "", h, None, zeros)
                backward = _direction(lstm, layer, "_reverse", h, order, zeros)
            h = torch.cat([forward, backward], -1)
        return h.masked_fill(~keep[..., None], 0.0)


def _outside_autocast(
    device: torch.device, dtype: torch.dtype | None
) -> contextlib.AbstractContextManager[object]:
    """Autocast's region left when a ``dtype`` is given (``full_precision``), else kept."""
    return contextlib.nullcontext() if dtype is None else full_precision(device)


def _direction(
    lstm: nn.LSTM,
    layer: int,
    suffix: str,
    h: torch.Tensor,
    order: torch.Tensor | None,
    zeros: torch.Tensor,
) -> torch.Tensor:
    """One direction of one layer of ``lstm`` over ``h [B, L, D]``; ``order [B, L, 1]`` reads
    each sentence reversed within its length (the backward direction) and puts the outputs
    back in place.  Weights of another dtype than ``h`` are cast to it (``_cast``)."""
    weights = _weights(lstm, layer, suffix)
    if weights[0].dtype != h.dtype:
        weights = _cast(weights, h.dtype)
    inputs = h if order is None else h.gather(1, order.expand(-1, -1, h.shape[-1]))
    if h.is_cuda:
        _quiet_weight_copies()
    # (input, state, weights, biases, layers, dropout, train, bidirectional, batch_first)
    out, _, _ = torch.lstm(
        inputs, (zeros, zeros), weights, True, 1, 0.0, lstm.training, False, True
    )
    return out if order is None else out.gather(1, order.expand(-1, -1, out.shape[-1]))


@functools.cache
def _quiet_weight_copies() -> None:
    """On CUDA, cuDNN copies the four weights into a buffer laid out as it reads them at
    each call, and warns each time, unless they already lie so (:func:`own_buffer`, which
    the GPU path arranges before its first call).  That one warning is filtered once, for
    the process: ``warnings.catch_warnings`` around each call swapped the global filters,
    which is not thread-safe (parsing runs the model in a prefetching thread)."""
    warnings.filterwarnings("ignore", "RNN module weights are not part of single")


def _weights(lstm: nn.LSTM, layer: int, suffix: str) -> list[torch.Tensor]:
    """``W_ih``, ``W_hh``, ``b_ih``, ``b_hh`` of one direction of one layer, in the order
    ``torch.lstm`` takes them and cuDNN lays them out."""
    names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    return [getattr(lstm, f"{name}_l{layer}{suffix}") for name in names]


def _cast(weights: list[torch.Tensor], dtype: torch.dtype) -> list[torch.Tensor]:
    """``weights`` cast to ``dtype`` as views of one new buffer, one after the other from its
    start: where cuDNN finds them in place (``own_buffer``'s layout); gradients reach the
    weights through the cast."""
    flat = torch.cat([w.reshape(-1).to(dtype) for w in weights])
    views, start = [], 0
    for w in weights:
        views.append(flat[start : start + w.numel()].view_as(w))
        start += w.numel()
    return views


_SIDE_STREAMS: dict[torch.device, torch.cuda.Stream] = {}


# eager under torch.compile (train.compile): traced, the fork and join were tied to the
# streams of the call that compiled it, not of later calls, and a CUDA graph's capture of
# the compiled UDGN step failed ("dependency created on uncaptured work in another stream",
# H200, 2026-11-28); eager, each call forks from the stream current then
@torch.compiler.disable
def _both_directions(
    lstm: nn.LSTM, layer: int, h: torch.Tensor, order: torch.Tensor, zeros: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The two directions of a layer at once on a GPU: the backward one on a side stream.
    A recurrence is a chain of small dependent kernels that leaves most of the GPU idle, so
    two independent chains take little longer than one.  Autograd runs each direction's
    backward on its forward's stream, and a CUDA graph captures the fork and the join."""
    if not torch.cuda.is_current_stream_capturing():  # a graph reads the buffers it saw
        for suffix in ("", "_reverse"):
            own_buffer(lstm, layer, suffix)
    main = torch.cuda.current_stream(h.device)
    side = _SIDE_STREAMS.get(h.device)
    if side is None:
        side = _SIDE_STREAMS[h.device] = torch.cuda.Stream(h.device)
    side.wait_stream(main)
    with torch.cuda.stream(side):
        backward = _direction(lstm, layer, "_reverse", h, order, zeros)
    forward = _direction(lstm, layer, "", h, None, zeros)
    main.wait_stream(side)
    if not torch.cuda.is_current_stream_capturing():
        # made on the side stream, used on the main one: not to be reused before that use
        # (in a graph the order of the captured streams already says so)
        backward.record_stream(main)
    return forward, backward


def packed_bilstm(
    lstm: nn.LSTM, x: torch.Tensor, keep: torch.Tensor, dtype: torch.dtype | None = None
) -> torch.Tensor:
    """``lstm`` over the packed sentences of ``x [B, L, D]`` (``keep [B, L]``, words first)
    -> ``[B, L, 2 x hidden]``, zero at padding; ``lstm``'s own dropout between layers; in
    ``dtype`` outside autocast when given (``lstm_call``)."""
    lengths = keep.sum(1).cpu().clamp_min(1)
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    out = lstm_call(lstm, packed, dtype)[0]
    return nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])[0]


def lstm_call(
    lstm: nn.LSTM, x: PackedSequence, dtype: torch.dtype | None
) -> tuple[PackedSequence, tuple[torch.Tensor, torch.Tensor]]:
    """``lstm(x)`` from zero states: the packed outputs and the final ``(h, c)``, each
    ``[layers x directions, N, hidden]`` in the sequences' order.  With a ``dtype``
    (``lstm_dtype``'s answer) it runs in it outside autocast, the weights cast into one
    buffer in the order of a flattened ``nn.LSTM`` (as cuDNN reads them); in their own dtype
    it is the module's own call, bit for bit."""
    if dtype is None:
        return lstm(x)
    weights: list[torch.Tensor] = [w for layer in lstm.all_weights for w in layer]
    if weights[0].dtype != dtype:
        weights = _cast(weights, dtype)
    with _outside_autocast(x.data.device, dtype):
        data = x.data.to(dtype)
        states = 2 * lstm.num_layers if lstm.bidirectional else lstm.num_layers
        zeros = data.new_zeros(states, int(x.batch_sizes[0]), lstm.hidden_size)
        out, h, c = torch.lstm(
            data,
            x.batch_sizes,
            (zeros, zeros),
            weights,
            lstm.bias,
            lstm.num_layers,
            lstm.dropout,
            lstm.training,
            lstm.bidirectional,
        )
    if x.unsorted_indices is not None:  # the states back in the sequences' order
        h, c = h.index_select(1, x.unsorted_indices), c.index_select(1, x.unsorted_indices)
    return PackedSequence(out, x.batch_sizes, x.sorted_indices, x.unsorted_indices), (h, c)


def own_buffer(lstm: nn.LSTM, layer: int, suffix: str) -> None:
    """One direction's weights of one layer of ``lstm`` (``suffix`` ``""`` or ``"_reverse"``)
    moved into a buffer of their own, ``W_ih``, ``W_hh``, ``b_ih``, ``b_hh`` one after the
    other from its start: how cuDNN lays out a one-layer, one-direction LSTM, so that the
    dense calls read the weights in place.  Otherwise cuDNN copies them into such a buffer at
    every call (``nn.LSTM`` after ``.to(device)`` holds each weight apart, and
    ``flatten_parameters`` puts all layers in one buffer, where only the first layer's first
    direction starts at its start), and keeps the copies for the backward pass: 67 MB a step
    at UDGN's paper size in fp32, which the official code's flattened ``nn.LSTM`` does not
    spend (PyTorch's ``try_get_weight_buf`` takes the buffer from the start of the first
    weight's storage and checks every weight's place in it).  A run that casts the
    weights (bf16, ``lstm_dtype``; or PyTorch's autocast) reads the cast buffer instead, so
    this saves the LSTMs that run in fp32.  Values, parameters and their names are
    unchanged (the parameters are re-pointed, not replaced); a no-op when the weights
    already lie so."""
    params = _weights(lstm, layer, suffix)
    start = params[0].untyped_storage().data_ptr()
    offsets = [0]
    for p in params:
        offsets.append(offsets[-1] + p.numel())
    if all(
        p.is_contiguous() and p.data_ptr() == start + offset * p.element_size()
        for p, offset in zip(params, offsets, strict=False)
    ):
        return
    first = params[0]
    buffer = torch.empty(offsets[-1], dtype=first.dtype, device=first.device)
    with torch.no_grad():
        for p, lo, hi in zip(params, offsets, offsets[1:], strict=False):
            old = p.data
            buffer[lo:hi].copy_(old.reshape(-1))
            p.data = buffer[lo:hi].view_as(p)
            if old.is_cuda:  # read by the copy on this stream: not to be reused before it
                old.record_stream(torch.cuda.current_stream(old.device))
