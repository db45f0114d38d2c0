"""Recurrent layers and packed sequences: LSTM/GRU/RNN layers (bidirectional, multi-layer,
proj_size, batch_first), their cells, pack_padded_sequence and pad_packed_sequence.

ONNX idioms: one ONNX LSTM/GRU/RNN node per layer (opset 7+), weights reordered to ONNX's gate
order while the file is written; packed data keeps torch's layout and remembers the padded
tensor it came from, so pack -> RNN -> pad chains run on padded tensors with sequence_lens.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import errors, tensors
from exporter import symbolic_helper as h
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic

Value = ir.Value


# For each ONNX gate block, the index of the block in torch's weight layout.
_LSTM_GATES = (0, 3, 1, 2)  # torch i, f, g, o -> ONNX i, o, f, c


_GRU_GATES = (1, 0, 2)  # torch r, z, n -> ONNX z, r, h


_RNN_GATES = (0,)


_GATES = {"LSTM": _LSTM_GATES, "GRU": _GRU_GATES, "RNN_TANH": _RNN_GATES, "RNN_RELU": _RNN_GATES}


_STATES = {"LSTM": 2, "GRU": 1, "RNN_TANH": 1, "RNN_RELU": 1}


# Value.meta key: a packed value's padded (time-major) source and its int64 lengths.
_PADDED_SOURCE = "exporter.recurrent.padded_source"


# The dtype every ONNX recurrent node runs in. onnxruntime has no double LSTM/GRU/RNN (LSTM
# and GRU fail at run time with "does not support double yet", RNN has no kernel), so double
# runs in float and is cast back; float16/bfloat16 run in float too, which is what torch's
# CPU kernels accumulate in, so errors of long sequences do not compound in half precision.
_COMPUTE_DTYPE = ir.DataType.FLOAT


def _as_torch(value: Value) -> torch.Tensor:
    source = value.const_value
    if isinstance(source, tensors.TorchTensor):
        return source.raw
    return torch.from_numpy(source.numpy().copy())


def _is_zero_constant(value: Value | None) -> bool:
    return value is not None and value.const_value is not None and not bool(_as_torch(value).any())


def _rows(value: Value) -> int:
    if value.shape is None or not isinstance(value.shape[0], int):
        raise errors.NeedsExportTimeValue(f"recurrent weight {value.name!r} needs a static shape, got {value.shape}")
    return int(value.shape[0])


def _stack_directions(
    g: GraphContext,
    per_direction: Sequence[Sequence[Value | None]],
    order: Sequence[int],
    dtype: ir.DataType,
    rows: int,
) -> Value:
    """``[num_dir, ...]``: per direction, each part's gate blocks (dim 0) put in ONNX's order,
    parts concatenated along dim 0 (a bias is ``[b_ih, b_hh]``; a missing part is zeros of
    ``rows``). Constant weights are rearranged at export time, others with Slice/Concat."""
    gate = rows // len(order)
    parts_flat = [p for parts in per_direction for p in parts]
    if all(p is None or p.const_value is not None for p in parts_flat):
        torch_dtype = tensors.to_torch_dtype(dtype)
        sources = [
            [torch.zeros(rows) if part is None else _as_torch(part) for part in parts] for parts in per_direction
        ]

        def rearranged() -> torch.Tensor:
            stacked = []
            for parts in sources:
                pieces = []
                for tensor in parts:
                    blocks = tensor.to(torch_dtype).split(gate, dim=0)
                    pieces.extend(blocks[i] for i in order)
                stacked.append(torch.cat(pieces, dim=0))
            return torch.stack(stacked, dim=0)

        first = sources[0]
        shape = torch.Size([len(sources), sum(t.shape[0] for t in first), *first[0].shape[1:]])
        if shape.numel() * torch_dtype.itemsize <= 1024:
            return g.constant(rearranged())
        # rearranged while the file is written: a large recurrent model's weights are not
        # copied during export
        name = g.unique_name(f"{parts_flat[0].name}.gates" if parts_flat[0] is not None else "recurrent")
        return g.constant(tensors.DeferredTorchTensor(rearranged, shape, torch_dtype, name=name))
    directions = []
    for parts in per_direction:
        pieces = []
        for part in parts:
            if part is None:
                pieces.append(g.constant(torch.zeros(rows, dtype=tensors.to_torch_dtype(dtype))))
                continue
            part = h.cast(g, part, dtype)
            if len(order) == 1:
                pieces.append(part)
                continue
            pieces.extend(h.slice_static(g, part, [0], [i * gate], [(i + 1) * gate]) for i in order)
        joined = pieces[0] if len(pieces) == 1 else g.op("Concat", *pieces, axis=0)
        directions.append(h.unsqueeze(g, joined, [0]))
    return directions[0] if len(directions) == 1 else g.op("Concat", *directions, axis=0)


def _merge_directions(g: GraphContext, y: Value, num_directions: int) -> Value:
    """ONNX Y ``[seq, num_dir, batch, hidden]`` -> torch's ``[seq, batch, num_dir*hidden]``."""
    if num_directions == 1:
        return h.squeeze(g, y, [1])
    moved = g.op("Transpose", y, perm=[0, 2, 1, 3])
    return g.op("Reshape", moved, g.constant([0, 0, -1]))


