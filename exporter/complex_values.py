"""Complex tensors in an export: carried as float pairs, and run through real symbolics.

ONNX has no complex tensors (its DFT and STFT write a float tensor with a trailing dim of 2,
real and imaginary), and the emitter stamps torch's dtype on every ir.Value a symbolic
returns, so a complex intermediate travels as a :class:`ComplexValue`: that float [..., 2]
tensor, marked. Symbolics that give complex tensors a meaning of their own take and make them
(the fft functions, abs, angle, mul, view_as_real ...: registered with
``complex_inputs=ComplexInputs.OWN``); every other op says at registration how it treats one
(op_facts.ComplexInputs), and :func:`lower_complex` runs its real symbolic accordingly. An op
that says nothing refuses a complex argument by name, as does a model returning one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.graph_context import GraphContext
from exporter.op_facts import ComplexInputs

__all__ = [
    "ComplexValue",
    "holds_complex",
    "has_complex_tensor_argument",
    "as_complex",
    "real_part",
    "imag_part",
    "paired",
    "lower_complex",
    "refusal",
    "WHAT_TO_WRITE",
]

Value = ir.Value

# How a refusal says what to write instead: compute with the parts, return the pairs.
WHAT_TO_WRITE = (
    "ONNX has no complex tensors: compute with real tensors made from it (z.real, z.imag, z.abs(), "
    "z.angle()), and return torch.view_as_real(z) (its real and imaginary parts in a last dim of 2) "
    "instead of z"
)


class ComplexValue:
    """A complex tensor as ONNX DFT writes it: a float ``value`` of shape [*torch_shape, 2]."""

    def __init__(self, value: Value) -> None:
        self.value = value
        value.meta["complex"] = True

    @property
    def dtype(self) -> ir.DataType | None:
        """The dtype of its real and imaginary parts (FLOAT for complex64)."""
        return self.value.dtype

    def __repr__(self) -> str:
        return f"ComplexValue({self.value.dtype}, {self.value.shape}: a complex tensor as float pairs)"


def holds_complex(obj: object) -> bool:
    """Whether ``obj`` (a node's input: a value, a constant, a list of them) is or holds a complex
    tensor: a ComplexValue, or a complex constant torch computed at export time."""
    if isinstance(obj, ComplexValue):
        return True
    if isinstance(obj, torch.Tensor):
        return obj.is_complex()
    if isinstance(obj, complex):
        return True
    if isinstance(obj, (list, tuple)):
        return any(holds_complex(item) for item in obj)
    return False


def has_complex_tensor_argument(schema: torch._C.FunctionSchema, inputs: Sequence[Any]) -> bool:
    """Whether a tensor argument (``Tensor``, ``Tensor[]``, ``Tensor?``) of a node holds a complex
    tensor: list ops (``t[] list``) move a complex item as they move any other."""
    return any("Tensor" in str(arg.type) and holds_complex(obj) for arg, obj in zip(schema.arguments, inputs))


def _part_dtype(g: GraphContext, inputs: Sequence[Any]) -> ir.DataType | None:
    """The dtype of the parts of the node's complex result: from torch's complex type of its
    output, else (a scripted graph's untyped value) the parts' dtype of its first complex operand."""
    node = g.node
    output_type = node.output().type() if node is not None and node.outputsSize() == 1 else None
    dtype = output_type.dtype() if isinstance(output_type, torch._C.TensorType) else None
    if dtype is not None:
        return tensors.from_torch_dtype(tensors.complex_part_dtype(dtype)) if dtype.is_complex else None
    return next((obj.dtype for obj in inputs if isinstance(obj, ComplexValue) and obj.dtype is not None), None)


def _in_part_dtype(g: GraphContext, obj: object, dtype: ir.DataType) -> object:
    """A real operand torch promotes to the complex result's dtype, in its parts' dtype instead."""
    if isinstance(obj, ir.Value):
        return obj if obj.dtype == dtype else h.cast(g, obj, dtype)
    if isinstance(obj, torch.Tensor) and not obj.is_complex():
        return obj.to(tensors.to_torch_dtype(dtype))
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return torch.tensor(obj, dtype=tensors.to_torch_dtype(dtype))
    return obj


def _last_axis(z: ComplexValue) -> int:
    return h.known_rank(z.value, "a complex tensor") - 1


def real_part(g: GraphContext, z: ComplexValue) -> Value:
    return g.op("Gather", z.value, g.constant(0), axis=_last_axis(z))


def imag_part(g: GraphContext, z: ComplexValue) -> Value:
    return g.op("Gather", z.value, g.constant(1), axis=_last_axis(z))


def paired(g: GraphContext, real: Value, imag: Value) -> ComplexValue:
    """The complex tensor real + i imag (same shapes, or broadcast to one where they differ)."""
    real_shape, imag_shape = h.static_shape(real), h.static_shape(imag)
    if real_shape is None or real_shape != imag_shape:
        # Concat needs equal shapes: both broadcast to the shape of their sum
        shape = g.op("Shape", g.op("Add", real, imag))
        real, imag = g.op("Expand", real, shape), g.op("Expand", imag, shape)
    return ComplexValue(g.op("Concat", h.unsqueeze(g, real, [-1]), h.unsqueeze(g, imag, [-1]), axis=-1))


def _constant_pairs(g: GraphContext, value: torch.Tensor | complex) -> ComplexValue:
    tensor = torch.as_tensor(value)
    if not tensor.is_complex():
        tensor = tensor.to(torch.complex64)
    return ComplexValue(g.constant(torch.view_as_real(tensor.resolve_conj().resolve_neg()).contiguous()))


def as_complex(g: GraphContext, obj: object, like: ComplexValue | None = None) -> ComplexValue:
    """``obj`` as a ComplexValue: itself, a complex constant's pairs, or a real tensor or number
    with a zero imaginary part (in the parts' dtype of ``like``, when given)."""
    if isinstance(obj, ComplexValue):
        return obj
    if isinstance(obj, (torch.Tensor, complex)) and holds_complex(obj):
        return _constant_pairs(g, obj)
    if isinstance(obj, (bool, int, float, torch.Tensor)):
        dtype = tensors.to_torch_dtype(like.dtype) if like is not None and like.dtype is not None else None
        obj = g.constant(torch.as_tensor(obj, dtype=dtype))
    if not isinstance(obj, ir.Value):
        raise TypeError(f"expected a tensor, got {type(obj).__name__}")
    if like is not None and like.dtype is not None and obj.dtype != like.dtype:
        obj = h.cast(g, obj, like.dtype)
    elif not h.is_floating(obj):
        obj = h.cast(g, obj, ir.DataType.FLOAT)
    return paired(g, obj, _zeros_like(g, obj))


def _zeros_like(g: GraphContext, x: Value) -> Value:
    zero = g.constant(torch.zeros(1, dtype=tensors.to_torch_dtype(x.dtype)))
    return g.op("ConstantOfShape", g.op("Shape", x), value=ir.tensor(zero.const_value.numpy()))


def _part(g: GraphContext, obj: object, index: int, zero_real: bool) -> object:
    """Part ``index`` (0 real, 1 imaginary) of an operand for a run of a real symbolic: a
    complex operand's part; a real one as given, or zeros in the imaginary run when
    ``zero_real`` (it counts as complex with a zero imaginary part)."""
    if isinstance(obj, ComplexValue):
        return real_part(g, obj) if index == 0 else imag_part(g, obj)
    if isinstance(obj, complex):
        return obj.real if index == 0 else obj.imag
    if isinstance(obj, torch.Tensor) and obj.is_complex():
        return (obj.real if index == 0 else obj.imag).contiguous()
    if isinstance(obj, (list, tuple)) and holds_complex(obj):
        reals = [item for item in obj if not holds_complex(item) and _is_real_tensor(item)]
        if reals:
            raise ValueError("a list mixing complex and real tensors: make every item complex (torch.complex(x, 0*x))")
        return type(obj)(_part(g, item, index, zero_real) for item in obj)
    if index == 1 and zero_real:
        if isinstance(obj, ir.Value):
            return _zeros_like(g, obj)
        if isinstance(obj, torch.Tensor):
            return torch.zeros_like(obj)
        if isinstance(obj, (int, float)) and not isinstance(obj, bool):
            return type(obj)(0)
    return obj


def _is_real_tensor(obj: object) -> bool:
    return isinstance(obj, ir.Value) or (isinstance(obj, torch.Tensor) and obj.dim() > 0)


def _repaired(g: GraphContext, real: object, imag: object) -> object:
    """The runs' results paired again: values, and the items of lists and tuples (split, chunk)."""
    if isinstance(real, ir.Value) and isinstance(imag, ir.Value):
        return paired(g, real, imag)
    if isinstance(real, (list, tuple)) and isinstance(imag, (list, tuple)) and len(real) == len(imag):
        return type(real)(_repaired(g, r, i) for r, i in zip(real, imag))
    raise TypeError(f"the symbolic returned {type(real).__name__}, which cannot be paired into complex results")


def refusal(op: str, argument: str) -> str:
    """Why ``op`` refuses a complex ``argument``, and what to write instead."""
    return f"argument {argument!r} of {op} is a complex tensor, for which {op} has no lowering. {WHAT_TO_WRITE}"


def lower_complex(
    g: GraphContext,
    rule: ComplexInputs | None,
    inputs: Sequence[Any],
    names: Sequence[str],
    promoted: frozenset[int],
    call: Callable[[list[Any]], Any],
) -> Any:
    """Run a node whose inputs hold a complex tensor, as its op's ``rule`` says: ``call`` runs the
    op's symbolic on a list of inputs; ``names`` are the inputs' schema names (for the refusal),
    ``promoted`` the positions of the operands torch promotes: a real one takes the dtype of the
    result's parts first (torch would promote it to the complex dtype), and is zeroed in
    LINEAR's imaginary run."""
    part = _part_dtype(g, inputs) if promoted and rule is not ComplexInputs.SHAPE else None
    if part is not None:
        inputs = [_in_part_dtype(g, obj, part) if i in promoted else obj for i, obj in enumerate(inputs)]
    if rule is ComplexInputs.OWN:
        return call(list(inputs))
    if rule is None:
        position = next(i for i, obj in enumerate(inputs) if holds_complex(obj))
        name = names[position] if position < len(names) else f"#{position}"
        raise ValueError(refusal(g.node.kind() if g.node is not None else "this op", name))
    if rule is ComplexInputs.SHAPE:
        return call([_part(g, obj, 0, False) for obj in inputs])
    linear = rule is ComplexInputs.LINEAR
    real = call([_part(g, obj, 0, False) for obj in inputs])
    imag = call([_part(g, obj, 1, linear and i in promoted) for i, obj in enumerate(inputs)])
    return _repaired(g, real, imag)
