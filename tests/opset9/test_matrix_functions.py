"""The op table for functions of whole matrices: inverse, matrix_power, multi_dot, vander, block_diag
(exporter.opset9.matrix_functions).

Each op is traced and scripted, exported, run in onnxruntime and compared with eager torch at
every opset where its lowering changes (tests/cases.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from cases import INF, NAN, Case, emit_ir, lowering_opsets, op_params, run_case, traced_and_scripted
from conftest import Wrap, assert_matches_torch

from exporter.errors import SymbolicError


def pivoting(*batch: int) -> Callable[[], tuple[torch.Tensor]]:
    """Well-conditioned matrices whose leading entries are zero or tiny, so elimination
    without row swaps fails or loses precision."""

    def make() -> tuple[torch.Tensor]:
        perm = torch.eye(4)[torch.tensor([2, 0, 3, 1])]
        a = perm * 3 + torch.randn(*batch, 4, 4) * 0.3
        a[..., 0, 0] = 0.0
        a[..., 1, 1] = 1e-7
        return (a,)

    return make


def inv(a: torch.Tensor) -> torch.Tensor:
    return torch.linalg.inv(a)


def inverse_forms(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.inverse(a), torch.ops.aten.inverse(a)


def inv_double(a: torch.Tensor) -> torch.Tensor:
    return torch.linalg.inv(a.double())


def matrix_powers(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.linalg.matrix_power(a, 0),
        torch.linalg.matrix_power(a, 1),
        torch.linalg.matrix_power(a, 3),
        torch.linalg.matrix_power(a, 6),
        torch.matrix_power(a, 13),
    )


def negative_powers(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.linalg.matrix_power(a, -1), torch.linalg.matrix_power(a, -3)


def int_powers(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.linalg.matrix_power(a, 0),
        torch.linalg.matrix_power(a, 5),
        torch.linalg.matrix_power(a.int(), 2),
        torch.linalg.matrix_power(a > 0, 0),
    )


def multi_dot3(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    return torch.linalg.multi_dot([a, b, c])


def multi_dot_vectors(
    v: torch.Tensor, a: torch.Tensor, b: torch.Tensor, w: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.linalg.multi_dot([v, a, b, w]),
        torch.linalg.multi_dot([v, a]),
        torch.linalg.multi_dot([a, b, w]),
        torch.linalg.multi_dot([v, a, b]),
    )


def multi_dot_chain(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    return torch.linalg.multi_dot([a, b, c, d])


def vander(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.linalg.vander(x), torch.linalg.vander(x, N=5)


def vander_ints(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.linalg.vander(x), torch.linalg.vander(x.int(), N=3)


def vander_n(x: torch.Tensor) -> torch.Tensor:
    return torch.linalg.vander(x, N=4)


def block_diag(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    return torch.block_diag(a, b, c)


def block_diag_forms(
    a: torch.Tensor, v: torch.Tensor, s: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.block_diag(a, v.int(), s),
        torch.block_diag(v > 0, s > 0),
        torch.block_diag(a),
        torch.block_diag(v[:0], a[:, :0], a),
    )


def _matrix(*shape: int) -> Callable[[], tuple[torch.Tensor]]:
    return lambda: (torch.randn(*shape) + 3 * torch.eye(shape[-1]),)


CASES = [
    *traced_and_scripted("linalg_inv", inv, _matrix(2, 3, 5, 5), atol=1e-4),
    *traced_and_scripted("linalg_inv_pivoting", inv, pivoting(), atol=1e-4),
    *traced_and_scripted("linalg_inv_pivoting_batched", inv, pivoting(3, 2), atol=1e-4),
    *traced_and_scripted("torch_inverse", inverse_forms, _matrix(4, 4), atol=1e-4),
    Case("linalg_inv_double", inv_double, pivoting(2), atol=1e-9),
    Case("linalg_inv_1x1_empty", lambda a, e: (inv(a), inv(e)), lambda: (torch.randn(2, 1, 1), torch.ones(3, 0, 0))),
    Case("linalg_inv_empty_batch", inv, lambda: (torch.ones(0, 3, 3),)),
    Case(
        "linalg_inv_nan_inf",
        lambda a, b: (inv(a), inv(b)),
        lambda: (
            torch.tensor([[2.0, NAN, 0.0], [1.0, 3.0, 0.0], [0.0, 0.0, 1.0]]),
            torch.tensor([[1.0, INF], [0.0, 1.0]]),
        ),
    ),
    Case(
        "linalg_inv_dynamic_batch",
        inv,
        _matrix(2, 3, 3),
        dynamic={"x0": {0: "batch"}},
        others=lambda: [(torch.randn(5, 3, 3) + 3 * torch.eye(3),), (torch.ones(0, 3, 3),)],
        atol=1e-4,
    ),
    *traced_and_scripted("matrix_power", matrix_powers, lambda: (torch.randn(2, 3, 3) * 0.5,), atol=1e-4),
    *traced_and_scripted("matrix_power_negative", negative_powers, pivoting(2), atol=1e-3, rtol=1e-3),
    *traced_and_scripted("matrix_power_ints", int_powers, lambda: (torch.randint(-3, 4, (2, 3, 3)),)),
    Case(
        "matrix_power_half_empty",
        lambda a, e: (matrix_powers(a)[2], matrix_powers(e)),
        lambda: (torch.randn(2, 2).half(), torch.ones(0, 2, 2)),
        atol=1e-2,
        rtol=1e-2,
    ),
    Case(
        "matrix_power_nan",
        lambda a: (torch.linalg.matrix_power(a, 0), torch.linalg.matrix_power(a, 2)),
        lambda: (torch.tensor([[1.0, NAN], [INF, 2.0]]),),
    ),
    Case(
        "matrix_power_dynamic",
        lambda a: (torch.linalg.matrix_power(a, 0), torch.linalg.matrix_power(a, 4)),
        lambda: (torch.randn(2, 3, 3),),
        dynamic={"x0": {0: "b", 1: "n", 2: "n"}},
        others=lambda: [(torch.randn(1, 5, 5),), (torch.randn(3, 1, 1),)],
        atol=1e-4,
    ),
    *traced_and_scripted("multi_dot", multi_dot3, lambda: (torch.randn(2, 30), torch.randn(30, 3), torch.randn(3, 20))),
    Case("multi_dot_other_order", multi_dot3, lambda: (torch.randn(20, 3), torch.randn(3, 30), torch.randn(30, 2))),
    *traced_and_scripted(
        "multi_dot_vectors",
        multi_dot_vectors,
        lambda: (torch.randn(4), torch.randn(4, 5), torch.randn(5, 3), torch.randn(3)),
    ),
    *traced_and_scripted(
        "multi_dot_chain",
        multi_dot_chain,
        lambda: (torch.randn(10, 30), torch.randn(30, 5), torch.randn(5, 60), torch.randn(60, 2)),
        atol=1e-4,
    ),
    Case(
        "multi_dot_ints_empty_nan",
        lambda a, b, e, f: (
            torch.linalg.multi_dot([a, b, a]),
            torch.linalg.multi_dot([e, f, e.t()]),
            torch.linalg.multi_dot([a.float() * NAN, b.float()]),
        ),
        lambda: (torch.randint(-3, 3, (3, 3)), torch.randint(-3, 3, (3, 3)), torch.ones(2, 0), torch.ones(0, 0)),
    ),
    Case(
        "multi_dot_dynamic",
        multi_dot_chain,
        lambda: (torch.randn(2, 3), torch.randn(3, 4), torch.randn(4, 5), torch.randn(5, 2)),
        dynamic={"x0": {0: "m"}, "x3": {1: "n"}},
        others=lambda: [(torch.randn(6, 3), torch.randn(3, 4), torch.randn(4, 5), torch.randn(5, 1))],
    ),
    *traced_and_scripted("vander", vander, lambda: (torch.randn(2, 4),)),
    *traced_and_scripted("vander_ints", vander_ints, lambda: (torch.randint(-4, 5, (3,), dtype=torch.int8),)),
    Case("vander_double_nan_inf", vander, lambda: (torch.tensor([NAN, INF, -INF, 0.0, 2.0], dtype=torch.float64),)),
    Case("vander_empty", vander_n, lambda: (torch.ones(0, 3),)),
    Case(
        "vander_dynamic",
        vander_n,
        lambda: (torch.randn(2, 3),),
        dynamic={"x0": {0: "b", 1: "n"}},
        others=lambda: [(torch.randn(1, 6),)],
    ),
    *traced_and_scripted("block_diag", block_diag, lambda: (torch.randn(2, 3), torch.randn(4), torch.tensor(5.0))),
    *traced_and_scripted(
        "block_diag_forms", block_diag_forms, lambda: (torch.randn(2, 3), torch.randn(4), torch.tensor(-2.0))
    ),
    Case("block_diag_nan", block_diag, lambda: (torch.full((2, 2), NAN), torch.tensor([INF]), torch.tensor(1.0))),
    Case(
        "block_diag_dynamic",
        block_diag,
        lambda: (torch.randn(2, 3), torch.randn(4), torch.randn(3, 1)),
        dynamic={"x0": {0: "r", 1: "c"}, "x1": {0: "n"}},
        others=lambda: [
            (torch.randn(1, 5), torch.randn(2), torch.randn(3, 1)),
            (torch.randn(0, 2), torch.randn(0), torch.randn(3, 1)),
        ],
    ),
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize(
    ("fn", "dynamic", "argument"),
    [
        (inv, {1: "n", 2: "n"}, "linalg_inv: argument 'A' needs its matrix size"),
        (negative_powers, {1: "n", 2: "n"}, "linalg_matrix_power: argument 'self' needs its matrix size"),
        (torch.linalg.vander, {1: "n"}, "argument 'N' is None"),
    ],
    ids=["linalg_inv", "matrix_power_negative", "vander"],
)
@pytest.mark.parametrize("opset", lowering_opsets("aten::linalg_inv", "aten::linalg_vander"))
def test_dynamic_size_is_refused_by_name(
    fn: Callable[..., Any], dynamic: dict[int, str], argument: str, opset: int
) -> None:
    """The unrolled lowerings need a size that is dynamic here: the export fails naming it."""
    x = torch.randn(2, 3, 3) + 3 * torch.eye(3) if fn is not torch.linalg.vander else torch.randn(2, 3)
    with pytest.raises(SymbolicError, match=argument):
        assert_matches_torch(Wrap(fn), (x,), opset=opset, input_names=["x"], dynamic_axes={"x": dynamic})


@pytest.mark.parametrize("opset", lowering_opsets("aten::inverse"))
def test_aten_inverse_as_a_graph_names_it(opset: int) -> None:
    """torch records torch.inverse as aten::linalg_inv; a graph naming aten::inverse exports too."""
    src = """
    graph(%a : Float(2, 3, 3)):
      %r : Tensor = aten::inverse(%a)
      return (%r)
    """
    x = torch.randn(2, 3, 3) * 0.3 + torch.eye(3)[[1, 2, 0]] * 3  # a small diagonal: the pivots come from other rows
    (out,) = emit_ir(src, [x], opset)
    torch.testing.assert_close(torch.from_numpy(out), torch.inverse(x), atol=1e-4, rtol=1e-4)