def _recurrent_op(
    g: GraphContext,
    mode: str,
    x: Value,
    w: Value,
    r: Value,
    b: Value | None,
    sequence_lens: Value | None,
    initial: Sequence[Value | None],
    hidden_size: int,
    num_directions: int,
) -> tuple[Value, ...]:
    """One ONNX LSTM/GRU/RNN node; returns (Y, Y_h[, Y_c])."""
    attrs: dict[str, object] = {
        "hidden_size": hidden_size,
        "direction": "bidirectional" if num_directions == 2 else "forward",
    }
    if mode == "GRU":
        attrs["linear_before_reset"] = 1  # torch applies r after the hidden matmul and bias
    if mode == "RNN_RELU":
        attrs["activations"] = ["Relu"] * num_directions
    inputs: list[Value | None] = [x, w, r, b, sequence_lens, *initial]
    while inputs[-1] is None:
        inputs.pop()
    op_type = "LSTM" if mode == "LSTM" else mode[:3]
    return g.op(op_type, *inputs, num_outputs=1 + _STATES[mode], **attrs)


def _run_layers(
    g: GraphContext,
    mode: str,
    x: Value,
    states: Sequence[Value | None],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    bidirectional: bool,
    sequence_lens: Value | None,
    dtype: ir.DataType,
) -> tuple[Value, list[Value]]:
    """Stacked layers over time-major ``x`` in ``dtype``; returns torch's output
    ``[seq, batch, num_dir*hidden]`` and the final states ``[num_layers*num_dir, batch, hidden]``."""
    num_directions = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    groups = num_layers * num_directions
    if len(params) == groups * (per + 1) and mode == "LSTM":
        return _lstm_projected(g, x, states, params, has_biases, num_layers, num_directions, sequence_lens, dtype)
    if len(params) != groups * per:
        raise ValueError(f"expected {groups * per} recurrent weights, got {len(params)}")
    order = _GATES[mode]
    finals: list[list[Value]] = [[] for _ in states]
    for layer in range(num_layers):
        group = [
            params[(layer * num_directions + d) * per : (layer * num_directions + d + 1) * per]
            for d in range(num_directions)
        ]
        rows = _rows(group[0][1])
        hidden_size = rows // len(order)
        w = _stack_directions(g, [[p[0]] for p in group], order, dtype, rows)
        r = _stack_directions(g, [[p[1]] for p in group], order, dtype, rows)
        b = _stack_directions(g, [[p[2], p[3]] for p in group], order, dtype, rows) if has_biases else None
        initial = [
            s
            if s is None or num_layers == 1
            else h.slice_static(g, s, [0], [layer * num_directions], [(layer + 1) * num_directions])
            for s in states
        ]
        y, *layer_states = _recurrent_op(g, mode, x, w, r, b, sequence_lens, initial, hidden_size, num_directions)
        x = _merge_directions(g, y, num_directions)
        for collected, state in zip(finals, layer_states):
            collected.append(state)
    return x, [s[0] if len(s) == 1 else g.op("Concat", *s, axis=0) for s in finals]


def _transposed(g: GraphContext, w: Value, dtype: ir.DataType) -> Value:
    """``w.T`` for a right-hand MatMul operand, folded at export time when constant."""
    if w.const_value is not None:
        return g.constant(_as_torch(w).t().contiguous().to(tensors.to_torch_dtype(dtype)))
    return g.op("Transpose", h.cast(g, w, dtype), perm=[1, 0])


