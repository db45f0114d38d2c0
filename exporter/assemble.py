"""Assemble an ONNX model from a captured graph: inputs, initializers, emission, outputs."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import onnx_ir as ir
import torch

from exporter import quantization, runtime_list, tensors
from exporter.capture.captured import Captured
from exporter.capture.inputs import name_inputs
from exporter.emitter import emit_graph
from exporter.errors import ExporterError, UnsupportedOp, UnsupportedOperatorError
from exporter.graph_context import ExportOptions, GraphBuilder, GraphContext
from exporter.operator_export_types import OperatorExportTypes
from exporter.registry import Registry
from exporter.runtime_list import RuntimeList
from exporter.tensors import quantized_input_parts

__all__ = [
    "assemble",
    "normalize_dynamic_axes",
    "dynamic_input_axes",
    "optional_input_candidates",
    "ir_version_for",
    "FLAT_INPUTS_META",
    "NONE_OUTPUT_OPSET",
    "OPTIONAL_INPUT_OPSET",
]

# model.meta key: the graph input made for each flattened model input, in order (cleanup drops
# the ones the graph does not use, as torch does, and records which positions remain).
FLAT_INPUTS_META = "exporter.flat_inputs"

_IR_VERSION_BY_OPSET = [(23, 11), (21, 10), (19, 9), (15, 8), (12, 7), (11, 6), (10, 5), (9, 4)]


def ir_version_for(opset: int) -> int:
    """The lowest IR version that carries ``opset``: older runtimes load the model too."""
    for first_opset, version in _IR_VERSION_BY_OPSET:
        if opset >= first_opset:
            return version
    return 4


def normalize_dynamic_axes(
    dynamic_axes: Mapping[str, Mapping[int, str] | Sequence[int]] | None,
) -> dict[str, dict[int, str]]:
    """Both forms torch's exporter accepts, ``{"x": {0: "batch"}}`` and ``{"x": [0]}``, as the first."""
    result: dict[str, dict[int, str]] = {}
    for key, axes in (dynamic_axes or {}).items():
        if isinstance(axes, Mapping):
            result[key] = {int(axis): str(name) for axis, name in axes.items()}
        elif isinstance(axes, Sequence) and not isinstance(axes, str):
            result[key] = {int(axis): f"{key}_dynamic_axes_{i + 1}" for i, axis in enumerate(axes)}
        else:
            raise TypeError(f"dynamic_axes[{key!r}] must be a dict of axis->name or a list of axes")
    return result


def _input_value(name: str, tensor: torch.Tensor, axes: Mapping[int, str]) -> ir.Value:
    if tensor.is_complex():
        # ONNX has complex types, but runtimes cannot load models that take them: refuse here,
        # naming what works, instead of writing a model that onnxruntime rejects at load
        raise ExporterError(
            f"input {name!r} is a {tensor.dtype} tensor: ONNX runtimes have no complex inputs; pass "
            "torch.view_as_real(x) (a float tensor with a trailing dim of 2) and rebuild it in forward "
            "with torch.view_as_complex"
        )
    dims: list[int | str] = list(tensor.shape)
    for axis, dim_name in axes.items():
        position = axis + tensor.dim() if axis < 0 else axis
        if not 0 <= position < tensor.dim():
            raise ValueError(f"dynamic_axes: input {name!r} has no axis {axis} (rank {tensor.dim()})")
        dims[position] = dim_name
    return ir.Value(
        name=name,
        shape=ir.Shape(dims),
        type=ir.TensorType(tensors.from_torch_dtype(tensor.dtype)),
    )


def _flatten_outputs(obj: Any, *, keep_none: bool = False) -> list[Any]:
    """The leaves of the results; a None is left out unless ``keep_none``."""
    if isinstance(obj, dict):  # Dict[str, Tensor] outputs: the values in insertion order
        return [leaf for item in obj.values() for leaf in _flatten_outputs(item, keep_none=keep_none)]
    if isinstance(obj, (list, tuple)):
        return [leaf for item in obj for leaf in _flatten_outputs(item, keep_none=keep_none)]
    if obj is None:
        return [None] if keep_none else []
    return [obj]


