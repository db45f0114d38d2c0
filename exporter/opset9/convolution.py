"""Convolutions: every aten convolution entry point (conv1d/2d/3d, transposed, _convolution,
conv_tbc, padding='same'), sliding blocks (im2col/unfold, col2im/fold), and the MKLDNN forms
torch.jit.optimize_for_inference rewrites a frozen CNN into (layouts are no-ops in ONNX).

ONNX idioms: Conv/ConvTranspose with explicit pads; im2col is zero padding plus one Gather of
export-time patch indices (exact for every dtype); col2im below Col2Im-18 is a sum over kernel
positions of blocks spread by the stride and shifted into place (``_col2im_by_pads``).
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.opset9 import activations
from exporter.registry import onnx_symbolic

Value = ir.Value


def convolution(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value,
    bias: Value | None,
    stride: Sequence[int],
    padding: Sequence[int] | str,
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
) -> Value:
    """Conv / ConvTranspose from torch's convolution arguments."""
    kernel = h.static_shape(weight)
    if kernel is None:
        raise NeedsExportTimeValue("convolution needs a weight of static shape")
    spatial = len(kernel) - 2
    attrs: dict[str, object] = {
        "kernel_shape": kernel[2:],
        "strides": h.spatial_list(stride, spatial),
        "dilations": h.spatial_list(dilation, spatial),
        "group": groups,
    }
    if isinstance(padding, str):
        if padding == "valid":
            attrs["pads"] = [0] * (2 * spatial)
        elif padding == "same":
            pads_begin, pads_end = [], []
            for k, d in zip(kernel[2:], attrs["dilations"]):  # type: ignore[arg-type]
                total = d * (k - 1)
                pads_begin.append(total // 2)
                pads_end.append(total - total // 2)
            attrs["pads"] = pads_begin + pads_end
        else:
            raise ValueError(f"unknown padding mode {padding!r}")
    else:
        attrs["pads"] = h.pads(padding, spatial)
    inputs = [input, weight] + ([bias] if bias is not None else [])
    if transposed:
        if any(output_padding):
            attrs["output_padding"] = h.spatial_list(output_padding, spatial)
        return g.op("ConvTranspose", *inputs, **attrs)
    return g.op("Conv", *inputs, **attrs)


@onnx_symbolic("aten::_convolution")
def aten__convolution(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value,
    bias: Value | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    benchmark: bool = False,
    deterministic: bool = False,
    allow_tf32: bool = True,
) -> Value:
    """_convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool benchmark, bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor"""
    del benchmark, deterministic, allow_tf32
    return convolution(g, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)


@onnx_symbolic("aten::convolution")
def aten_convolution(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value,
    bias: Value | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
) -> Value:
    """convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor"""
    return convolution(g, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)


@onnx_symbolic("aten::_convolution_mode")
def aten__convolution_mode(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value,
    bias: Value | None,
    stride: Sequence[int],
    padding: str,
    dilation: Sequence[int],
    groups: int,
) -> Value:
    """_convolution_mode(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, str padding, SymInt[] dilation, SymInt groups) -> Tensor

    padding='same' pads the extra element at the end, as torch does for even kernels.
    """
    return convolution(g, input, weight, bias, stride, padding, dilation, False, [0], groups)


def _conv_nd(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value,
    bias: Value | None,
    stride: Sequence[int],
    padding: Sequence[int] | str,
    dilation: Sequence[int],
    groups: int,
) -> Value:
    return convolution(g, input, weight, bias, stride, padding, dilation, False, [0], groups)


@onnx_symbolic("aten::conv1d")
def aten_conv1d(
    g: GraphContext,
    input: Value,
    weight: Value,
    bias: Value | None = None,  # noqa: A002
    stride: Sequence[int] = (1,),
    padding: Sequence[int] | str = (0,),
    dilation: Sequence[int] = (1,),
    groups: int = 1,
) -> Value:
    """conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0, SymInt[1] dilation=1, SymInt groups=1) -> Tensor (and the str padding overload)"""
    return _conv_nd(g, input, weight, bias, stride, padding, dilation, groups)


@onnx_symbolic("aten::conv2d")
def aten_conv2d(
    g: GraphContext,
    input: Value,
    weight: Value,
    bias: Value | None = None,  # noqa: A002
    stride: Sequence[int] = (1,),
    padding: Sequence[int] | str = (0,),
    dilation: Sequence[int] = (1,),
    groups: int = 1,
) -> Value:
    """conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor (and the str padding overload)"""
    return _conv_nd(g, input, weight, bias, stride, padding, dilation, groups)


@onnx_symbolic("aten::conv3d")
def aten_conv3d(
    g: GraphContext,
    input: Value,
    weight: Value,
    bias: Value | None = None,  # noqa: A002
    stride: Sequence[int] = (1,),
    padding: Sequence[int] | str = (0,),
    dilation: Sequence[int] = (1,),
    groups: int = 1,
) -> Value:
    """conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, SymInt[3] padding=0, SymInt[3] dilation=1, SymInt groups=1) -> Tensor (and the str padding overload)"""
    return _conv_nd(g, input, weight, bias, stride, padding, dilation, groups)


@onnx_symbolic("prim::mkldnn_convolution")
def prim_mkldnn_convolution(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value,
    bias: Value | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> Value:
    """prim::mkldnn_convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups) -> Tensor

    torch.jit.optimize_for_inference's convolution on MKLDNN layouts (BatchNorm folded in):
    layouts mean nothing in ONNX, so it is a plain Conv (aten::to_mkldnn/to_dense are no-ops,
    prim::ConstantMKLDNNTensor a dense constant)."""
    return _conv_nd(g, input, weight, bias, stride, padding, dilation, groups)


@onnx_symbolic("prim::ConstantMKLDNNTensor")
def prim_constant_mkldnn_tensor(g: GraphContext, *inputs: object) -> object:
    """prim::ConstantMKLDNNTensor[value] -> Tensor: a weight in MKLDNN layout, as a dense constant."""
    del inputs
    return g.node.t("value").to_dense()


@onnx_symbolic("prim::MKLDNNHardSwish_")
def prim_mkldnn_hardswish(g: GraphContext, *inputs: object) -> object:
    """prim::MKLDNNHardSwish_(Tensor self) -> Tensor: hardswish (in place, on an MKLDNN tensor)."""
    (x,) = inputs
    assert isinstance(x, Value)
    return activations.aten_hardswish(g, x)


@onnx_symbolic("prim::MKLDNNHardTanh_")
def prim_mkldnn_hardtanh(g: GraphContext, *inputs: object) -> object:
    """prim::MKLDNNHardTanh_[min_val, max_val](Tensor self) -> Tensor: hardtanh/relu6."""
    (x,) = inputs
    assert isinstance(x, Value)
    return h.clip(g, x, g.node.f("min_val"), g.node.f("max_val"))


@onnx_symbolic("prim::BroadcastMKLDNNTensors")
def prim_broadcast_mkldnn_tensors(g: GraphContext, *inputs: object) -> object:
    """prim::BroadcastMKLDNNTensors(Tensor a, Tensor b) -> (Tensor, Tensor): MKLDNN kernels do
    not broadcast, ONNX's do; the elementwise op that follows broadcasts the originals."""
    return tuple(inputs)


@onnx_symbolic("aten::to_mkldnn")
def aten_to_mkldnn(g: GraphContext, self: Value, dtype: torch.dtype | None = None) -> Value:
    """to_mkldnn(Tensor self, ScalarType? dtype=None) -> Tensor: a layout change only"""
    return self if dtype is None else h.cast(g, self, h.ir_dtype(dtype))


@onnx_symbolic("aten::to_dense")
def aten_to_dense(
    g: GraphContext, self: Value, dtype: torch.dtype | None = None, masked_grad: bool | None = None
) -> Value:
    """to_dense(Tensor self, ScalarType? dtype=None, *, bool? masked_grad=None) -> Tensor: a layout change only"""
    del masked_grad
    return self if dtype is None else h.cast(g, self, h.ir_dtype(dtype))


@onnx_symbolic("aten::conv_tbc")
def aten_conv_tbc(g: GraphContext, self: Value, weight: Value, bias: Value, pad: int = 0) -> Value:
    """conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor

    Time-batch-channel layout: input [T, B, C] and weight [K, Cin, Cout] are transposed to
    Conv's [B, C, T] / [Cout, Cin, K] and the result back to [T, B, Cout].
    """
    kernel = h.static_shape(weight)
    if kernel is None:
        raise NeedsExportTimeValue("conv_tbc needs a weight of static shape")
    x = g.op("Transpose", self, perm=[1, 2, 0])
    w = g.op("Transpose", weight, perm=[2, 1, 0])
    out = g.op("Conv", x, w, bias, kernel_shape=[kernel[0]], pads=[pad, pad], strides=[1], dilations=[1])
    return g.op("Transpose", out, perm=[2, 0, 1])


def _conv_transpose(
    g: GraphContext,
    input: Value,  # noqa: A002
    weight: Value,
    bias: Value | None,
    stride: Sequence[int],
    padding: Sequence[int],
    output_padding: Sequence[int],
    groups: int,
    dilation: Sequence[int],
) -> Value:
    return convolution(g, input, weight, bias, stride, padding, dilation, True, output_padding, groups)


@onnx_symbolic("aten::conv_transpose1d")
def aten_conv_transpose1d(
    g: GraphContext,
    input: Value,
    weight: Value,
    bias: Value | None = None,  # noqa: A002
    stride: Sequence[int] = (1,),
    padding: Sequence[int] = (0,),
    output_padding: Sequence[int] = (0,),
    groups: int = 1,
    dilation: Sequence[int] = (1,),
) -> Value:
    """conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] output_padding=[0], SymInt groups=1, SymInt[1] dilation=[1]) -> Tensor

    Scripted models call this directly (traced ones record _convolution); note the schema
    puts output_padding and groups before dilation.
    """
    return _conv_transpose(g, input, weight, bias, stride, padding, output_padding, groups, dilation)


@onnx_symbolic("aten::conv_transpose2d")
def aten_conv_transpose2d(
    g: GraphContext,
    input: Value,
    weight: Value,
    bias: Value | None = None,  # noqa: A002
    stride: Sequence[int] = (1,),
    padding: Sequence[int] = (0,),
    output_padding: Sequence[int] = (0,),
    groups: int = 1,
    dilation: Sequence[int] = (1,),
) -> Value:
    """conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] output_padding=[0, 0], SymInt groups=1, SymInt[2] dilation=[1, 1]) -> Tensor"""
    return _conv_transpose(g, input, weight, bias, stride, padding, output_padding, groups, dilation)


@onnx_symbolic("aten::conv_transpose3d")
def aten_conv_transpose3d(
    g: GraphContext,
    input: Value,
    weight: Value,
    bias: Value | None = None,  # noqa: A002
    stride: Sequence[int] = (1,),
    padding: Sequence[int] = (0,),
    output_padding: Sequence[int] = (0,),
    groups: int = 1,
    dilation: Sequence[int] = (1,),
) -> Value:
    """conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] output_padding=[0, 0, 0], SymInt groups=1, SymInt[3] dilation=[1, 1, 1]) -> Tensor"""
    return _conv_transpose(g, input, weight, bias, stride, padding, output_padding, groups, dilation)


def _pair(values: Sequence[int]) -> list[int]:
    return list(values) * 2 if len(values) == 1 else list(values)


@onnx_symbolic("aten::im2col")
def aten_im2col(
    g: GraphContext,
    self: Value,
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> Value:
    """im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor

    F.unfold as zero padding plus one Gather over the flattened spatial dims with an
    export-time [kernel, blocks] index: exact for every dtype and opset (a Conv with one-hot
    weights would round integers and doubles). Spatial sizes must be static.
    """
    (kh, kw), (dh, dw) = _pair(kernel_size), _pair(dilation)
    (ph, pw), (sh, sw) = _pair(padding), _pair(stride)
    rank = h.known_rank(self, "im2col")
    height, width = h.static_dim(self, -2, "im2col"), h.static_dim(self, -1, "im2col")
    padded = h.pad(g, self, [0] * (rank - 2) + [ph, pw], [0] * (rank - 2) + [ph, pw], "constant", 0)
    hp, wp = height + 2 * ph, width + 2 * pw
    oh, ow = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    rows = (torch.arange(kh) * dh).reshape(kh, 1, 1, 1) + (torch.arange(oh) * sh).reshape(1, 1, oh, 1)
    cols = (torch.arange(kw) * dw).reshape(1, kw, 1, 1) + (torch.arange(ow) * sw).reshape(1, 1, 1, ow)
    index = (rows * wp + cols).reshape(kh * kw, oh * ow)
    flat = h.reshape(g, padded, [0] * (rank - 2) + [hp * wp])
    blocks = h.gather_constant(g, flat, index, rank - 2)
    return h.reshape(g, blocks, [0] * (rank - 3) + [-1, oh * ow])


def _col2im_by_pads(
    g: GraphContext,
    x: Value,
    rank: int,
    channels: int,
    kernel: tuple[int, int],
    dilation: tuple[int, int],
    padding: tuple[int, int],
    stride: tuple[int, int],
    image: tuple[int, int],
    blocks: tuple[int, int],
) -> Value:
    """col2im as a sum over kernel positions: each position's [bh, bw] block grid is spread
    by the stride (pad after each element, reshape) and shifted to its offset (pad/crop)."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel, dilation, padding, stride
    (bh, bw), (hp, wp) = blocks, (image[0] + 2 * ph, image[1] + 2 * pw)
    lead = [0] if rank == 3 else [1]
    grid = h.reshape(g, x, lead + [channels, kh * kw, bh, bw])
    total = None
    for ki in range(kh):
        for kj in range(kw):
            piece = g.op("Gather", grid, g.constant(ki * kw + kj), axis=2)  # [N, C, bh, bw]
            spread = h.unsqueeze(g, piece, [3, 5])  # [N, C, bh, 1, bw, 1]
            spread = h.pad(g, spread, [0] * 6, [0, 0, 0, sh - 1, 0, sw - 1], "constant", 0)
            spread = h.reshape(g, spread, [0, channels, bh * sh, bw * sw])
            top, left = ki * dh, kj * dw
            placed = h.pad(g, spread, [0, 0, top, left], [0, 0, hp - top - bh * sh, wp - left - bw * sw], "constant", 0)
            total = placed if total is None else g.op("Add", total, placed)
    assert total is not None
    out = h.slice_static(g, total, [2, 3], [ph, pw], [ph + image[0], pw + image[1]])
    return h.squeeze(g, out, [0]) if rank == 2 else out


@onnx_symbolic("aten::col2im")
def aten_col2im(
    g: GraphContext,
    self: Value,
    output_size: Sequence[int],
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> Value:
    """col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor

    F.fold sums overlapping blocks. A grouped ConvTranspose with one-hot weights does exactly
    that at every opset (Col2Im only exists from 18); output_padding restores the rows and
    columns the blocks do not reach. ConvTranspose computes in float, so other dtypes pass
    through float32; onnxruntime has no double ConvTranspose, so doubles and integers are
    summed exactly from one dilated, shifted Pad per kernel position instead.
    """
    (oh_img, ow_img), (kh, kw) = _pair(output_size), _pair(kernel_size)
    (dh, dw), (ph, pw), (sh, sw) = _pair(dilation), _pair(padding), _pair(stride)
    rank = h.known_rank(self, "col2im")
    channels_k = h.static_dim(self, -2, "col2im")
    kernel = kh * kw
    channels = channels_k // kernel
    bh = (oh_img + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    bw = (ow_img + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if self.dtype not in (ir.DataType.FLOAT, ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        return _col2im_by_pads(
            g, self, rank, channels, (kh, kw), (dh, dw), (ph, pw), (sh, sw), (oh_img, ow_img), (bh, bw)
        )
    work = h.cast(g, self, ir.DataType.FLOAT)
    x = h.reshape(g, work, ([0] if rank == 3 else [1]) + [channels_k, bh, bw])
    one_hot = torch.eye(kernel, dtype=torch.float32).reshape(kernel, 1, kh, kw)
    weight = one_hot.repeat(channels, 1, 1, 1)
    reach_h = (bh - 1) * sh + dh * (kh - 1) + 1 - 2 * ph
    reach_w = (bw - 1) * sw + dw * (kw - 1) + 1 - 2 * pw
    attrs: dict[str, object] = {
        "kernel_shape": [kh, kw],
        "strides": [sh, sw],
        "dilations": [dh, dw],
        "pads": [ph, pw, ph, pw],
        "group": channels,
    }
    if oh_img != reach_h or ow_img != reach_w:
        attrs["output_padding"] = [oh_img - reach_h, ow_img - reach_w]
    out = g.op("ConvTranspose", x, g.constant(weight), **attrs)
    if rank == 2:
        out = h.squeeze(g, out, [0])
    return h.cast(g, out, self.dtype)
