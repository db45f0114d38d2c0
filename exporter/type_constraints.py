"""Which tensor dtypes each ONNX op takes at an opset, and the casts that fit a node into them.

A symbolic writes the op torch's semantics call for: Add of two int16 tensors, ReduceMax of an
int16 tensor. ONNX's schemas allow each input a set of types per opset (Add takes 8- and
16-bit integers from opset 14; ReduceMax never takes int16), and a node outside them makes the
model invalid, whatever a runtime does with it. ``GraphBuilder.add_node`` asks :func:`plan_casts`
about every node of the default domain: an input whose dtype the op does not take is cast to
the nearest dtype it takes that holds every value exactly (``WIDER``: int16 -> int32, uint8 ->
int32, bool -> int32, float16 -> float32, ...), and each output typed by the same type
parameter is cast back, so the symbolic sees the dtypes it asked for. An input a symbolic
already cast passes unchanged.

What an op takes comes from two tables: the schema's type constraints
(``onnx.defs.get_schema(op, opset).type_constraints``), read once per op and opset, less
``RUNTIME_GAPS``, the dtypes a schema allows that onnxruntime has no kernel for, each with why.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping, Sequence

import onnx
import onnx_ir as ir

__all__ = ["CastPlan", "plan_casts", "accepted_dtypes", "WIDER", "RUNTIME_GAPS", "RuntimeGap"]

D = ir.DataType

# The dtypes that hold every value of a dtype exactly, nearest first. 32-bit integers come
# before 16-bit ones: runtimes have kernels for them far more often. int64, uint64 and double
# have no wider exact type: an op that takes none of them for such an input is left as written
# (the model check names it).
WIDER: Mapping[ir.DataType, tuple[ir.DataType, ...]] = {
    D.BOOL: (D.INT32, D.INT64, D.UINT8, D.INT8, D.FLOAT, D.DOUBLE),
    D.INT8: (D.INT32, D.INT64, D.INT16, D.FLOAT, D.DOUBLE),
    D.UINT8: (D.INT32, D.INT64, D.UINT32, D.UINT64, D.INT16, D.UINT16, D.FLOAT, D.DOUBLE),
    D.INT16: (D.INT32, D.INT64, D.FLOAT, D.DOUBLE),
    D.UINT16: (D.INT32, D.INT64, D.UINT32, D.UINT64, D.FLOAT, D.DOUBLE),
    D.INT32: (D.INT64, D.DOUBLE),
    D.UINT32: (D.INT64, D.UINT64, D.DOUBLE),
    D.FLOAT16: (D.FLOAT, D.DOUBLE),
    D.BFLOAT16: (D.FLOAT, D.DOUBLE),
    D.FLOAT: (D.DOUBLE,),
}


@dataclasses.dataclass(frozen=True)
class RuntimeGap:
    """Dtypes onnxruntime has no ``op`` kernel for at ``opsets`` for the inputs typed by
    ``parameter``, though the schema allows them."""

    op: str
    parameter: str
    dtypes: frozenset[ir.DataType]
    opsets: range
    why: str


# onnxruntime 1.32's CPU kernels (tests/test_type_constraints.py runs every entry's op in both
# onnxruntime and onnx's reference evaluator, so a gap closed in a newer onnxruntime shows up as
# an entry that no longer changes the model).
RUNTIME_GAPS: tuple[RuntimeGap, ...] = (
    RuntimeGap(
        "Where",
        "T",
        frozenset({D.BOOL, D.INT16, D.UINT16}),
        range(9, 1000),
        "onnxruntime's CPU Where has no kernel selecting bools or 16-bit integers (nor uint64, "
        "which no wider exact dtype holds, so it is left as written)",
    ),
    RuntimeGap(
        "Pad",
        "T",
        frozenset({D.INT16, D.UINT16}),
        range(11, 1000),
        "onnxruntime's CPU Pad has no kernel for 16-bit integers",
    ),
)


@dataclasses.dataclass(frozen=True)
class _Signature:
    """An op's formal inputs and outputs as their type parameters (None: a heterogeneous
    variadic, whose inputs each have their own type), and the tensor dtypes each parameter takes."""

    inputs: tuple[str | None, ...]
    variadic_last: bool
    outputs: tuple[str | None, ...]
    variadic_outputs: bool
    allowed: Mapping[str, frozenset[ir.DataType]]

    def input_parameter(self, index: int) -> str | None:
        if index < len(self.inputs):
            return self.inputs[index]
        return self.inputs[-1] if self.variadic_last and self.inputs else None

    def output_parameter(self, index: int) -> str | None:
        if index < len(self.outputs):
            return self.outputs[index]
        return self.outputs[-1] if self.variadic_outputs and self.outputs else None


_TENSOR_TYPE = re.compile(r"^tensor\((\w+)\)$")


def _tensor_dtypes(type_strings: Sequence[str]) -> frozenset[ir.DataType]:
    """``tensor(int64)`` and the like as dtypes; sequence, optional and sparse types are not
    tensors this module casts, and are left out."""
    dtypes = set()
    for text in type_strings:
        match = _TENSOR_TYPE.match(text)
        if match is not None:
            dtypes.add(ir.DataType(onnx.TensorProto.DataType.Value(match.group(1).upper())))
    return frozenset(dtypes)


def _parameter(formal: onnx.defs.OpSchema.FormalParameter) -> str | None:
    variadic = formal.option == onnx.defs.OpSchema.FormalParameterOption.Variadic
    return None if variadic and not formal.is_homogeneous else formal.type_str


def _own_parameter(parameter: str | None, name: str, allowed: dict[str, frozenset[ir.DataType]]) -> str | None:
    if parameter is None or parameter in allowed:
        return parameter
    allowed[name] = _tensor_dtypes([parameter])
    return name


@functools.cache
def _signature(op_type: str, opset: int) -> _Signature | None:
    try:
        schema = onnx.defs.get_schema(op_type, opset, "")
    except onnx.defs.SchemaError:
        return None
    allowed = {c.type_param_str: _tensor_dtypes(c.allowed_type_strs) for c in schema.type_constraints}
    for gap in RUNTIME_GAPS:
        if gap.op == op_type and opset in gap.opsets and gap.parameter in allowed:
            allowed[gap.parameter] -= gap.dtypes
    inputs = tuple(_parameter(f) for f in schema.inputs)
    outputs = tuple(_parameter(f) for f in schema.outputs)
    # a formal typed by a fixed type (Reshape's shape: tensor(int64)) rather than a parameter
    # gets a parameter of its own: its dtype is tied to no other input or output
    inputs = tuple(_own_parameter(p, f"input {i}", allowed) for i, p in enumerate(inputs))
    outputs = tuple(_own_parameter(p, f"output {i}", allowed) for i, p in enumerate(outputs))
    variadic = onnx.defs.OpSchema.FormalParameterOption.Variadic
    return _Signature(
        inputs=inputs,
        variadic_last=bool(schema.inputs) and schema.inputs[-1].option == variadic,
        outputs=outputs,
        variadic_outputs=bool(schema.outputs) and schema.outputs[-1].option == variadic,
        allowed=allowed,
    )


def accepted_dtypes(op_type: str, opset: int, input_index: int) -> frozenset[ir.DataType] | None:
    """The dtypes input ``input_index`` of ``op_type`` takes at ``opset`` (schema less runtime
    gaps); None where the op has no schema there or the input has a type of its own."""
    signature = _signature(op_type, opset)
    if signature is None:
        return None
    parameter = signature.input_parameter(input_index)
    return None if parameter is None else signature.allowed.get(parameter)


@dataclasses.dataclass(frozen=True)
class CastPlan:
    """The dtype each listed input is cast to before the node, and the dtype each listed output
    is cast back to after it."""

    inputs: Mapping[int, ir.DataType]
    outputs: Mapping[int, ir.DataType]


def plan_casts(op_type: str, opset: int, dtypes: Sequence[ir.DataType | None], num_outputs: int) -> CastPlan | None:
    """The casts that fit a node of ``op_type`` (default domain) with inputs of ``dtypes``
    (None: absent, not a tensor, or not known) into its schema at ``opset``; None when it fits.

    Inputs sharing a type parameter are widened together, to one dtype, and only when they
    agree: inputs of different dtypes under one parameter are a symbolic's mistake, which no
    cast here would make right."""
    signature = _signature(op_type, opset)
    if signature is None:
        return None
    groups: dict[str, list[int]] = {}
    for index, dtype in enumerate(dtypes):
        parameter = signature.input_parameter(index)
        if parameter is not None and dtype is not None:
            groups.setdefault(parameter, []).append(index)
    inputs: dict[int, ir.DataType] = {}
    widened: dict[str, ir.DataType] = {}
    for parameter, indices in groups.items():
        allowed = signature.allowed.get(parameter, frozenset())
        found = {dtypes[i] for i in indices}
        if len(found) != 1 or not allowed:
            continue
        (dtype,) = found
        if dtype in allowed:
            continue
        target = next((wider for wider in WIDER.get(dtype, ()) if wider in allowed), None)  # type: ignore[arg-type]
        if target is None:
            continue
        inputs.update(dict.fromkeys(indices, target))
        widened[parameter] = dtype  # type: ignore[assignment]
    if not inputs:
        return None
    outputs = {}
    for index in range(num_outputs):
        parameter = signature.output_parameter(index)
        if parameter in widened:
            outputs[index] = widened[parameter]
    return CastPlan(inputs=inputs, outputs=outputs)