# ONNX's Optional op, which makes an empty optional output
NONE_OUTPUT_OPSET = 15
# Optional graph inputs (OptionalHasElement, OptionalGetElement; torch's exporter declares a
# scripted Optional[Tensor] parameter one)
OPTIONAL_INPUT_OPSET = 15


def assemble(
    captured: Captured,
    registry: Registry,
    *,
    opset: int,
    input_names: Sequence[str] | None,
    output_names: Sequence[str] | None,
    dynamic_axes: dict[str, dict[int, str]],
    export_params: bool,
    keep_initializers_as_inputs: bool,
    training: bool,
    custom_opsets: Mapping[str, int] | None,
    operator_export_type: OperatorExportTypes = OperatorExportTypes.ONNX,
    autograd_inlining: bool = True,
) -> ir.Model:
    """Bind inputs and weights, emit the graph, then name and shape its outputs."""
    graph = ir.Graph([], [], nodes=[], opset_imports={"": opset}, name="main_graph")
    options = ExportOptions(
        opset=opset,
        training=training,
        dynamic=bool(dynamic_axes),
        operator_export_type=operator_export_type,
        autograd_inlining=autograd_inlining,
    )
    builder = GraphBuilder(graph, options)
    bound_inputs, flat_inputs = _bind_inputs(
        builder, captured, _input_names(captured, input_names), dynamic_axes, registry
    )
    bound = bound_inputs + _bind_weights(graph, captured, export_params, keep_initializers_as_inputs)
    results = emit_graph(
        captured.graph,
        builder,
        registry,
        bound,
        static_shapes=not dynamic_axes,
        scripted=captured.method == "script",
        locate=captured.locate,
    )
    # a scripted model's None results stay outputs (empty optionals) where ONNX has them, as in
    # torch's exporter; a trace has no None in its graph, and torch's drops them
    keep_none = captured.method == "script" and opset >= NONE_OUTPUT_OPSET
    outputs = _output_values(builder, results, keep_none=keep_none)
    _name_outputs(graph, outputs, output_names if output_names is not None else _key_names(results, len(outputs)))
    _rank_outputs(graph, captured.example_output_ranks)
    _mark_dynamic_outputs(graph, dynamic_axes)
    model = ir.Model(graph, ir_version=ir_version_for(opset), producer_name="exporter")
    model.meta[FLAT_INPUTS_META] = tuple(flat_inputs)
    _add_opset_imports(model, custom_opsets or {})
    return model


def _is_optional_input(captured: Captured, ts_value: torch._C.Value, opset: int, registry: Registry) -> bool:
    """Whether a scripted model's ``Optional[Tensor]`` parameter, given a tensor, is an ONNX
    optional graph input, as torch's exporter declares it from opset 15: its ``is None``
    checks then run at run time (OptionalHasElement), so a caller may leave it out, and the
    branches for None are exported too. With ``if x is not None: return x`` followed by
    ``elif y is not None: ...``, deciding ``x is not None`` at export time would leave ``y``
    unread and dropped, while torch's model takes both; torch's own tests feed it so.
    Only a parameter that is nothing but checked and refined (ops declaring
    ``checks_optional``) becomes one; a parameter also passed as it is to an op stays a
    tensor input."""
    return (
        captured.method == "script"
        and opset >= OPTIONAL_INPUT_OPSET
        and isinstance(ts_value.type(), torch._C.OptionalType)
        and bool(ts_value.uses())
        and all(registry.node_facts(use.user).checks_optional for use in ts_value.uses())
    )


