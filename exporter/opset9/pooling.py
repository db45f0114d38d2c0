"""Pooling: max/avg pooling 1d-3d (ceil_mode, count_include_pad, divisor_override), pooling with
indices, adaptive average and max pooling.

ONNX idioms: MaxPool's indices count over the whole tensor where torch counts within each
(n, c) plane, so each plane's offset is subtracted (``_per_channel_offsets``); adaptive pooling with sizes that do not divide
averages torch's exact windows (``adaptive_windows``); unbatched and integer inputs are reshaped
and cast around the pool; ceil_mode before opset 10 pads the tail (``pool_ceil_padding``), with
average pooling's divisor corrected to torch's (``_ceil_tail_correction``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic

Value = ir.Value


def pool_attributes(
    g: GraphContext,
    x: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int] | None,
    ceil_mode: bool,
) -> dict[str, object]:
    """Attributes of MaxPool/AveragePool; ceil_mode and dilations only exist from opset 10, so
    below it ceil_mode pads the tail (the pooling symbolics are registered at 10 for it)."""
    spatial = (h.rank_of(x) or len(kernel_size) + 2) - 2
    kernel = h.spatial_list(kernel_size, spatial)
    attrs: dict[str, object] = {
        "kernel_shape": kernel,
        "strides": h.spatial_list(stride, spatial) if stride else kernel,
        "pads": h.pads(padding, spatial),
    }
    dilations = h.spatial_list(dilation, spatial) if dilation else [1] * spatial
    if h.pool_has_ceil_mode(g):
        attrs["ceil_mode"] = int(ceil_mode)
        if any(d != 1 for d in dilations):
            attrs["dilations"] = dilations
    else:
        if any(d != 1 for d in dilations):
            raise ValueError("pooling with dilation needs opset 10 or higher")
        if ceil_mode:  # no ceil_mode attribute: the tail is padded so the ceil-mode size comes out
            pads = list(attrs["pads"])  # type: ignore[call-overload]
            tails = ceil_mode_tails(x, kernel, attrs["strides"], pads[:spatial])  # type: ignore[arg-type]
            attrs["pads"] = pads[:spatial] + [end + tail for end, tail in zip(pads[spatial:], tails)]
    return attrs


def ceil_mode_tails(x: Value, kernel: Sequence[int], strides: Sequence[int], padding: Sequence[int]) -> list[int]:
    """Extra end padding per spatial dim that makes floor-mode pooling produce torch's
    ceil_mode output sizes (``pool_ceil_padding``): opset 9 has no ceil_mode attribute."""
    spatial = len(kernel)
    shape = x.shape
    if shape is None or any(not isinstance(d, int) for d in list(shape)[-spatial:]):
        raise NeedsExportTimeValue(
            "pooling with ceil_mode=True at opset 9 needs static spatial sizes (or opset 10 or higher)"
        )
    lengths = [int(d) for d in list(shape)[-spatial:]]
    return [pool_ceil_padding(n, k, s, p, 1) for n, k, s, p in zip(lengths, kernel, strides, padding)]


def _max_pool(
    g: GraphContext,
    self: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
    spatial: int,
) -> Value:
    """MaxPool, also for unbatched [C, *spatial] inputs (a batch dim is added and removed) and
    integer inputs (MaxPool has no integer kernels before opset 12: computed in double)."""
    x, added = _batched(g, self, spatial)
    compute = h.max_pool_dtype(g, x)
    pooled = g.op(
        "MaxPool", h.cast(g, x, compute), **pool_attributes(g, x, kernel_size, stride, padding, dilation, ceil_mode)
    )
    (out,) = _unbatched(g, (pooled,), added)
    return h.cast(g, out, self.dtype) if self.dtype is not None else out


@onnx_symbolic("aten::max_pool1d", opset=10)
@onnx_symbolic("aten::max_pool1d")
def aten_max_pool1d(
    g: GraphContext,
    self: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,),
    ceil_mode: bool = False,
) -> Value:
    """max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1, bool ceil_mode=False) -> Tensor"""
    return _max_pool(g, self, kernel_size, stride, padding, dilation, ceil_mode, 1)


@onnx_symbolic("aten::max_pool2d", opset=10)
@onnx_symbolic("aten::max_pool2d")
def aten_max_pool2d(
    g: GraphContext,
    self: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,),
    ceil_mode: bool = False,
) -> Value:
    """max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor"""
    return _max_pool(g, self, kernel_size, stride, padding, dilation, ceil_mode, 2)


@onnx_symbolic("aten::max_pool3d", opset=10)
@onnx_symbolic("aten::max_pool3d")
def aten_max_pool3d(
    g: GraphContext,
    self: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,),
    ceil_mode: bool = False,
) -> Value:
    """max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor"""
    return _max_pool(g, self, kernel_size, stride, padding, dilation, ceil_mode, 3)


def _avg_pool(
    g: GraphContext,
    self: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
    spatial: int,
) -> Value:
    """AveragePool, also for unbatched [C, *spatial] inputs."""
    if divisor_override is not None:
        raise ValueError("avg_pool with divisor_override has no ONNX equivalent")
    x, added = _batched(g, self, spatial)
    attrs = pool_attributes(g, x, kernel_size, stride, padding, None, ceil_mode)
    pooled = g.op("AveragePool", x, count_include_pad=int(count_include_pad), **attrs)
    if ceil_mode and count_include_pad and "ceil_mode" not in attrs:  # the tail was padded
        pooled = g.op("Mul", pooled, _ceil_tail_correction(g, x, attrs, spatial))
    (out,) = _unbatched(g, (pooled,), added)
    return out


def _ceil_tail_correction(g: GraphContext, x: Value, attrs: dict[str, object], spatial: int) -> Value:
    """Factors that turn AveragePool's divisor into torch's for ceil_mode before opset 10.

    With count_include_pad=True torch divides by the window clipped to the input plus its
    padding p (min(start + k, L + p) - start), never counting the ceil-mode tail; AveragePool
    counts the tail pads we added, dividing by the whole kernel. (With count_include_pad=False
    both divide by the elements inside the input, so no correction is needed.)
    """
    kernel, strides = list(attrs["kernel_shape"]), list(attrs["strides"])  # type: ignore[call-overload]
    pads = list(attrs["pads"])  # type: ignore[call-overload]
    padding = pads[:spatial]
    lengths = [int(d) for d in list(x.shape)[-spatial:]]  # type: ignore[arg-type]
    sizes = [(n + p + end - k) // s + 1 for n, p, end, k, s in zip(lengths, padding, pads[spatial:], kernel, strides)]
    factors = torch.ones(sizes, dtype=torch.float64)
    for d, (out, length, k, s, p) in enumerate(zip(sizes, lengths, kernel, strides, padding)):
        counts = torch.tensor([min(i * s - p + k, length + p) - (i * s - p) for i in range(out)], dtype=torch.float64)
        view = [1] * spatial
        view[d] = out
        factors = factors * (k / counts).reshape(view)
    return g.constant(factors.to(tensors.to_torch_dtype(x.dtype or ir.DataType.FLOAT)))


@onnx_symbolic("aten::avg_pool1d", opset=10)
@onnx_symbolic("aten::avg_pool1d")
def aten_avg_pool1d(
    g: GraphContext,
    self: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Value:
    """avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, bool ceil_mode=False, bool count_include_pad=True) -> Tensor"""
    return _avg_pool(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1)


@onnx_symbolic("aten::avg_pool2d", opset=10)
@onnx_symbolic("aten::avg_pool2d")
def aten_avg_pool2d(
    g: GraphContext,
    self: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Value:
    """avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"""
    return _avg_pool(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


@onnx_symbolic("aten::avg_pool3d", opset=10)
@onnx_symbolic("aten::avg_pool3d")
def aten_avg_pool3d(
    g: GraphContext,
    self: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Value:
    """avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"""
    return _avg_pool(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


def _adaptive_avg_pool(g: GraphContext, self: Value, output_size: Sequence[int]) -> Value:
    """Adaptive average pooling with torch's exact windows (see adaptive_avg_pool below)."""
    return adaptive_avg_pool(g, self, output_size)


