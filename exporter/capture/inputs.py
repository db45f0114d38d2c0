"""The model's inputs as the exported graph takes them: torch's calling convention (a tensor, a
tuple, a tuple ending in a kwargs dict) flattened into tensors, in graph-input order.

Shared by capture (which makes the graph inputs), verify (which feeds them) and the tests.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import torch

from exporter.capture.captured import ModelInput
from exporter.tensors import quantized_input_parts

__all__ = [
    "split_args",
    "named_tensors",
    "is_number",
    "number_tensor",
    "wrap_numbers",
    "wrap_nested",
    "flatten_inputs",
    "sequence_arguments",
    "schema_params",
    "rebuild",
    "name_inputs",
]


def split_args(args: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The calling convention of torch's ONNX export: a tensor, a tuple, or a tuple ending in a kwargs dict."""
    if isinstance(args, torch.Tensor):
        return (args,), {}
    if isinstance(args, list):
        args = tuple(args)
    if not isinstance(args, tuple):
        return (args,), {}
    if args and isinstance(args[-1], dict):
        return args[:-1], dict(args[-1])
    return args, {}


def named_tensors(obj: Any, name: str) -> tuple[list[torch.Tensor], list[str]]:
    """Tensors of a nested structure in order (tuples, lists, dicts), with leaf names. A dict
    gives each key then its value, as ``torch.jit._flatten`` does: a tensor key is an input too."""
    if isinstance(obj, torch.Tensor):
        return [obj], [name]
    tensors_: list[torch.Tensor] = []
    names: list[str] = []
    if isinstance(obj, (list, tuple)):
        items: list[tuple[str, Any]] = [(f"{name}_{i}", v) for i, v in enumerate(obj)]
    elif isinstance(obj, Mapping):
        items = []
        for i, (k, v) in enumerate(obj.items()):
            if isinstance(k, torch.Tensor):
                items.append((f"{name}_key{i}", k))
            items.append((f"{name}_{k}" if isinstance(k, (str, int)) else f"{name}_{i}", v))
    else:
        return [], []
    for sub_name, value in items:
        t, n = named_tensors(value, sub_name)
        tensors_.extend(t)
        names.extend(n)
    return tensors_, names


def is_number(value: Any) -> bool:
    """A Python int, float or bool (an argument torch's exporter makes a 0-d graph input)."""
    return isinstance(value, (bool, int, float))


def number_tensor(value: bool | int | float) -> torch.Tensor:
    """A Python number as the 0-d tensor torch's exporter feeds for it (``torch.jit._flatten``):
    int -> int64, float -> float64, bool -> bool."""
    if isinstance(value, bool):
        return torch.tensor(value, dtype=torch.bool)
    if isinstance(value, int):
        return torch.tensor(value, dtype=torch.int64)
    return torch.tensor(value, dtype=torch.float64)


def wrap_numbers(positional: Sequence[Any]) -> tuple[Any, ...]:
    """Positional Python numbers, also those nested in positional tuples, lists and dict values,
    as 0-d tensors: torch's exporter flattens the positional arguments with ``torch.jit._flatten``,
    which makes every such number a graph input. Keyword arguments are not wrapped (their
    numbers are baked in); dict keys that are numbers stay keys."""
    return tuple(wrap_nested(v) for v in positional)


