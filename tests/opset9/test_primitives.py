"""The op table for the base prim:: ops and TorchScript scalar queries (exporter.opset9.primitives).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cases import Case, emit_ir, f32, lowering_opsets, op_params, run_case, signature_opsets, typed
from conftest import assert_matches_torch


@torch.jit.script
def _script_dim(x: torch.Tensor) -> torch.Tensor:
    return x * x.dim()


@torch.jit.script
def _script_is_float(x: torch.Tensor) -> torch.Tensor:
    if x.is_floating_point():
        return x + 1
    return x - 1


@torch.jit.script
def _script_dtype_device(x: torch.Tensor) -> torch.Tensor:
    return torch.zeros(x.shape, dtype=x.dtype, device=x.device) + x


@torch.jit.script
def _script_max_min(x: torch.Tensor) -> torch.Tensor:
    n = max(x.size(0), x.size(1))
    m = min(x.size(0), x.size(1))
    return x.new_zeros([n, m]) + 1


@torch.jit.script
def _script_is_pinned(x: torch.Tensor) -> torch.Tensor:
    if x.is_pinned():
        return x - 1
    return x + 1


@torch.jit.script
def _script_data_alias(x: torch.Tensor) -> torch.Tensor:
    return x.data * 3


CASES = [
    Case("alias_lift", lambda a: torch.ops.aten.alias(torch.ops.aten.lift(a)) + 1, f32(3)),
    # scripted: queries and primitives
    Case("script_dim", _script_dim, f32(2, 3), script=True),
    Case("script_is_floating_point", _script_is_float, f32(3), script=True),
    Case("script_dtype_device_shape", _script_dtype_device, typed(2, 3, dtype=torch.int32), script=True),
    Case("script_max_min", _script_max_min, f32(2, 5), script=True),
    Case("script_is_pinned", _script_is_pinned, f32(3), script=True),
    Case("script_data", _script_data_alias, f32(3), script=True),
    # BigBird: a tensor made by torch.tensor() inside forward is lifted
    # BigBird: a tensor made by torch.tensor() inside forward is lifted
    Case("lift_fresh", lambda x: torch.ops.aten.lift_fresh(x) * 2, f32(3, 4)),
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize(
    "opset", sorted({*lowering_opsets("prim::max", "prim::min", helpers=True), *signature_opsets("max_min")})
)
def test_script_max_min_tensor_dynamic(opset: int) -> None:
    """prim::max/min and aten::tensor over sizes known only at run time."""
    model = _script_sizes_dynamic
    x = torch.randn(2, 5)
    assert_matches_torch(
        model,
        (x,),
        opset=opset,
        other_inputs=[(torch.randn(6, 3),)],
        input_names=["x0"],
        dynamic_axes={"x0": [0, 1]},
    )


@torch.jit.script
def _script_sizes_dynamic(x: torch.Tensor) -> torch.Tensor:
    n = max(x.size(0), x.size(1))
    m = min(x.size(0), x.size(1))
    return torch.tensor([n, m, x.dim()]) * 2


@pytest.mark.parametrize("opset", lowering_opsets("prim::shape", "prim::dtype"))
def test_prim_queries(opset: int) -> None:
    """prim::shape/dtype/layout/device/data feeding aten::zeros, prim::tolist, prim::min of
    a list and prim::convert_element_type."""
    src = """
    graph(%x : Int(3, 4)):
      %none : NoneType = prim::Constant()
      %one : int = prim::Constant[value=1]()
      %six : int = prim::Constant[value=6]()
      %lay : int = prim::layout(%x)
      %dt : int = prim::dtype(%x)
      %dev : Device = prim::device(%x)
      %sh : int[] = prim::shape(%x)
      %y : Tensor = prim::data(%x)
      %z : Tensor = aten::zeros(%sh, %dt, %lay, %none, %none)
      %w : Tensor = aten::add(%z, %y, %one)
      %row : Tensor = aten::select(%x, %one, %one)
      %l : int[] = prim::tolist(%row, %one, %one)
      %m : int = prim::min(%l)
      %v : Tensor = prim::convert_element_type(%x, %six)
      %t : (Tensor, int, Tensor) = prim::TupleConstruct(%w, %m, %v)
      return (%t)
    """
    x = torch.randint(-9, 9, (3, 4), dtype=torch.int32)
    got = emit_ir(src, [x], opset)
    assert got[0].dtype == np.int32
    np.testing.assert_array_equal(got[0], x.numpy())
    assert int(got[1]) == int(x[:, 1].min())
    assert got[2].dtype == np.float32
    np.testing.assert_array_equal(got[2], x.float().numpy())


class FloatOfOneElement(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return torch.tensor([float(x)]), torch.tensor([x.shape[0], int(x)]), torch.tensor([bool(x > 0)])


@pytest.mark.parametrize("opset", lowering_opsets("aten::Float", "aten::Int", "aten::Bool", helpers=True))
def test_scripted_number_of_a_one_element_tensor_is_0d(opset: int) -> None:
    """float(x)/int(x)/bool(x) of a [1] tensor is a Python number: torch.tensor([float(x)]) has
    shape [1], so the aten::Float/Int/Bool value must be 0-d before the list stacks it."""
    model = torch.jit.script(FloatOfOneElement())
    onnx_model = assert_matches_torch(
        model, (torch.tensor([2.5]),), opset=opset, other_inputs=[(torch.tensor([-3.0]),)]
    )
    assert [list(o.shape) for o in onnx_model.graph.outputs] == [[1], [2], [1]]


@torch.jit.script
def _view_rows(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    return x.view(rows, -1)


class ViewByTensor(torch.nn.Module):
    def forward(self, x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        return _view_rows(x, rows) * 2


class ExpandByTensor(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        return x.expand(n, 3) + 1


@pytest.mark.parametrize("opset", lowering_opsets("aten::IntImplicit", "aten::view", "aten::expand", helpers=True))
def test_int_implicit_view_size(opset: int) -> None:
    model = torch.jit.script(ViewByTensor())
    assert_matches_torch(
        model, (torch.randn(4, 6), torch.tensor(2)), opset=opset, other_inputs=[(torch.randn(4, 6), torch.tensor(3))]
    )


@pytest.mark.parametrize("opset", lowering_opsets("aten::IntImplicit", "aten::view", helpers=True))
def test_int_implicit_size_list(opset: int) -> None:
    model = torch.jit.script(ExpandByTensor())
    assert_matches_torch(
        model, (torch.randn(3), torch.tensor(4)), opset=opset, other_inputs=[(torch.randn(3), torch.tensor(1))]
    )


class Prints(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        print("y is", y, y.shape)
        return y + 1


@pytest.mark.parametrize("opset", lowering_opsets("prim::Print"))
def test_print_is_dropped(opset: int) -> None:
    onnx_model = assert_matches_torch(torch.jit.script(Prints()), (torch.randn(2, 3),), opset=opset)
    assert sorted(node.op_type for node in onnx_model.graph if node.op_type != "Constant") == ["Add", "Mul"]
