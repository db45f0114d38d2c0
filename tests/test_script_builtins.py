"""TorchScript builtins seen failing in torch's own exporter tests (issue #17 item 3): IntImplicit,
list slicing and concatenation (export-time and run-time lists), squeeze of dims whose size is
only known at run time, and arange with out= and float bounds, each compared with eager torch."""

from __future__ import annotations

import pytest
import torch
from conftest import NEWEST, assert_matches_torch

OPSETS = [9, 13, 17, NEWEST]
SEQUENCE_OPSETS = [13, 17, NEWEST]


# --- aten::IntImplicit: a 0-d tensor where scripted code expects an int ---------------------


@torch.jit.script
def _view_rows(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    return x.view(rows, -1)


class ViewByTensor(torch.nn.Module):
    def forward(self, x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        return _view_rows(x, rows) * 2


class ExpandByTensor(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        return x.expand(n, 3) + 1


@pytest.mark.parametrize("opset", OPSETS)
def test_int_implicit_view_size(opset: int) -> None:
    model = torch.jit.script(ViewByTensor())
    assert_matches_torch(
        model, (torch.randn(4, 6), torch.tensor(2)), opset=opset, other_inputs=[(torch.randn(4, 6), torch.tensor(3))]
    )


@pytest.mark.parametrize("opset", OPSETS)
def test_int_implicit_size_list(opset: int) -> None:
    model = torch.jit.script(ExpandByTensor())
    assert_matches_torch(
        model, (torch.randn(3), torch.tensor(4)), opset=opset, other_inputs=[(torch.randn(3), torch.tensor(1))]
    )


# --- aten::slice.t: slicing Python lists ---------------------------------------------------------


class SliceTensors(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        items = [x, x + 1, x + 2, x * 2, x * 3]
        tail, head, every_other, backwards = items[1:], items[:-1], items[::2], items[::-2]
        return torch.stack(tail), torch.stack(head), torch.cat(every_other), torch.cat(backwards)


class SliceShape(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dims = x.size()[1:]
        return x.reshape([-1] + dims[:-1] + [dims[-1]])


class SliceRuntimeScalars(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        values: list[float] = []
        for i in range(x.size(0)):
            values.append(float(x[i].sum()))
        return torch.tensor(values[1:]), torch.tensor(values[:-1]), torch.tensor(values[::2])


class SliceScanTensors(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows: list[torch.Tensor] = []
        for i in range(x.size(0)):
            rows.append(x[i] * 2)
        return torch.stack(rows[1:]), torch.stack(rows[:-1])


@pytest.mark.parametrize("opset", OPSETS)
def test_slice_export_time_list(opset: int) -> None:
    if opset < 10:  # a negative step needs Slice-10
        pytest.skip("step -2")
    assert_matches_torch(torch.jit.script(SliceTensors()), (torch.randn(3),), opset=opset)


@pytest.mark.parametrize("opset", OPSETS)
def test_slice_export_time_list_forward_steps(opset: int) -> None:
    @torch.jit.script
    def pick(x: torch.Tensor) -> torch.Tensor:
        items = [x, x + 1, x + 2, x * 2]
        return torch.stack(items[1:]) + torch.stack(items[:-1]) + torch.stack(items[::2]).sum(0)

    assert_matches_torch(pick, (torch.randn(3),), opset=opset)


@pytest.mark.parametrize("opset", OPSETS)
def test_slice_shape_list(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(SliceShape()),
        (torch.randn(2, 3, 4),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0, 1, 2]},
        other_inputs=[(torch.randn(3, 2, 5),)],
    )


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_slice_runtime_list_of_scalars(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(SliceRuntimeScalars()),
        (torch.randn(5, 2),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0]},
        other_inputs=[(torch.randn(2, 2),)],
    )


@pytest.mark.parametrize("opset", OPSETS)
def test_slice_runtime_list_scan_output(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(SliceScanTensors()),
        (torch.randn(5, 3),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0]},
        other_inputs=[(torch.randn(2, 3),)],
    )


# --- aten::add.t and aten::extend: list concatenation --------------------------------------------


class AddLists(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        first = [x, x + 1]
        second = [x * 2]
        empty: list[torch.Tensor] = []
        joined = empty + first + second
        joined.extend(second)
        joined = joined + empty
        return torch.cat(joined)


class AddShapes(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape([1] + list(x.shape) + [1])


class AddRuntimeLists(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        values: list[float] = []
        for i in range(x.size(0)):
            values.append(float(x[i].sum()))
        empty: list[float] = []
        both = values + values
        fixed = [1.5] + values + [2.5]
        grown = empty + values
        grown.extend([3.5, 4.5])
        return torch.tensor(both), torch.tensor(fixed), torch.tensor(grown)


class AddScanLists(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows: list[torch.Tensor] = []
        for i in range(x.size(0)):
            rows.append(x[i] + 1)
        more: list[torch.Tensor] = []
        for i in range(x.size(0)):
            more.append(x[i] * 3)
        return torch.stack(rows + more)


@pytest.mark.parametrize("opset", OPSETS)
def test_add_export_time_lists(opset: int) -> None:
    assert_matches_torch(torch.jit.script(AddLists()), (torch.randn(3),), opset=opset)


@pytest.mark.parametrize("opset", OPSETS)
def test_add_shape_lists(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(AddShapes()),
        (torch.randn(2, 3),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0, 1]},
        other_inputs=[(torch.randn(4, 1),)],
    )


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_add_runtime_lists(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(AddRuntimeLists()),
        (torch.randn(4, 2),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0]},
        other_inputs=[(torch.randn(1, 2),)],
    )


@pytest.mark.parametrize("opset", OPSETS)
def test_add_scan_lists(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(AddScanLists()),
        (torch.randn(4, 2),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0]},
        other_inputs=[(torch.randn(2, 2),)],
    )


# --- squeeze of dims whose size is only known at run time ----------------------------------------


class Squeezes(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return x.squeeze(1), x.squeeze(), x.squeeze(-1) + 1


@pytest.mark.parametrize("scripted", [False, True], ids=["traced", "scripted"])
@pytest.mark.parametrize("opset", OPSETS)
def test_squeeze_dynamic_dim(opset: int, scripted: bool) -> None:
    model = torch.jit.script(Squeezes()) if scripted else Squeezes()
    assert_matches_torch(
        model,
        (torch.randn(2, 1, 1),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0, 1, 2]},
        other_inputs=[(torch.randn(2, 3, 3),), (torch.randn(1, 1, 4),), (torch.randn(3, 1, 2),)],
    )


@pytest.mark.parametrize("opset", OPSETS)
def test_squeeze_static_dim_stays_squeeze(opset: int) -> None:
    onnx_model = assert_matches_torch(Squeezes(), (torch.randn(2, 1, 1),), opset=opset)
    assert "Compress" not in {node.op_type for node in onnx_model.graph}


# --- arange: out=, float bounds and steps, torch's length rules ---------------------------------


class ArangeOut(torch.nn.Module):
    def forward(self, end: torch.Tensor) -> torch.Tensor:
        out_t = torch.tensor([1], dtype=torch.float)
        return torch.arange(end, out=out_t)


class ArangeStartOut(torch.nn.Module):
    def forward(self, start: torch.Tensor, end: torch.Tensor) -> torch.Tensor:
        out_t = torch.tensor([1], dtype=torch.float)
        return torch.arange(start.size(0), end, out=out_t)


class ArangeInt64End(torch.nn.Module):
    def forward(self, end: torch.Tensor) -> torch.Tensor:
        return torch.arange(end, dtype=torch.int64)


class ArangeInt64Step(torch.nn.Module):
    def forward(self, start: torch.Tensor, end: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.arange(start.size(0), end, 1.5, dtype=torch.int64), torch.arange(
            start.size(0), end, 3, dtype=torch.int32
        )


class ArangeFloatSteps(torch.nn.Module):
    def forward(self, end: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return torch.arange(0, end, 0.3), torch.arange(end, -0.2, -0.3), torch.arange(0, 1, 0.3) + end


_ARANGES = [
    (ArangeOut, (torch.tensor(8.5),), [(torch.tensor(3.0),)]),
    (ArangeStartOut, (torch.randn(2, 3, 4), torch.tensor(8.5)), [(torch.randn(5, 3, 4), torch.tensor(7.0))]),
    (ArangeInt64End, (torch.tensor(8.5),), [(torch.tensor(0.5),), (torch.tensor(2.0),)]),
    (ArangeInt64Step, (torch.randn(2, 3, 4), torch.tensor(8.5)), [(torch.randn(4, 3, 4), torch.tensor(12.9))]),
    (ArangeFloatSteps, (torch.tensor(1.0),), [(torch.tensor(0.9),), (torch.tensor(2.1),)]),
]


@pytest.mark.parametrize("scripted", [False, True], ids=["traced", "scripted"])
@pytest.mark.parametrize("case", range(len(_ARANGES)), ids=[c[0].__name__ for c in _ARANGES])
@pytest.mark.parametrize("opset", OPSETS)
def test_arange(opset: int, case: int, scripted: bool) -> None:
    module, args, others = _ARANGES[case]
    model = torch.jit.script(module()) if scripted else module()
    names = ["start", "end"][-len(args) :]
    assert_matches_torch(
        model,
        args,
        opset=opset,
        input_names=names,
        dynamic_axes={"start": [0]} if len(args) == 2 else None,
        other_inputs=others,
    )


# --- list[i] at an index computed at run time; print() ---------------------------------------


class ListItemAtRunTimeIndex(torch.nn.Module):
    """An export-time list read at run-time indices (negative too): ints are gathered, tensors
    of different shapes picked by an ONNX sequence (opset 11+) or a chain of Ifs below."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        sizes: list[int] = [3, 1, 4, 1, 5]
        k = int(x[0, 0] > 0) * 2 - 1  # -1 or 1
        parts = [x, x[:1] * 2, x.sum(0, keepdim=True) + 1]
        j = int(x.sum() > 0) + 1
        return x * sizes[k] + sizes[j], parts[j] - parts[-j]


# Opset 10 included: onnx's Slice-10 inference types x[:1] of [n, 3] as [n, 3] and onnxruntime's
# buffer planner then failed at run time ("Shape mismatch attempting to re-use buffer").
@pytest.mark.parametrize("opset", [9, 10, 11, *OPSETS[1:]])
def test_list_item_at_a_run_time_index(opset: int) -> None:
    others = [(-torch.rand(4, 3),), (torch.rand(1, 3),), (torch.tensor([[1.0, -9.0, 0.0]]),)]
    assert_matches_torch(
        torch.jit.script(ListItemAtRunTimeIndex()),
        (torch.rand(3, 3),),
        opset=opset,
        other_inputs=others,
        input_names=["x"],
        dynamic_axes={"x": {0: "n"}},
    )


class TupleItemAtRunTimeIndex(torch.nn.Module):
    """An export-time list of tuples read at run-time indices (negative too): each field is
    picked at the index, numbers gathered, tensors of different shapes by a sequence or Ifs
    (whose branches hide their sizes from If-1's inference, which takes the then-branch's),
    nested tuples field by field."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        pairs: list[tuple[int, float]] = [(3, 0.5), (1, 2.0), (4, -1.0)]
        parts: list[tuple[torch.Tensor, tuple[int, torch.Tensor]]] = [
            (x, (2, x[:1])),
            (x[:1] * 2, (5, x.sum(0, keepdim=True))),
        ]
        k = int(x[0, 0] > 0) * 2 - 1  # -1 or 1
        size, scale = pairs[k]
        tensor, (count, row) = parts[int(x.sum() > 0)]
        return x * size + scale, tensor * count + row


@pytest.mark.parametrize("opset", [9, 11, *OPSETS[1:]])
def test_tuple_item_at_a_run_time_index(opset: int) -> None:
    others = [(-torch.rand(4, 3),), (torch.rand(1, 3),), (torch.tensor([[1.0, -9.0, 0.0]]),)]
    assert_matches_torch(
        torch.jit.script(TupleItemAtRunTimeIndex()),
        (torch.rand(3, 3),),
        opset=opset,
        other_inputs=others,
        input_names=["x"],
        dynamic_axes={"x": {0: "n"}},
    )


class Prints(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        print("y is", y, y.shape)
        return y + 1


@pytest.mark.parametrize("opset", [9, NEWEST])
def test_print_is_dropped(opset: int) -> None:
    onnx_model = assert_matches_torch(torch.jit.script(Prints()), (torch.randn(2, 3),), opset=opset)
    assert sorted(node.op_type for node in onnx_model.graph if node.op_type != "Constant") == ["Add", "Mul"]


# --- aten::pow on numbers: ``**`` of run-time ints and floats is a float ---------------------


class NumberPowers(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int, f: float) -> tuple[torch.Tensor, float, float]:
        size = x.size(0)
        return x * (2**n) + size**0.5, f**n, f**f


@pytest.mark.parametrize("opset", OPSETS)
def test_pow_of_numbers(opset: int) -> None:
    """pow.int / pow.int_float / pow.float_int / pow.float bind ``a`` and ``b`` (not the tensor
    overload's ``self``/``exponent``) and give a double, as TorchScript's float."""
    model = torch.jit.script(NumberPowers())
    assert_matches_torch(
        model,
        (torch.randn(4, 2), 3, 1.5),
        opset=opset,
        other_inputs=[(torch.randn(4, 2), 0, 0.5)],
    )
