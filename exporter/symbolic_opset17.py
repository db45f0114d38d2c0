"""Opset 17: what changes for the base symbolics.

ONNX changes at opset 17 that this module reacts to:
- LayerNormalization: layer_norm becomes one node instead of seven (normalized in float32,
  stash_type=1, as torch does for half inputs).
- DFT and STFT appear (stft is lowered to STFT, istft to DFT and an overlap-add; fft_fft/fftn/
  ifft/rfft/irfft to DFT: below 17 they are unsupported). Their complex results are carried as
  float pairs (exporter/complex_values.py): ops that act on real and imaginary parts alike
  take them by the ``complex_inputs`` fact of their base registration, and the ops whose
  meaning on complex tensors is their own live in the family of exporter/opset17/, indexed here:
    complex_arithmetic: abs, angle, conj, mul, div, reciprocal, pow, sqrt and constant padding
        of complex tensors; view_as_real, view_as_complex, complex, polar, and full, zeros,
        ones and their _like forms of a complex dtype.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.complex_values import ComplexValue, as_complex, imag_part, real_part
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import ComplexInputs
from exporter.registry import onnx_symbolic

if TYPE_CHECKING:  # the opset-17 family, imported on first use by __getattr__ below
    from exporter.opset17 import complex_arithmetic

__all__ = ["complex_arithmetic"]

_FAMILIES = ("complex_arithmetic",)


def __getattr__(name: str) -> ModuleType:
    """An opset-17 family, imported on first use: the registry imports a family when one of its
    ops is first looked up (exporter/symbolic_index.py)."""
    if name in _FAMILIES:
        return importlib.import_module(f"exporter.opset17.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
) -> Value | ComplexValue:
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
    out = h.squeeze(g, out, [0]) if rank == 1 else out
    if out.shape is None:  # onnx's STFT inference needs the signal's length at export time
        out.shape = ir.Shape([*([None] if rank == 2 else []), n_fft // 2 + 1 if onesided else n_fft, None, 2])
    out.dtype = out.dtype or self.dtype
    return ComplexValue(out) if return_complex else out


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
) -> Value | ComplexValue:
    """stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool normalized=False, bool? onesided=None, bool? return_complex=None, bool? align_to_window=None) -> Tensor (and .center)

    ONNX STFT first exists at opset 17 (DFT too), so nothing is registered below. STFT writes
    real and imaginary parts in a last dim of 2: that is return_complex=False's result, and
    return_complex=True's as a ComplexValue (exporter/complex_values.py). The STFT
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


def _as_pairs(g: GraphContext, self: object) -> tuple[Value, bool]:
    """(float tensor with a trailing dim of 2 for a complex input or of 1 for a real one, is_complex)."""
    if isinstance(self, ComplexValue):
        return self.value, True
    if isinstance(self, torch.Tensor) and self.is_complex():
        return as_complex(g, self).value, True
    if not isinstance(self, ir.Value):
        raise ValueError(f"expected a tensor, got {type(self).__name__}")
    x = self if h.is_floating(self) else h.cast(g, self, ir.DataType.FLOAT)
    return h.unsqueeze(g, x, [-1]), False


def _fit(g: GraphContext, x: Value, axis: int, n: int) -> Value:
    """``x`` trimmed or zero-padded to ``n`` along ``axis`` (torch's ``n=``/``s=``)."""
    size = h.dim_size(g, x, axis)
    if isinstance(size, int) and size == n:
        return x
    if isinstance(size, int) and size < n:
        ends = [0] * h.known_rank(x, "fft")
        ends[axis] = n - size
        return h.pad(g, x, [0] * len(ends), ends, "constant")
    if not isinstance(size, int):
        # known at run time only: cut to n, then pad what is missing up to n
        rank = h.known_rank(x, "fft")
        cut = h.slice_static(g, x, [axis], [0], [n])
        missing = g.op(
            "Max",
            g.op("Sub", g.constant([n]), h.slice_static(g, g.op("Shape", cut), [0], [axis], [axis + 1])),
            g.constant([0]),
        )
        # Pad's [begins..., ends...]: only the end of ``axis`` is not zero
        after = [g.constant([0] * (rank - axis - 1))] if axis < rank - 1 else []
        pads = g.op("Concat", g.constant([0] * (rank + axis)), missing, *after, axis=0)
        padded = g.op("Pad", cut, pads)
        shape = list(x.shape) if x.shape is not None else [None] * rank
        shape[axis] = n
        padded.shape = ir.Shape(shape)
        return padded
    return h.slice_static(g, x, [axis], [0], [n])