def dynamic_input_axes(
    captured: Captured, input_names: Sequence[str] | None, dynamic_axes: Mapping[str, Mapping[int, str]]
) -> dict[int, frozenset[int]]:
    """The axes ``dynamic_axes`` names for each of the captured graph's user inputs (by position
    among its inputs), non-negative: what the passes must not take from the example's sizes. An
    axis the input does not have is left out here; binding the inputs reports it."""
    names = iter(_input_names(captured, input_names))
    result: dict[int, frozenset[int]] = {}
    for index, tensor in enumerate(captured.inputs):
        name = next(names)
        if isinstance(tensor, torch.Tensor) and tensor.is_quantized:
            next(names), next(names)  # its scale and zero point
        if name not in dynamic_axes or not isinstance(tensor, torch.Tensor):
            continue
        rank = tensor.dim()
        axes = (axis + rank if axis < 0 else axis for axis in dynamic_axes[name])
        result[index] = frozenset(axis for axis in axes if 0 <= axis < rank)
    return result


def optional_input_candidates(captured: Captured, opset: int) -> frozenset[int]:
    """The user inputs :func:`_is_optional_input` may make ONNX optional inputs (it also asks
    how the graph uses them, which the passes may still change): whether such an input is None
    is left to run time by the passes."""
    if captured.method != "script" or opset < OPTIONAL_INPUT_OPSET:
        return frozenset()
    return frozenset(
        index
        for index, ts_value in enumerate(captured.ts_inputs[: len(captured.inputs)])
        if isinstance(ts_value.type(), torch._C.OptionalType)
    )


def _input_names(captured: Captured, input_names: Sequence[str] | None) -> list[str]:
    """The user's names first, then the names derived from forward's parameters (a quantized
    input ``x`` is three graph inputs: ``x``, ``x_scale`` and ``x_zero_point``)."""
    names = name_inputs(
        [
            leaf
            for name, tensor in zip(captured.input_names, captured.inputs)
            for leaf in (
                [name, f"{name}_scale", f"{name}_zero_point"]
                if isinstance(tensor, torch.Tensor) and tensor.is_quantized
                else [name]
            )
        ]
    )
    if input_names is None:
        return names
    if len(input_names) > len(names):
        raise ValueError(
            f"input_names has {len(input_names)} names but the model has {len(names)} "
            f"flattened inputs ({', '.join(names)})"
        )
    # a derived name the user gave to an earlier input takes a suffix (``y`` for x, then ``y_1``)
    return name_inputs(list(input_names) + names[len(input_names) :])


def _bind_inputs(
    builder: GraphBuilder,
    captured: Captured,
    names: list[str],
    dynamic_axes: dict[str, dict[int, str]],
    registry: Registry,
) -> tuple[list[tuple[torch._C.Value, Any]], list[ir.Value]]:
    """One graph input per flattened model input, with its dynamic axes; a quantized tensor is
    three: its integer values, its scale (float64, 0-d) and zero point (int64, 0-d), which is
    what torch's exporter takes (tensors.quantized_input_parts). The bindings, and the graph
    inputs in flattened order."""
    graph = builder.graph
    bound: list[tuple[torch._C.Value, Any]] = []
    names_iter = iter(names)
    for ts_value, tensor in zip(captured.ts_inputs, captured.inputs):
        name = next(names_iter)
        if isinstance(tensor, list):
            if name in dynamic_axes:
                raise ValueError(_sequence_axes_message(name, ts_value, dynamic_axes[name]))
            sequence = _sequence_input(builder, name, ts_value, tensor)
            graph.inputs.append(sequence.sequence)
            bound.append((ts_value, sequence))
            continue
        if not tensor.is_quantized:
            value = _input_value(name, tensor, dynamic_axes.get(name, {}))
            if _is_optional_input(captured, ts_value, builder.options.opset, registry):
                value.type = ir.OptionalType(value.type)  # value.shape stays the element's
            graph.inputs.append(value)
            bound.append((ts_value, value))
            continue
        if builder.options.opset < 10:
            why = "a quantized tensor needs DequantizeLinear/QuantizeLinear (ONNX opset 10)"
            raise UnsupportedOperatorError(
                [UnsupportedOp("quantized input", 1, (f"input {name!r}",), (10,), why)], builder.options.opset
            )
        values = quantized_input_parts(tensor)  # checks per-tensor quantization
        value = _input_value(name, values[0], dynamic_axes.get(name, {}))
        scale = _input_value(next(names_iter), values[1], {})
        zero_point = _input_value(next(names_iter), values[2], {})
        graph.inputs.extend([value, scale, zero_point])
        bound.append((ts_value, quantization.quantized_input(GraphContext(builder, None), value, scale, zero_point)))
    return bound, list(graph.inputs)