@onnx_symbolic("aten::adaptive_avg_pool1d")
def aten_adaptive_avg_pool1d(g: GraphContext, self: Value, output_size: Sequence[int]) -> Value:
    """adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor"""
    return _adaptive_avg_pool(g, self, output_size)


@onnx_symbolic("aten::adaptive_avg_pool2d")
def aten_adaptive_avg_pool2d(g: GraphContext, self: Value, output_size: Sequence[int]) -> Value:
    """adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor"""
    return _adaptive_avg_pool(g, self, output_size)


@onnx_symbolic("aten::adaptive_avg_pool3d")
def aten_adaptive_avg_pool3d(g: GraphContext, self: Value, output_size: Sequence[int]) -> Value:
    """adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor"""
    return _adaptive_avg_pool(g, self, output_size)


def _batched(g: GraphContext, x: Value, spatial: int) -> tuple[Value, bool]:
    """torch pools accept unbatched [C, *spatial] inputs; ONNX pools need [N, C, *spatial]."""
    rank = h.known_rank(x, "pooling")
    if rank == spatial + 1:
        out = h.unsqueeze(g, x, [0])
        out.shape = ir.Shape([1] + list(x.shape))  # type: ignore[arg-type]
        out.dtype = x.dtype
        return out, True
    return x, False


