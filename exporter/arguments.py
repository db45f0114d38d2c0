"""Annotation-driven conversion of emitted graph values into symbolic-function arguments.

A symbolic says what it wants through its annotations (``Value``, ``int``, ``Sequence[int]``,
``torch.dtype``, ``X | None`` ...). The spec is read once, at registration, and each call
converts the node's inputs, bound by their TorchScript schema names, accordingly. Every
conversion failure names the argument so the emitter can add the op and source line.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import inspect
import types
import typing
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import onnx_ir as ir
import torch

from exporter import runtime_list, tensors
from exporter.complex_values import ComplexValue, as_complex
from exporter.errors import NeedsExportTimeValue
from exporter.runtime_list import RuntimeList

if TYPE_CHECKING:
    from exporter.graph_context import GraphContext

__all__ = ["Kind", "ParamSpec", "ArgumentError", "RunTimeArgumentError", "read_param_specs", "bind_by_name", "convert"]


class ArgumentError(TypeError):
    """A graph value cannot become the argument a symbolic asked for."""


class RunTimeArgumentError(ArgumentError, NeedsExportTimeValue):
    """A value only known at run time was given where the symbolic asked for a constant (an
    ``int``, a ``Sequence[int]``, a dtype): the named refusal, so a loop whose body passes its
    iteration number there is unrolled instead (errors.NeedsExportTimeValue)."""


class Kind(enum.Enum):
    VALUE = "Value"
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    STR = "str"
    INTS = "Sequence[int]"
    FLOATS = "Sequence[float]"
    VALUES = "Sequence[Value]"
    DTYPE = "torch.dtype"
    RUNTIME_LIST = "RuntimeList"
    COMPLEX = "ComplexValue"
    RAW = "object"


@dataclasses.dataclass(frozen=True)
class ParamSpec:
    """How to build one parameter of a symbolic function."""

    name: str
    kinds: tuple[Kind, ...]  # in order of preference
    optional: bool
    has_default: bool
    default: Any
    variadic: bool = False


_SCALAR_KINDS = {int: Kind.INT, float: Kind.FLOAT, bool: Kind.BOOL, str: Kind.STR}


def _kind_of(annotation: Any, fn_name: str, param: str) -> tuple[list[Kind], bool]:
    """Map one annotation to the kinds it accepts and whether None is allowed."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        kinds: list[Kind] = []
        optional = False
        for member in typing.get_args(annotation):
            if member is type(None):
                optional = True
                continue
            sub, sub_optional = _kind_of(member, fn_name, param)
            kinds.extend(sub)
            optional = optional or sub_optional
        if Kind.INT in kinds and Kind.FLOAT in kinds and kinds.index(Kind.FLOAT) < kinds.index(Kind.INT):
            # FLOAT accepts ints too: `float | int` must keep an int an int (arange(0, n) is an
            # int64 arange only while its start stays 0, not 0.0), so INT is tried first
            kinds.remove(Kind.INT)
            kinds.insert(kinds.index(Kind.FLOAT), Kind.INT)
        return kinds, optional
    if annotation is ir.Value:
        return [Kind.VALUE], False
    if annotation in _SCALAR_KINDS:
        return [_SCALAR_KINDS[annotation]], False
    if annotation is torch.dtype:
        return [Kind.DTYPE], False
    if annotation is RuntimeList:
        return [Kind.RUNTIME_LIST], False
    if annotation is ComplexValue:
        return [Kind.COMPLEX], False
    if annotation in (object, Any):
        return [Kind.RAW], True
    if origin in (collections.abc.Sequence, list, tuple, typing.Sequence):
        (item, *rest) = typing.get_args(annotation) or (Any,)
        if origin is tuple and rest and rest != [Ellipsis]:
            raise TypeError(f"{fn_name}: parameter {param!r}: use Sequence[...] not fixed tuples")
        if item is int:
            return [Kind.INTS], False
        if item is float:
            return [Kind.FLOATS], False
        if item is ir.Value or typing.get_origin(item) in (typing.Union, types.UnionType):
            return [Kind.VALUES], False
    raise TypeError(
        f"{fn_name}: parameter {param!r} has annotation {annotation!r}, which the argument "
        f"conversion does not know; use one of {[k.value for k in Kind]}, a union of them, or X | None"
    )