def _sequence_axes_message(name: str, ts_value: torch._C.Value, axes: Mapping[int, str]) -> str:
    """Why ``dynamic_axes`` cannot name a sequence input: an ONNX sequence has no axes of its
    own to name (its length and its items' sizes are never fixed in the model), so the key
    would be accepted and mean nothing; a misplaced key usually means the user expected one
    input per item, which is what a trace gives."""
    return (
        f"dynamic_axes names input {name!r} (axes {dict(axes)}), but the scripted model's argument "
        f"{name!r} ({ts_value.type()}) is one ONNX sequence input: its length and its items are "
        "chosen at run time already, and a sequence has no axes to name. Remove "
        f"{name!r} from dynamic_axes (or trace the model, which makes each item its own input)"
    )


# TorchScript list item types -> the ONNX item dtype of the sequence input (a float is a double)
_SEQUENCE_ITEM_DTYPES = {
    torch._C.IntType: ir.DataType.INT64,
    torch._C.FloatType: ir.DataType.DOUBLE,
    torch._C.BoolType: ir.DataType.BOOL,
}


def _sequence_input(
    builder: GraphBuilder, name: str, ts_value: torch._C.Value, items: list[torch.Tensor]
) -> RuntimeList:
    """A scripted model's list argument as one ``seq(tensor)`` graph input, the interface torch's
    exporter gives it (capture.inputs.sequence_arguments): a list of numbers is a sequence of 0-d
    tensors, a list of tensors a sequence of tensors of the example items' dtype and rank (any
    shape and count at run time). Sequences exist from opset 11; below it the export is refused,
    naming what works, rather than writing the model torch's exporter writes there (a sequence
    input that no runtime loads at that opset)."""
    what = f"argument {name!r} ({ts_value.type()})"
    if builder.options.opset < runtime_list.SEQUENCE_OPSET:
        why = (
            f"a scripted model's {what} is one ONNX sequence input, as in torch's exporter, and "
            f"sequences need opset {runtime_list.SEQUENCE_OPSET}; export at opset "
            f"{runtime_list.SEQUENCE_OPSET} or higher, or trace the model (a trace makes each item its own input)"
        )
        raise UnsupportedOperatorError(
            [UnsupportedOp("list input", 1, (f"input {name!r}",), (runtime_list.SEQUENCE_OPSET,), why)],
            builder.options.opset,
        )
    element = ts_value.type().getElementType()
    dtype = next((d for kind, d in _SEQUENCE_ITEM_DTYPES.items() if isinstance(element, kind)), None)
    if dtype is None:  # a list of tensors: its items' dtype, which ONNX makes the same for all
        dtypes = {item.dtype for item in items}
        if len(dtypes) != 1:
            found = "no items" if not dtypes else f"items of dtypes {sorted(map(str, dtypes))}"
            raise ExporterError(
                f"input {name!r}: a scripted model's {what} is one ONNX sequence input, whose items share "
                f"one dtype known at export time; the example has {found}: pass at least one item, all of one dtype"
            )
        dtype = tensors.from_torch_dtype(dtypes.pop())
    value = ir.Value(name=name, type=ir.SequenceType(ir.TensorType(dtype)))
    sequence = RuntimeList(sequence=value, item_dtype=dtype)
    sequence.item_rank = items[0].dim() if items else 0
    return sequence


