"""What capture hands to the later phases: the graph, its inputs and weights, and how it was made."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import torch

from exporter.ts_graph import source_location

if TYPE_CHECKING:
    from exporter.capture.call_sites import CallSites
    from exporter.capture.equal_weights import EqualWeights

__all__ = ["Captured", "ModelInput"]

# What a flattened model input is: a tensor, or the items of a scripted model's list argument,
# which is one ONNX sequence input (see sequence_arguments).
ModelInput = torch.Tensor | list[torch.Tensor]


@dataclasses.dataclass
class Captured:
    """A captured graph: leading inputs are the user's tensors, trailing ones the weights. An
    input that is a list (of 0-d tensors for a list of numbers) is a scripted model's list
    argument, one ONNX sequence input (see :func:`sequence_arguments`)."""

    graph: torch._C.Graph
    input_names: list[str]
    inputs: list[ModelInput]
    param_names: list[str]
    params: list[torch.Tensor]
    # how the graph was captured ("meta trace", "trace", "script") and why not on meta tensors
    method: str = "trace"
    reason: str = ""
    # the user's call sites of a lowered ScriptModule's nodes, worked out when an error needs them
    call_sites: CallSites | None = None
    # whether the model ran in training mode (dropout and batch norm export as in training)
    training: bool = False
    # the comparisons of the model's weights capture started, for cleanup's deduplication
    equal_weights: EqualWeights | None = None
    # a traced module's submodules by path ("" the module itself), whose calls the trace scopes
    # name (ts_graph.module_calls); None where the graph records no module calls (scripted models)
    modules: dict[str, torch.nn.Module] | None = None
    # the rank of each flattened result of the example run (scripted models): ONNX requires a
    # rank on every graph output, and where the graph leaves one unknown (squeeze of run-time
    # sizes) the example's is the one torch's exporter declares too
    example_output_ranks: list[int] | None = None

    def locate(self, node: torch._C.Node) -> str:
        """Where ``node`` comes from in the user's code, for error messages (source_location,
        with the call sites that lowering inlined)."""
        if self.call_sites is not None:
            return self.call_sites.locate(node, self.graph)
        return source_location(node)

    @property
    def ts_inputs(self) -> list[torch._C.Value]:
        return list(self.graph.inputs())