def read_param_specs(fn: Callable[..., Any]) -> tuple[ParamSpec, ...]:
    """Read a symbolic's parameter specs from its annotations (the first parameter is ``g``)."""
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    params = list(signature.parameters.values())
    if not params:
        raise TypeError(f"{fn.__qualname__}: a symbolic takes a GraphContext first")
    specs = []
    for p in params[1:]:
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            raise TypeError(f"{fn.__qualname__}: **{p.name} would hide unhandled arguments")
        if p.name not in hints:
            raise TypeError(f"{fn.__qualname__}: parameter {p.name!r} needs an annotation")
        kinds, optional = _kind_of(hints[p.name], fn.__qualname__, p.name)
        has_default = p.default is not inspect.Parameter.empty
        specs.append(
            ParamSpec(
                name=p.name,
                kinds=tuple(kinds),
                optional=optional or (has_default and p.default is None),
                has_default=has_default,
                default=p.default if has_default else None,
                variadic=p.kind is inspect.Parameter.VAR_POSITIONAL,
            )
        )
    return tuple(specs)


def _as_python(obj: Any) -> Any:
    """The Python constant behind an emitted value, or the value itself when it is dynamic."""
    if isinstance(obj, ir.Value) and obj.const_value is not None and obj.const_value.size <= 64:
        array = obj.const_value.numpy()
        return torch.from_numpy(array.copy()) if array.ndim else array.item()
    return obj


def _scalar_of(obj: Any) -> Any:
    obj = _as_python(obj)
    if isinstance(obj, torch.Tensor) and obj.numel() == 1:
        return obj.item()
    return obj


def _convert_one(g: GraphContext, obj: Any, kind: Kind) -> Any:
    """Convert to one kind or raise ArgumentError."""
    if kind is Kind.RAW:
        return obj
    if kind is Kind.COMPLEX:
        # a complex constant torch computed at export time becomes its pairs
        if isinstance(obj, ComplexValue) or (isinstance(obj, torch.Tensor) and obj.is_complex()):
            return as_complex(g, obj)
        raise ArgumentError(f"expected a complex tensor, got {_describe(obj)}")
    if kind is Kind.RUNTIME_LIST:
        if isinstance(obj, RuntimeList):
            return obj
        raise ArgumentError(f"expected a list computed at run time, got {_describe(obj)}")
    if kind is Kind.VALUE:
        if isinstance(obj, ir.Value):
            return obj
        if isinstance(obj, (list, tuple)):
            return g.list_to_value(obj)
        if isinstance(obj, (torch.Tensor, bool, int, float)):
            return g.constant(obj)
        if (
            isinstance(obj, RuntimeList)
            and obj.item_dtype is not None
            and not tensors.is_floating_dtype(obj.item_dtype)
        ):
            return runtime_list.stack(g, obj, 0)  # a run-time int list as a shape
        raise ArgumentError(f"expected a tensor, got {type(obj).__name__} {obj!r}")
    if kind is Kind.INT:
        value = _scalar_of(obj)
        if isinstance(value, (int, bool)):
            return int(value)
        raise ArgumentError(f"expected a constant int, got {_describe(obj)}")
    if kind is Kind.FLOAT:
        value = _scalar_of(obj)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ArgumentError(f"expected a constant float, got {_describe(obj)}")
    if kind is Kind.BOOL:
        # Only real bools: in a union like `bool | int | float`, an int fill value must not
        # become True (int is tried next).
        value = _scalar_of(obj)
        if isinstance(value, bool):
            return value
        raise ArgumentError(f"expected a constant bool, got {_describe(obj)}")
    if kind is Kind.STR:
        if isinstance(obj, str):
            return obj
        raise ArgumentError(f"expected a constant string, got {_describe(obj)}")
    if kind is Kind.DTYPE:
        value = _scalar_of(obj)
        if isinstance(value, torch.dtype):
            return value
        if isinstance(value, int):
            return tensors.scalar_type_to_dtype(value)
        raise ArgumentError(f"expected a constant dtype, got {_describe(obj)}")
    if kind in (Kind.INTS, Kind.FLOATS):
        item_kind = Kind.INT if kind is Kind.INTS else Kind.FLOAT
        value = _as_python(obj)
        if isinstance(value, torch.Tensor):
            value = value.tolist()
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = [value]
        if isinstance(value, (list, tuple)):
            return [_convert_one(g, item, item_kind) for item in value]
        raise ArgumentError(f"expected a constant list of {item_kind.value}, got {_describe(obj)}")
    if kind is Kind.VALUES:
        if isinstance(obj, (list, tuple)):
            # Tensor?[] (aten::index, index_put) holds None for full slices
            return [None if item is None else _convert_one(g, item, Kind.VALUE) for item in obj]
        raise ArgumentError(f"expected a list of tensors, got {_describe(obj)}")
    raise AssertionError(kind)