def _bind_weights(
    graph: ir.Graph, captured: Captured, export_params: bool, keep_initializers_as_inputs: bool
) -> list[tuple[torch._C.Value, Any]]:
    """Parameters and buffers the graph uses: zero-copy initializers named by their state_dict
    keys (or graph inputs with export_params=False). Packed quantized weights stay Python
    objects, which the quantized symbolics unpack."""
    bound: list[tuple[torch._C.Value, Any]] = []
    ts_params = captured.ts_inputs[len(captured.inputs) :]
    for ts_value, name, tensor in zip(ts_params, captured.param_names, captured.params):
        if not ts_value.uses():
            continue
        if not isinstance(tensor, torch.Tensor):
            bound.append((ts_value, tensor))
            continue
        detached = tensor.detach()
        value = ir.Value(
            name=name,
            shape=ir.Shape(detached.shape),
            type=ir.TensorType(tensors.from_torch_dtype(detached.dtype)),
            const_value=tensors.TorchTensor(detached, name=name) if export_params else None,
        )
        if export_params:
            graph.register_initializer(value)
            if keep_initializers_as_inputs:
                graph.inputs.append(value)
        else:
            graph.inputs.append(value)
        bound.append((ts_value, value))
    return bound


def _output_values(builder: GraphBuilder, results: Any, *, keep_none: bool = False) -> list[ir.Value]:
    """Flattened results as graph outputs: run-time lists become one sequence output, Python
    values constants, a quantized tensor three (its integer values, scale and zero point), and
    an input, initializer, constant or repeated value gets an Identity (an ONNX graph output
    must be produced by a node of its own)."""
    outputs: list[ir.Value] = []
    g = GraphContext(builder, None)
    leaves: list[Any] = []
    for obj in _flatten_outputs(results, keep_none=keep_none):
        if obj is None:
            # an empty optional of float, the element type torch's exporter gives it
            tensor_type = ir.TensorType(ir.DataType.FLOAT)
            attr = ir.AttrTypeProto("type", ir.TypeAndShape(tensor_type, None))
            (obj,) = builder.add_node("Optional", [], {"type": attr}, infer_types=False)
            obj.type = ir.OptionalType(tensor_type)
            leaves.append(obj)
            continue
        if isinstance(obj, RuntimeList):
            if obj.sequence is None and builder.options.opset < runtime_list.SEQUENCE_OPSET:
                why = (
                    "the model returns a list whose length is known only at run time (built by a loop "
                    "with a run-time trip count): it is one ONNX sequence output, and sequences need "
                    f"opset {runtime_list.SEQUENCE_OPSET}"
                )
                where = f"output {len(leaves)}"
                raise UnsupportedOperatorError(
                    [UnsupportedOp("list output", 1, (where,), (runtime_list.SEQUENCE_OPSET,), why)],
                    builder.options.opset,
                )
            obj = runtime_list.sequence_of(g, obj)
        elif not isinstance(obj, ir.Value):
            obj = builder.constant(obj)
        leaves.extend(quantization.output_parts(g, obj))  # a quantized tensor is three outputs
    for obj in leaves:
        if obj.is_graph_input() or obj.is_initializer() or obj in outputs or obj.const_value is not None:
            (obj,) = builder.add_node("Identity", [obj], {})
            obj.dtype, obj.shape = obj.producer().inputs[0].dtype, obj.producer().inputs[0].shape
        outputs.append(obj)
    if not outputs and builder.options.opset >= runtime_list.SEQUENCE_OPSET:
        # a model that returns only empty lists (decided at export time): ONNX needs a graph
        # output, so each empty list is an empty sequence (read back as an empty list)
        for _ in range(_count_empty_lists(results)):
            (empty,) = builder.add_node("SequenceEmpty", [], {"dtype": ir.DataType.FLOAT})
            empty.type = ir.SequenceType(ir.TensorType(ir.DataType.FLOAT))
            outputs.append(empty)
    return outputs


