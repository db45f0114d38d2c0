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
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import pytest
import torch
from conftest import NEWEST, Wrap, assert_matches_torch

from exporter.registry import REGISTRY

Inputs = Callable[[], tuple[Any, ...]]

# Where a helper of exporter.symbolic_helper changes the ONNX signature it emits.
HELPER_OPSETS = (10, 11, 13, 18)


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
    opsets = {9, NEWEST}
    names = set(REGISTRY.names())
    for kind in kinds:
        if kind in names:
            opsets.update(REGISTRY.builtin_opsets(kind))
    return sorted(o for o in opsets if o >= min_opset and o <= NEWEST)


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
