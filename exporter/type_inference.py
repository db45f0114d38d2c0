"""Light type inference for nodes symbolics create.

The emitter stamps TorchScript's types on what a symbolic returns, but the intermediate
values inside a symbolic (a Cast before a Softmax, the scores inside attention) would
otherwise have no dtype or rank for the next helper to read. Inferring the common cases here
is much cheaper than running ONNX shape inference after every node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import onnx_ir as ir
import torch

from exporter.tensors import DeferredTorchTensor, TorchTensor

__all__ = ["infer", "infer_with_onnx", "InferenceCache"]

_SAME_AS_FIRST = frozenset(
    {
        "Identity",
        "Relu",
        "Sigmoid",
        "Tanh",
        "Neg",
        "Abs",
        "Sqrt",
        "Exp",
        "Log",
        "Reciprocal",
        "Floor",
        "Ceil",
        "Erf",
        "Sin",
        "Cos",
        "Sign",
        "Softmax",
        "LogSoftmax",
        "LeakyRelu",
        "Clip",
        "Round",
        "Elu",
        "Selu",
        "HardSigmoid",
        "Softplus",
        "Softsign",
        "Gelu",
        "Mish",
        "Not",
        "Dropout",
        "LayerNormalization",
        "BatchNormalization",
        "CumSum",
    }
)
_BROADCAST_SAME_DTYPE = frozenset({"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "And", "Or", "Xor", "Sum"})
_BROADCAST_BOOL = frozenset({"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"})


def _broadcast(shapes: Sequence[ir.Shape | None]) -> ir.Shape | None:
    if any(s is None for s in shapes):
        return None
    rank = max(len(s) for s in shapes)  # type: ignore[arg-type]
    dims: list[Any] = []
    for axis in range(rank):
        candidates = []
        for shape in shapes:
            offset = axis - (rank - len(shape))  # type: ignore[arg-type]
            candidates.append(shape[offset] if offset >= 0 else 1)  # type: ignore[index]
        known = [d for d in candidates if isinstance(d, int)]
        if any(not isinstance(d, int) for d in candidates):
            non_one = [d for d in known if d != 1]
            dims.append(non_one[0] if non_one else None)
        else:
            dims.append(max(known) if 0 not in known else 0)
    return ir.Shape(dims)


def _set(value: ir.Value, dtype: ir.DataType | None, shape: ir.Shape | None) -> None:
    if dtype is not None:
        value.dtype = dtype
    if shape is not None:
        value.shape = shape


# Ops whose outputs the rules below type as well as ONNX's inference can: for these the
# (much slower) ONNX inference is skipped. Gemm and Gather here cover the common cases.
_COVERED = (
    _SAME_AS_FIRST
    | _BROADCAST_SAME_DTYPE
    | _BROADCAST_BOOL
    | frozenset({"IsNaN", "IsInf", "Cast", "CastLike", "Where", "Transpose", "MatMul", "Gemm", "Gather"})
)
# Control flow is typed by its symbolic from the subgraph outputs; ONNX inference would
# serialize the whole subgraph for each node.
_NOT_INFERRED = frozenset({"Loop", "If", "Scan"})


def infer(
    op_type: str, inputs: Sequence[ir.Value | None], attributes: Mapping[str, Any], outputs: Sequence[ir.Value]
) -> None:
    """Set dtype and shape of ``outputs`` where they follow simply from the inputs."""
    if not outputs or not inputs or inputs[0] is None:
        return
    out = outputs[0]
    first = inputs[0]
    if op_type in _SAME_AS_FIRST:
        _set(out, first.dtype, first.shape)
    elif op_type == "IsNaN" or op_type == "IsInf":
        _set(out, ir.DataType.BOOL, first.shape)
    elif op_type == "Cast":
        _set(out, ir.DataType(attributes["to"]), first.shape)
    elif op_type == "CastLike" and len(inputs) > 1 and inputs[1] is not None:
        _set(out, inputs[1].dtype, first.shape)
    elif op_type in _BROADCAST_SAME_DTYPE or op_type in _BROADCAST_BOOL:
        present = [v for v in inputs if v is not None]
        dtype = ir.DataType.BOOL if op_type in _BROADCAST_BOOL else first.dtype
        _set(out, dtype, _broadcast([v.shape for v in present]))
    elif op_type == "Where" and len(inputs) == 3 and all(v is not None for v in inputs):
        _set(out, inputs[1].dtype, _broadcast([v.shape for v in inputs]))  # type: ignore[union-attr]
    elif op_type == "Transpose" and first.shape is not None:
        perm = attributes.get("perm") or list(reversed(range(len(first.shape))))
        _set(out, first.dtype, ir.Shape([first.shape[p] for p in perm]))
    elif op_type == "MatMul" and len(inputs) == 2 and inputs[1] is not None:
        a, b = first.shape, inputs[1].shape
        _set(out, first.dtype, None)
        if a is not None and b is not None and len(a) >= 1 and len(b) >= 1:
            # a 1-D operand is a row (first) or a column (second) whose axis the result drops
            rows, cols = list(a) if len(a) >= 2 else [1, a[0]], list(b) if len(b) >= 2 else [b[0], 1]
            batch = _broadcast([ir.Shape(rows[:-2]), ir.Shape(cols[:-2])])
            if batch is not None:
                out.shape = ir.Shape([*batch, *rows[-2:-1][: len(a) - 1], *cols[-1:][: len(b) - 1]])
    elif op_type == "Gemm" and len(inputs) >= 2 and inputs[1] is not None:
        a, b = first.shape, inputs[1].shape
        _set(out, first.dtype, None)
        if a is not None and b is not None and len(a) == 2 and len(b) == 2:
            rows = a[1] if attributes.get("transA") else a[0]
            cols = b[0] if attributes.get("transB") else b[1]
            out.shape = ir.Shape([rows, cols])
    elif op_type == "Slice" and _run_time_bounds(inputs) and first.shape is not None:
        # onnx's inference types a Slice with run-time starts/ends by its rank only; the
        # dims it does not slice keep their sizes (``x.split(run_time_sizes, 1)`` of a
        # [1, N] tensor keeps its batch of 1, which later loops and indexing count on)
        axes = [int(a) for a in inputs[3].const_value.numpy().reshape(-1)]  # type: ignore[union-attr]
        rank = len(first.shape)
        sliced = {a + rank if a < 0 else a for a in axes}
        _set(out, first.dtype, ir.Shape([None if axis in sliced else d for axis, d in enumerate(first.shape)]))
    elif (
        op_type == "TopK"
        and len(inputs) == 2
        and inputs[1] is not None
        and inputs[1].const_value is None
        and first.shape is not None
        and len(outputs) == 2
    ):
        # k known only at run time: onnx's inference gives the rank only; the other dims stay
        rank = len(first.shape)
        axis = attributes.get("axis", -1)
        axis = axis + rank if axis < 0 else axis
        shape = ir.Shape([None if a == axis else d for a, d in enumerate(first.shape)])
        _set(out, first.dtype, shape)
        _set(outputs[1], ir.DataType.INT64, ir.Shape(list(shape)))
    elif op_type == "Gather" and len(inputs) == 2 and inputs[1] is not None:
        data, indices = first.shape, inputs[1].shape
        _set(out, first.dtype, None)
        if data is not None and indices is not None and len(data):
            axis = attributes.get("axis", 0)
            axis = axis + len(data) if axis < 0 else axis
            out.shape = ir.Shape([*list(data)[:axis], *indices, *list(data)[axis + 1 :]])


def _run_time_bounds(inputs: Sequence[ir.Value | None]) -> bool:
    """A Slice (opset 10+) whose starts or ends are known only at run time, on axes that are
    constants."""
    if len(inputs) < 4 or inputs[3] is None or inputs[3].const_value is None:
        return False
    return any(v is None or v.const_value is None for v in inputs[1:3])


# -- ONNX's own per-node inference, for what the light rules above do not cover -------------

_MAX_DATA_ELEMENTS = 1024


def _type_proto(value: ir.Value) -> Any:
    from onnx import helper

    if isinstance(value.type, ir.SequenceType):
        return helper.make_sequence_type_proto(helper.make_tensor_type_proto(int(value.dtype), None))
    dims: list[Any] | None = None
    if value.shape is not None:
        dims = [
            d if isinstance(d, int) else (str(d) if d is not None and str(d) != "None" else None) for d in value.shape
        ]
    return helper.make_tensor_type_proto(int(value.dtype), dims)


# Attribute types whose values are plain (hashable once lists become tuples): nodes with only
# these can share ONNX's inference result with an equal node (see infer_with_onnx).
_PLAIN_ATTRIBUTES = frozenset(
    {
        ir.AttributeType.INT,
        ir.AttributeType.FLOAT,
        ir.AttributeType.STRING,
        ir.AttributeType.INTS,
        ir.AttributeType.FLOATS,
        ir.AttributeType.STRINGS,
    }
)
# Output dtypes and dims (as infer_with_onnx sets them) by node key; None: inference failed.
InferenceCache = dict[tuple[Any, ...], "list[tuple[ir.DataType | None, list[Any] | None]] | None"]


def _dims(value: ir.Value) -> list[Any] | None:
    """The dims ONNX's inference sees for ``value`` (what _type_proto writes)."""
    if value.shape is None:
        return None
    return [
        d if isinstance(d, int) else (str(d) if d is not None and str(d) != "None" else None) for d in value.shape.dims
    ]


