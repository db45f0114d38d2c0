"""Unused-input removal: graph inputs nothing reads are dropped, as torch's exporter drops them,
except those a TorchScript node read to compute a value still in the graph (torch keeps
those); the positions of the flattened model inputs that remain are recorded for runners."""

from __future__ import annotations

import onnx_ir as ir

from exporter.assemble import FLAT_INPUTS_META
from exporter.input_parity import KEPT_INPUTS, READS_INPUTS

__all__ = ["remove_unused_inputs", "INPUT_POSITIONS_KEY"]

# metadata_props key, set when unused inputs were dropped: the positions, among the flattened
# model inputs (exporter.capture.inputs.flatten_inputs), of the graph inputs that remain, e.g. "0,2"
# (torch's remained_onnx_input_idx). Absent when every flattened input stays a graph input.
INPUT_POSITIONS_KEY = "exporter.input_positions"


def _inputs_read_by_live_values(graph: ir.Graph) -> set[ir.Value]:
    """Graph inputs that a TorchScript node read to compute a value still in the graph, though
    no ONNX node reads them (their shape folded away: ``x.view_as(y)``); torch's exporter keeps
    these, except where the value is computed from constants alone (``zeros_like(y)``), which
    torch folds too, unless ``y`` is 0-d. A kept input may itself name others (``x.view_as(y)``
    returning ``x`` unchanged)."""
    live: set[ir.Value] = set(graph.outputs)
    for node in ir.traversal.RecursiveGraphIterator(graph):
        live.update(v for v in node.inputs if v is not None)
        live.update(node.outputs)
    inputs = set(graph.inputs)
    kept: set[ir.Value] = set(graph.meta.get(KEPT_INPUTS, ())) & inputs
    known: dict[ir.Value, bool] = {}
    pending = [v for v in live if READS_INPUTS in v.meta]
    followed: set[ir.Value] = set()
    while pending:
        value = pending.pop()
        folds = _known_at_export(value, known)
        reads = list(value.meta.get(READS_INPUTS, ()))
        if value in followed and value.producer() is not None:  # a dead value reads its node's inputs
            reads.extend(v for v in value.producer().inputs if v is not None and not v.is_initializer())
        for read in reads:
            # torch never folds the shape of a 0-d tensor (Shape gives []), so what it computes
            # from one (zeros_like of a 0-d input) keeps that input
            if folds and not (read.shape is not None and len(read.shape) == 0):
                continue
            if read in inputs:
                if read not in kept:
                    kept.add(read)
                    pending.append(read)
            elif read not in live and read not in followed:
                # an argument our lowering left unread (the implied last split size): torch's
                # lowering reads it, so what it was computed from counts, unless torch folds it
                followed.add(read)
                pending.append(read)
    return kept


# Ops whose outputs differ from run to run although their inputs are constants.
_RANDOM_OPS = frozenset(
    {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"}
)


def _known_at_export(value: ir.Value, known: dict[ir.Value, bool]) -> bool:
    """Whether ``value`` is computed from constants alone (``ConstantOfShape`` of a folded
    shape: ``zeros_like(y)`` with static shapes), so torch's exporter would have folded it.
    Walks the producers with an explicit stack: a chain of thousands of nodes (a 300M-parameter
    mobile net) would overflow Python's recursion limit."""
    stack = [value]
    while stack:
        current = stack[-1]
        if current in known:
            stack.pop()
            continue
        node = current.producer()
        if current.const_value is not None or current.is_initializer():
            known[current] = True
        elif (
            node is None
            or node.graph is None  # removed as dead, its inputs cleared: what it read is unknown
            or node.op_type in _RANDOM_OPS
            or node.domain
            or any(node.attributes[a].type == ir.AttributeType.GRAPH for a in node.attributes)
        ):
            known[current] = False
        else:
            inputs = [v for v in node.inputs if v is not None]
            if any(known.get(v) is False for v in inputs):
                known[current] = False
            else:
                missing = [v for v in inputs if v not in known]
                if not missing:
                    known[current] = True
                else:
                    stack.extend(missing)
                    continue
        stack.pop()
    return known[value]


def remove_unused_inputs(model: ir.Model) -> list[int]:
    """Drop the graph inputs that no node (in any subgraph too) and no graph output uses, as
    torch's exporter does (weights fed as inputs too), and return the positions of the
    flattened model inputs that remain graph inputs. When some were dropped, the positions
    are also written to the model's metadata_props under INPUT_POSITIONS_KEY, so a runner
    given the file can pick the tensors to feed (exporter.verify does)."""
    graph = model.graph
    outputs = frozenset(graph.outputs)
    kept = _inputs_read_by_live_values(graph)
    for value in [v for v in graph.inputs if not v.uses() and v not in outputs and v not in kept]:
        graph.inputs.remove(value)
        if value.is_initializer() and value.name is not None:  # keep_initializers_as_inputs
            graph.initializers.pop(value.name, None)
    flat = model.meta.get(FLAT_INPUTS_META, ())
    remaining = {id(v) for v in graph.inputs}
    positions = [i for i, value in enumerate(flat) if id(value) in remaining]
    if len(positions) != len(flat):
        model.metadata_props[INPUT_POSITIONS_KEY] = ",".join(map(str, positions))
    return positions
