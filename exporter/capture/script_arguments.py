"""A scripted model's call bound to its graph: which arguments stay graph inputs, which are
rebuilt from flattened inputs (tuples, lists, dicts) and which become constants."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from exporter.capture.inputs import is_number, named_tensors, wrap_nested

__all__ = ["bind_arguments"]


def bind_arguments(
    graph: torch._C.Graph,
    call: Sequence[Any],
    schema_params: Sequence[torch._C.Argument],
    kept: Sequence[bool],
    positional: int,
) -> None:
    """Tensors, live numbers and sequence arguments (``kept``) stay graph inputs; a positional
    tuple, list or dict holding tensors or numbers becomes one graph input per tensor and number
    (a dict's values), rebuilt by prim::TupleConstruct/ListConstruct/DictConstruct: the interface
    tracing gives and :func:`flatten_inputs` feeds (see :func:`wrap_numbers`); other arguments
    (None, strings, numbers and containers of keyword arguments, except for their tensors)
    become constants."""
    graph_inputs = list(graph.inputs())
    order: list[list[torch._C.Value]] = [[v] for v in graph_inputs]  # the inputs each call argument ends up as
    for index in reversed(range(len(call))):
        value = call[index]
        if isinstance(value, torch.Tensor) or kept[index]:
            continue
        if isinstance(value, dict) and any(isinstance(k, torch.Tensor) for k in value):
            raise TypeError(f"scripted input {schema_params[index].name!r}: dicts with tensor keys are not supported")
        leaves: list[torch._C.Value] = []
        numbers_live = index < positional
        with graph.insert_point_guard(_first_node(graph)):
            if (
                isinstance(value, (list, tuple, dict))
                and named_tensors(wrap_nested(value) if numbers_live else value, "")[0]
            ):
                replacement = _construct(graph, value, graph_inputs[index].type(), leaves, numbers_live)
            else:
                replacement = graph.insertConstant(value)
        graph_inputs[index].replaceAllUsesWith(replacement)
        graph.eraseInput(index)
        order[index] = leaves
    # new leaves were appended after the weights: move each to where its argument was
    position = {v.unique(): i for i, v in enumerate(graph.inputs())}
    graph.permuteInputs([position[v.unique()] for vs in order for v in vs])


def _first_node(graph: torch._C.Graph) -> torch._C.Node:
    return next(iter(graph.nodes()), graph.return_node())


def _number_type(value: bool | int | float) -> torch._C.JitType:
    """The TorchScript type of the input a Python number becomes (its 0-d tensor's dtype, number_tensor)."""
    if isinstance(value, bool):
        return torch._C.BoolType.get()
    return torch._C.IntType.get() if isinstance(value, int) else torch._C.FloatType.get()


def _construct(
    graph: torch._C.Graph, value: Any, ts_type: torch._C.JitType, leaves: list[torch._C.Value], numbers_live: bool
) -> Any:
    """``value`` rebuilt in the graph: each tensor (and, with ``numbers_live``, each Python
    number, as an int/float/bool input fed a 0-d tensor) a new graph input added to ``leaves``,
    tuples and lists constructed from their items, anything else a constant."""
    if isinstance(ts_type, torch._C.OptionalType):
        ts_type = ts_type.getElementType()
    if isinstance(value, torch.Tensor) or (numbers_live and is_number(value)):
        graph_input = graph.addInput()
        graph_input.setType(_number_type(value) if is_number(value) else torch._C.TensorType.get())
        leaves.append(graph_input)
        return graph_input
    if isinstance(value, tuple):
        item_types = ts_type.elements() if isinstance(ts_type, torch._C.TupleType) else [None] * len(value)
        items = [_construct(graph, v, t, leaves, numbers_live) for v, t in zip(value, item_types)]
        node = graph.insertNode(graph.create("prim::TupleConstruct", items))
        node.output().setType(torch._C.TupleType([item.type() for item in items]))
        return node.output()
    if isinstance(value, list):
        item_type = ts_type.getElementType() if isinstance(ts_type, torch._C.ListType) else torch._C.TensorType.get()
        items = [_construct(graph, v, item_type, leaves, numbers_live) for v in value]
        node = graph.insertNode(graph.create("prim::ListConstruct", items))
        node.output().setType(torch._C.ListType(item_type))
        return node.output()
    if isinstance(value, dict) and isinstance(ts_type, torch._C.DictType):
        # keys are constants (torch.jit._flatten feeds only the values of a non-tensor key)
        items = []
        for key, item in value.items():
            items.append(graph.insertConstant(key))
            items.append(_construct(graph, item, ts_type.getValueType(), leaves, numbers_live))
        node = graph.insertNode(graph.create("prim::DictConstruct", items))
        node.output().setType(ts_type)
        return node.output()
    return graph.insertConstant(value)