def _data_bytes(tensor: Any) -> bytes:
    """The bytes of a small constant, read from torch directly where it holds them (the
    generic ``tobytes`` goes through ctypes, ten times slower for a shape constant)."""
    if isinstance(tensor, TorchTensor) and not isinstance(tensor, DeferredTorchTensor):
        raw = tensor.raw.detach()
        if raw.device.type == "cpu" and raw.layout == torch.strided and not raw.is_quantized:
            return raw.reshape(-1).view(torch.uint8).numpy().tobytes()
    return tensor.tobytes()


def _inference_key(node: ir.Node, opset: int) -> tuple[Any, ...] | None:
    """Everything ONNX's per-node inference reads from ``node`` (op, opset, attributes, input
    types and the data of small constant inputs), or None when an attribute is not plain.
    Two nodes with equal keys get equal results: a 12-layer model has each of its Reshapes 12
    times, and ONNX's inference costs about half a millisecond per node in Python."""
    attributes = []
    for name, attr in node.attributes.items():
        if attr.type not in _PLAIN_ATTRIBUTES:
            return None
        value = attr.value
        attributes.append((name, attr.type, tuple(value) if isinstance(value, (list, tuple)) else value))
    inputs: list[Any] = []
    for value in node.inputs:
        if value is None:
            inputs.append(None)
            continue
        sequence = isinstance(value.type, ir.SequenceType)
        dims = _dims(value)
        tensor = value.const_value
        data = None
        if tensor is not None and tensor.size <= _MAX_DATA_ELEMENTS:
            data = (tensor.dtype, tuple(tensor.shape), _data_bytes(tensor))
        inputs.append((sequence, value.dtype, tuple(dims) if dims is not None else None, data))
    return (node.domain, node.op_type, opset, len(node.outputs), tuple(attributes), tuple(inputs))


