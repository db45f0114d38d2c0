"""The op table for order statistics: quantile, nanquantile, mode (exporter.opset9.order_statistics).

Each case is traced and scripted, exported, run in onnxruntime and compared with eager torch at
every opset where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import pytest
import torch
from cases import Case, helper_params, lowering_opsets_below, op_params, run_case, traced_and_scripted
from conftest import Wrap, assert_matches_torch, dynamic_inputs

from exporter.errors import SymbolicError

NAN, INF = float("nan"), float("inf")
# a NaN among numbers, infinities, ties and a plain row
ROWS = torch.tensor(
    [
        [3.0, 1.0, NAN, 2.0, 0.5],
        [INF, -INF, 5.0, 5.0, INF],
        [1.0, 2.0, 2.0, 1.0, 4.0],
        [0.3, -1.2, 2.2, 0.7, -0.1],
    ]
)
NAN_ROWS = torch.tensor([[NAN, 1.0, NAN, 3.0, 2.0], [NAN, NAN, NAN, NAN, NAN], [4.0, NAN, -1.0, 0.0, 2.5]])
Q = torch.tensor([0.0, 0.125, 0.3, 0.5, 0.625, 1.0])


def _quantile_modes(
    x: torch.Tensor, q: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.quantile(x, q, dim=1),
        torch.quantile(x, q, dim=1, interpolation="lower"),
        torch.quantile(x, q, dim=-1, keepdim=True, interpolation="higher"),
        torch.quantile(x, q, dim=1, interpolation="midpoint"),
        torch.quantile(x, q, dim=1, interpolation="nearest"),
    )


def _quantile_scalar(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.quantile(x, 0.3),
        x.quantile(0.5, dim=0, keepdim=True),
        torch.quantile(x, 0.75, 1, False, interpolation="nearest"),
        torch.quantile(x, 0.4, keepdim=True, interpolation="midpoint"),
    )


def _quantile_whole(x: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.quantile(x, q), torch.quantile(x, q, keepdim=True), torch.quantile(x, q[2], dim=0)


def _nanquantile_modes(
    x: torch.Tensor, q: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.nanquantile(x, q, dim=1),
        torch.nanquantile(x, q, dim=1, interpolation="lower"),
        torch.nanquantile(x, q, dim=1, keepdim=True, interpolation="higher"),
        torch.nanquantile(x, q, dim=-1, interpolation="midpoint"),
        torch.nanquantile(x, q, dim=1, interpolation="nearest"),
    )


def _nanquantile_scalar(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.nanquantile(x, 0.3), x.nanquantile(0.5, dim=0), torch.nanquantile(x, 0.9, 1, True)


def _quantile_0d(x: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.quantile(x, 0.3),
        torch.quantile(x, q, dim=0, keepdim=True),
        x.nanquantile(0.5, keepdim=True),
        x.quantile(q),
    )


def _quantile_dynamic(x: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.quantile(x, q, dim=1), torch.nanquantile(x, 0.4, dim=0, interpolation="nearest"), x.quantile(0.2)


Pair = tuple[torch.Tensor, torch.Tensor]


def _mode(x: torch.Tensor) -> tuple[Pair, Pair, Pair]:
    return torch.mode(x), torch.mode(x, 0, keepdim=True), x.mode(dim=-2)


def _mode_values(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows beyond 16 elements: torch's index among equal values is its sort's choice."""
    return torch.mode(x, 1)[0], torch.mode(x, 0, True)[0]


def _mode_dtypes(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, d: torch.Tensor) -> tuple[Pair, Pair, Pair, Pair]:
    return a.mode(), b.mode(0), c.mode(), d.mode(1, True)


def _mode_rows(x: torch.Tensor) -> tuple[Pair, Pair]:
    return x.mode(1), x.mode(-1, True)


def _mode_dynamic(x: torch.Tensor) -> tuple[Pair, Pair]:
    return x.mode(1), x.mode(0, True)