def _state_slice(
    g: GraphContext, state: Value | None, index: int, batch: int | Value, size: int, dtype: ir.DataType
) -> Value:
    """Row ``index`` of a ``[layers*dirs, batch, size]`` state, or zeros when it is None."""
    if state is not None:
        return h.squeeze(g, h.slice_static(g, state, [0], [index], [index + 1]), [0])
    if isinstance(batch, int):
        return g.constant(torch.zeros(batch, size, dtype=tensors.to_torch_dtype(dtype)))
    zero = torch.zeros(1, dtype=tensors.to_torch_dtype(dtype))
    return g.op("ConstantOfShape", g.list_to_value([batch, size]), value=zero)


def _lstm_projected(
    g: GraphContext,
    x: Value,
    states: Sequence[Value | None],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    num_directions: int,
    sequence_lens: Value | None,
    dtype: ir.DataType,
) -> tuple[Value, list[Value]]:
    """LSTM with proj_size, unrolled over the (static) time steps.

    ONNX LSTM has no projection of the hidden state (h = W_hr (o * tanh(c))), so each step
    is written out: one MatMul for all input projections of a direction, then per step the
    recurrent MatMul, the gates and the projection. Needs a sequence length known at export.
    With sequence_lens (packed input) a step past a sequence's length keeps its state and
    outputs zeros, which also makes the reverse direction start at each sequence's end.
    """
    steps = h.dim_size(g, x, 0)
    if not isinstance(steps, int):
        raise errors.NeedsExportTimeValue("LSTM with proj_size needs a static sequence length (it is unrolled)")
    batch = h.dim_size(g, x, 1)
    per = 5 if has_biases else 3
    finals_h: list[Value] = []
    finals_c: list[Value] = []
    for layer in range(num_layers):
        outputs = []
        for direction in range(num_directions):
            index = layer * num_directions + direction
            w_ih, w_hh, *biases, w_hr = params[index * per : (index + 1) * per]
            hidden = _rows(w_hh) // 4
            projection = _rows(w_hr)
            inputs = g.op("MatMul", x, _transposed(g, w_ih, dtype))  # [T, B, 4H]
            if biases:
                b_ih, b_hh = biases
                if b_ih.const_value is not None and b_hh.const_value is not None:
                    bias = g.constant((_as_torch(b_ih) + _as_torch(b_hh)).to(tensors.to_torch_dtype(dtype)))
                else:
                    bias = g.op("Add", h.cast(g, b_ih, dtype), h.cast(g, b_hh, dtype))
                inputs = g.op("Add", inputs, bias)
            recurrent = _transposed(g, w_hh, dtype)
            project = _transposed(g, w_hr, dtype)
            h_t = _state_slice(g, states[0], index, batch, projection, dtype)
            c_t = _state_slice(g, states[1], index, batch, hidden, dtype)
            ys: list[Value | None] = [None] * steps
            order = range(steps - 1, -1, -1) if direction == 1 else range(steps)
            for t in order:
                step = h.squeeze(g, h.slice_static(g, inputs, [0], [t], [t + 1]), [0])
                gates = g.op("Add", step, g.op("MatMul", h_t, recurrent))
                i, f, cell, o = (h.slice_static(g, gates, [1], [k * hidden], [(k + 1) * hidden]) for k in range(4))
                c_next = g.op(
                    "Add",
                    g.op("Mul", g.op("Sigmoid", f), c_t),
                    g.op("Mul", g.op("Sigmoid", i), g.op("Tanh", cell)),
                )
                h_next = g.op("MatMul", g.op("Mul", g.op("Sigmoid", o), g.op("Tanh", c_next)), project)
                if sequence_lens is None:
                    h_t, c_t, ys[t] = h_next, c_next, h_next
                    continue
                inside = h.unsqueeze(g, g.op("Less", g.constant(t, ir.DataType.INT32), sequence_lens), [1])
                h_t = g.op("Where", inside, h_next, h_t)
                c_t = g.op("Where", inside, c_next, c_t)
                ys[t] = g.op("Where", inside, h_next, h.scalar_like(g, 0, h_next))
            outputs.append(g.op("Concat", *(h.unsqueeze(g, y, [0]) for y in ys), axis=0))
            finals_h.append(h.unsqueeze(g, h_t, [0]))
            finals_c.append(h.unsqueeze(g, c_t, [0]))
        x = outputs[0] if num_directions == 1 else g.op("Concat", *outputs, axis=2)
    return x, [g.op("Concat", *finals_h, axis=0), g.op("Concat", *finals_c, axis=0)]


