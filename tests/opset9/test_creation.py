"""The op table for tensor creation, dtype conversion and fills (exporter.opset9.creation).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import pytest
import torch
from cases import Case, f32, ints, lowering_opsets, op_params, pair, run_case
from conftest import assert_matches_torch


@torch.jit.script
def _script_tensor_of_sizes(x: torch.Tensor) -> torch.Tensor:
    return torch.tensor([x.size(0), x.size(1)]) * 2


@torch.jit.script
def _script_tensor_scalar(x: torch.Tensor) -> torch.Tensor:
    return x * torch.tensor(x.size(0), dtype=torch.float32) + torch.as_tensor(float(x.size(0)))


@torch.jit.script
def _script_as_tensor(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.as_tensor(x, dtype=torch.float64), torch.tensor([float(x.size(0)), 2.5]) + x.sum()


@torch.jit.script
def _script_scalar_tensor(x: torch.Tensor) -> torch.Tensor:
    return x + torch.scalar_tensor(x.size(0), dtype=torch.float32)


CASES = [
    Case("to_int", lambda a: a.int(), lambda: (torch.randn(5) * 10,)),
    Case("to_bool", lambda a: a.bool(), ints(5)),
    Case("type_as", lambda a, b: a.type_as(b), lambda: (torch.randn(3), torch.arange(3))),
    Case("zeros_like", lambda a: torch.zeros_like(a) + a, f32(2, 3)),
    Case("ones_like_int", lambda a: torch.ones_like(a, dtype=torch.int32), f32(2, 3)),
    Case("full_like", lambda a: torch.full_like(a, 3.5), f32(2, 3)),
    Case("full_like_int_fill", lambda a: torch.min(a, torch.full_like(a, 15)), lambda: (torch.arange(8) * 3,)),
    Case("zeros_const", lambda a: a + torch.zeros(2, 3), f32(2, 3)),
    Case("full_const", lambda a: a * torch.full((3,), 2.0), f32(2, 3)),
    Case("arange_const", lambda a: a + torch.arange(3), f32(2, 3)),
    Case("ones_int", lambda a: torch.ones(a.shape, dtype=torch.int64) + a.long(), ints(2, 3)),
    Case("inplace_fill_zero", lambda a: torch.cat([a.clone().fill_(2.0), a.clone().zero_()]), f32(3)),
    Case("inplace_copy", lambda a, b: a.clone().copy_(b) + 1, pair((2, 3), (3,))),
    # creation
    Case(
        "eye_dynamic",
        lambda a: a + torch.eye(a.size(0), a.size(1)),
        f32(3, 4),
        dynamic={"x0": [0, 1]},
        others=lambda: [(torch.randn(5, 2),)],
    ),
    Case("eye_int_dynamic", lambda a: torch.eye(a.size(0), dtype=torch.int64) * 1, f32(3), dynamic={"x0": [0]}),
    Case(
        "tril_triu_indices",
        lambda a: (
            a[tuple(torch.triu_indices(4, 4, 1))],
            torch.tril_indices(3, 5, 1) * 1,
            torch.triu_indices(5, 3, -1, dtype=torch.int32) * 1,
        ),
        f32(4, 4),
    ),
    Case(
        "tril_triu_indices_dynamic",
        lambda a: (
            torch.triu_indices(a.size(0), a.size(1), 1) * 1,
            torch.tril_indices(a.size(0), a.size(1), -1) * 1,
            a[tuple(torch.triu_indices(a.size(0), a.size(1)))],
        ),
        f32(3, 4),
        dynamic={"x0": [0, 1]},
        others=lambda: [(torch.randn(5, 2),), (torch.randn(1, 1),)],
    ),
    Case("shape_as_tensor", lambda a: torch._shape_as_tensor(a) * 1, f32(2, 3)),
    Case(
        "reshape_from_tensor",
        lambda a, s: torch._reshape_from_tensor(a, s),
        lambda: (torch.randn(2, 6), torch.tensor([3, 4])),
    ),
    Case(
        "dim_arange",
        lambda a: torch._dim_arange(a, 1) * 1,
        f32(2, 5),
        dynamic={"x0": [1]},
        others=lambda: [(torch.randn(2, 3),)],
    ),
    Case("linspace_tensor", lambda a, b: torch.linspace(a, b, 7), lambda: (torch.tensor(-1.5), torch.tensor(3.0))),
    Case(
        "linspace_dynamic_steps",
        lambda a: torch.linspace(0, 1, a.size(0)) + a,
        f32(6),
        dynamic={"x0": [0]},
        others=lambda: [(torch.randn(1),), (torch.randn(9),)],
    ),
    Case(
        "hann_window_dynamic",
        lambda a: torch.hann_window(a.size(0)) * a,
        f32(8),
        dynamic={"x0": [0]},
        others=lambda: [(torch.randn(1),), (torch.randn(5),)],
    ),
    Case(
        "hann_window_symmetric",
        lambda a: torch.hann_window(a.size(0), periodic=False, dtype=torch.float64) * 1,
        f32(7),
        dynamic={"x0": [0]},
        others=lambda: [(torch.randn(1),), (torch.randn(4),)],
    ),
    Case(
        "linspace_int",
        lambda a, b: torch.linspace(a, b, 6, dtype=torch.int64),
        lambda: (torch.tensor(-3.0), torch.tensor(8.0)),
    ),
    Case("linspace_one_step", lambda a, b: torch.linspace(a, b, 1), lambda: (torch.tensor(2.0), torch.tensor(8.0))),
    Case(
        "script_as_tensor_float_list",
        _script_as_tensor,
        f32(3),
        script=True,
        dynamic={"x0": [0]},
        others=lambda: [(torch.randn(5),)],
    ),
    Case("script_tensor_of_sizes", _script_tensor_of_sizes, f32(2, 5), script=True),
    Case("script_tensor_scalar", _script_tensor_scalar, f32(3), script=True, dynamic={"x0": [0]}),
    Case("script_scalar_tensor", _script_scalar_tensor, f32(3), script=True, dynamic={"x0": [0]}),
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


class ArangeFromSizes(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.size()[-2:]
        return torch.arange(0, (2 * (rows - 1) + cols) // x.size(0))


@pytest.mark.parametrize("opset", lowering_opsets("aten::arange", helpers=True))
@pytest.mark.parametrize("script", [False, True])
def test_arange_with_an_int_start_and_run_time_end_is_int64(opset: int, script: bool) -> None:
    """arange.start(Scalar, Scalar): the int literal start must stay an int (a `float | int`
    parameter tries int first), so the result is int64 as in torch, not float."""
    model = torch.jit.script(ArangeFromSizes()) if script else ArangeFromSizes()
    x = torch.randint(5, (1, 2, 3, 4))
    onnx_model = assert_matches_torch(
        model,
        (x,),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0, 1, 2, 3]},
        other_inputs=[(torch.randint(5, (2, 3, 4, 5)),)],
    )
    assert onnx_model.graph.outputs[0].dtype.name == "INT64"


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
@pytest.mark.parametrize("opset", lowering_opsets("aten::arange", helpers=True))
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
