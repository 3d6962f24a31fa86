"""Fixtures of the CUDA tests."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture
def strict_fp32():
    """fp32 matrix products, convolutions and LSTMs on CUDA in full fp32 (PyTorch lets
    cuDNN take TF32 by default)."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