def _check_dropout(dropout: float, train: bool, num_layers: int) -> None:
    if train and dropout > 0 and num_layers > 1:
        raise ValueError("dropout between recurrent layers in training mode cannot be exported")


def _prepare_states(g: GraphContext, states: Sequence[Value], dtype: ir.DataType) -> list[Value | None]:
    """Initial states in ``dtype``; all-zero constants (torch's default) are left out, which
    ONNX reads as zeros."""
    return [None if _is_zero_constant(s) else h.cast(g, s, dtype) for s in states]


def _valid_mask(g: GraphContext, steps: int | Value, lengths: Value) -> Value:
    """``[steps, batch]`` bool: time step t is inside sequence b."""
    return g.op("Less", h.unsqueeze(g, h.iota(g, steps), [1]), h.unsqueeze(g, lengths, [0]))


def _length(g: GraphContext, x: Value) -> int | Value:
    """Length of a 1-D tensor whose size is data-dependent (batch_sizes has max(lengths)
    entries): read at run time unless the tensor is a constant, since the traced static
    shape only holds for the example lengths."""
    if x.const_value is not None:
        return int(x.const_value.shape[0])
    return g.op("Gather", g.op("Shape", x), g.constant(0), axis=0)


def _broadcast_mask(g: GraphContext, mask: Value, rank: int) -> Value:
    return h.unsqueeze(g, mask, list(range(2, rank))) if rank > 2 else mask


def _fill_outside(g: GraphContext, mask: Value, x: Value, fill: float, like: Value) -> Value:
    """``x`` where ``mask``, else ``fill``. onnxruntime's Where has no bool kernel, so bool
    tensors use And/Or instead."""
    if like.dtype == ir.DataType.BOOL:
        return g.op("Or", g.op("Not", mask), x) if fill else g.op("And", mask, x)
    return g.op("Where", mask, x, h.scalar_like(g, fill, like))


def _pack(g: GraphContext, padded: Value, lengths: Value, rank: int) -> tuple[Value, Value]:
    """Time-major ``[T, B, *]`` + sorted int64 lengths -> torch's (data, batch_sizes).

    Row-major over ``[T, B]``, the valid positions are already in packed order because the
    lengths are sorted in decreasing order; Compress keeps exactly those rows. batch_sizes
    drops the all-padding steps at the end (it has max(lengths) entries)."""
    mask = _valid_mask(g, h.dim_size(g, padded, 0), lengths)
    shape = h.static_shape(padded)
    if shape is not None:
        flat_shape = g.constant([-1, *shape[2:]])
    else:
        flat_shape = g.op(
            "Concat", g.constant([-1]), h.slice_static(g, g.op("Shape", padded), [0], [2], [rank]), axis=0
        )
    rows = g.op("Reshape", padded, flat_shape)
    rows.shape = rows.shape or ir.Shape([None] * (rank - 1))  # a computed target hides the rank
    data = g.op("Compress", rows, g.op("Reshape", mask, g.constant([-1])), axis=0)
    counts = h.reduce(g, "ReduceSum", h.cast(g, mask, ir.DataType.INT64), [1], keepdims=False)
    batch_sizes = g.op("Compress", counts, g.op("Greater", counts, g.constant(0)), axis=0)
    data.meta[_PADDED_SOURCE] = (padded, lengths)
    return data, batch_sizes