def infer_with_onnx(node: ir.Node, opset: int, cache: InferenceCache | None = None) -> None:
    """Type ``node``'s outputs with ONNX's inference for its op (used when the light rules
    leave an output without dtype or shape). Failures leave the outputs as they were.
    ``cache`` (one per export) reuses the result of an earlier node with the same inputs."""
    # The rules type only the first output: Dropout's mask or BatchNormalization's running
    # statistics (training mode) still need ONNX's inference.
    if node.op_type in _NOT_INFERRED or (node.op_type in _COVERED and not node.domain and len(node.outputs) == 1):
        return
    if all(o.dtype is not None and o.shape is not None for o in node.outputs):
        return
    inputs = [v for v in node.inputs if v is not None]
    if any(v.dtype is None for v in inputs):
        return
    key = None
    if cache is not None:
        try:
            key = _inference_key(node, opset)
        except ValueError:  # a string constant has no bytes (onnx_ir's StringTensor.tobytes): not cached
            key = None
    if key is not None and key in cache:
        results = cache[key]
    else:
        results = _onnx_inference(node, opset, inputs)
        if key is not None:
            cache[key] = results
    if results is not None:
        for output, (dtype, dims) in zip(node.outputs, results):
            if output.dtype is None and dtype is not None:
                output.dtype = dtype
            if output.shape is None and dims is not None:
                output.shape = ir.Shape(dims)
    _reshape_rank(node)


