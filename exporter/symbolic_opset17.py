"""Opset 17: what changes for the base symbolics.

ONNX changes at opset 17 that this module reacts to:
- LayerNormalization: layer_norm becomes one node instead of seven (normalized in float32,
  stash_type=1, as torch does for half inputs).
- DFT and STFT appear (stft is lowered to STFT).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic

Value = ir.Value


def _stft(
    g: GraphContext,
    self: Value,
    n_fft: int,
    hop_length: int | None,
    win_length: int | None,
    window: Value | None,
    normalized: bool,
    onesided: bool | None,
    return_complex: bool | None,
) -> Value:
    if return_complex:
        raise ValueError(
            "stft with return_complex=True makes a complex tensor, which ONNX export does not support; "
            "use return_complex=False (real and imaginary parts in a last dim of 2)"
        )
    if self.dtype not in (ir.DataType.FLOAT, ir.DataType.DOUBLE):
        raise ValueError(f"stft of a {self.dtype} signal is not supported (float or double only)")
    rank = h.rank_of(self)
    if rank not in (1, 2):
        raise ValueError(f"stft takes a 1-D or batched 2-D signal, got rank {rank}")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    torch_dtype = tensors.to_torch_dtype(self.dtype)
    left = (n_fft - win) // 2
    if window is None:
        ones = torch.ones(win, dtype=torch_dtype)
        full_window = g.constant(torch.nn.functional.pad(ones, (left, n_fft - win - left)))
    elif win == n_fft:
        full_window = h.cast(g, window, self.dtype)
    else:  # torch centres a shorter window in the frame with zeros
        full_window = g.op("Pad", h.cast(g, window, self.dtype), g.constant([left, n_fft - win - left]))
    signal = h.unsqueeze(g, self, [0, 2] if rank == 1 else [2])
    if onesided is None:
        onesided = True
    out = g.op("STFT", signal, g.constant(hop), full_window, g.constant(n_fft), onesided=int(onesided))
    if normalized:
        out = g.op("Mul", out, h.scalar_like(g, 1.0 / math.sqrt(n_fft), self))
    out = g.op("Transpose", out, perm=[0, 2, 1, 3])  # [batch, frames, bins, 2] -> [batch, bins, frames, 2]
    return h.squeeze(g, out, [0]) if rank == 1 else out


def affine_or_default(g: GraphContext, value: Value | None, shape: Sequence[int], fill: float, like: Value) -> Value:
    """A LayerNormalization/GroupNormalization scale or bias: the given one, or a constant."""
    if value is not None:
        return value
    return g.constant(torch.full(tuple(shape), fill, dtype=tensors.to_torch_dtype(like.dtype)))


@onnx_symbolic("aten::layer_norm", opset=17)
def aten_layer_norm(
    g: GraphContext,
    input: Value,  # noqa: A002
    normalized_shape: Sequence[int],
    weight: Value | None = None,
    bias: Value | None = None,
    eps: float = 1e-5,
) -> Value:
    """layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor"""
    scale = affine_or_default(g, weight, normalized_shape, 1.0, input)
    inputs = [input, scale] + ([bias] if bias is not None else [])
    return g.op("LayerNormalization", *inputs, axis=-len(normalized_shape), epsilon=eps)


# ============================================================================================
# Spectral
# ============================================================================================


@onnx_symbolic("aten::stft", opset=17)
def aten_stft(
    g: GraphContext,
    self: Value,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Value | None = None,
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    center: bool = False,
    pad_mode: str = "reflect",
    align_to_window: bool | None = None,
) -> Value:
    """stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool normalized=False, bool? onesided=None, bool? return_complex=None, bool? align_to_window=None) -> Tensor (and .center)

    ONNX STFT first exists at opset 17 (DFT too), so nothing is registered below. ONNX has no
    complex type: only return_complex=False (real/imag in a last dim of 2) exports. The STFT
    window must span the whole frame, so a shorter one is centred with zeros as torch does;
    ``normalized`` scales by 1/sqrt(n_fft). torch.stft's Python wrapper pads for center=True
    itself; the .center overload (seen in scripted code) pads here with Pad's reflect mode.
    """
    if align_to_window:
        raise ValueError("stft with align_to_window=True is not supported")
    if center:
        rank = h.rank_of(self)
        half = n_fft // 2
        mode = {"reflect": "reflect", "constant": "constant", "replicate": "edge"}.get(pad_mode)
        if mode is None or rank not in (1, 2):
            raise ValueError(f"stft with center=True and pad_mode={pad_mode!r} is not supported")
        pads = [half, half] if rank == 1 else [0, half, 0, half]
        self = g.op("Pad", self, g.constant(pads), mode=mode)
    return _stft(g, self, n_fft, hop_length, win_length, window, normalized, onesided, return_complex)