def _unpack_recurrent(
    g: GraphContext, data: Value, batch_sizes: Value, steps: int | Value | None
) -> tuple[Value, Value]:
    """torch's (data, batch_sizes) -> (time-major padded tensor, int64 lengths).

    With ``steps`` None the padded tensor may hold extra steps and garbage past each length
    (an RNN given sequence_lens ignores both); otherwise it has ``steps`` steps and zeros
    past each length. Packed values made here keep their padded source and skip the Gathers.
    """
    rank = h.known_rank(data, "a sequence tensor") + 1
    source = data.meta.get(_PADDED_SOURCE)
    if source is not None:
        padded, lengths = source
        if steps is None:
            return padded, lengths
        available = h.dim_size(g, padded, 0)
        if isinstance(steps, int) and isinstance(available, int) and steps <= available:
            if steps < available:
                padded = h.slice_static(g, padded, [0], [0], [steps])
        else:
            index = h.iota(g, steps)
            limit = available if isinstance(available, Value) else g.constant(available)
            index = g.op("Where", g.op("Less", index, limit), index, g.constant(0))
            padded = g.op("Gather", padded, index, axis=0)
        mask = _broadcast_mask(g, _valid_mask(g, steps, lengths), rank)
        return _fill_outside(g, mask, padded, 0, data), lengths

    batch_sizes = h.cast(g, batch_sizes, ir.DataType.INT64)
    total = _length(g, batch_sizes)
    steps = total if steps is None else steps
    batch = g.op("Gather", batch_sizes, g.constant(0), axis=0)
    batch_index = h.iota(g, batch)
    inside = g.op("Greater", h.unsqueeze(g, batch_sizes, [1]), h.unsqueeze(g, batch_index, [0]))
    lengths = h.reduce(g, "ReduceSum", h.cast(g, inside, ir.DataType.INT64), [0], keepdims=False)
    mask = _valid_mask(g, steps, lengths)
    time_index = h.iota(g, steps)
    limit = total if isinstance(total, Value) else g.constant(total)
    time_index = g.op("Where", g.op("Less", time_index, limit), time_index, g.constant(0))
    offsets = g.op("Gather", h.exclusive_cumsum(g, batch_sizes), time_index, axis=0)
    index = g.op("Add", h.unsqueeze(g, offsets, [1]), h.unsqueeze(g, batch_index, [0]))
    index = g.op("Where", mask, index, g.constant(0))
    padded = g.op("Gather", data, index, axis=0)
    return _fill_outside(g, _broadcast_mask(g, mask, rank), padded, 0, data), lengths


def _rnn_input(
    g: GraphContext,
    mode: str,
    input: Value,  # noqa: A002 - schema name
    hx: Sequence[Value],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Value, ...]:
    _check_dropout(dropout, train, num_layers)
    dtype = input.dtype
    compute = _COMPUTE_DTYPE
    x = h.cast(g, input, compute)
    if batch_first:  # the layout attribute (opset 14) is not implemented by onnxruntime
        x = g.op("Transpose", x, perm=[1, 0, 2])
    states = _prepare_states(g, hx, compute)
    y, finals = _run_layers(g, mode, x, states, params, has_biases, num_layers, bidirectional, None, compute)
    if batch_first:
        y = g.op("Transpose", y, perm=[1, 0, 2])
    return tuple(h.cast(g, v, dtype) for v in (y, *finals))


def rnn_data(
    g: GraphContext,
    mode: str,
    data: Value,
    batch_sizes: Value,
    hx: Sequence[Value],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Value, ...]:
    """The packed (.data) RNN overloads: each step's packed rows are found from an exclusive
    cumulative sum of batch_sizes (CumSum from opset 11, see h.exclusive_cumsum)."""
    _check_dropout(dropout, train, num_layers)
    dtype = data.dtype
    compute = _COMPUTE_DTYPE
    padded, lengths = _unpack_recurrent(g, data, batch_sizes, None)
    x = h.cast(g, padded, compute)
    sequence_lens = h.cast(g, lengths, ir.DataType.INT32)
    y, finals = _run_layers(
        g,
        mode,
        x,
        _prepare_states(g, hx, compute),
        params,
        has_biases,
        num_layers,
        bidirectional,
        sequence_lens,
        compute,
    )
    y = h.cast(g, y, dtype)
    num_directions = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    if len(params) == num_layers * num_directions * (per + 1):  # proj_size: W_hr is last
        features = _rows(params[per]) * num_directions
    else:
        features = _rows(params[1]) // len(_GATES[mode]) * num_directions
    y.shape = ir.Shape([*(list(x.shape[:2]) if x.shape is not None else [None, None]), features])
    packed, _ = _pack(g, y, lengths, 3)
    return (packed, *(h.cast(g, v, dtype) for v in finals))


