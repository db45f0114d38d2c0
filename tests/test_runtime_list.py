"""Lists whose length is only known at run time: scripted loops with a run-time trip count or
branches on run-time conditions that append to lists.

Each model is exported with a dynamic leading axis (so trip counts are run-time values), then
compared with eager torch in onnxruntime on inputs of other sizes, which run the loop another
number of times, and on inputs that take other branches.
"""

from __future__ import annotations

import io

import onnx
import pytest
import torch
from conftest import (
    CONTROL_FLOW_SEQUENCE_OPSET,
    CONTROL_FLOW_SEQUENCE_OPSETS,
    FEATURE_OPSETS,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    assert_matches_torch_from,
    assert_outputs_match,
    dynamic_inputs,
    opsets_below,
    run_model,
)

import exporter


def _export(model: torch.nn.Module, example: torch.Tensor, opset: int) -> bytes:
    buffer = io.BytesIO()
    exporter.export(model, (example,), buffer, opset_version=opset, dynamic_axes={"x": {0: "n"}})
    return buffer.getvalue()


def _check(model: torch.nn.Module, inputs: list[torch.Tensor], opset: int) -> onnx.ModelProto:
    data = _export(model, inputs[0], opset)
    for x in inputs:
        with torch.no_grad():
            expected = model(x)
        assert_outputs_match(run_model(data, [x]), expected)
    return onnx.load_from_string(data)


def _op_types(model: onnx.ModelProto) -> set[str]:
    found = set()

    def walk(graph: onnx.GraphProto) -> None:
        for node in graph.node:
            found.add(node.op_type)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g)

    walk(model.graph)
    return found


def _rows(*counts: int) -> list[torch.Tensor]:
    torch.manual_seed(0)
    return [torch.randn(n, 3) for n in counts]


# -- one append per iteration to an empty list: a Loop scan output, from opset 9 ------------