def _reshape_rank(node: ir.Node) -> None:
    """A Reshape to a shape computed at run time has as many dims as that shape has items.
    onnx's Reshape-5/13 inference leaves its output untyped then (Reshape-14's gives the rank),
    and a later symbolic that needs the rank (transpose after ``flatten(2)`` of a tensor with
    dynamic dims) would fail below opset 14."""
    if node.op_type != "Reshape" or node.domain or len(node.inputs) < 2 or node.outputs[0].shape is not None:
        return
    target = node.inputs[1]
    if target is not None and target.shape is not None and len(target.shape) == 1 and isinstance(target.shape[0], int):
        node.outputs[0].shape = ir.Shape([None] * target.shape[0])
        if node.outputs[0].dtype is None and node.inputs[0] is not None:
            node.outputs[0].dtype = node.inputs[0].dtype


def _onnx_inference(
    node: ir.Node, opset: int, inputs: list[ir.Value]
) -> list[tuple[ir.DataType | None, list[Any] | None]] | None:
    """ONNX's inference for ``node``: per output, its dtype and dims (None where ONNX gives
    none); None when inference failed."""
    import onnx

    try:
        schema = onnx.defs.get_schema(node.op_type, opset, node.domain)
        proto = ir.serde.serialize_node(node)
        types = {v.name: _type_proto(v) for v in inputs}
        data = {}
        for v in inputs:
            tensor = v.const_value
            if tensor is not None and tensor.size <= _MAX_DATA_ELEMENTS:
                data[v.name] = ir.serde.serialize_tensor(tensor)
        result = onnx.shape_inference.infer_node_outputs(
            schema,
            proto,
            types,
            data,
            opset_imports=[onnx.helper.make_opsetid(node.domain, opset)],
        )
    except (onnx.defs.SchemaError, onnx.shape_inference.InferenceError, onnx.checker.ValidationError):
        return None  # no schema at this opset, or a node onnx cannot infer: best effort, left untyped
    results: list[tuple[ir.DataType | None, list[Any] | None]] = []
    for output in node.outputs:
        type_proto = result.get(output.name)
        if type_proto is None or not type_proto.HasField("tensor_type"):
            results.append((None, None))
            continue
        tensor_type = type_proto.tensor_type
        dtype = ir.DataType(tensor_type.elem_type) if tensor_type.elem_type else None
        dims: list[Any] | None = None
        if tensor_type.HasField("shape"):
            dims = []
            for dim in tensor_type.shape.dim:
                if dim.HasField("dim_value"):
                    dims.append(dim.dim_value)
                elif dim.HasField("dim_param"):
                    dims.append(dim.dim_param)
                else:
                    dims.append(None)
            if node.op_type == "Slice" and opset == 10:
                # onnx's Slice-10 inference (only) copies a named input dim to the output even
                # when the slice shortens it (x[:1] of [n, 3] typed [n, 3]): drop those names
                dims = [None if isinstance(d, str) else d for d in dims]
        results.append((dtype, dims))
    return results
