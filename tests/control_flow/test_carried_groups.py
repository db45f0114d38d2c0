"""Every kind of value the engine threads through one ONNX Loop or If at once (the groups of
exporter.control_flow.slots), exported and compared with eager torch on inputs that take
another trip count or branch.

A Loop with a run-time trip count carries its own value, a list of enclosing code changed in
the body (a sequence from opset 13; below it, a list read only by torch.cat is a concat
buffer), a dict item and a scan output. An If returns a tuple (one output per item), a list
both branches change and a dict item both write.
"""

from __future__ import annotations

import onnx_ir as ir
import pytest
import torch
from conftest import CONTROL_FLOW_SEQUENCE_OPSETS, assert_matches_torch, opsets_below

import exporter
from exporter.runtime_list import CONTROL_FLOW_SEQUENCE_OPSET

ROWS = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
# the sequence form and the newest opset; below the sequence opset, the first and the last


class EveryLoopGroup(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        total = torch.zeros_like(x[0])
        pieces: list[torch.Tensor] = []
        stats: dict[str, torch.Tensor] = {"peak": x[0]}
        sums: list[torch.Tensor] = []
        for i in range(x.size(0)):
            total = total + x[i]
            pieces.append(x[i, : i + 1] * 2)  # items of different sizes, joined by torch.cat
            stats["peak"] = torch.maximum(stats["peak"], x[i])
            sums.append(total)  # one item of one shape per iteration, stacked
        return total, torch.cat(pieces, 0), stats["peak"], torch.stack(sums)


def _loops(model: ir.Model) -> list[ir.Node]:
    return [node for node in model.graph if node.op_type == "Loop"]


def _export_every_loop_group(opset: int) -> ir.Model:
    return assert_matches_torch(
        torch.jit.script(EveryLoopGroup()),
        (torch.randn(4, 3),),
        opset=opset,
        other_inputs=[(torch.randn(1, 3),), (torch.randn(6, 3),)],
        **ROWS,
    )


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_one_loop_carries_a_value_a_list_a_dict_item_and_a_scan_output(opset: int) -> None:
    (loop,) = _loops(_export_every_loop_group(opset))
    # trip count, condition, then the total, the list (a sequence) and the dict item
    carried = loop.inputs[2:]
    assert len(carried) == 3
    assert isinstance(carried[1].type, ir.SequenceType)
    assert len(loop.outputs) == len(carried) + 1  # and the stacked sums, a scan output


@pytest.mark.parametrize("opset", opsets_below(CONTROL_FLOW_SEQUENCE_OPSET))
def test_below_the_sequence_opset_the_list_is_a_concat_buffer(opset: int) -> None:
    (loop,) = _loops(_export_every_loop_group(opset))
    # the total, the dict item, then the buffer and the sizes of its items
    carried = loop.inputs[2:]
    assert len(carried) == 4
    assert not any(isinstance(v.type, ir.SequenceType) for v in loop.outputs)
    assert len(loop.outputs) == len(carried) + 1


class EveryBranchGroup(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        seen: list[torch.Tensor] = [x[0]]
        stats: dict[str, torch.Tensor] = {"scale": x[0]}
        if bool(x.sum() > 0):
            pair = (x * 2, x.sum(0))
            seen.append(x[-1])
            stats["scale"] = x.amax(0)
        else:
            pair = (x - 1, x.mean(0))
            seen.append(x[-1] * 3)
            seen.append(-x[0])
            stats["scale"] = x.amin(0)
        return pair[0], pair[1], torch.stack(seen), stats["scale"]


def _export_every_branch_group(opset: int) -> ir.Model:
    positive = torch.tensor([[1.0, 2.0, 3.0], [4.0, -5.0, 6.0]])
    return assert_matches_torch(
        torch.jit.script(EveryBranchGroup()),
        (positive,),
        opset=opset,
        other_inputs=[(-positive,), (torch.randn(5, 3),)],
        **ROWS,
    )


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_one_if_returns_a_tuple_a_list_and_a_dict_item(opset: int) -> None:
    (branch,) = [node for node in _export_every_branch_group(opset).graph if node.op_type == "If"]
    # the tuple's two items, the list (a sequence), the dict item
    assert len(branch.outputs) == 4
    assert [isinstance(v.type, ir.SequenceType) for v in branch.outputs] == [False, False, True, False]


def test_a_list_changed_in_an_if_on_a_run_time_condition_needs_the_sequence_opset() -> None:
    with pytest.raises(exporter.SymbolicError, match=f"opset {CONTROL_FLOW_SEQUENCE_OPSET}"):
        _export_every_branch_group(CONTROL_FLOW_SEQUENCE_OPSET - 1)


class CatAfterPrefix(torch.nn.Module):
    """A list holding an item before the loop, appended once per iteration, read by torch.cat."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pieces: list[torch.Tensor] = [x[0]]
        for i in range(x.size(0)):
            pieces.append(x[i] * 2)
        return torch.cat(pieces, 0)


@pytest.mark.parametrize("opset", sorted({*opsets_below(CONTROL_FLOW_SEQUENCE_OPSET), *CONTROL_FLOW_SEQUENCE_OPSETS}))
def test_items_a_list_held_before_the_loop_stay_in_front(opset: int) -> None:
    """Below opset 13 such a list is a scan output with the earlier items stacked in front (a
    concat buffer, which starts empty, lost them)."""
    assert_matches_torch(
        torch.jit.script(CatAfterPrefix()),
        (torch.randn(4, 3),),
        opset=opset,
        other_inputs=[(torch.randn(1, 3),), (torch.randn(6, 3),)],
        **ROWS,
    )
