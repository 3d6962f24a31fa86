"""The chart parser's character models (Kitaev and Klein 2018, Section 4): each word's
content vector from its characters, ``chars [B, T, W] -> [B, T, d_out]`` (``W`` characters a
word, 0 for padding): a bidirectional LSTM's final states (``chars: lstm``, the paper's best),
or the first and last ``k`` characters' embeddings concatenated and projected (``concat``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from induce.models.bilstm import Precision, lstm_call, lstm_dtype


class CharLSTM(nn.Module):
    """``chars [B, T, W] -> [B, T, d_out]``: final states of a BiLSTM (Section 4), run under
    autocast in the dtype ``precision`` gives (``induce.models.bilstm.lstm_dtype``)."""

    def __init__(
        self, n_chars: int, d_char: int, d_out: int, dropout: float, precision: Precision
    ) -> None:
        super().__init__()
        self.embed = nn.Embedding(n_chars, d_char, padding_idx=0)
        self.lstm = nn.LSTM(d_char, d_out // 2, batch_first=True, bidirectional=True)
        self.drop = nn.Dropout(dropout)
        self.precision = precision

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        b, t, w = chars.shape
        flat = chars.view(b * t, w)
        if not self.training:  # each word type once (training keeps per-token dropout)
            types, inverse = torch.unique(flat, dim=0, return_inverse=True)
            return self._encode(types)[inverse].view(b, t, -1)
        return self._encode(flat).view(b, t, -1)

    def _encode(self, flat: torch.Tensor) -> torch.Tensor:
        """``[N, W] -> [N, d_out]`` (rows of padding only: zeros)."""
        sizes = (flat != 0).sum(-1)
        real = sizes > 0
        out = flat.new_zeros((flat.shape[0], 2 * self.lstm.hidden_size), dtype=torch.float)
        if bool(real.any()):
            packed = nn.utils.rnn.pack_padded_sequence(
                self.drop(self.embed(flat[real])),
                sizes[real].cpu(),
                batch_first=True,
                enforce_sorted=False,
            )
            dtype = lstm_dtype(self.precision, flat.device)
            _, (h, _) = lstm_call(self.lstm, packed, dtype)  # h [2, words, d/2]
            out = out.to(h.dtype)
            out[real] = torch.cat([h[0], h[1]], -1)
        return out


class CharConcat(nn.Module):
    """``chars [B, T, W] -> [B, T, d_out]``: the first and last ``k`` characters' embeddings
    concatenated (padded when shorter), then projected (Section 4)."""

    def __init__(self, n_chars: int, d_char: int, k: int, d_out: int) -> None:
        super().__init__()
        self.k = k
        self.embed = nn.Embedding(n_chars, d_char, padding_idx=0)
        self.project = nn.Linear(2 * k * d_char, d_out)

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        b, t, w = chars.shape
        k = self.k
        sizes = (chars != 0).sum(-1, keepdim=True)  # [B, T, 1]
        first = F.pad(chars, (0, max(0, k - w)))[..., :k]
        # the last k characters, right-aligned: position p reads index size - k + p
        index = sizes - k + torch.arange(k, device=chars.device)
        last = torch.gather(F.pad(chars, (0, 1)), -1, torch.where(index >= 0, index, w))
        parts = self.embed(torch.cat([first, last], -1))  # [B, T, 2k, d_char]
        return self.project(parts.view(b, t, -1))
