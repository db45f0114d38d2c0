"""The op-table record shared by every table, and the opsets each case runs at.

A case runs at every opset where a symbolic for one of the ops in its graph is registered (where
that op's lowering changes), at 9 (the base) and at the newest opset, from its ``min_opset`` on.
The ops come from the case's own TorchScript graph, captured once at collection time; the opsets
from the registry, so a new ``symbolic_opsetN`` registration makes the tables run at N with no
list to edit. Helpers in ``exporter.symbolic_helper`` also branch where ONNX changed a signature
(Slice 10, Clip/Pad 11, Unsqueeze/Squeeze/ReduceSum axes 13, other Reduce* 18): the tables'
``test_helper_opsets`` run a representative set of cases at HELPER_OPSETS for those branches.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest
import torch
from conftest import HELPER_OPSETS, MIN_OPSET, NEWEST, Wrap, assert_matches_torch, export_to_bytes, run_model

from exporter.registry import REGISTRY
from exporter.symbolic_helper import SIGNATURE_HELPERS

Inputs = Callable[[], tuple[Any, ...]]


@dataclasses.dataclass(frozen=True, eq=False)
class Case:
    """One row of an op table: ``fn`` applied to ``inputs()``, exported and compared with torch."""

    name: str
    fn: Callable[..., object]
    inputs: Inputs
    min_opset: int = 9
    atol: float = 1e-5
    rtol: float = 1e-4
    dynamic: dict[str, Any] | None = None  # dynamic_axes, with inputs named x0, x1, ...
    script: bool = False  # fn is already a scripted function: export it instead of tracing
    factory: bool = False  # fn() builds the module to export (fresh parameters per run)
    # opset -> why onnxruntime runs this model wrongly: onnx's reference evaluator checks it there
    reference_at: dict[int, str] | None = None
    others: Callable[[], list[tuple[Any, ...]]] | None = None  # more inputs (other sizes)
    marks: tuple[pytest.MarkDecorator, ...] = ()


def model_of(case: Case) -> Any:
    if case.script:
        return case.fn
    if case.factory:
        return case.fn()
    return Wrap(case.fn)


def _graph_kinds(graph: torch.Graph) -> set[str]:
    kinds: set[str] = set()
    for node in graph.nodes():
        kinds.add(node.kind())
        for block in node.blocks():
            kinds |= _block_kinds(block)
    return kinds


def _block_kinds(block: torch.Block) -> set[str]:
    kinds: set[str] = set()
    for node in block.nodes():
        kinds.add(node.kind())
        for inner in node.blocks():
            kinds |= _block_kinds(inner)
    return kinds


def _module_graph(module: Any, inputs: tuple[Any, ...]) -> torch.Graph:
    if isinstance(module, torch.jit.ScriptFunction):
        return module.graph
    if isinstance(module, torch.jit.ScriptModule):
        return module.inlined_graph
    with torch.no_grad():
        traced = torch.jit.trace(module, inputs, check_trace=False, strict=False)
    return traced.inlined_graph


def graph_kinds(fn_or_module: Any, inputs: tuple[Any, ...]) -> set[str]:
    """Node kinds of a traced (or scripted) graph, blocks included, script calls inlined."""
    torch.manual_seed(0)
    kinds = _graph_kinds(_module_graph(fn_or_module, inputs))
    # in-place forms are lowered by their functional symbolic
    return kinds | {k[:-1] for k in kinds if k.endswith("_") and not k.endswith("__")}


def opsets_for_kinds(kinds: Iterable[str], min_opset: int = 9) -> list[int]:
    opsets = {MIN_OPSET, NEWEST}
    names = REGISTRY.names()
    for kind in kinds:
        # the op's own registrations and its overloads' (aten::lstm registers per overload)
        for name in names:
            if name == kind or name.startswith(f"{kind}."):
                opsets.update(REGISTRY.builtin_opsets(name))
    return sorted(o for o in opsets if o >= min_opset and o <= NEWEST)


def lowering_opsets(
    *kinds: str,
    helpers: bool = False,
    before_changes: bool = False,
    min_opset: int = MIN_OPSET,
    max_opset: int = NEWEST,
) -> list[int]:
    """The opsets of a test of ``kinds``' lowering that is no table case: 9, the newest and
    every opset where one of them has a registered symbolic, from ``min_opset`` to ``max_opset``; with
    ``helpers``, HELPER_OPSETS too, where the signature helpers a lowering uses change what
    they emit; with ``before_changes``, the opset before each registered change too."""
    opsets = set(opsets_for_kinds(kinds, min_opset))
    if helpers:
        opsets.update(HELPER_OPSETS)
    if before_changes:
        opsets.update(opset - 1 for kind in kinds for opset in REGISTRY.builtin_opsets(kind) if opset > MIN_OPSET)
    return sorted(o for o in opsets if min_opset <= o <= max_opset)


def last_before_change(kind: str) -> int:
    """The last opset before ``kind``'s lowering first changes (its first registration after 9)."""
    return [opset for opset in REGISTRY.builtin_opsets(kind) if opset > MIN_OPSET][0] - 1


