"""Pre-passes over the TorchScript graph capture hands on, in one order: :data:`PIPELINE`.

Each pass takes a graph and changes it in place, and has its own tests on small graphs. The
rewrites without which there is no graph yet (inlining calls, lowering a ScriptModule, resolving
attribute writes) belong to capture (:mod:`exporter.capture.lowering`); everything after them
is here, so the order of the passes is decided in this one place. Each pass is handed what is
fixed at export about the graph's inputs (:class:`ExportFacts`: the example inputs' dtypes,
devices, ranks and sizes not named in ``dynamic_axes``); the specialization reads them.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from exporter.passes.dead_code import remove_dead_code
from exporter.passes.export_facts import ExportFacts
from exporter.passes.remove_inplace import check_no_inplace, remove_inplace
from exporter.passes.scalar_type_analysis import scalar_type_analysis
from exporter.passes.specialize import specialize
from exporter.ts_graph import function_bodies

__all__ = [
    "PIPELINE",
    "run_all",
    "ExportFacts",
    "remove_dead_code",
    "remove_inplace",
    "check_no_inplace",
    "specialize",
    "scalar_type_analysis",
]

# A pass: a graph and what is fixed at export about its inputs in, the graph changed in place.
Pass = Callable[[torch._C.Graph, ExportFacts], None]


def _remove_dead_code(graph: torch._C.Graph, facts: ExportFacts) -> None:
    remove_dead_code(graph)


def _remove_inplace(graph: torch._C.Graph, facts: ExportFacts) -> None:
    remove_inplace(graph)


def _scalar_type_analysis(graph: torch._C.Graph, facts: ExportFacts) -> None:
    scalar_type_analysis(graph)


# The order the passes run in: dead code first (the later passes need not look at it), then
# in-place ops become data flow (so a value's facts are not changed behind the specialization's
# back), then the graph is specialized to what is fixed at export (dead branches go, loops whose
# count depends only on such facts unroll), then implicit scalars get the dtypes torch's
# promotion gives them (which reads the functional ops remove_inplace wrote and the constants
# specialization left). Errors and warnings name nodes as emission does, with the locator
# capture registered for the graph (ts_graph.locator).
PIPELINE: tuple[Pass, ...] = (_remove_dead_code, _remove_inplace, specialize, _scalar_type_analysis)


def run_all(graph: torch._C.Graph, facts: ExportFacts | None = None) -> None:
    """Every pass of :data:`PIPELINE` over ``graph``, in order, given ``facts`` (by default
    none beyond the graph's types); then over the body of each custom autograd Function call in
    it (exporter.capture.autograd), which the emitter exports in place of a call that has no
    symbolic: a body is a graph like any other, whose inputs are values of the graph calling it
    (nothing is known of them beyond their types). The caller records what the forward wrote
    into them itself (the trace keeps such writes in the caller), so remove_inplace warns about
    writes into the model's inputs only for the model's graph."""
    facts = facts if facts is not None else ExportFacts.unknown()
    for run in PIPELINE:
        run(graph, facts)
    for body in function_bodies(graph):
        for run in PIPELINE:
            if run is _remove_inplace:
                remove_inplace(body, model_inputs=False)
            else:
                run(body, ExportFacts.unknown())