def wrap_nested(value: Any) -> Any:
    if is_number(value):
        return number_tensor(value)
    if isinstance(value, tuple):
        items = [wrap_nested(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [wrap_nested(v) for v in value]
    if isinstance(value, dict):
        return type(value)((k, wrap_nested(v)) for k, v in value.items())
    return value


def flatten_inputs(args: Any, model: Any = None) -> list[ModelInput]:
    """What an exported model takes for ``args``, in graph-input order: positional arguments
    (a Python number as its 0-d tensor) then keyword arguments, flattened; a quantized tensor
    as its integer values, scale and zero point (tensors.quantized_input_parts). Given the
    ``model``, a scripted model's list argument is one entry, the list of its items as tensors,
    fed to its sequence input (:func:`sequence_arguments`); without it every list is flattened,
    which is what a traced model takes."""
    positional, kwargs = split_args(args)
    sequences = sequence_arguments(model, positional)
    flat: list[ModelInput] = []
    for index, value in enumerate(list(wrap_numbers(positional)) + list(kwargs.values())):
        if index in sequences:
            flat.append(sequences[index])
            continue
        for tensor in named_tensors(value, "")[0]:
            flat.extend(quantized_input_parts(tensor))  # a quantized tensor is three inputs
    return flat


# List element types a scripted list argument may have to be one ONNX sequence input, and the
# dtype its number items are fed as (a TorchScript float is a double, as number_tensor gives).
_SEQUENCE_NUMBER_DTYPES = {
    torch._C.IntType: torch.int64,
    torch._C.FloatType: torch.float64,
    torch._C.BoolType: torch.bool,
}


def sequence_arguments(model: Any, positional: Sequence[Any]) -> dict[int, list[torch.Tensor]]:
    """The positional arguments a scripted model takes as one ONNX sequence input each, by
    position, with their items as tensors.

    torch's exporter declares a scripted ``List[int]``, ``List[float]`` or ``List[bool]``
    argument as one ``seq(tensor)`` input (numbers as 0-d tensors), so the list's length, not
    only its values, is chosen when the model runs; its suite feeds such an argument as one
    Python list. A traced model flattens lists instead (one input per item), and so do tuples
    and keyword arguments of scripted models, as torch's exporter does.

    A ``List[Tensor]`` argument stays one input per tensor, unlike torch's exporter (which
    declares a sequence and then fails on ``torch.cat``/``torch.stack`` of it): with the count
    fixed at export time, every loop over the list unrolls and every list operation exports at
    any opset (a scripted detection model's ``images: List[Tensor]``), as a trace gives it.
    Number items given as tensors (``[torch.tensor(2), torch.tensor(4)]`` for a ``List[int]``)
    are fed in the list's item dtype."""
    if not isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
        return {}
    found: dict[int, list[torch.Tensor]] = {}
    for index, (param, value) in enumerate(zip(schema_params(model), positional)):
        items = _sequence_items(param.type, value)
        if items is not None:
            found[index] = items
    return found


def _sequence_items(schema_type: torch._C.JitType, value: Any) -> list[torch.Tensor] | None:
    """``value``'s items as the tensors its sequence input is fed, or None when the argument
    is not one sequence input (not a list, or a list of other things than numbers or tensors)."""
    if not isinstance(value, list) or not isinstance(schema_type, torch._C.ListType):
        return None
    element = schema_type.getElementType()
    if isinstance(element, torch._C.TensorType):
        return None  # one input per tensor: see sequence_arguments
    dtype = next((d for kind, d in _SEQUENCE_NUMBER_DTYPES.items() if isinstance(element, kind)), None)
    if dtype is None or not all(is_number(item) or isinstance(item, torch.Tensor) for item in value):
        return None
    return [torch.as_tensor(item).detach().to(dtype).reshape(()) for item in value]


def rebuild(obj: Any, flat: Iterator[torch.Tensor]) -> Any:
    if isinstance(obj, torch.Tensor):
        return next(flat)
    if isinstance(obj, tuple):
        return tuple(rebuild(v, flat) for v in obj)
    if isinstance(obj, list):
        return [rebuild(v, flat) for v in obj]
    if isinstance(obj, Mapping):
        rebuilt = []
        for k, v in obj.items():
            key = next(flat) if isinstance(k, torch.Tensor) else k
            rebuilt.append((key, rebuild(v, flat)))
        return type(obj)(rebuilt)
    return obj


def schema_params(model: torch.jit.ScriptModule | torch.jit.ScriptFunction) -> list[torch._C.Argument]:
    """The arguments of the scripted forward, without a module's ``self``."""
    if isinstance(model, torch.jit.ScriptModule):
        return list(model.forward.schema.arguments[1:])
    return list(model.schema.arguments)


def name_inputs(names: Sequence[str]) -> list[str]:
    """Make leaf names unique and ONNX friendly."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        out.append(name if count == 0 else f"{name}_{count}")
    return out