def _cell(
    g: GraphContext,
    mode: str,
    input: Value,  # noqa: A002 - schema name
    states: Sequence[Value],
    w_ih: Value,
    w_hh: Value,
    b_ih: Value | None,
    b_hh: Value | None,
) -> list[Value]:
    """One time step as a one-step ONNX LSTM/GRU/RNN node."""
    if h.rank_of(input) != 2:
        raise ValueError(f"{mode.lower()} cell input must be 2-D [batch, input], got {input.shape}")
    dtype = input.dtype
    compute = _COMPUTE_DTYPE
    order = _GATES[mode]
    rows = _rows(w_hh)
    w = _stack_directions(g, [[w_ih]], order, compute, rows)
    r = _stack_directions(g, [[w_hh]], order, compute, rows)
    b = None if b_ih is None and b_hh is None else _stack_directions(g, [[b_ih, b_hh]], order, compute, rows)
    x = h.unsqueeze(g, h.cast(g, input, compute), [0])
    initial = [None if _is_zero_constant(s) else h.unsqueeze(g, h.cast(g, s, compute), [0]) for s in states]
    _, *finals = _recurrent_op(g, mode, x, w, r, b, None, initial, rows // len(order), 1)
    return [h.cast(g, h.squeeze(g, s, [0]), dtype) for s in finals]


@onnx_symbolic("aten::lstm.input")
def aten_lstm_input(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Sequence[Value],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Value, Value, Value]:
    """lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)

    One ONNX LSTM per layer. ONNX orders the gates i, o, f, c where torch has i, f, g, o,
    and wants both biases in one [Wb, Rb] input. batch_first is a transpose on both sides
    because onnxruntime rejects the layout=1 attribute of opset 14. ONNX LSTM has no
    projection of the hidden state, so proj_size is unrolled over the time steps instead.
    """
    return _rnn_input(g, "LSTM", input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


@onnx_symbolic("aten::gru.input")
def aten_gru_input(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Value,
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Value, Value]:
    """gru.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)

    ONNX GRU orders the gates z, r, h where torch has r, z, n; torch multiplies the reset
    gate into (W_hn h + b_hn), which is ONNX's linear_before_reset=1 (the default 0 is a
    different network).
    """
    return _rnn_input(g, "GRU", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


@onnx_symbolic("aten::rnn_tanh.input")
def aten_rnn_tanh_input(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Value,
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Value, Value]:
    """rnn_tanh.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)"""
    return _rnn_input(
        g, "RNN_TANH", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional, batch_first
    )


@onnx_symbolic("aten::rnn_relu.input")
def aten_rnn_relu_input(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Value,
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Value, Value]:
    """rnn_relu.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)

    ONNX RNN with activations=Relu (one per direction).
    """
    return _rnn_input(
        g, "RNN_RELU", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional, batch_first
    )


@onnx_symbolic("aten::lstm.data", opset=11)
@onnx_symbolic("aten::lstm.data")
def aten_lstm_data(
    g: GraphContext,
    data: Value,
    batch_sizes: Value,
    hx: Sequence[Value],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Value, Value, Value]:
    """lstm.data(Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor, Tensor)

    The packed input is unpacked to a padded tensor and the lengths go to ONNX's
    sequence_lens, whose semantics match packing: steps past a length are skipped, the
    reverse direction starts at each sequence's last step, and Y_h/Y_c are taken at each
    length. The output is packed again. Each step's packed rows start at an exclusive
    cumulative sum of batch_sizes: CumSum from opset 11 (h.exclusive_cumsum), hence the
    registration there.
    """
    return rnn_data(g, "LSTM", data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)


@onnx_symbolic("aten::gru.data", opset=11)
@onnx_symbolic("aten::gru.data")
def aten_gru_data(
    g: GraphContext,
    data: Value,
    batch_sizes: Value,
    hx: Value,
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Value, Value]:
    """gru.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)

    Packed sequences through ONNX GRU's sequence_lens (see lstm.data).
    """
    return rnn_data(g, "GRU", data, batch_sizes, [hx], params, has_biases, num_layers, dropout, train, bidirectional)


@onnx_symbolic("aten::rnn_tanh.data", opset=11)
@onnx_symbolic("aten::rnn_tanh.data")
def aten_rnn_tanh_data(
    g: GraphContext,
    data: Value,
    batch_sizes: Value,
    hx: Value,
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Value, Value]:
    """rnn_tanh.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)

    Packed sequences through ONNX RNN's sequence_lens (see lstm.data).
    """
    return rnn_data(
        g, "RNN_TANH", data, batch_sizes, [hx], params, has_biases, num_layers, dropout, train, bidirectional
    )


@onnx_symbolic("aten::rnn_relu.data", opset=11)
@onnx_symbolic("aten::rnn_relu.data")
def aten_rnn_relu_data(
    g: GraphContext,
    data: Value,
    batch_sizes: Value,
    hx: Value,
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Value, Value]:
    """rnn_relu.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)

    Packed sequences through ONNX RNN's sequence_lens with Relu (see lstm.data).
    """
    return rnn_data(
        g, "RNN_RELU", data, batch_sizes, [hx], params, has_biases, num_layers, dropout, train, bidirectional
    )


@onnx_symbolic("aten::lstm_cell")
def aten_lstm_cell(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Sequence[Value],
    w_ih: Value,
    w_hh: Value,
    b_ih: Value | None = None,
    b_hh: Value | None = None,
) -> tuple[Value, Value]:
    """lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> (Tensor, Tensor)

    A one-step ONNX LSTM (gates reordered to i, o, f, c). Traced nn.LSTMCell records the
    cell's arithmetic instead; this node appears in scripted code.
    """
    h_next, c_next = _cell(g, "LSTM", input, hx, w_ih, w_hh, b_ih, b_hh)
    return h_next, c_next


@onnx_symbolic("aten::gru_cell")
def aten_gru_cell(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Value,
    w_ih: Value,
    w_hh: Value,
    b_ih: Value | None = None,
    b_hh: Value | None = None,
) -> Value:
    """gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor

    A one-step ONNX GRU with linear_before_reset=1, which is torch's formulation.
    """
    return _cell(g, "GRU", input, [hx], w_ih, w_hh, b_ih, b_hh)[0]


@onnx_symbolic("aten::rnn_tanh_cell")
def aten_rnn_tanh_cell(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Value,
    w_ih: Value,
    w_hh: Value,
    b_ih: Value | None = None,
    b_hh: Value | None = None,
) -> Value:
    """rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor"""
    return _cell(g, "RNN_TANH", input, [hx], w_ih, w_hh, b_ih, b_hh)[0]


@onnx_symbolic("aten::rnn_relu_cell")
def aten_rnn_relu_cell(
    g: GraphContext,
    input: Value,  # noqa: A002 - schema name
    hx: Value,
    w_ih: Value,
    w_hh: Value,
    b_ih: Value | None = None,
    b_hh: Value | None = None,
) -> Value:
    """rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor"""
    return _cell(g, "RNN_RELU", input, [hx], w_ih, w_hh, b_ih, b_hh)[0]


@onnx_symbolic("aten::_pack_padded_sequence")
def aten__pack_padded_sequence(
    g: GraphContext,
    input: Value,
    lengths: Value,
    batch_first: bool,  # noqa: A002 - schema name
) -> tuple[Value, Value]:
    """_pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first) -> (Tensor, Tensor)

    Produces torch's real packed layout (Compress of the valid steps, time-major), so ops
    applied to PackedSequence.data stay correct; batch_sizes is data-dependent (max(lengths)
    entries). The lengths must be sorted in decreasing order, as torch requires here
    (pack_padded_sequence sorts beforehand when enforce_sorted=False).
    """
    x = (
        g.op("Transpose", input, perm=[1, 0, *range(2, h.known_rank(input, "a sequence tensor"))])
        if batch_first
        else input
    )
    return _pack(g, x, h.cast(g, lengths, ir.DataType.INT64), h.known_rank(input, "a sequence tensor"))


@onnx_symbolic("aten::_pad_packed_sequence", opset=11)
@onnx_symbolic("aten::_pad_packed_sequence")
def aten__pad_packed_sequence(
    g: GraphContext,
    data: Value,
    batch_sizes: Value,
    batch_first: bool,
    padding_value: float,
    total_length: int | Value,
) -> tuple[Value, Value]:
    """_pad_packed_sequence(Tensor data, Tensor batch_sizes, bool batch_first, Scalar padding_value, int total_length) -> (Tensor, Tensor)

    Each padded position gathers its packed row (offset of its step, an exclusive prefix
    sum of batch_sizes, plus its batch index); positions past a length get padding_value.
    The prefix sum is a CumSum from opset 11 (h.exclusive_cumsum), hence the registration there.
    """
    rank = h.known_rank(data, "a sequence tensor") + 1
    padded, lengths = _unpack_recurrent(g, data, batch_sizes, total_length)
    if padding_value != 0:
        mask = _broadcast_mask(g, _valid_mask(g, total_length, lengths), rank)
        padded = _fill_outside(g, mask, padded, padding_value, data)
    if batch_first:
        padded = g.op("Transpose", padded, perm=[1, 0, *range(2, rank)])
    return padded, lengths
