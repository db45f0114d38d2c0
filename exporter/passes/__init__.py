"""Pre-passes over the TorchScript graph capture hands on, in one order: :data:`PIPELINE`.

Each pass takes a graph and changes it in place, and has its own tests on small graphs. The
rewrites without which there is no graph yet (inlining calls, lowering a ScriptModule, resolving
attribute writes) belong to capture (:mod:`exporter.capture.lowering`); everything after them
is here, so the order of the passes is decided in this one place.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from exporter.passes.dead_code import remove_dead_code
from exporter.passes.remove_inplace import check_no_inplace, remove_inplace
from exporter.passes.scalar_type_analysis import scalar_type_analysis
from exporter.ts_graph import function_bodies

__all__ = ["PIPELINE", "run_all", "remove_dead_code", "remove_inplace", "check_no_inplace", "scalar_type_analysis"]

# A pass: a graph in, changed in place.
Pass = Callable[[torch._C.Graph], None]

# The order the passes run in: dead code first (the later passes need not look at it), then
# in-place ops become data flow, then implicit scalars get the dtypes torch's promotion gives
# them (which reads the functional ops remove_inplace wrote). Errors and warnings name nodes as
# emission does, with the locator capture registered for the graph (ts_graph.locator).
PIPELINE: tuple[Pass, ...] = (remove_dead_code, remove_inplace, scalar_type_analysis)


def run_all(graph: torch._C.Graph) -> None:
    """Every pass of :data:`PIPELINE` over ``graph``, in order; then over the body of each custom
    autograd Function call in it (exporter.capture.autograd), which the emitter exports in place
    of a call that has no symbolic: a body is a graph like any other. Its inputs are values of the
    graph calling it, which records what the forward wrote into them itself (the trace keeps
    such writes in the caller), so remove_inplace warns about writes into the model's inputs
    only for the model's graph."""
    for run in PIPELINE:
        run(graph)
    for body in function_bodies(graph):
        for run in PIPELINE:
            if run is remove_inplace:
                remove_inplace(body, model_inputs=False)
            else:
                run(body)