# Scalar overloads of binary ops (``add.int(int a, int b)``) name their operands a and b where
# the tensor overloads say self and other; one symbolic written for the tensor names serves both.
_SCALAR_OPERAND_NAMES = {"a": "self", "b": "other"}


def bind_by_name(
    schema: torch._C.FunctionSchema, inputs: Sequence[Any], wanted: Sequence[str]
) -> dict[str, tuple[torch._C.Argument, Any]]:
    """The node's ``inputs`` keyed by the name of the symbolic parameter they bind to.

    Names are the schema's argument names, except that a symbolic asking for ``self`` (and
    ``other``) of a schema naming its operands ``a`` and ``b`` gets those: the naming
    convention belongs to argument binding, not to any one op.
    """
    by_name = {arg.name: (arg, obj) for arg, obj in zip(schema.arguments, inputs)}
    if "a" in by_name and "self" not in by_name and "a" not in wanted and "self" in wanted:
        for schema_name, symbolic_name in _SCALAR_OPERAND_NAMES.items():
            if schema_name in by_name:
                by_name[symbolic_name] = by_name.pop(schema_name)
    return by_name


def convert(g: GraphContext, obj: Any, spec: ParamSpec) -> Any:
    """Convert an emitted object into what ``spec`` asks for, trying its kinds in order."""
    if obj is None:
        if spec.optional:
            return None
        raise ArgumentError(f"argument {spec.name!r} is None, but the symbolic requires a value")
    errors = []
    for kind in spec.kinds:
        try:
            return _convert_one(g, obj, kind)
        except ArgumentError as error:
            errors.append(str(error))
    message = f"argument {spec.name!r}: " + "; ".join(errors)
    if _is_run_time(obj) and any(kind in _CONSTANT_KINDS for kind in spec.kinds):
        raise RunTimeArgumentError(
            message + ". This lowering needs it at export time: make it a Python constant in the model (a "
            "literal or a module attribute; tracing bakes in Python numbers computed from sizes), "
            "not a value computed from tensors or a scripted function's argument"
        )
    raise ArgumentError(message)


_CONSTANT_KINDS = frozenset({Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.STR, Kind.INTS, Kind.FLOATS, Kind.DTYPE})


def _is_run_time(obj: Any) -> bool:
    """A value (or a list holding one) only known when the model runs."""
    if isinstance(obj, (list, tuple)):
        return any(_is_run_time(item) for item in obj)
    return isinstance(obj, (ir.Value, RuntimeList)) and _as_python(obj) is obj


def _describe(obj: Any) -> str:
    if isinstance(obj, ir.Value):
        return f"a value computed at run time ({obj.dtype}, shape {obj.shape})"
    if isinstance(obj, torch.Tensor):
        return f"a constant tensor of shape {tuple(obj.shape)}"
    if isinstance(obj, RuntimeList):
        return "a list whose length is only known at run time"
    return f"{type(obj).__name__} {obj!r}"


def describe(obj: Any) -> str:
    """A short human description of an emitted object, for error messages."""
    if isinstance(obj, (list, tuple)):
        return "[" + ", ".join(describe(o) for o in obj) + "]"
    if isinstance(obj, ir.Value):
        return f"Value({obj.dtype.name if obj.dtype is not None else '?'}, {obj.shape})"
    if isinstance(obj, torch.Tensor):
        return f"tensor({obj.dtype}, {tuple(obj.shape)})"
    return repr(obj)