def _norm_scale(g: GraphContext, x: Value, n: int | Value, norm: str | None, *, inverse: bool) -> Value:
    """torch's norm= on top of DFT, which is unnormalized forward and 1/n inverse."""
    if norm not in (None, "backward", "ortho", "forward"):
        raise ValueError(f"fft norm={norm!r} is not one of 'backward', 'ortho', 'forward'")
    # the power of n torch multiplies by, relative to what DFT already did
    power = {None: 0.0, "backward": 0.0, "ortho": -0.5, "forward": -1.0}[norm]
    if inverse:
        power = {None: 0.0, "backward": 0.0, "ortho": 0.5, "forward": 1.0}[norm]
    if power == 0.0:
        return x
    if isinstance(n, int):
        return g.op("Mul", x, h.scalar_like(g, float(n) ** power, x))
    factor = g.op("Pow", h.cast_like(g, n, x), h.scalar_like(g, power, x))
    return g.op("Mul", x, factor)


def _fft_dims(
    g: GraphContext, self: object, dims: Sequence[int], sizes: Sequence[int] | None, norm: str | None, *, inverse: bool
) -> ComplexValue:
    x, _ = _as_pairs(g, self)
    rank = h.known_rank(x, "fft") - 1
    total: int | Value = 1
    for i, dim in enumerate(dims):
        axis = h.normalize_dim(dim, rank)
        if sizes is not None and sizes[i] != -1:
            x = _fit(g, x, axis, sizes[i])
        total = h.mul_sizes(g, total, h.dim_size(g, x, axis))
        x = h.dft(g, x, axis, inverse=inverse)
    return ComplexValue(_norm_scale(g, x, total, norm, inverse=inverse))


@onnx_symbolic("aten::fft_fft", opset=17, complex_inputs=ComplexInputs.OWN)
def aten_fft_fft(
    g: GraphContext, self: object, n: int | None = None, dim: int = -1, norm: str | None = None
) -> ComplexValue:
    """fft_fft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor

    DFT along dim of a real (trailing dim of 1) or complex input; the result is a ComplexValue.
    """
    return _fft_dims(g, self, [dim], None if n is None else [n], norm, inverse=False)


@onnx_symbolic("aten::fft_ifft", opset=17, complex_inputs=ComplexInputs.OWN)
def aten_fft_ifft(
    g: GraphContext, self: object, n: int | None = None, dim: int = -1, norm: str | None = None
) -> ComplexValue:
    """fft_ifft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor: DFT with inverse=1 (1/n)"""
    return _fft_dims(g, self, [dim], None if n is None else [n], norm, inverse=True)


@onnx_symbolic("aten::fft_fftn", opset=17, complex_inputs=ComplexInputs.OWN)
def aten_fft_fftn(
    g: GraphContext,
    self: object,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
) -> ComplexValue:
    """fft_fftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor

    FNet's token mixing (torch.fft.fftn(x, dim=(-1, -2)).real): one DFT per dim; norm= scales by
    the product of the transformed sizes. dim defaults to the last len(s) dims, or all of them.
    """
    rank = h.known_rank(self.value if isinstance(self, ComplexValue) else self, "fftn")
    if isinstance(self, ComplexValue):
        rank -= 1
    if dim is None:
        dim = list(range(rank - len(s), rank)) if s is not None else list(range(rank))
    if s is not None and len(s) != len(dim):
        raise ValueError(f"fftn: s={list(s)} and dim={list(dim)} differ in length")
    return _fft_dims(g, self, dim, s, norm, inverse=False)