def _unbatched(g: GraphContext, outputs: tuple[Value, ...], added: bool) -> tuple[Value, ...]:
    return tuple(h.squeeze(g, o, [0]) for o in outputs) if added else outputs


def adaptive_windows(in_size: int, out_size: int) -> list[tuple[int, int]]:
    """torch's adaptive pooling windows: [floor(i*in/out), ceil((i+1)*in/out))."""
    return [((i * in_size) // out_size, -((-(i + 1) * in_size) // out_size)) for i in range(out_size)]


def _adaptive_sizes(x: Value, output_size: Sequence[int | None], what: str) -> tuple[list[int], list[int]]:
    spatial = len(output_size)
    shape = x.shape
    if shape is None or any(not isinstance(d, int) for d in list(shape)[-spatial:]):
        raise NeedsExportTimeValue(f"{what} needs static spatial input sizes")
    in_sizes = [int(d) for d in list(shape)[-spatial:]]
    out_sizes = [int(o) if o is not None else i for o, i in zip(output_size, in_sizes)]
    return in_sizes, out_sizes


def _apply_on_axis(g: GraphContext, x: Value, axis: int, rank: int, matrix: Value) -> Value:
    """MatMul ``matrix`` [in, out] into ``axis`` of ``x`` (moved last and back)."""
    if axis == rank - 1:
        return g.op("MatMul", x, matrix)
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = g.op("Transpose", x, perm=perm)
    return g.op("Transpose", g.op("MatMul", moved, matrix), perm=perm)


def pool_ceil_padding(in_size: int, kernel: int, stride: int, pad: int, dilation: int) -> int:
    """Extra end padding that makes a floor-mode pool produce torch's ceil_mode output size.

    torch: out = ceil((in + 2p - d(k-1) - 1) / s) + 1, minus one when the last window would
    start inside the end padding. Opset 9 has no ceil_mode; padding the end explicitly gives
    the same windows with floor rounding (MaxPool ignores padded cells, indices skip them), so
    static sizes use it at every opset and only dynamic ones need ceil_mode (opset 10).
    """
    span = in_size + 2 * pad - dilation * (kernel - 1) - 1
    out = -(-span // stride) + 1
    if (out - 1) * stride >= in_size + pad:
        out -= 1
    needed = (out - 1) * stride + dilation * (kernel - 1) + 1
    return max(0, needed - (in_size + 2 * pad))


def _pool_geometry(
    g: GraphContext,
    x: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
    spatial: int,
) -> dict[str, object]:
    kernel = h.spatial_list(kernel_size, spatial)
    strides = h.spatial_list(stride, spatial) if stride else list(kernel)
    dilations = h.spatial_list(dilation, spatial) if dilation else [1] * spatial
    pads = h.pads(padding, spatial)
    attrs: dict[str, object] = {"kernel_shape": kernel, "strides": strides}
    if ceil_mode:
        shape = h.static_shape(x)
        extra = None
        if shape is not None:
            extra = [
                pool_ceil_padding(shape[2 + i], kernel[i], strides[i], pads[i], dilations[i]) for i in range(spatial)
            ]
            if any(pads[spatial + i] + extra[i] >= kernel[i] for i in range(spatial)):
                extra = None  # onnxruntime wants pads smaller than the kernel
        if extra is not None:
            for i in range(spatial):
                pads[spatial + i] += extra[i]
        elif h.pool_has_ceil_mode(g):
            attrs["ceil_mode"] = 1
        else:
            raise NeedsExportTimeValue("pooling with ceil_mode=True and dynamic sizes needs opset 10 or higher")
    attrs["pads"] = pads
    if any(d != 1 for d in dilations):
        if not h.pool_has_ceil_mode(g):  # nor dilations
            raise ValueError("pooling with dilation needs opset 10 or higher")
        attrs["dilations"] = dilations
    return attrs


def _per_channel_offsets(g: GraphContext, x: Value, spatial: int) -> Value:
    """ONNX MaxPool indices count over the whole tensor (N and C included); torch counts
    within each (n, c) plane. These are the start offsets of each plane, [N, C, 1, ...]."""
    shape = h.static_shape(x)
    if shape is not None:
        plane = math.prod(shape[2:])
        offsets = torch.arange(shape[0] * shape[1], dtype=torch.int64) * plane
        return g.constant(offsets.reshape(shape[0], shape[1], *([1] * spatial)))
    _, positions = g.op("MaxPool", x, num_outputs=2, kernel_shape=[1] * spatial, strides=[1] * spatial)
    axes = list(range(2, 2 + spatial))
    return h.slice_static(g, positions, axes, [0] * spatial, [1] * spatial)


def max_pool_with_indices(
    g: GraphContext,
    x: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
    spatial: int,
) -> tuple[Value, Value]:
    """MaxPool with its Indices output, rebased to torch's per-plane flattened indices."""
    x, added = _batched(g, x, spatial)
    attrs = _pool_geometry(g, x, kernel_size, stride, padding, dilation, ceil_mode, spatial)
    source = h.cast(g, x, h.max_pool_dtype(g, x))
    values, flat = g.op("MaxPool", source, num_outputs=2, storage_order=0, **attrs)
    values = h.cast(g, values, x.dtype) if x.dtype is not None else values
    indices = g.op("Sub", flat, _per_channel_offsets(g, source, spatial))
    return _unbatched(g, (values, indices), added)  # type: ignore[return-value]


def _adaptive_max_pool_gather(
    g: GraphContext, x: Value, in_sizes: list[int], out_sizes: list[int]
) -> tuple[Value, Value]:
    """Adaptive max pooling for any sizes: each spatial axis is gathered into [out, K]
    windows (K the widest window; shorter ones repeat their last element, which never changes
    the max nor the first argmax), then ReduceMax/ArgMax run over the flattened windows."""
    spatial = len(in_sizes)
    windows = [adaptive_windows(i, o) for i, o in zip(in_sizes, out_sizes)]
    widths = [max(e - s for s, e in w) for w in windows]
    y = x
    for j in reversed(range(spatial)):  # last axis first keeps earlier axis numbers valid
        idx = [[min(s + k, e - 1) for k in range(widths[j])] for s, e in windows[j]]
        y = g.op("Gather", y, g.constant(idx), axis=2 + j)
    # y: [N, C, O0, K0, O1, K1, ...] -> [N, C, O0, O1, ..., K0, K1, ...]
    perm = [0, 1] + [2 + 2 * j for j in range(spatial)] + [3 + 2 * j for j in range(spatial)]
    y = g.op("Transpose", y, perm=perm)
    y = g.op("Reshape", y, g.constant([0, 0] + out_sizes + [-1]))
    values = h.reduce(g, "ReduceMax", y, [-1], False)
    arg = g.op("ArgMax", y, axis=-1, keepdims=0)
    strides = [math.prod(in_sizes[j + 1 :]) for j in range(spatial)]
    base = torch.zeros(out_sizes, dtype=torch.int64)
    for j in range(spatial):
        starts = torch.tensor([s for s, _ in windows[j]], dtype=torch.int64) * strides[j]
        base = base + starts.reshape([-1] + [1] * (spatial - 1 - j))
    index = g.constant(base)
    remaining = arg
    for j in reversed(range(spatial)):
        width = g.constant(widths[j])
        quotient = g.op("Div", remaining, width)
        k = g.op("Sub", remaining, g.op("Mul", quotient, width))
        index = g.op("Add", index, g.op("Mul", k, g.constant(strides[j])))
        remaining = quotient
    return values, index


def _adaptive_max_pool(g: GraphContext, x: Value, output_size: Sequence[int]) -> tuple[Value, Value]:
    spatial = len(output_size)
    in_sizes, out_sizes = _adaptive_sizes(x, output_size, "adaptive_max_pool")
    if all(i % o == 0 for i, o in zip(in_sizes, out_sizes)):
        kernel = [i // o for i, o in zip(in_sizes, out_sizes)]
        return max_pool_with_indices(g, x, kernel, kernel, [0], [1], False, spatial)
    x, added = _batched(g, x, spatial)
    return _unbatched(g, _adaptive_max_pool_gather(g, x, in_sizes, out_sizes), added)  # type: ignore[return-value]


def adaptive_avg_pool(g: GraphContext, self: Value, output_size: Sequence[int | None]) -> Value:
    """Adaptive average pooling with torch's exact windows for any sizes.

    Global or evenly dividing sizes become GlobalAveragePool/AveragePool. Otherwise each
    spatial axis is averaged separately by a constant [in, out] matrix (a window average over
    a box is the product of per-axis window averages), which MatMul supports at every opset.
    """
    spatial = len(output_size)
    if all(s == 1 for s in output_size) or all(
        i % o == 0 for i, o in zip(*_adaptive_sizes(self, output_size, "adaptive_avg_pool"))
    ):
        x, added = _batched(g, self, spatial)
        if all(s == 1 for s in output_size):
            out = g.op("GlobalAveragePool", x)
        else:
            in_sizes, out_sizes = _adaptive_sizes(self, output_size, "adaptive_avg_pool")
            kernel = [i // o for i, o in zip(in_sizes, out_sizes)]
            out = g.op("AveragePool", x, kernel_shape=kernel, strides=kernel)
        return _unbatched(g, (out,), added)[0]
    in_sizes, out_sizes = _adaptive_sizes(self, output_size, "adaptive_avg_pool")
    rank = h.known_rank(self, "adaptive_avg_pool")
    torch_dtype = tensors.to_torch_dtype(self.dtype)
    out = self
    for j in range(spatial):
        if in_sizes[j] == out_sizes[j]:
            continue
        matrix = torch.zeros(in_sizes[j], out_sizes[j], dtype=torch.float64)
        for o, (s, e) in enumerate(adaptive_windows(in_sizes[j], out_sizes[j])):
            matrix[s:e, o] = 1.0 / (e - s)
        out = _apply_on_axis(g, out, rank - spatial + j, rank, g.constant(matrix.to(torch_dtype)))
    return out


@onnx_symbolic("aten::max_pool1d_with_indices")
def aten_max_pool1d_with_indices(
    g: GraphContext,
    self: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,),
    ceil_mode: bool = False,
) -> tuple[Value, Value]:
    """max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> (Tensor, Tensor)

    Indices are flattened per (n, c) plane in torch but over the whole tensor in ONNX, so
    the plane offsets are subtracted. ceil_mode with static sizes is explicit end padding,
    which is exact at opset 9 too.
    """
    return max_pool_with_indices(g, self, kernel_size, stride, padding, dilation, ceil_mode, 1)


@onnx_symbolic("aten::max_pool2d_with_indices")
def aten_max_pool2d_with_indices(
    g: GraphContext,
    self: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,),
    ceil_mode: bool = False,
) -> tuple[Value, Value]:
    """max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)"""
    return max_pool_with_indices(g, self, kernel_size, stride, padding, dilation, ceil_mode, 2)


@onnx_symbolic("aten::max_pool3d_with_indices")
def aten_max_pool3d_with_indices(
    g: GraphContext,
    self: Value,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,),
    ceil_mode: bool = False,
) -> tuple[Value, Value]:
    """max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)"""
    return max_pool_with_indices(g, self, kernel_size, stride, padding, dilation, ceil_mode, 3)


@onnx_symbolic("aten::adaptive_max_pool1d")
def aten_adaptive_max_pool1d(g: GraphContext, self: Value, output_size: Sequence[int]) -> tuple[Value, Value]:
    """adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)

    Evenly dividing sizes are a MaxPool; others gather torch's overlapping windows
    (start floor(i*in/out), end ceil((i+1)*in/out)). Spatial sizes must be static.
    """
    return _adaptive_max_pool(g, self, output_size)


@onnx_symbolic("aten::adaptive_max_pool2d")
def aten_adaptive_max_pool2d(g: GraphContext, self: Value, output_size: Sequence[int]) -> tuple[Value, Value]:
    """adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)"""
    return _adaptive_max_pool(g, self, output_size)


@onnx_symbolic("aten::adaptive_max_pool3d")
def aten_adaptive_max_pool3d(g: GraphContext, self: Value, output_size: Sequence[int]) -> tuple[Value, Value]:
    """adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)"""
    return _adaptive_max_pool(g, self, output_size)