def lowering_opsets_below(kind: str) -> list[int]:
    """Every opset from ``kind``'s first registered one below its first change: where the
    lowering the change replaces runs (or the export is refused naming the change)."""
    first, change = REGISTRY.builtin_opsets(kind)[:2]
    return list(range(first, change))


def signature_opsets(*helpers: str) -> list[int]:
    """The opsets ``exporter.symbolic_helper.SIGNATURE_HELPERS`` says the named helpers change at."""
    return sorted({int(n) for name in helpers for n in re.findall(r"\b(\d+)\b", SIGNATURE_HELPERS[name])})


_OPSETS_CACHE: dict[int, tuple[int, ...]] = {}


def _case_opsets(case: Case) -> tuple[int, ...]:
    if id(case) in _OPSETS_CACHE:
        return _OPSETS_CACHE[id(case)]
    torch.manual_seed(0)
    inputs = case.inputs()
    try:
        with warnings.catch_warnings():  # the case's own warnings show when it runs, not here
            warnings.simplefilter("ignore")
            kinds = graph_kinds(model_of(case), inputs)
    except Exception:  # noqa: BLE001 - a case torch cannot capture fails in its test, not here
        kinds = set()
    _OPSETS_CACHE[id(case)] = tuple(opsets_for_kinds(kinds, case.min_opset))
    return _OPSETS_CACHE[id(case)]


def case_opsets(case: Case) -> tuple[int, ...]:
    """9, NEWEST and every opset where an op of the case's graph has a registered symbolic."""
    return _case_opsets(case)


def op_params(cases: Iterable[Case]) -> list[Any]:
    """(case, opset) parameters: each case at the opsets where its lowering changes."""
    return [
        pytest.param(case, opset, id=f"{case.name}-{opset}", marks=case.marks)
        for case in cases
        for opset in case_opsets(case)
    ]


def helper_params(cases: Iterable[Case], names: Iterable[str]) -> list[Any]:
    """(case, opset) parameters for the named cases at HELPER_OPSETS (the helpers' branches)."""
    by_name = {c.name: c for c in cases}
    return [
        pytest.param(by_name[name], opset, id=f"{name}-{opset}", marks=by_name[name].marks)
        for name in names
        for opset in HELPER_OPSETS
        if opset >= by_name[name].min_opset
    ]


def _export_kwargs(case: Case, n_inputs: int) -> dict[str, Any]:
    if case.dynamic is None:
        return {}
    return {"input_names": [f"x{i}" for i in range(n_inputs)], "dynamic_axes": case.dynamic}


def run_case(case: Case, opset: int) -> None:
    """Export the case at ``opset``, run it in onnxruntime, compare with eager torch."""
    if opset < case.min_opset:
        pytest.skip(f"{case.name} needs opset {case.min_opset}")
    inputs = case.inputs()
    others = case.others() if case.others is not None else []
    assert_matches_torch(
        model_of(case),
        inputs,
        opset=opset,
        atol=case.atol,
        rtol=case.rtol,
        other_inputs=others,
        reference_evaluator=bool(case.reference_at and opset in case.reference_at),
        **_export_kwargs(case, len(inputs)),
    )


def family_of(kind: str) -> str | None:
    """The exporter.opset9 module registering ``kind`` at opset 9 (None if none does)."""
    symbolic = REGISTRY.lookup(kind, 9)
    if symbolic is None:
        return None
    module = getattr(symbolic.raw, "__module__", "") or ""
    return module.rsplit(".", 1)[-1] if module.startswith("exporter.opset9.") else None


