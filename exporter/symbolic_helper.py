"""ONNX idioms shared by the symbolic modules.

Only the helpers in ``SIGNATURE_HELPERS`` compare ``g.opset``, each where an ONNX operator's
signature changed (an attribute became an input, an op was renamed or appeared, a kernel took
more dtypes); a symbolic never does (tests/behaviour/test_opset_changes.py checks it). Where an
op's own lowering changes at opset N, ``symbolic_opsetN.py`` (or a decorator stacked on the
same function, when only a helper's ONNX op changes) registers it at N, so the registry and
the support matrix show it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import onnx_ir as ir
import torch

from exporter import tensors
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext

__all__ = [
    "SIGNATURE_HELPERS",
    "INT64_MAX",
    "static_shape",
    "rank_of",
    "normalize_dim",
    "cast",
    "cast_like",
    "scalar_like",
    "unsqueeze",
    "squeeze",
    "reduce",
    "slice_static",
    "slice_dynamic",
    "slice_gather",
    "split_static",
    "less_or_equal",
    "upsample_by_scales",
    "pad",
    "dft",
    "scatter_elements",
    "max_min",
    "split_equal",
    "topk",
    "shape_of",
    "dim_size",
    "shape_item",
    "clip",
    "softmax",
    "where",
    "ir_dtype",
    "is_floating",
]

Value = ir.Value

# The helpers that compare g.opset, each with the ONNX change it follows (one line each).
SIGNATURE_HELPERS: dict[str, str] = {
    "cast_like": "CastLike appears at 15",
    "unsqueeze": "Unsqueeze takes its axes as an input from 13",
    "squeeze": "Squeeze takes its axes as an input from 13",
    "reduce": "ReduceSum takes its axes as an input from 13, the other Reduce* ops from 18",
    "slice_static": "Slice takes starts/ends/axes/steps as inputs from 10",
    "slice_dynamic": "Slice takes bounds computed at run time as inputs from 10",
    "slice_like": "Slice takes ends computed at run time as an input from 10",
    "scatter_elements": "Scatter is renamed ScatterElements at 11",
    "scatter_reduction": "ScatterElements combines repeated indices: add/mul from 16, max/min from 18",
    "max_min": "Max/Min take integers from 12",
    "pad": "Pad takes pads and value as inputs, and integers, from 11; bool from 13",
    "pad_run_time": "Pad takes amounts computed at run time (an input) from 11; bool from 13",
    "less_or_equal": "LessOrEqual appears at 12",
    "upsample_by_scales": "Upsample (opset 9) is renamed Resize at 10",
    "split_static": "Split takes its sizes as an input from 13",
    "split_equal": "Split takes num_outputs from 18",
    "split_to_sequence": "SplitToSequence (with the other sequence ops) appears at 11",
    "topk": "TopK takes k as an input from 10",
    "clip": "Clip takes its bounds as inputs from 11, integers from 12",
    "softmax": "Softmax/LogSoftmax normalize one axis from 13 (the flattened trailing axes before)",
    "equal": "Equal takes floats from 11",
    "arange": "Range appears at 11",
    "iota": "Range appears at 11",
    "exclusive_cumsum": "CumSum appears at 11",
    "dft": "DFT takes its axis as an input from 20",
    "widened_arithmetic": "Add/Sub/Mul/Div take 8- and 16-bit integers from 14",
    "reshape_keeping_zeros": "Reshape takes allowzero from 14",
    "pool_has_ceil_mode": "MaxPool/AveragePool take ceil_mode, and MaxPool dilations, from 10",
    "max_pool_dtype": "MaxPool takes int8/uint8 from 12",
    "has_round": "Round appears at 11",
    "has_per_axis_quantization": "QuantizeLinear/DequantizeLinear take an axis (per-axis scales) from 13",
}

# The "to the end" bound of Slice and the trip count of a Loop without one.
INT64_MAX = 9223372036854775807


def ir_dtype(dtype: torch.dtype) -> ir.DataType:
    return tensors.from_torch_dtype(dtype)


def is_floating(x: Value) -> bool:
    return tensors.is_floating_dtype(x.dtype)


def static_shape(x: Value) -> list[int] | None:
    """The shape when every dimension is known at export time, else None."""
    if x.shape is None:
        return None
    dims = list(x.shape)
    if all(isinstance(d, int) for d in dims):
        return dims
    return None


def rank_of(x: Value) -> int | None:
    return None if x.shape is None else len(x.shape)


def normalize_dim(dim: int, rank: int | None) -> int:
    """A non-negative dim. torch wraps dims of a 0-d tensor as if it had one dim (-1 is 0)."""
    if dim >= 0:
        return dim
    if rank is None:
        raise NeedsExportTimeValue(f"negative dim {dim} needs a known rank")
    return dim + max(rank, 1)


def cast(g: GraphContext, x: Value, dtype: ir.DataType) -> Value:
    """Cast unless ``x`` already has ``dtype``."""
    if x.dtype == dtype:
        return x
    return g.op("Cast", x, to=dtype)


def cast_like(g: GraphContext, x: Value, like: Value) -> Value:
    if like.dtype is None:
        return g.op("CastLike", x, like) if g.opset >= 15 else x
    return cast(g, x, like.dtype)


def scalar_like(g: GraphContext, value: float | int | bool, like: Value) -> Value:
    """A 0-d constant with the dtype of ``like`` (ONNX never casts implicitly)."""
    dtype = like.dtype if like.dtype is not None else ir.DataType.FLOAT
    return g.constant(torch.tensor(value, dtype=tensors.to_torch_dtype(dtype)))


def unsqueeze(g: GraphContext, x: Value, axes: Sequence[int]) -> Value:
    if g.opset >= 13:
        return g.op("Unsqueeze", x, g.constant(list(axes)))
    return g.op("Unsqueeze", x, axes=list(axes))


def squeeze(g: GraphContext, x: Value, axes: Sequence[int] | None) -> Value:
    if axes is None:
        return g.op("Squeeze", x)
    if g.opset >= 13:
        return g.op("Squeeze", x, g.constant(list(axes)))
    return g.op("Squeeze", x, axes=list(axes))


def reduce(g: GraphContext, op_type: str, x: Value, axes: Sequence[int] | None, keepdims: bool) -> Value:
    """Reduce* over ``axes`` (None: all axes). torch names dim 0 or -1 of a 0-d tensor, which
    ONNX refuses as out of range: a 0-d tensor is reduced over all (no) axes instead."""
    if axes is not None and x.shape is not None and len(x.shape) == 0:
        axes = None
    axes_as_input = g.opset >= 18 or (op_type == "ReduceSum" and g.opset >= 13)
    if axes is None:
        return g.op(op_type, x, keepdims=int(keepdims))
    if axes_as_input:
        return g.op(op_type, x, g.constant(list(axes)), keepdims=int(keepdims))
    return g.op(op_type, x, axes=list(axes), keepdims=int(keepdims))


def slice_static(
    g: GraphContext,
    x: Value,
    axes: Sequence[int],
    starts: Sequence[int],
    ends: Sequence[int],
    steps: Sequence[int] | None = None,
) -> Value:
    """Slice with constant bounds; steps other than 1 need opset 10 (below it, a Gather of
    the positions, see slice_gather)."""
    if g.opset >= 10:
        inputs = [g.constant(list(starts)), g.constant(list(ends)), g.constant(list(axes))]
        if g.opset == 10 and (x.shape is None or any(not isinstance(x.shape[a], int) for a in axes)):
            # onnx's Slice-10 shape inference, which onnxruntime runs on load, copies a named
            # input dim to the output even when constant bounds shorten it; onnxruntime then
            # reuses buffers by that name and fails at run time. Bounds it cannot read avoid it.
            inputs[1] = g.op("Identity", inputs[1])
        if steps is not None and any(s != 1 for s in steps):
            inputs.append(g.constant(list(steps)))
        return g.op("Slice", x, *inputs)
    if steps is not None and any(s != 1 for s in steps):
        for axis, start, end, step in zip(axes, starts, ends, steps, strict=True):
            x = slice_gather(g, x, axis, start, end, step)
        return x
    return g.op("Slice", x, axes=list(axes), starts=list(starts), ends=list(ends))


def slice_dynamic(
    g: GraphContext, x: Value, axis: int, start: int | Value, end: int | Value, step: int | Value = 1
) -> Value:
    """Slice of one axis with bounds (or a step) known only at run time: Slice-1 takes constant
    bounds only (below opset 10 a Gather of the positions, see slice_gather), Slice-10 takes
    them as inputs."""
    if g.opset < 10:
        return slice_gather(g, x, axis, start, end, step)
    bounds = [g.list_to_value([start]), g.list_to_value([end]), g.constant([axis])]
    if isinstance(step, Value):
        bounds.append(g.list_to_value([step]))
    elif step != 1:
        bounds.append(g.constant([step]))
    return g.op("Slice", x, *bounds)


def slice_like(g: GraphContext, x: Value, like: Value, what: str) -> Value | None:
    """``x`` cut to the shape of ``like`` (known only at run time) from index 0 on every dim:
    Slice-10 takes the ends as an input; None below it, where Slice-1 takes constant ends only."""
    if g.opset < 10:
        return None
    rank = known_rank(like, what)
    return g.op("Slice", x, g.constant([0] * rank), g.op("Shape", like), g.constant(list(range(rank))))


def slice_gather(
    g: GraphContext, x: Value, axis: int, start: int | Value, end: int | Value, step: int | Value = 1
) -> Value:
    """``x[start:end:step]`` on one axis as a Gather of the selected positions, for opsets
    whose Slice (Slice-1) takes neither steps nor bounds computed at run time.

    The bounds follow torch/Python slicing for a positive step: a negative bound counts from
    the end (``size + i``), then both clamp to ``[0, size]``; the count is
    ``ceil((end - start) / step)`` floored at 0, and the positions ``start + step * iota``.
    """
    size = cast(g, g.op("Gather", g.op("Shape", x), g.constant(axis), axis=0), ir.DataType.INT64)
    zero = g.constant(0)

    def scalar(v: int | Value) -> Value:
        if isinstance(v, int):  # INT64_MAX as an open end: keep size + v from overflowing
            return g.constant(max(min(v, 2**62), -(2**62)))
        return cast(g, g.op("Reshape", v, g.constant(torch.tensor([], dtype=torch.int64))), ir.DataType.INT64)

    def bound(b: int | Value) -> Value:
        b = scalar(b)
        b = g.op("Where", g.op("Less", b, zero), g.op("Add", b, size), b)
        return max_min(g, max_min(g, b, zero, larger=True), size, larger=False)

    lo, hi = bound(start), bound(end)
    if isinstance(step, int):
        if step <= 0:
            raise ValueError(f"slice step must be positive, got {step}")
        step_v = g.constant(step)
    else:
        step_v = scalar(step)
    span = max_min(g, g.op("Sub", hi, lo), zero, larger=True)
    count = g.op("Div", g.op("Sub", g.op("Add", span, step_v), g.constant(1)), step_v)
    positions = g.op("Add", lo, g.op("Mul", iota(g, count), step_v))
    positions.shape = ir.Shape([None])
    return g.op("Gather", x, positions, axis=axis)


def scatter_elements(g: GraphContext, data: Value, indices: Value, updates: Value, axis: int) -> Value:
    """ScatterElements (opset 11), Scatter before it: the same semantics, an older name."""
    return g.op("ScatterElements" if g.opset >= 11 else "Scatter", data, indices, updates, axis=axis)


# torch's scatter reductions -> ScatterElements' reduction attribute and the opset that has it
SCATTER_REDUCTIONS = {"sum": ("add", 16), "prod": ("mul", 16), "amax": ("max", 18), "amin": ("min", 18)}


def scatter_reduction(g: GraphContext, reduction: str) -> str | None:
    """ScatterElements' ``reduction`` attribute for torch's ``reduction`` (sum, prod, amax,
    amin), None below the opset that has it: a plain scatter keeps one of repeated indices."""
    name, since = SCATTER_REDUCTIONS[reduction]
    return name if g.opset >= since else None


def max_min(g: GraphContext, a: Value, b: Value, *, larger: bool) -> Value:
    """Max (``larger``) or Min of ``a`` and ``b``. Max/Min take integers from opset 12; before,
    integers compare and pick (Greater/Less + Where)."""
    if is_floating(a) or g.opset >= 12:
        return g.op("Max" if larger else "Min", a, b)
    return g.op("Where", g.op("Greater" if larger else "Less", a, b), a, b)


def pad(
    g: GraphContext,
    x: Value,
    begins: Sequence[int],
    ends: Sequence[int],
    mode: str,
    value: float | int | bool = 0,
) -> Value:
    """ONNX Pad from full-rank begin/end lists (negative entries crop, as in torch).

    Pad-2 (opsets 9-10) takes pads and value as attributes and has float kernels only, Pad-11
    takes them as inputs and adds integers, Pad-13 adds bool. Other dtypes pass through a
    wider type and back: integers through double (exact below 2**53), bool through int32.
    """
    if not any(begins) and not any(ends):
        return x
    dtype = x.dtype
    work = x
    if g.opset < 11 and not is_floating(x):
        work = cast(g, x, ir.DataType.DOUBLE)
    elif g.opset < 13 and dtype == ir.DataType.BOOL:
        work = cast(g, x, ir.DataType.INT32)
    if g.opset < 11:
        attrs: dict[str, object] = {"pads": list(begins) + list(ends), "mode": mode}
        if mode == "constant":
            attrs["value"] = float(value)
        out = g.op("Pad", work, **attrs)
    else:
        fill = scalar_like(g, value, work) if mode == "constant" else None
        out = g.op("Pad", work, g.constant(list(begins) + list(ends)), fill, mode=mode)
    return cast(g, out, dtype) if work is not x else out


def pad_run_time(
    g: GraphContext, x: Value, pads: Value, mode: str, value: float | int | bool = 0, *, refusal: str
) -> Value:
    """Pad by amounts computed at run time (``pads``: the begins of every dim, then the ends).
    Pad-11 takes them as an input; Pad-2 only as an attribute, so below opset 11 ``refusal``
    is raised (a ValueError). Pad has no bool kernel before 13: bool goes through int32."""
    if g.opset < 11:
        raise NeedsExportTimeValue(refusal)
    work = cast(g, x, ir.DataType.INT32) if g.opset < 13 and x.dtype == ir.DataType.BOOL else x
    fill = scalar_like(g, value, work) if mode == "constant" else None
    out = g.op("Pad", work, pads, fill, mode=mode)
    return cast(g, out, x.dtype) if work is not x else out


def less_or_equal(g: GraphContext, a: Value, b: Value) -> Value:
    """a <= b: LessOrEqual appears at opset 12; before, Not(Greater)."""
    if g.opset >= 12:
        return g.op("LessOrEqual", a, b)
    return g.op("Not", g.op("Greater", a, b))


def upsample_by_scales(g: GraphContext, x: Value, scales: Sequence[float], mode: str) -> Value:
    """Upsample-9 by full-rank ``scales``; at opset 10 the same op is named Resize (Upsample
    is deprecated). Resize-11 adds roi and sizes inputs: callers use Resize directly there."""
    op_type = "Upsample" if g.opset == 9 else "Resize"
    return g.op(op_type, x, g.constant(list(scales), ir.DataType.FLOAT), mode=mode)


def split_static(g: GraphContext, x: Value, sizes: Sequence[int], axis: int) -> tuple[Value, ...]:
    """Split into pieces of known ``sizes``; the sizes are an input from opset 13."""
    if g.opset >= 13:
        return g.op("Split", x, g.constant(list(sizes)), axis=axis, num_outputs=len(sizes))
    return g.op("Split", x, axis=axis, split=list(sizes), num_outputs=len(sizes))


def split_equal(g: GraphContext, x: Value, count: int, axis: int) -> tuple[Value, ...]:
    """Split into ``count`` equal pieces of a size known only at run time; Split says how many
    with its num_outputs attribute from opset 18 (before, the output count says it)."""
    if g.opset >= 18:
        # g.op's own num_outputs keyword hides the attribute of that name; pass it as an Attr.
        return g.op("Split", x, axis=axis, num_outputs=count, outputs_attr=ir.AttrInt64("num_outputs", count))
    return g.op("Split", x, axis=axis, num_outputs=count)


def split_to_sequence(g: GraphContext, x: Value, split: Value, axis: int, *, refusal: str) -> Value:
    """SplitToSequence: pieces whose count is known only at run time, as an ONNX sequence. It
    arrives at opset 11 with the other sequence ops; below it ONNX fixes the number of outputs
    and ``refusal`` is raised (a ValueError)."""
    if g.opset < 11:
        raise NeedsExportTimeValue(refusal)
    return g.op("SplitToSequence", x, split, axis=axis)


def topk(g: GraphContext, x: Value, k: int | Value, axis: int, **attrs: int) -> tuple[Value, Value]:
    """TopK: k is an attribute before opset 10 (so it must be known at export time), an input
    from 10; ``attrs`` (largest, sorted) exist from 11."""
    if g.opset < 10:
        if not isinstance(k, int):
            raise NeedsExportTimeValue("topk with k known only at run time needs opset 10")
        return g.op("TopK", x, axis=axis, k=k, num_outputs=2, **attrs)
    return g.op("TopK", x, g.list_to_value([k]), axis=axis, num_outputs=2, **attrs)


def shape_of(g: GraphContext, x: Value) -> Value:
    """Shape(x): a constant when the shape is static, so it folds away."""
    shape = static_shape(x)
    if shape is not None:
        return g.constant(shape)
    return g.op("Shape", x)


def dim_size(g: GraphContext, x: Value, dim: int) -> int | Value:
    """Size of one dimension: a Python int when static, a 0-d int64 value otherwise."""
    rank = rank_of(x)
    dim = normalize_dim(dim, rank)
    if x.shape is not None and isinstance(x.shape[dim], int):
        return int(x.shape[dim])
    gathered = g.op("Gather", g.op("Shape", x), g.constant(dim), axis=0)
    gathered.dtype = ir.DataType.INT64
    gathered.shape = ir.Shape([])
    return gathered


def shape_item(shape: Value, index: int) -> int | None:
    """Item ``index`` of a run-time shape list when that dim is known at export time, else None.

    ``x.size()`` of a tensor with any dynamic dim is one ``Shape(x)`` value; reading one of its
    static dims (``x.shape[0]`` of a [1, N, 4] tensor) must stay a Python int, or everything
    built from it (``arange(n)``, advanced indexing, a loop's trip count) loses its size.
    """
    producer = shape.producer()
    if producer is None or producer.op_type != "Shape" or producer.domain != "" or producer.attributes:
        return None
    source = producer.inputs[0]
    if source is None or source.shape is None or not -len(source.shape) <= index < len(source.shape):
        return None
    dim = source.shape[index]
    return int(dim) if isinstance(dim, int) else None


def clip(g: GraphContext, x: Value, low: Value | float | None, high: Value | float | None) -> Value:
    """Clip to [low, high]. Clip takes its bounds as inputs from opset 11 (floats only until
    12); before that they are float attributes. Integer tensors below opset 12 go through
    Less/Greater/Where, since Max/Min lack integer kernels there too."""

    def bound(b: Value | float | None) -> Value | None:
        if b is None:
            return None
        return cast_like(g, b, x) if isinstance(b, Value) else scalar_like(g, b, x)

    # onnxruntime's Clip kernels: float/float16 only before opset 12, most numeric types after
    clip_kernel = x.dtype in (ir.DataType.FLOAT, ir.DataType.FLOAT16)
    scalar_bounds = all(not isinstance(b, Value) or (b.shape is not None and len(b.shape) == 0) for b in (low, high))
    if scalar_bounds and (g.opset >= 12 or (g.opset >= 11 and clip_kernel)):
        return g.op("Clip", x, bound(low), bound(high))
    if clip_kernel and g.opset < 11 and not isinstance(low, Value) and not isinstance(high, Value):
        attrs = {}
        if low is not None:
            attrs["min"] = float(low)
        if high is not None:
            attrs["max"] = float(high)
        return g.op("Clip", x, **attrs)
    out = x
    low_v, high_v = bound(low), bound(high)
    if low_v is not None:
        out = g.op("Where", g.op("Less", out, low_v), low_v, out)
    if high_v is not None:
        out = g.op("Where", g.op("Greater", out, high_v), high_v, out)
    return out


def where(g: GraphContext, condition: Value, x: Value, y: Value) -> Value:
    """Where, except for bool data, which onnxruntime's Where has no kernel for."""
    if x.dtype == ir.DataType.BOOL:
        return g.op("Or", g.op("And", condition, x), g.op("And", g.op("Not", condition), y))
    return g.op("Where", condition, x, y)


def softmax(g: GraphContext, x: Value, dim: int, *, log: bool = False, rank: int | None = None) -> Value:
    """(Log)Softmax over one dim. Before opset 13 ONNX flattens from ``axis`` on, which is
    only the same as torch for the last dim, so other dims are transposed there and back."""
    op_type = "LogSoftmax" if log else "Softmax"
    rank = rank_of(x) if rank is None else rank
    if g.opset >= 13:
        return g.op(op_type, x, axis=dim)
    if rank is None:
        raise NeedsExportTimeValue(f"{op_type} below opset 13 needs the input rank")
    dim = normalize_dim(dim, rank)
    if dim == rank - 1:
        return g.op(op_type, x, axis=dim)
    perm = list(range(rank))
    perm[dim], perm[-1] = perm[-1], perm[dim]
    moved = g.op("Transpose", x, perm=perm)
    out = g.op(op_type, moved, axis=rank - 1)
    return g.op("Transpose", out, perm=perm)


def comparable(g: GraphContext, x: Value) -> Value:
    """Comparison ops before opset 11/13 lack small integer and half kernels: widen them."""
    if x.dtype in (ir.DataType.FLOAT16, ir.DataType.BFLOAT16):
        return cast(g, x, ir.DataType.FLOAT)
    if x.dtype in (ir.DataType.INT8, ir.DataType.INT16, ir.DataType.UINT8, ir.DataType.UINT16):
        return cast(g, x, ir.DataType.INT32)
    return x


def any_nan(g: GraphContext, a: Value, b: Value) -> Value:
    return g.op("Or", g.op("IsNaN", a), g.op("IsNaN", b))


def equal(g: GraphContext, a: Value, b: Value) -> Value:
    """Equal. Equal-7 has no float kernel, so floats compare as neither less nor greater
    (and not NaN, which equals nothing)."""
    a, b = comparable(g, a), comparable(g, b)
    if g.opset >= 11 or not is_floating(a):
        return g.op("Equal", a, b)
    ordered = g.op("Or", g.op("Less", a, b), g.op("Greater", a, b))
    return g.op("Not", g.op("Or", ordered, any_nan(g, a, b)))


def shape_value(g: GraphContext, size: Sequence[int] | Value) -> Value:
    return size if isinstance(size, Value) else g.constant(list(size))


def arange(
    g: GraphContext,
    start: float | int | Value,
    end: float | int | Value,
    step: float | int | Value,
    dtype: torch.dtype | None,
) -> Value:
    """arange as torch computes it (RangeFactories), for bounds known only at run time
    (constant bounds were folded in torch).

    A floating result has ceil((end - start) / step) items computed in double: Range from
    opset 11, below it NonZero over a ones vector of the count, scaled and shifted. An integer
    result truncates start and step to integers first, and an int64 result its end too, with
    the length (end - start + step - sign(step)) / step in integer arithmetic
    (arange(8.5, dtype=int64) has 8 items, arange(2, 8.5, 1.5, dtype=int64) has 6).
    """
    is_float = any(isinstance(v, float) or (isinstance(v, Value) and is_floating(v)) for v in (start, end, step))
    default = torch.get_default_dtype() if is_float else torch.int64
    out_dtype = ir_dtype(dtype if dtype is not None else default)
    int64, double = ir.DataType.INT64, ir.DataType.DOUBLE
    if not tensors.is_floating_dtype(out_dtype):
        return _integer_arange(g, start, end, step, out_dtype)

    def as_double(v: float | int | Value) -> Value:
        return cast(g, v, double) if isinstance(v, Value) else g.constant(float(v), double)

    start_v, end_v, step_v = as_double(start), as_double(end), as_double(step)
    if g.opset >= 11:
        return cast(g, g.op("Range", start_v, end_v, step_v), out_dtype)
    count = cast(g, g.op("Ceil", g.op("Div", g.op("Sub", end_v, start_v), step_v)), int64)
    values = g.op("Add", g.op("Mul", cast(g, iota(g, count), double), step_v), start_v)
    return cast(g, values, out_dtype)


def _integer_arange(
    g: GraphContext,
    start: float | int | Value,
    end: float | int | Value,
    step: float | int | Value,
    out_dtype: ir.DataType,
) -> Value:
    """arange with an integer result, torch's length rule (see ``arange``)."""
    int64, double = ir.DataType.INT64, ir.DataType.DOUBLE

    def as_int(v: float | int | Value) -> Value:  # Cast to an integer truncates toward zero, as C++ does
        return cast(g, v, int64) if isinstance(v, Value) else g.constant(int(v))

    def as_double(v: float | int | Value) -> Value:
        return cast(g, v, double) if isinstance(v, Value) else g.constant(float(v), double)

    start_i, step_i = as_int(start), as_int(step)
    if out_dtype == int64:
        span = g.op("Sub", as_int(end), start_i)
        count = g.op("Div", g.op("Sub", g.op("Add", span, step_i), g.op("Sign", step_i)), step_i)
    else:
        span = g.op("Sub", as_double(end), as_double(start))
        count = cast(g, g.op("Ceil", g.op("Div", span, as_double(step))), int64)
    count = max_min(g, count, g.constant(0), larger=True)
    count.dtype, count.shape = int64, ir.Shape([])
    values = g.op("Add", g.op("Mul", iota(g, count), step_i), start_i)
    return cast(g, values, out_dtype)


def dft(g: GraphContext, x: Value, axis: int, *, inverse: bool = False, onesided: bool = False) -> Value:
    """DFT of ``x`` ([..., 1 or 2]) along a non-negative ``axis``: an attribute in DFT-17, an
    input from DFT-20 (dft_length left out)."""
    attrs = {"inverse": int(inverse), "onesided": int(onesided)}
    if g.opset >= 20:
        return g.op("DFT", x, None, g.constant(axis), **attrs)
    return g.op("DFT", x, axis=axis, **attrs)


def pads(padding: Sequence[int], spatial: int) -> list[int]:
    padding = list(padding) if len(padding) == spatial else list(padding) * spatial
    return padding + padding


def spatial_list(values: Sequence[int], spatial: int) -> list[int]:
    return list(values) * spatial if len(values) == 1 else list(values)


FLOAT32_ONLY_KERNELS = (ir.DataType.DOUBLE, ir.DataType.BFLOAT16)


def float_kernel(g: GraphContext, op_type: str, x: Value, **attrs: object) -> Value:
    """``op_type`` on ``x``, through float32 for dtypes onnxruntime has no kernel for."""
    if x.dtype in FLOAT32_ONLY_KERNELS:
        out = g.op(op_type, cast(g, x, ir.DataType.FLOAT), **attrs)
        return g.op("Cast", out, to=x.dtype)
    return g.op(op_type, x, **attrs)


def log1p(g: GraphContext, x: Value) -> Value:
    """log(1 + x) accurate for tiny x (Log(1 + x) returns 0 for |x| < 1e-8 in float32).

    Kahan's trick: with u = 1 + x rounded, log(u) * x / (u - 1) cancels the rounding of u.
    u == 1 means x is below the rounding step, where log1p(x) == x; x / (u - 1) is inf/inf
    only for x = inf, where the factor is 1.
    """
    one = scalar_like(g, 1.0, x)
    u = g.op("Add", x, one)
    factor = g.op("Div", x, g.op("Sub", u, one))
    factor = g.op("Where", g.op("IsNaN", factor), one, factor)
    out = g.op("Mul", g.op("Log", u), factor)
    return g.op("Where", equal(g, u, one), x, out)


# Integer dtypes ONNX's Add/Sub/Mul/Div take only from opset 14.
NARROW_INTEGERS = (ir.DataType.INT8, ir.DataType.UINT8, ir.DataType.INT16, ir.DataType.UINT16)


def widened_arithmetic(g: GraphContext, compute: Callable[..., Value], *operands: Value) -> Value:
    """``compute(*operands)`` for 8/16-bit integer operands below opset 14, where Add/Sub/Mul/Div
    have no kernels for them: in int32, cast back to the operands' dtype (wrapping around as
    torch does: casting back truncates). Other dtypes and opsets call ``compute`` unchanged."""
    dtype = operands[0].dtype
    if g.opset >= 14 or dtype not in NARROW_INTEGERS:
        return compute(*operands)
    wide = [cast(g, x, ir.DataType.INT32) if x.dtype == dtype else x for x in operands]
    return cast(g, compute(*wide), dtype)


def known_rank(x: Value, what: str) -> int:
    rank = rank_of(x)
    if rank is None:
        raise NeedsExportTimeValue(f"{what} needs the input rank")
    return rank


def mul_sizes(g: GraphContext, a: int | Value, b: int | Value) -> int | Value:
    """Product of two dim sizes, folded when both are known."""
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if isinstance(a, int) and a == 1:
        return b
    if isinstance(b, int) and b == 1:
        return a
    a_v = a if isinstance(a, Value) else g.constant(a)
    b_v = b if isinstance(b, Value) else g.constant(b)
    return g.op("Mul", cast(g, a_v, ir.DataType.INT64), cast(g, b_v, ir.DataType.INT64))


def prod_sizes(g: GraphContext, sizes: Sequence[int | Value]) -> int | Value:
    out: int | Value = 1
    for size in sizes:
        out = mul_sizes(g, out, size)
    return out


def sizes_to_shape(g: GraphContext, sizes: Sequence[int | Value]) -> Value:
    return g.list_to_value(list(sizes)) if sizes else g.constant(torch.zeros(0, dtype=torch.int64))


def normalize_index(g: GraphContext, index: Value, size: int | Value) -> Value:
    """int64 indices with negatives wrapped by ``size``. Gather, Scatter and linearized
    positions below opset 11 only accept indices in [0, size); constants fold here."""
    index = cast(g, index, ir.DataType.INT64)
    const = index.const_value
    if const is not None:
        array = torch.as_tensor(const.numpy())
        if bool((array >= 0).all()):
            return index
        if isinstance(size, int):
            return g.constant(torch.where(array < 0, array + size, array))
    size_v = g.constant(size) if isinstance(size, int) else cast(g, size, ir.DataType.INT64)
    negative = g.op("Less", index, g.constant(0))
    return g.op("Where", negative, g.op("Add", index, size_v), index)


def axis_shape(rank: int, axis: int) -> list[int]:
    """Reshape target putting a 1-D tensor on ``axis`` of a rank-``rank`` tensor."""
    return [1] * axis + [-1] + [1] * (rank - axis - 1)


def data_dependent(g: GraphContext, value: Value, output: int = 0) -> Value:
    """Mark a value whose sizes depend on the data (NonZero, Unique) as dynamic, so the traced
    example's sizes are not stamped on it and folded into later shape arithmetic."""
    rank = rank_of(value)
    if rank is None and g.node is not None:
        ts_type = g.node.outputsAt(output).type()
        if isinstance(ts_type, torch._C.TensorType):
            rank = ts_type.dim()
    if rank is not None:
        value.shape = ir.Shape([None] * rank)
    return value


def empty_int64(g: GraphContext) -> Value:
    return g.constant(torch.zeros(0, dtype=torch.int64))


def all_true_like(g: GraphContext, x: Value) -> Value:
    return g.op("ConstantOfShape", shape_of(g, x), value=torch.tensor([True]))


def static_dim(x: Value, dim: int, what: str) -> int:
    """The export-time size of ``dim`` or a clear error naming the op."""
    rank = rank_of(x)
    dim = normalize_dim(dim, rank)
    if x.shape is None or not isinstance(x.shape[dim], int):
        raise NeedsExportTimeValue(f"{what} needs the size of dim {dim} at export time")
    return int(x.shape[dim])


def reshape(g: GraphContext, x: Value, shape: Sequence[int]) -> Value:
    return g.op("Reshape", x, g.constant([int(s) for s in shape]))


def gather_constant(g: GraphContext, x: Value, indices: torch.Tensor, axis: int) -> Value:
    return g.op("Gather", x, g.constant(indices.to(torch.int64)), axis=axis)


def const_ints(obj: object) -> list[int] | None:
    """A constant int list behind an argument (Python list, constant tensor or value)."""
    if isinstance(obj, Value):
        if obj.const_value is None:
            return None
        obj = torch.from_numpy(obj.const_value.numpy().copy())
    if isinstance(obj, torch.Tensor):
        return [int(v) for v in obj.reshape(-1).tolist()]
    if isinstance(obj, (list, tuple)) and all(isinstance(v, int) for v in obj):
        return [int(v) for v in obj]
    if isinstance(obj, int):
        return [obj]
    return None


def concat_shape(g: GraphContext, parts: Sequence[Value | int | None]) -> Value:
    values = [g.constant([p]) if isinstance(p, int) else p for p in parts if p is not None]
    return g.op("Concat", *values, axis=0)


def iota(g: GraphContext, n: int | Value) -> Value:
    """``[0, 1, ..., n-1]`` as int64. Range needs opset 11; below, NonZero of a ones vector
    gives the same indices."""
    if isinstance(n, int):
        return g.constant(torch.arange(n, dtype=torch.int64))
    n = cast(g, n, ir.DataType.INT64)
    if g.opset >= 11:
        scalar = g.op("Reshape", n, g.constant(torch.tensor([], dtype=torch.int64)))
        return g.op("Range", g.constant(0), scalar, g.constant(1))
    ones = g.op("ConstantOfShape", g.op("Reshape", n, g.constant([1])), value=torch.tensor([1], dtype=torch.int64))
    return squeeze(g, g.op("NonZero", ones), [0])


def exclusive_cumsum(g: GraphContext, x: Value) -> Value:
    """Exclusive prefix sums of a 1-D int64 tensor: CumSum with exclusive=1 from opset 11;
    before it a strictly-lower-triangular mask selects the earlier entries for a ReduceSum."""
    if g.opset >= 11:
        return g.op("CumSum", x, g.constant(0), exclusive=1)
    # read at run time unless x is a constant: a data-dependent size (packed batch_sizes has
    # max(lengths) entries) would be the traced example's
    if x.const_value is not None:
        length: int | Value = int(x.const_value.shape[0])
    else:
        length = g.op("Gather", g.op("Shape", x), g.constant(0), axis=0)
    index = iota(g, length)
    earlier = g.op("Less", unsqueeze(g, index, [0]), unsqueeze(g, index, [1]))
    picked = g.op("Where", earlier, unsqueeze(g, x, [0]), scalar_like(g, 0, x))
    return reduce(g, "ReduceSum", picked, [1], keepdims=False)


def reshape_keeping_zeros(g: GraphContext, x: Value, shape: Value) -> Value:
    """Reshape to a ``shape`` whose 0 entries are sizes (torch's), not copies of the input's dim:
    allowzero from opset 14. Before it a 0 copies the input's dim, which only differs for size-0
    dims; a constant ``shape`` with a 0 then means an empty result, which is that constant."""
    sizes = const_ints(shape)
    if g.opset < 14 and sizes is not None and x.dtype is not None and 0 in sizes and -1 not in sizes:
        return g.constant(torch.zeros(sizes, dtype=tensors.to_torch_dtype(x.dtype)))
    return g.op("Reshape", x, shape, **({"allowzero": 1} if g.opset >= 14 else {}))


def pool_has_ceil_mode(g: GraphContext) -> bool:
    """Whether MaxPool/AveragePool take ceil_mode, and MaxPool dilations (opset 10)."""
    return g.opset >= 10


def max_pool_dtype(g: GraphContext, x: Value) -> ir.DataType:
    """The dtype MaxPool runs in. torch pools int32/int64/uint8 too; MaxPool takes floats,
    and int8/uint8 only from opset 12, so other integers go through double (exact below 2**53)."""
    dtype = x.dtype if x.dtype is not None else ir.DataType.FLOAT
    if tensors.is_floating_dtype(dtype):
        return dtype
    if dtype in (ir.DataType.INT8, ir.DataType.UINT8) and g.opset >= 12:
        return dtype
    return ir.DataType.DOUBLE


def has_round(g: GraphContext) -> bool:
    """Whether Round exists (opset 11)."""
    return g.opset >= 11


def has_per_axis_quantization(g: GraphContext) -> bool:
    """Whether QuantizeLinear/DequantizeLinear take an axis with per-axis scales (opset 13)."""
    return g.opset >= 13
