"""What is fixed at export about a graph's inputs, beyond their TorchScript types: the facts
the specialization pass starts from (export_values.py).

A scripted graph's input types do not say everything: a ``Union[Tensor, SparseTensor]``
parameter given a tensor is typed as the union, a dynamic axis is typed with the example's
size. These facts come from the example inputs and weights themselves and from
``dynamic_axes``, and are made once per export (api.export) and handed to the passes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence

import torch

from exporter.passes.export_values import UNKNOWN, Fact, MaybeNone, tensor_facts

__all__ = ["ExportFacts"]


@dataclasses.dataclass(frozen=True)
class ExportFacts:
    """One fact per graph input, in order (the user's inputs, then the weights); None where
    nothing is known beyond the graph's types. :meth:`unknown` knows nothing: every size is
    treated as chosen at run time."""

    inputs: tuple[Fact, ...] | None = None

    @classmethod
    def unknown(cls) -> ExportFacts:
        return cls(None)

    @classmethod
    def of_inputs(
        cls,
        inputs: Sequence[object],
        weights: Sequence[object],
        dynamic_axes: Mapping[int, Collection[int]],
        run_time_optionals: Collection[int] = (),
    ) -> ExportFacts:
        """The facts of example ``inputs`` (by position among the graph's inputs: tensors, or
        the items of a sequence input), whose axes ``dynamic_axes`` (non-negative, by input
        position) are chosen at run time, and of the ``weights`` after them, whose sizes are
        all fixed. An input in ``run_time_optionals`` is an ``Optional`` whose None-ness is
        decided at run time (an ONNX optional input). Quantized tensors and packed weights
        are left unknown."""
        facts: list[Fact] = []
        for index, example in enumerate(inputs):
            fact = _example_facts(example, frozenset(dynamic_axes.get(index, ())), requires_grad=True)
            facts.append(MaybeNone(fact) if index in run_time_optionals else fact)
        facts.extend(_example_facts(weight, frozenset(), requires_grad=False) for weight in weights)
        return cls(tuple(facts))


def _example_facts(example: object, dynamic: frozenset[int], *, requires_grad: bool) -> Fact:
    if not isinstance(example, torch.Tensor) or example.is_quantized or example.layout != torch.strided:
        return UNKNOWN
    # a weight's requires_grad is the module's business, not fixed by the export: left open
    return tensor_facts(example, dynamic, example.requires_grad if requires_grad else None)