@onnx_symbolic("aten::fft_rfft", opset=17)
def aten_fft_rfft(
    g: GraphContext, self: Value, n: int | None = None, dim: int = -1, norm: str | None = None
) -> ComplexValue:
    """fft_rfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor

    DFT with onesided=1: the n // 2 + 1 non-negative frequencies of a real signal.
    """
    x, _ = _as_pairs(g, self)
    axis = h.normalize_dim(dim, h.known_rank(self, "rfft"))
    if n is not None:
        x = _fit(g, x, axis, n)
    size = h.dim_size(g, x, axis)
    return ComplexValue(_norm_scale(g, h.dft(g, x, axis, onesided=True), size, norm, inverse=False))


@onnx_symbolic("aten::fft_irfft", opset=17, complex_inputs=ComplexInputs.OWN)
def aten_fft_irfft(
    g: GraphContext, self: object, n: int | None = None, dim: int = -1, norm: str | None = None
) -> Value:
    """fft_irfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor

    The inverse of rfft: the n // 2 + 1 given frequencies (trimmed or zero-padded, n defaults to
    2 * (m - 1)) are completed to the full Hermitian spectrum (X[n - k] = conj(X[k])), inverted
    by DFT and the real part kept; like torch's c2r transform this ignores the imaginary parts
    of X[0] and X[n / 2]. n must be known at export time.
    """
    x, _ = _as_pairs(g, self)
    rank = h.known_rank(x, "irfft") - 1
    axis = h.normalize_dim(dim, rank)
    if n is None:
        m = h.dim_size(g, x, axis)
        if not isinstance(m, int):
            raise NeedsExportTimeValue("irfft without n= needs the input size along dim known at export time")
        n = 2 * (m - 1)
    if n < 1:
        raise ValueError(f"irfft needs n >= 1, got {n}")
    half = _fit(g, x, axis, n // 2 + 1)
    parts = [half]
    if n - n // 2 - 1 > 0:
        mirrored = h.gather_constant(g, half, torch.tensor([n - k for k in range(n // 2 + 1, n)]), axis)
        conjugate = torch.tensor([1.0, -1.0], dtype=tensors.to_torch_dtype(x.dtype))
        parts.append(g.op("Mul", mirrored, g.constant(conjugate)))
    full = parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=axis)
    signal = h.dft(g, full, axis, inverse=True)
    real = g.op("Gather", signal, g.constant(0), axis=rank)
    return _norm_scale(g, real, n, norm, inverse=True)


@onnx_symbolic("aten::real", opset=17, complex_inputs=ComplexInputs.OWN)
def aten_real(g: GraphContext, self: object) -> Value:
    """real(Tensor(a) self) -> Tensor(a): the real parts of a ComplexValue; a real tensor is its own real part"""
    if isinstance(self, ComplexValue):
        return real_part(g, self)
    if isinstance(self, ir.Value):
        return self
    raise ValueError(f"real of {type(self).__name__} is not supported")


@onnx_symbolic("aten::imag", opset=17, complex_inputs=ComplexInputs.OWN)
def aten_imag(g: GraphContext, self: object) -> Value:
    """imag(Tensor(a) self) -> Tensor(a): the imaginary parts of a ComplexValue (torch refuses real tensors)"""
    if isinstance(self, ComplexValue):
        return imag_part(g, self)
    raise ValueError("imag of a real tensor: torch defines imag for complex tensors only")


def _overlap_add(g: GraphContext, frames: Value, hop: int, n_fft: int) -> Value:
    """[batch, frames, n_fft] frames laid hop apart and summed: [batch, n_fft + hop (frames - 1)].

    Each frame is cut into r = ceil(n_fft / hop) blocks of hop samples (zero-padded at its end);
    block j of frame t lands on output block t + j, so the sum of the r block columns, each
    shifted by j blocks with Pad, is the signal, whatever the number of frames at run time.
    """
    blocks = -(-n_fft // hop)
    extra = blocks * hop - n_fft
    if extra:
        frames = h.pad(g, frames, [0, 0, 0], [0, 0, extra], "constant")
    split = g.op("Reshape", frames, g.constant([0, 0, blocks, hop]))
    total = None
    for j in range(blocks):
        column = g.op("Gather", split, g.constant(j), axis=2)
        shifted = h.pad(g, column, [0, j, 0], [0, blocks - 1 - j, 0], "constant")
        total = shifted if total is None else g.op("Add", total, shifted)
    signal = g.op("Reshape", total, g.constant([0, -1]))
    return h.slice_static(g, signal, [1], [0], [-extra]) if extra else signal


@onnx_symbolic("aten::istft", opset=17, complex_inputs=ComplexInputs.OWN)
def aten_istft(
    g: GraphContext,
    self: ComplexValue,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Value | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Value:
    """istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool center=True, bool normalized=False, bool? onesided=None, int? length=None, bool return_complex=False) -> Tensor

    As torch computes it (GriffinLim): each frame's inverse real DFT (irfft of n_fft points;
    a two-sided spectrum is cut to its first n_fft // 2 + 1 bins first, as torch does),
    windowed, overlap-added hop apart and divided by the overlap-added squared window; then
    n_fft // 2 trimmed at each end for ``center``, or the signal cut (and zero-padded) to
    ``length``. The number of frames may be known only at run time. torch refuses a window
    envelope below 1e-11 (a signal it cannot invert); the export divides by it anyway.
    """
    if return_complex:
        raise ValueError("istft with return_complex=True makes a complex signal; use return_complex=False")
    rank = h.known_rank(self.value, "istft") - 1
    if rank not in (2, 3):
        raise ValueError(f"istft takes a [freq, frames] or [batch, freq, frames] spectrogram, got rank {rank}")
    pairs = self.value if rank == 3 else h.unsqueeze(g, self.value, [0])
    bins = h.dim_size(g, pairs, 1)
    if onesided is None and isinstance(bins, int):
        onesided = bins != n_fft
    if not onesided:  # (two-sided, or not known: cutting a one-sided spectrum there changes nothing)
        pairs = h.slice_static(g, pairs, [1], [0], [n_fft // 2 + 1])
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    spectra = ComplexValue(g.op("Transpose", pairs, perm=[0, 2, 1, 3]))  # [batch, frames, bins, 2]
    frames = aten_fft_irfft(g, spectra, n_fft, -1, "ortho" if normalized else "backward")
    left = (n_fft - win) // 2
    if window is None:
        window = g.constant(torch.ones(win, dtype=tensors.to_torch_dtype(frames.dtype)))
    full_window = h.pad(g, h.cast(g, window, frames.dtype), [left], [n_fft - win - left], "constant")
    signal = _overlap_add(g, g.op("Mul", frames, full_window), hop, n_fft)
    squared = h.reshape(g, g.op("Mul", full_window, full_window), [1, 1, n_fft])
    frame_count = h.slice_static(g, g.op("Shape", frames), [0], [1], [2])
    every_frame = g.op("Expand", squared, g.op("Concat", g.constant([1]), frame_count, g.constant([n_fft]), axis=0))
    envelope = _overlap_add(g, every_frame, hop, n_fft)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center and n_fft // 2 else 2**63 - 1
    signal = h.slice_static(g, signal, [1], [start], [end])
    envelope = h.slice_static(g, envelope, [1], [start], [end])
    signal = g.op("Div", signal, envelope)
    if length is not None:  # zeros after a signal shorter than length
        short = g.op("Sub", g.constant([length]), h.slice_static(g, g.op("Shape", signal), [0], [1], [2]))
        short = g.op("Max", short, g.constant([0]))
        signal = g.op("Pad", signal, g.op("Concat", g.constant([0, 0, 0]), short, axis=0))
    return signal if rank == 3 else h.squeeze(g, signal, [0])