def one_torch_thread() -> Iterator[None]:
    """For a module-scoped autouse fixture: small eager kernels run several times faster
    single-threaded on a loaded machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# --- input builders and helpers shared by several op tables ---------------------------------
# Each builder returns a function making a fresh tuple of inputs, so a case draws its inputs
# under the seed the test sets.


def pair(
    shape_a: tuple[int, ...], shape_b: tuple[int, ...], dtype: torch.dtype = torch.float32
) -> Callable[[], tuple[torch.Tensor, ...]]:
    def make() -> tuple[torch.Tensor, ...]:
        if dtype.is_floating_point:
            return torch.randn(*shape_a).to(dtype), torch.randn(*shape_b).to(dtype)
        a = torch.randint(-20, 20, shape_a, dtype=dtype)
        b = torch.randint(1, 7, shape_b, dtype=dtype) * torch.where(torch.rand(shape_b) > 0.5, 1, -1).to(dtype)
        return a, b

    return make


def positive(*shape: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.rand(*shape) + 0.1,)


NAN, INF = float("nan"), float("inf")


def f32(*shape: int, scale: float = 1.0, dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: ((torch.randn(*shape) * scale).to(dtype),)


def f32s(count: int, *shape: int, dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: tuple(torch.randn(*shape).to(dtype) for _ in range(count))


def ints(
    *shape: int, low: int = -10, high: int = 10, dtype: torch.dtype = torch.int64
) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randint(low, high, shape, dtype=dtype),)


def int_pair(shape: tuple[int, ...], dtype: torch.dtype, low: int, high: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randint(low, high, shape, dtype=dtype), torch.randint(low, high, shape, dtype=dtype))


def bools(count: int = 2, n: int = 8) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: tuple(torch.rand(n) > 0.5 for _ in range(count))


def const(*values: list[float], dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: tuple(torch.tensor(v, dtype=dtype) for v in values)


def typed(*shape: int, dtype: torch.dtype) -> Callable[[], tuple[torch.Tensor, ...]]:
    def make() -> tuple[torch.Tensor, ...]:
        if dtype == torch.bool:
            return (torch.rand(*shape) > 0.5,)
        if dtype.is_floating_point:
            return (torch.randn(*shape).to(dtype),)
        return (torch.randint(-50, 50, shape, dtype=dtype),)

    return make


def arange(*shape: int, dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    """Distinct values, so any misplaced element shows."""
    import math

    return lambda: (torch.arange(math.prod(shape)).reshape(shape).to(dtype),)


def emit_ir(src: str, inputs: Sequence[torch.Tensor], opset: int) -> list[np.ndarray]:
    """Emit a parsed TorchScript graph (torch cannot run or shape-propagate some prim ops,
    so it cannot go through export) and run it in onnxruntime."""
    import onnx_ir as ir

    from exporter import tensors
    from exporter.emitter import emit_graph
    from exporter.graph_context import ExportOptions, GraphBuilder
    from exporter.registry import REGISTRY

    ts_graph = torch._C.parse_ir(src)
    graph = ir.Graph([], [], nodes=[], opset_imports={"": opset}, name="g")
    builder = GraphBuilder(graph, ExportOptions(opset=opset))
    bound = []
    for i, (ts_value, tensor) in enumerate(zip(ts_graph.inputs(), inputs)):
        value = ir.Value(
            name=f"x{i}", shape=ir.Shape(tensor.shape), type=ir.TensorType(tensors.from_torch_dtype(tensor.dtype))
        )
        graph.inputs.append(value)
        bound.append((ts_value, value))
    results = emit_graph(ts_graph, builder, REGISTRY, bound, static_shapes=True)
    flat: list[Any] = []
    for r in results:
        flat.extend(r if isinstance(r, (list, tuple)) else [r])
    for obj in flat:
        value = obj if isinstance(obj, ir.Value) else builder.constant(obj)
        if value.is_graph_input() or value.const_value is not None or value in graph.outputs:
            (value,) = builder.add_node("Identity", [value], {})
        value.name = f"out{len(graph.outputs)}"
        graph.outputs.append(value)
    return run_model(ir.Model(graph, ir_version=8), list(inputs))


def with_index(data: Callable[[], torch.Tensor], index: Callable[[], torch.Tensor]) -> Inputs:
    return lambda: (data(), index())


def distinct(*shape: int) -> torch.Tensor:
    """Floats without ties (sorting cases)."""
    n = 1
    for s in shape:
        n *= s
    return (torch.randperm(n).float() - n / 2).reshape(shape) / 3


def ties() -> tuple[torch.Tensor, ...]:
    """Repeated maxima and minima in every row: the first index must win."""
    return (torch.tensor([[1.0, 3.0, 3.0, -2.0, -2.0], [5.0, 5.0, 0.0, 5.0, 0.0], [-1.0, -1.0, -1.0, -1.0, -1.0]]),)


def classes(n: int, c: int, *extra: int, ignore: int | None = None) -> Callable[[], tuple[torch.Tensor, ...]]:
    def make() -> tuple[torch.Tensor, ...]:
        target = torch.randint(0, c, (n, *extra))
        if ignore is not None:
            target.view(-1)[::3] = ignore
        return torch.randn(n, c, *extra), target

    return make


def rand(*shapes: tuple[int, ...], dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: tuple(torch.randn(s).to(dtype) for s in shapes)


HALF = dict(atol=2e-3, rtol=2e-3)


def op_types(model: torch.nn.Module, args: tuple[torch.Tensor, ...], opset: int) -> set[str]:
    _, onnx_model = export_to_bytes(model, args, opset_version=opset)
    return {node.op_type for node in onnx_model.graph}


def traced_and_scripted(name: str, fn: Callable[..., object], inputs: Inputs, **options: Any) -> list[Case]:
    """Two cases of one function, traced and scripted: ``fn`` is a module-level function with
    annotations (TorchScript compiles its source), and the two graphs can record an op
    differently (scripted code keeps the overload the call names and its Python defaults)."""
    scripted = torch.jit.script(fn)
    return [Case(name, fn, inputs, **options), Case(f"{name}_scripted", scripted, inputs, script=True, **options)]