def _count_empty_lists(obj: Any) -> int:
    if isinstance(obj, dict):
        return sum(_count_empty_lists(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return 1 if isinstance(obj, list) and not obj else sum(_count_empty_lists(v) for v in obj)
    return 0


def _key_names(results: Any, count: int) -> list[str] | None:
    """Output names from the keys of a returned dict (``key``, or ``key_<i>`` for a key whose
    value is several outputs); None unless every output comes from the dict."""
    if isinstance(results, list) and len(results) == 1:  # the graph's single output
        results = results[0]
    if not isinstance(results, dict):
        return None
    names: list[str] = []
    for key, value in results.items():
        width = len(_flatten_outputs(value))
        names.extend([str(key)] if width == 1 else [f"{key}_{i}" for i in range(width)])
    return names if len(names) == count else None


def _name_outputs(graph: ir.Graph, outputs: list[ir.Value], output_names: Sequence[str] | None) -> None:
    """``output`` or ``output_<i>`` unless output_names says otherwise; never an input's name."""
    default_names = ["output"] if len(outputs) == 1 else [f"output_{i}" for i in range(len(outputs))]
    if output_names is not None:
        if len(output_names) > len(outputs):
            raise ValueError(
                f"output_names has {len(output_names)} names but the model has {len(outputs)} flattened outputs"
            )
        default_names = list(output_names) + default_names[len(output_names) :]
    taken = {v.name for v in graph.inputs} | set(graph.initializers)
    for value, name in zip(outputs, default_names):
        if name in taken:
            raise ValueError(f"output name {name!r} is already the name of an input or initializer")
        _claim_name(graph, value, name)
        graph.outputs.append(value)


def _rank_outputs(graph: ir.Graph, example_ranks: Sequence[int] | None) -> None:
    """A rank for each tensor output the graph leaves without one: ONNX requires one on
    every graph output (a file without it fails onnx's checker). It is known only at run time
    where the graph squeezes run-time sizes or builds a shape from a run-time list; the
    example run's rank is what torch's exporter declares then, with every dim unknown here.
    Only when the example's results flatten to the graph's outputs one for one (no run-time
    list or None among them)."""
    if example_ranks is None or len(example_ranks) != len(graph.outputs):
        return
    for value, rank in zip(graph.outputs, example_ranks):
        if isinstance(value.type, ir.TensorType) and value.shape is None:
            value.shape = ir.Shape([None] * rank)


def _mark_dynamic_outputs(graph: ir.Graph, dynamic_axes: dict[str, dict[int, str]]) -> None:
    """Named symbolic dims on outputs; a dynamic_axes key that names nothing is warned about
    and skipped, as torch's exporter does."""
    unknown = set(dynamic_axes) - {v.name for v in graph.inputs} - {v.name for v in graph.outputs}
    for key in sorted(unknown):
        warnings.warn(
            f"dynamic_axes key {key!r} is neither an input nor an output name, and is ignored; "
            f"inputs: {[v.name for v in graph.inputs]}, outputs: {[v.name for v in graph.outputs]}",
            UserWarning,
            stacklevel=2,
        )
    for value in graph.outputs:
        for axis, dim_name in dynamic_axes.get(value.name, {}).items():
            if value.shape is None:
                continue
            dims = list(value.shape)
            if not -len(dims) <= axis < len(dims):
                # torch's exporter names only the axes the output has; an axis beyond its rank
                # (a dynamic_axes dict shared by outputs of different ranks) is skipped, not fatal.
                warnings.warn(
                    f"dynamic_axes names axis {axis} of output {value.name!r}, which has rank "
                    f"{len(dims)}; the axis is ignored",
                    UserWarning,
                    stacklevel=2,
                )
                continue
            dims[axis] = ir.SymbolicDim(dim_name)
            value.shape = ir.Shape(dims)


def _claim_name(graph: ir.Graph, value: ir.Value, name: str) -> None:
    """Give ``value`` the output name, renaming an intermediate value that holds it."""
    for node in graph:
        for output in node.outputs:
            if output.name == name and output is not value:
                output.name = None
                output.name = f"{name}__renamed"
    value.name = name


def _add_opset_imports(model: ir.Model, custom_opsets: Mapping[str, int]) -> None:
    used = set()
    for node in ir.traversal.RecursiveGraphIterator(model.graph):
        used.add(node.domain)
    for domain in sorted(used - {""}):
        model.opset_imports.setdefault(domain, custom_opsets.get(domain, 1))
    for domain, version in custom_opsets.items():
        model.opset_imports.setdefault(domain, version)
    model.graph.opset_imports.update(model.opset_imports)