class AppendThenStack(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        parts: list[torch.Tensor] = []
        for i in range(x.size(0)):
            parts.append(x[i] * i)
        return torch.stack(parts, 1) + len(parts)


class AppendThenCat(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        parts: list[torch.Tensor] = []
        for i in range(x.size(0)):
            parts.append(x[i].unsqueeze(0) * 2 + i)
        return torch.cat(parts, 1)


class AppendThenIndex(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        parts: list[torch.Tensor] = []
        for i in range(x.size(0)):
            parts.append(x[i].sum() * i)
        total = torch.zeros(())
        for p in parts:
            total = total + p
        return parts[-1] + parts[0] + total


class WhileAppend(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        steps: list[torch.Tensor] = []
        y = x
        while bool(y.abs().sum() < 100.0):
            steps.append(y)
            y = y * 2
        return torch.stack(steps).sum(0)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
@pytest.mark.parametrize("cls", [AppendThenStack, AppendThenCat, AppendThenIndex])
def test_append_once_per_iteration(cls: type, opset: int) -> None:
    model = _check(torch.jit.script(cls()), _rows(4, 2, 7), opset)
    assert "Loop" in _op_types(model)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_stacked_loop_uses_a_scan_output_not_sequences(opset: int) -> None:
    model = _check(torch.jit.script(AppendThenStack()), _rows(4, 1), opset)
    assert not {op for op in _op_types(model) if op.startswith(("Sequence", "ConcatFromSequence"))}


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_while_loop_appending(opset: int) -> None:
    model = torch.jit.script(WhileAppend())
    inputs = [torch.ones(2, 3), torch.full((2, 3), 0.1), torch.full((2, 3), 7.0)]
    # every input has 2 rows here: the trip count depends on the values, not the shape
    _check(model, inputs, opset)


# -- anything else needs a loop-carried sequence: opset 13 ----------------------------------


class ConditionalAppend(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        kept: list[torch.Tensor] = [torch.zeros(3)]
        for i in range(x.size(0)):
            if bool(x[i].sum() > 0):
                kept.append(x[i])
        return torch.stack(kept).sum(0) + len(kept)


class ReadsWhileBuilding(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values: list[torch.Tensor] = [x[0]]
        for i in range(1, x.size(0)):
            values.append(values[-1] * 0.5 + x[i])
        return torch.cat(values)


class VariableLengthItems(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pieces: list[torch.Tensor] = []
        for i in range(x.size(0)):
            pieces.append(x[: i + 1].sum(1))
        return torch.cat(pieces)


class EditsRuntimeList(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        items: list[torch.Tensor] = []
        for i in range(x.size(0)):
            items.append(x[i])
            items.insert(0, x[i] * -1)
        last = items.pop()
        items[-1] = last * 10
        items[0] = items[0] + 1
        del items[1]
        return torch.stack(items).sum(0) + len(items)


class AppendInRuntimeBranch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        parts = [x]
        if bool(x.sum() > 0):
            parts.append(x * 2)
        else:
            parts.append(x - 1)
            parts.append(x * 3)
        return torch.stack(parts).sum(0) * len(parts)


class ReturnsRuntimeList(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        out: list[torch.Tensor] = []
        for i in range(x.size(0)):
            out.append(x[i] + i)
        return out


class IntList(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        sizes: list[int] = []
        for i in range(x.size(0)):
            sizes.append(i * 2)
        return x.sum() + torch.zeros(sizes[-1] + 1).sum() + len(sizes)


SEQUENCE_CASES = {
    "conditional_append": (ConditionalAppend, _rows(4, 2, 6)),
    "reads_while_building": (ReadsWhileBuilding, _rows(4, 1, 5)),
    "variable_length_items": (VariableLengthItems, _rows(4, 2, 6)),
    "edits": (EditsRuntimeList, _rows(4, 2, 5)),
    "returns_list": (ReturnsRuntimeList, _rows(4, 2, 6)),
    "int_list": (IntList, _rows(4, 2, 6)),
}


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
@pytest.mark.parametrize("name", sorted(SEQUENCE_CASES))
def test_loop_carried_sequences(name: str, opset: int) -> None:
    cls, inputs = SEQUENCE_CASES[name]
    model = _check(torch.jit.script(cls()), inputs, opset)
    assert "Loop" in _op_types(model)


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_append_in_branch_on_a_run_time_condition(opset: int) -> None:
    model = torch.jit.script(AppendInRuntimeBranch())
    onnx_model = _check(model, [torch.ones(2, 3), -torch.ones(2, 3)], opset)
    assert "If" in _op_types(onnx_model)


@pytest.mark.parametrize("opset", opsets_below(CONTROL_FLOW_SEQUENCE_OPSET))
@pytest.mark.parametrize("cls", [ConditionalAppend, ReadsWhileBuilding])
def test_loop_carried_list_below_opset_13_names_the_opset_and_line(cls: type, opset: int) -> None:
    with pytest.raises(
        exporter.ExporterError, match=r"opset 13.*test_runtime_list.py|test_runtime_list.py.*opset 13"
    ) as info:
        _export(torch.jit.script(cls()), torch.randn(4, 3), opset)
    assert "prim::Loop" in str(info.value)


def test_branch_changing_a_list_below_opset_13_names_the_opset() -> None:
    with pytest.raises(exporter.ExporterError, match="opset 13"):
        _export(torch.jit.script(AppendInRuntimeBranch()), torch.randn(4, 3), 12)


class GrowingItemsOnNegativeDim(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pieces: list[torch.Tensor] = []
        for i in range(x.size(0)):
            pieces.append(x[: i + 1].t().unsqueeze(0) * i)  # (1, 3, i + 1)
        return torch.cat(pieces, -1) + 1


class GrowingItemsReadTwice(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        pieces: list[torch.Tensor] = []
        for i in range(x.size(0)):
            pieces.append(x[i:] * i)
        return torch.cat(pieces), torch.cat(pieces, 0).sum(0)


@pytest.mark.parametrize("opset", sorted({*opsets_below(CONTROL_FLOW_SEQUENCE_OPSET), CONTROL_FLOW_SEQUENCE_OPSET}))
@pytest.mark.parametrize("cls", [VariableLengthItems, GrowingItemsOnNegativeDim, GrowingItemsReadTwice])
def test_items_of_different_sizes_read_only_by_cat(cls: type, opset: int) -> None:
    """A scan output stacks items of one shape, so below opset 13 (no loop-carried sequences) a
    list only torch.cat reads is concatenated in the loop, into a loop-carried buffer whose
    size changes every iteration; from 13 it is a sequence."""
    model = _check(torch.jit.script(cls()), _rows(4, 2, 6), opset)
    ops = _op_types(model)
    assert "Loop" in ops
    assert ("ConcatFromSequence" in ops) == (opset >= 13)


class LocalListInBody(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        total = torch.zeros(3)
        for i in range(x.size(0)):
            pair: list[torch.Tensor] = []
            pair.append(x[i])
            pair.append(x[i] * i)
            total = total + torch.stack(pair).sum(0)
        return total


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_list_local_to_the_body_stays_an_export_time_list(opset: int) -> None:
    model = _check(torch.jit.script(LocalListInBody()), _rows(4, 2, 5), opset)
    assert not {op for op in _op_types(model) if "Sequence" in op}


def test_static_trip_count_still_unrolls_into_plain_ops() -> None:
    """With static shapes the trip count is known: the list stays a Python list."""
    buffer = io.BytesIO()
    x = torch.randn(3, 3)
    exporter.export(torch.jit.script(AppendThenStack()), (x,), buffer, opset_version=9)
    onnx_model = onnx.load_from_string(buffer.getvalue())
    assert "Loop" not in _op_types(onnx_model)
    assert_outputs_match(run_model(buffer.getvalue(), [x]), torch.jit.script(AppendThenStack())(x))


def test_verify_compares_a_returned_run_time_list() -> None:
    model = torch.jit.script(ReturnsRuntimeList())
    buffer = io.BytesIO()
    exporter.export(model, (torch.randn(3, 3),), buffer, opset_version=17, dynamic_axes={"x": {0: "n"}})
    report = exporter.verify(model, (torch.randn(3, 3),), buffer.getvalue(), inputs=[(torch.randn(5, 3),)])
    assert report.passed
    assert len(report.outputs) == 3 + 5


# -- reverse() of tensors, lists of lists -------------------------------------------------------


class ReverseTensors(torch.nn.Module):
    """reverse() of a list of tensors whose shapes differ per item: a Loop over the sequence."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        rows: list[torch.Tensor] = []
        for i in range(x.size(0)):
            if bool(x[i, 0] > 0):
                rows.append(x[: i + 1].sum(0, keepdim=True))
            else:
                rows.append(x[i : i + 1] * 2)
            rows.append(x[: i + 1] - 1)
        rows.reverse()
        return torch.cat(rows), rows[0], rows[-1]


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_reverse_a_list_of_tensors(opset: int) -> None:
    model = torch.jit.script(ReverseTensors())
    assert "Loop" in _op_types(_check(model, _rows(4, 1, 6), opset))


def test_reverse_a_list_of_tensors_below_13_names_the_opset() -> None:
    with pytest.raises(exporter.SymbolicError, match="opset 13"):
        _export(torch.jit.script(ReverseTensors()), torch.randn(4, 3), 11)


class TensorOfRows(torch.nn.Module):
    """torch.tensor of a list of lists built one row per iteration: the rows are a scan output."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows: list[list[int]] = []
        for i in range(x.size(0)):
            rows.append([int(x[i].argmax()), int(x[i].argmin()), i])
        return torch.tensor(rows), torch.tensor(rows[-1])


class TensorOfBranchyRows(torch.nn.Module):
    """Rows of floats appended in either branch, read back by index: an ONNX sequence."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows: list[list[float]] = []
        for i in range(x.size(0)):
            if bool(x[i, 0] > 0):
                rows.append([float(x[i].max()), 1.0])
            else:
                rows.append([float(x[i].min()), -1.0])
        first = rows[0]
        return torch.tensor(rows), torch.tensor(first) * 2


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_tensor_of_a_run_time_list_of_lists(opset: int) -> None:
    _check(torch.jit.script(TensorOfRows()), _rows(4, 1, 7), opset)


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_tensor_of_run_time_rows_appended_in_branches(opset: int) -> None:
    _check(torch.jit.script(TensorOfBranchyRows()), _rows(4, 1, 7), opset)


def test_rows_appended_in_branches_below_13_name_the_opset() -> None:
    with pytest.raises(exporter.SymbolicError, match="opset 13"):
        _export(torch.jit.script(TensorOfBranchyRows()), torch.randn(4, 3), 11)


# -- lists returned by branches, item assignment at a run-time index (ONNX sequences) ---------


class ListFromBranches(torch.nn.Module):
    """Lists built differently per branch and returned by the If; a `return` inside a branch
    leaves the list unset on the other path (prim::Uninitialized: an empty sequence)."""

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        res: list[torch.Tensor] = []
        if bool(x.sum() > 0):
            res = res + [x * 2]
        else:
            res = res + [x, x - 1]
        if x.size(0) < 3:
            if bool(x[0, 0] > 0):
                res.append(x[0:1])
            else:
                return list(x)
        return res


class ListItemAssignedAtRunTimeIndex(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows = [x[0], x[1], x[2]]
        k = int(x[0, 0] > 0) * 2 - 1  # -1 or 1
        rows[k] = x[k] * 10
        return torch.stack(rows), rows[1]


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_lists_returned_by_branches(opset: int) -> None:
    inputs = [torch.randn(4, 3) + 3, torch.randn(4, 3) - 3, torch.tensor([[1.0, 2.0, 3.0]]), -torch.ones(2, 3)]
    _check(torch.jit.script(ListFromBranches()), inputs, opset)


def test_lists_returned_by_branches_below_13_name_the_opset() -> None:
    with pytest.raises(exporter.SymbolicError, match="opset 13"):
        _export(torch.jit.script(ListFromBranches()), torch.randn(4, 3), 11)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_list_item_assigned_at_a_run_time_index(opset: int) -> None:
    inputs = [torch.randn(3, 3) + 3, torch.randn(5, 3) - 3]
    _check(torch.jit.script(ListItemAssignedAtRunTimeIndex()), inputs, opset)


class OnlyEmptyLists(torch.nn.Module):
    """Lists that stay empty for every input (the append is on a path never taken)."""

    def forward(self, x: torch.Tensor) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        res: list[torch.Tensor] = []
        other: list[torch.Tensor] = []
        for i in range(x.size(0)):
            if len(res) > 2:
                res.append(x[i])
        return res, other


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_a_model_returning_only_empty_lists_has_empty_sequence_outputs(opset: int) -> None:
    """With a static trip count both lists are empty Python lists at export time; a graph
    needs an output, so each is an empty sequence (onnxruntime reads back an empty list)."""
    x = torch.randn(4, 3)
    buffer = io.BytesIO()
    exporter.export(torch.jit.script(OnlyEmptyLists()), (x,), buffer, opset_version=opset)
    assert run_model(buffer.getvalue(), [x]) == [[], []]
    model = onnx.load_from_string(buffer.getvalue())
    assert [o.type.HasField("sequence_type") for o in model.graph.output] == [True, True]


class PrefixedScan(torch.nn.Module):
    """A list holding items before a loop with a run-time trip count that appends one item per
    iteration: the Loop's scan output with the earlier items stacked in front (any opset)."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows: list[torch.Tensor] = [x[0] * 0, x[0]]
        lengths: list[int] = [0]
        for i in range(1, x.size(0)):
            rows.append(x[i] * 2)
            lengths.append(i)
        return torch.stack(rows), torch.tensor(lengths)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_list_with_items_appended_in_a_run_time_loop(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3),), (torch.randn(6, 3),)]
    model = torch.jit.script(PrefixedScan())
    assert_matches_torch(model, (torch.randn(4, 3),), opset=opset, other_inputs=others, **dynamic)


class ConditionalRows(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        out = torch.jit.annotate(dict[str, torch.Tensor], {})
        rows: list[torch.Tensor] = []
        for i in range(x.size(0)):
            if bool(x[i].sum() > 0):
                rows.append(x[i] * 2)
        out["n"] = torch.tensor(len(rows))
        total = torch.zeros(x.size(1))
        for i, r in enumerate(rows):
            total = total + r * float(i)
        out["total"] = total
        return out


class ZippedLists(torch.nn.Module):
    def forward(self, xs: torch.Tensor) -> torch.Tensor:
        a: list[torch.Tensor] = []
        b: list[torch.Tensor] = []
        for i in range(xs.size(0)):
            a.append(xs[i])
            b.append(xs[i] * 2)
        s = torch.zeros(xs.size(1))
        for p, q in zip(a, b):
            s = s + p * q
        return s


class RunTimeLists(torch.nn.Module):
    """torch.tensor of run-time lists, reverse(), l[-1] while growing, branchy appends."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        ints: list[int] = [0]
        floats: list[float] = []
        rows: list[torch.Tensor] = []
        for i in range(x.size(0)):
            ints.append(ints[-1] + int(x[i, 0] > 0))
            floats.append(float(x[i].sum()))
            if bool(x[i, 1] > 0):
                rows.append(x[i] * 2)
            else:
                rows.append(torch.zeros(x.size(1)))
        ints.reverse()
        return torch.tensor(ints), torch.tensor(floats), torch.stack(rows), torch.tensor(ints[0])


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_run_time_lists(opset: int) -> None:
    model = torch.jit.script(RunTimeLists())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3),), (torch.randn(7, 3),)]
    assert_matches_torch_from(
        CONTROL_FLOW_SEQUENCE_OPSET, model, (torch.randn(4, 3),), opset=opset, other_inputs=others, **dynamic
    )


class UnbindDynamic(torch.nn.Module):
    """unbind(0) and iteration over a tensor whose first dim is dynamic."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        total = torch.zeros(x.size(1))
        for row in x.unbind(0):
            total = total + row * 2
        biggest = torch.zeros(x.size(1))
        for row in x:
            biggest = torch.max(biggest, row)
        return total, biggest


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_unbind_and_iteration_over_a_dynamic_dim(opset: int) -> None:
    model = torch.jit.script(UnbindDynamic())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3),), (torch.randn(9, 3),)]
    assert_matches_torch(model, (torch.randn(4, 3),), opset=opset, other_inputs=others, **dynamic)


class ReassignedLists(torch.nn.Module):
    """Lists re-assigned (not appended to) in a loop with a run-time trip count: each item of
    the fixed-length list is one loop-carried value, at every opset."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        counts: list[int] = [0, 0]
        state: list[torch.Tensor] = [x[0], x[0] * 0]
        for i in range(x.size(0)):
            counts = [counts[0] + int(x[i, 0] > 0), counts[1] + 1]
            state = [state[0] * 0.5 + x[i], state[1] + x[i]]
        return torch.tensor(counts), state[0], state[1]


class GrowingList(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        items: list[int] = [0]
        for i in range(x.size(0)):
            items = items + [i]
        return torch.tensor(items)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_lists_re_assigned_in_a_run_time_loop(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3),), (torch.randn(7, 3),)]
    assert_matches_torch(
        torch.jit.script(ReassignedLists()), (torch.randn(4, 3),), opset=opset, other_inputs=others, **dynamic
    )


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_a_list_growing_by_re_assignment_in_a_run_time_loop(opset: int) -> None:
    """A re-assigned list whose length changes is carried as an ONNX sequence (opset 13)."""
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3),), (torch.randn(6, 3),)]
    assert_matches_torch_from(
        CONTROL_FLOW_SEQUENCE_OPSET,
        torch.jit.script(GrowingList()),
        (torch.randn(4, 3),),
        opset=opset,
        other_inputs=others,
        **dynamic,
    )


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_rows_appended_conditionally_then_enumerated(opset: int) -> None:
    """Appends on a run-time condition make an ONNX sequence (carried by the Loop from 13),
    enumerated afterwards."""
    assert_matches_torch(
        torch.jit.script(ConditionalRows()),
        (torch.randn(4, 3),),
        opset=opset,
        other_inputs=[(torch.randn(6, 3),)],
        **dynamic_inputs(x={0: "n"}),
    )


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_run_time_lists_zipped(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(ZippedLists()),
        (torch.randn(4, 3),),
        opset=opset,
        other_inputs=[(torch.randn(1, 3),)],
        **dynamic_inputs(xs={0: "n"}),
    )