def _few_values(*shape: int) -> torch.Tensor:
    return torch.randint(-2, 3, shape).float()


CASES = [
    *traced_and_scripted("quantile_modes", _quantile_modes, lambda: (ROWS, Q)),
    *traced_and_scripted("quantile_scalar", _quantile_scalar, lambda: (torch.randn(4, 6),)),
    *traced_and_scripted("quantile_scalar_nan_inf", _quantile_scalar, lambda: (ROWS,)),
    *traced_and_scripted("quantile_whole", _quantile_whole, lambda: (torch.randn(3, 4).double(), Q.double())),
    *traced_and_scripted("nanquantile_modes", _nanquantile_modes, lambda: (NAN_ROWS, Q)),
    *traced_and_scripted("nanquantile_scalar", _nanquantile_scalar, lambda: (NAN_ROWS,)),
    *traced_and_scripted("quantile_0d", _quantile_0d, lambda: (torch.tensor(1.5), torch.tensor([0.2, 0.9]))),
    Case(
        "quantile_3d_dim1", lambda x: (x.quantile(0.7, 1), x.nanquantile(Q, -2, True)), lambda: (torch.randn(2, 5, 3),)
    ),
    *traced_and_scripted(
        "quantile_dynamic",
        _quantile_dynamic,
        lambda: (ROWS, Q),
        min_opset=10,
        dynamic={"x0": {0: "rows", 1: "n"}, "x1": {0: "q"}},
        others=lambda: [(torch.randn(2, 9), torch.tensor([0.5])), (NAN_ROWS, torch.tensor([0.25, 0.9]))],
    ),
    *traced_and_scripted("mode", _mode, lambda: (_few_values(6, 7),)),
    Case(
        "mode_ties_smallest_last_index",
        lambda x: torch.mode(x, 1),
        lambda: (torch.tensor([[1.0, 3.0, 3.0, 2.0, 2.0, 1.0, 1.0, 3.0], [2.0, 3.0, 3.0, 2.0, 5.0, 9.0, 9.0, 8.0]]),),
    ),
    *traced_and_scripted("mode_values_long_rows", _mode_values, lambda: (_few_values(5, 40),)),
    *traced_and_scripted(
        "mode_nan_inf",
        _mode_rows,
        lambda: (torch.tensor([[INF, 1.0, INF, -INF, -INF], [NAN, NAN, NAN, NAN, NAN], [2.0, -INF, INF, 2.0, 0.0]]),),
    ),
    *traced_and_scripted(
        "mode_dtypes",
        _mode_dtypes,
        lambda: (
            torch.randint(-2, 2, (9,)),
            torch.randint(0, 3, (8, 2), dtype=torch.int32),
            torch.rand(7) > 0.5,
            _few_values(3, 6).half(),
        ),
    ),
    Case(
        "mode_0d_empty_rows",
        lambda x, y: (x.mode(), x.mode(0, True), y.mode(1)),
        lambda: (torch.tensor(2.5), torch.zeros(0, 4)),
    ),
    *traced_and_scripted(
        "mode_dynamic",
        _mode_dynamic,
        lambda: (_few_values(4, 6),),
        dynamic={"x0": {0: "rows", 1: "n"}},
        others=lambda: [(_few_values(7, 3),), (_few_values(1, 12),)],
    ),
]

# run at HELPER_OPSETS too: the Squeeze/Unsqueeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["quantile_modes", "nanquantile_scalar", "mode", "mode_dynamic"]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("opset", lowering_opsets_below("aten::quantile"))
def test_quantile_of_a_dynamic_dim_names_opset_10(opset: int) -> None:
    """TopK takes k as an attribute at opset 9: the sort under quantile needs the dim's size."""
    for fn in (lambda x: x.quantile(0.5, 1), lambda x: x.nanquantile(0.5)):
        with pytest.raises(SymbolicError, match="needs opset 10"):
            assert_matches_torch(Wrap(fn), (ROWS,), opset=opset, **dynamic_inputs(x={1: "n"}))
