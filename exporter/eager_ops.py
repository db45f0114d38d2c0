"""What torch computes for one aten node: its values on constant inputs, its dtypes on meta tensors.

The emitter asks torch twice. A node whose inputs are all known at export time is run in
torch (static shape arithmetic disappears without a pass), and where a symbolic's dtype differs
from the one TorchScript recorded, the op is run on meta tensors of the emitted dtypes to learn
which of the two torch computes. Both calls bind graph objects to the aten overload of the
node's schema, and both live here so the emitter only walks, binds, calls and stamps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import onnx_ir as ir
import torch

from exporter import tensors
from exporter.quantization import QUANTIZED_STORAGE
from exporter.runtime_list import RuntimeList, ScanItem

__all__ = ["folded", "corrected_dtypes", "run_op", "TORCH_REFUSALS"]

# Folding a node by running it in torch is skipped when the result would be larger than this.
_FOLD_LIMIT_BYTES = 1 << 20
# What torch raises for an op it cannot run on given arguments: its C++ checks (RuntimeError,
# NotImplementedError for a missing kernel), bad argument types or values, a dim out of range.
TORCH_REFUSALS = (RuntimeError, TypeError, ValueError, IndexError)


def folded(node: torch._C.Node, schema: torch._C.FunctionSchema, inputs: Sequence[Any]) -> list[Any] | None:
    """The outputs torch computes for ``node`` on ``inputs`` (all known at export time), or
    None where the node is not folded: torch's result is random, torch cannot run the op on
    these inputs (the symbolic handles them), or the result is over 1 MiB."""
    if _is_nondeterministic(node):
        return None
    try:
        result = _run_aten(schema, [_to_eager(arg, obj) for arg, obj in zip(schema.arguments, inputs)])
    except TORCH_REFUSALS:  # the symbolic handles what torch cannot fold
        return None
    results = list(result) if isinstance(result, tuple) else [result]
    if len(results) != node.outputsSize():
        return None
    size = sum(r.element_size() * r.numel() for r in results if isinstance(r, torch.Tensor))
    if size > _FOLD_LIMIT_BYTES:
        return None
    return [r.detach() if isinstance(r, torch.Tensor) else r for r in results]


def corrected_dtypes(
    node: torch._C.Node,
    schema: torch._C.FunctionSchema,
    inputs: Sequence[Any],
    result: Any,
    known: dict[int, torch.dtype],
) -> dict[int, torch.dtype]:
    """Where the symbolic's dtype differs from the one TorchScript recorded (or ``known``
    already corrected), ask torch: run the op on meta tensors of the emitted inputs' dtypes. If
    torch computes the symbolic's dtype, the recorded one was a guess of shape propagation on a
    scripted graph (``cat`` of half and float recorded half, ``sum(dtype=float)`` of half
    recorded half): the corrections returned (by the outputs' unique ids) are what the emitter
    stamps instead. Otherwise the mismatch stands and the emitter reports the symbolic."""
    outputs = list(node.outputs())
    results = list(result) if isinstance(result, (tuple, list)) and len(outputs) > 1 else [result]
    pairs = []
    for ts_value, obj in zip(outputs, results):
        if not isinstance(obj, ir.Value) or obj.dtype is None:
            continue
        ts_type = ts_value.type()  # one pybind round trip per output (this runs for every node)
        if not isinstance(ts_type, torch._C.TensorType):
            continue
        recorded = known.get(ts_value.unique(), ts_type.dtype())
        if recorded is not None and tensors.from_torch_dtype(QUANTIZED_STORAGE.get(recorded, recorded)) != obj.dtype:
            pairs.append((ts_value, obj))
    if not pairs:
        return {}
    computed = _meta_dtypes(schema, inputs)
    if computed is None or len(computed) != len(outputs):
        return {}
    corrected = {}
    for ts_value, obj in pairs:
        dtype = computed[outputs.index(ts_value)]
        if dtype is not None and tensors.from_torch_dtype(dtype) == obj.dtype:
            corrected[ts_value.unique()] = dtype
    return corrected


def _meta_dtypes(schema: torch._C.FunctionSchema, inputs: Sequence[Any]) -> list[torch.dtype | None] | None:
    """The output dtypes torch computes for the op on inputs of the emitted dtypes (meta
    tensors: no data, no work), or None when the op cannot run so."""

    def meta(obj: Any) -> Any:
        if isinstance(obj, ir.Value):
            if obj.dtype is None or obj.shape is None:
                raise TypeError("untyped value")
            shape = [d if isinstance(d, int) else 2 for d in obj.shape]
            return torch.empty(shape, dtype=tensors.to_torch_dtype(obj.dtype), device="meta")
        if isinstance(obj, (list, tuple)):
            return type(obj)(meta(o) for o in obj)
        if isinstance(obj, (RuntimeList, ScanItem)):
            raise TypeError("run-time list")
        return obj

    try:
        out = _run_aten(schema, [_to_eager(arg, meta(obj)) for arg, obj in zip(schema.arguments, inputs)])
    except TORCH_REFUSALS:  # no verdict: the recorded dtype stands
        return None
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o.dtype if isinstance(o, torch.Tensor) else None for o in outs]


def run_op(schema: torch._C.FunctionSchema, inputs: Sequence[Any]) -> Any:
    """The op of ``schema`` (aten or prim) run in torch on ``inputs`` as a graph holds them
    (dtypes, layouts and memory formats as ints), for the specialization pass: it raises
    what torch raises (:data:`TORCH_REFUSALS`) where the op cannot run on them."""
    return _run_aten(schema, [_to_eager(arg, obj) for arg, obj in zip(schema.arguments, inputs)])


def _run_aten(schema: torch._C.FunctionSchema, values: Sequence[Any]) -> Any:
    """Call the overload of ``schema`` in torch on eager ``values`` bound by position
    (keyword-only arguments by name), without autograd."""
    namespace, name = schema.name.split("::", 1)
    packet = getattr(getattr(torch.ops, namespace), name)
    overload = getattr(packet, schema.overload_name or "default")
    args, kwargs = [], {}
    for arg, value in zip(schema.arguments, values):
        if arg.kwarg_only:
            kwargs[arg.name] = value
        else:
            args.append(value)
    with torch.no_grad():
        return overload(*args, **kwargs)


def _is_nondeterministic(node: torch._C.Node) -> bool:
    """Node.isNondeterministic() asserts on some schemas (native_dropout with train=None)."""
    try:
        return node.isNondeterministic()
    except RuntimeError:
        return True


_MEMORY_FORMATS = {
    0: torch.contiguous_format,
    1: torch.preserve_format,
    2: torch.channels_last,
    3: torch.channels_last_3d,
}


def _to_eager(arg: torch._C.Argument, obj: Any) -> Any:
    """A graph object as torch's kernel takes it: enums given as ints (dtype, layout, memory
    format) as their torch objects, a number for a Tensor argument as a tensor."""
    type_text = str(arg.type)
    if obj is None:
        return None
    if "ScalarType" in type_text and isinstance(obj, int):
        return tensors.scalar_type_to_dtype(obj)
    if "Layout" in type_text and isinstance(obj, int):
        return torch.strided
    if "MemoryFormat" in type_text and isinstance(obj, int):
        return _MEMORY_FORMATS[obj]
    if type_text == "Tensor" and not isinstance(obj, torch.Tensor):
        return torch.tensor(obj)
    return obj
