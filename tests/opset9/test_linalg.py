"""The op table for linear algebra: matmul forms, einsum, tensordot, distances, tril/triu, diagonal (exporter.opset9.linalg).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from cases import (
    INF,
    NAN,
    Case,
    f32,
    helper_params,
    lowering_opsets,
    lowering_opsets_below,
    op_params,
    pair,
    run_case,
    traced_and_scripted,
)
from conftest import Wrap, assert_matches_torch

from exporter.errors import SymbolicError, UnsupportedOperatorError


def grouped(m: int, k: int, n: int, ends: tuple[int, ...]):  # noqa: ANN201 - an inputs factory
    return lambda: (torch.randn(m, k), torch.randn(len(ends), k, n), torch.tensor(ends, dtype=torch.int32))


def _grouped_mm(*args: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten._grouped_mm(*args)


def addr(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.addr(c, a, b), torch.addr(c, a, b, beta=0.5, alpha=-2.0), torch.addr(c[0], a, b, beta=0)


def addr_ints_bools(
    c: torch.Tensor, a: torch.Tensor, b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.addr(c, a, b, beta=2, alpha=3),
        torch.addr(c.to(torch.int8), a.to(torch.int8), b.to(torch.int8), alpha=-1),
        torch.addr(c > 0, a > 0, b > 0),
        torch.addr(c > 0, a > 0, b > 0, beta=0, alpha=1) | torch.addr(c < 0, a < 0, b > 0, alpha=0),
    )


def addr_mixed(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.addr(c.long(), a, b), torch.addr(c, a.long(), b.long(), beta=0.5)


def addr_run_time_scalars(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor, s: float) -> torch.Tensor:
    return torch.addr(c, a, b, beta=s, alpha=s * 2)


def addmv(c: torch.Tensor, m: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.addmv(c, m, v), torch.addmv(c[0], m, v, beta=2.0, alpha=0.5), torch.addmv(c, m, v, beta=0)


def vdot_inner(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.vdot(a[0, 0], b[0]), torch.inner(a, b), torch.inner(a[0, 0], b), torch.inner(a, b[0])


def inner_scalars(a: torch.Tensor, n: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.inner(a, n[0]), torch.inner(n[0], a), torch.inner(n, n)


def diagflat(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.diagflat(x), torch.diagflat(x, 2), torch.diagflat(x[0], -1), torch.diagflat(x > 0, 1)


CASES = [
    # matrix products
    Case("matmul", torch.matmul, pair((2, 3, 4), (4, 5))),
    Case("matmul_vec", torch.matmul, pair((3, 4), (4,))),
    Case("mm", torch.mm, pair((3, 4), (4, 2))),
    Case("bmm", torch.bmm, pair((2, 3, 4), (2, 4, 5))),
    Case(
        "addmm",
        lambda c, a: torch.addmm(c, a, a.t(), beta=0.5, alpha=2.0),
        lambda: (torch.randn(3, 3), torch.randn(3, 4)),
    ),
    Case(
        "baddbmm",
        lambda c, a, b: torch.baddbmm(c, a, b, alpha=0.5),
        lambda: (torch.randn(2, 3, 5), torch.randn(2, 3, 4), torch.randn(2, 4, 5)),
    ),
    Case(
        "linear_fn",
        lambda x, w, b: F.linear(x, w, b),
        lambda: (torch.randn(2, 3, 4), torch.randn(5, 4), torch.randn(5)),
    ),
    *traced_and_scripted("addr", addr, lambda: (torch.randn(3, 4), torch.randn(3), torch.randn(4))),
    *traced_and_scripted(
        "addr_ints_bools",
        addr_ints_bools,
        lambda: (torch.randint(-3, 3, (3, 4)), torch.randint(-3, 3, (3,)), torch.randint(-3, 3, (4,))),
    ),
    *traced_and_scripted(
        "addr_mixed_dtypes", addr_mixed, lambda: (torch.randn(3, 4) * 4, torch.randn(3), torch.randn(4))
    ),
    Case(
        "addr_run_time_scalars",
        torch.jit.script(addr_run_time_scalars),
        lambda: (torch.randn(3, 4), torch.randn(3), torch.randn(4), 1.5),
        script=True,
    ),
    Case(
        "addr_addmv_nan_empty",
        lambda c, a, m: (
            addr(c, a, a),
            torch.addr(c[:, :0], a, a[:0]),
            torch.addmv(c[0], m, a[:0], beta=2),
            torch.addmv(c[0], m, a[:0], beta=0),
        ),
        lambda: (torch.full((3, 3), NAN), torch.tensor([INF, 1.0, 0.0]), torch.randn(3, 0)),
    ),
    Case(
        "addr_dynamic",
        addr,
        lambda: (torch.randn(3, 4), torch.randn(3), torch.randn(4)),
        dynamic={"x0": {0: "n", 1: "m"}, "x1": {0: "n"}, "x2": {0: "m"}},
        others=lambda: [(torch.randn(1, 6), torch.randn(1), torch.randn(6))],
    ),
    *traced_and_scripted("addmv", addmv, lambda: (torch.randn(3), torch.randn(3, 4), torch.randn(4))),
    *traced_and_scripted(
        "addmv_ints",
        addmv,
        lambda: (torch.randint(-3, 3, (3,)), torch.randint(-3, 3, (3, 4)), torch.randint(-3, 3, (4,))),
    ),
    *traced_and_scripted("vdot_inner", vdot_inner, pair((2, 3, 4), (5, 4))),
    *traced_and_scripted(
        "vdot_inner_ints", vdot_inner, lambda: (torch.randint(-5, 5, (2, 3, 4)), torch.randint(-5, 5, (5, 4)))
    ),
    *traced_and_scripted("inner_scalars", inner_scalars, lambda: (torch.randn(2, 3), torch.tensor([3, 1]))),
    Case("vdot_inner_nan_empty", vdot_inner, lambda: (torch.tensor([[[NAN, 1.0]]]), torch.tensor([[INF, 0.0]]))),
    Case(
        "vdot_inner_empty",
        lambda a, b: (torch.vdot(a[0], b[0]), torch.inner(a, b), torch.inner(a[:0], b)),
        lambda: (torch.ones(2, 0), torch.ones(3, 0)),
    ),
    Case(
        "inner_dynamic",
        torch.inner,
        pair((2, 3, 4), (5, 4)),
        dynamic={"x0": {0: "a", 1: "b", 2: "k"}, "x1": {0: "c", 1: "k"}},
        others=lambda: [(torch.randn(1, 2, 6), torch.randn(3, 6))],
    ),
    # diagonals, triangles, narrow
    Case("diagonal", lambda x: (torch.diagonal(x), x.diagonal(5)), f32(3, 4)),
    Case("diagonal_offset_dims", lambda x: torch.diagonal(x, 1, 2, 0), f32(3, 2, 4)),
    Case("diagonal_negative_offset", lambda x: x.diagonal(-2, -2, -1), f32(2, 4, 3)),
    Case(
        "linalg_diagonal",
        lambda x: (torch.linalg.diagonal(x), torch.linalg.diagonal(x, offset=-1, dim1=0)),
        f32(3, 4, 2),
    ),
    Case(
        "diagonal_scatter",
        lambda x, v, w: (torch.diagonal_scatter(x, v), torch.diagonal_scatter(x, w, 1, 0, 2)),
        lambda: (torch.randn(3, 4, 4), torch.randn(4, 3), torch.randn(4, 3)),
    ),
    Case(
        "diagonal_scatter_dynamic",
        lambda x, v: torch.diagonal_scatter(x, v, -1, -2, -1),
        lambda: (torch.randn(2, 4, 3), torch.randn(2, 3)),
        dynamic={"x0": {0: "b", 1: "n", 2: "m"}, "x1": {0: "b", 1: "k"}},
        others=lambda: [(torch.randn(3, 2, 5), torch.randn(3, 1)), (torch.randn(1, 6, 2), torch.randn(1, 2))],
    ),
    Case("diag_vector", lambda v: (torch.diag(v), torch.diag(v, 2), v.diag(-1)), f32(4)),
    Case("diag_matrix", lambda m: (torch.diag(m), torch.diag(m, 1), m.diag(-2)), f32(3, 4)),
    Case(
        "diag_int_bool",
        lambda v: (torch.diag(v, 1), torch.diag(v > 0), torch.diag(v.reshape(2, 2))),
        lambda: (torch.randint(-5, 5, (4,)),),
    ),
    Case(
        "diag_dynamic",
        lambda v, m: (torch.diag(v, -2), torch.diag(m, 1)),
        lambda: (torch.randn(3), torch.randn(3, 4)),
        dynamic={"x0": {0: "n"}, "x1": {0: "r", 1: "c"}},
        others=lambda: [(torch.randn(5), torch.randn(5, 2)), (torch.randn(1), torch.randn(1, 1))],
    ),
    Case(
        "diag_embed",
        lambda x: (torch.diag_embed(x), torch.diag_embed(x, 1, 0, 2), torch.diag_embed(x, -2, -1, 1)),
        f32(2, 3),
    ),
    Case(
        "diag_embed_dynamic",
        lambda x: (torch.diag_embed(x, 2), torch.diag_embed(x, -1, 2, 0)),
        f32(2, 3),
        dynamic={"x0": {0: "b", 1: "n"}},
        others=lambda: [(torch.randn(4, 1),), (torch.randn(1, 5),)],
    ),
    *traced_and_scripted("diagflat", diagflat, f32(2, 3)),
    *traced_and_scripted("diagflat_ints", diagflat, lambda: (torch.randint(-3, 3, (2, 2)),)),
    Case(
        "diagflat_nan_empty",
        lambda x, e: (diagflat(x), torch.diagflat(e), torch.diagflat(e, -2)),
        lambda: (torch.tensor([[NAN, INF]]), torch.ones(0)),
    ),
    Case(
        "diagflat_dynamic",
        diagflat,
        f32(2, 3),
        dynamic={"x0": {0: "a", 1: "b"}},
        others=lambda: [(torch.randn(1, 5),), (torch.randn(3, 1),)],
    ),
    Case("trace", lambda m, n: (torch.trace(m), n.trace()), lambda: (torch.randn(3, 5), torch.randn(4, 2))),
    Case(
        "trace_ints",
        lambda m: (torch.trace(m), torch.trace(m.to(torch.int8)), torch.trace(m.to(torch.int32))),
        lambda: (torch.randint(-5, 5, (4, 4)),),
    ),
    Case(
        "trace_dynamic",
        torch.trace,
        f32(3, 4),
        dynamic={"x0": {0: "r", 1: "c"}},
        others=lambda: [(torch.randn(6, 2),), (torch.randn(1, 1),)],
    ),
    Case(
        "kron",
        lambda a, b, c, d: (torch.kron(a, b), torch.kron(c, a), torch.kron(d, d)),
        lambda: (torch.randn(2, 3), torch.randn(4, 1), torch.randn(3), torch.randn(2, 1, 3)),
    ),
    Case(
        "kron_int_scalar",
        lambda a, b: (torch.kron(a, b), torch.kron(torch.tensor(3), a)),
        lambda: (torch.randint(-4, 4, (2, 2)), torch.randint(-4, 4, (3,))),
    ),
    Case(
        "kron_dynamic",
        torch.kron,
        lambda: (torch.randn(2, 3), torch.randn(3, 2)),
        dynamic={"x0": {0: "a", 1: "b"}, "x1": {0: "c", 1: "d"}},
        others=lambda: [(torch.randn(1, 4), torch.randn(2, 5))],
    ),
    Case("tril", torch.tril, f32(4, 5)),
    Case("triu_offset_batch", lambda x: torch.triu(x, 1), f32(2, 4, 3)),
    Case(
        "tril_triu_ints",
        lambda a, b: (a.tril(-1), b.triu()),
        lambda: (torch.randint(-9, 9, (4, 4)), torch.randint(-9, 9, (3, 3), dtype=torch.int32)),
    ),
    Case(
        "tril_bool_triu_half",
        lambda a, b: ((a > 0).tril(), b.triu(-1)),
        lambda: (torch.randn(3, 4), torch.randn(3, 3).half()),
    ),
    # distances
    Case(
        "cosine_similarity",
        lambda a, b: (F.cosine_similarity(a, b), F.cosine_similarity(a * 0, b)),
        pair((3, 4), (3, 4)),
    ),
    Case("cosine_similarity_dim_bcast", lambda a, b: F.cosine_similarity(a, b, dim=-1), pair((2, 3, 4), (3, 4))),
    Case(
        "pairwise_distance",
        lambda a, b: (
            F.pairwise_distance(a, b),
            F.pairwise_distance(a, b, p=1.0, keepdim=True),
            F.pairwise_distance(a, b, p=INF, eps=0.0),
        ),
        pair((3, 4), (1, 4)),
    ),
    Case(
        "cdist",
        lambda a, b: (
            torch.cdist(a, b),
            torch.cdist(a, b, p=1.0),
            torch.cdist(a, b, p=INF),
            torch.cdist(a, b[0], p=3.0),
        ),
        pair((2, 5, 3), (2, 4, 3)),
    ),
    Case(
        "distances_half",
        lambda a, b: (F.cosine_similarity(a, b), F.pairwise_distance(a, b)),
        pair((3, 4), (3, 4), torch.float16),
        atol=1e-2,
        rtol=1e-2,
    ),
    Case("cdist_large_p0", lambda a, b: torch.cdist(a.round(), b.round(), p=0.0), pair((30, 2), (27, 2))),
    Case(
        "cdist_mm_mode",
        lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
        pair((30, 3), (26, 3)),
        atol=1e-4,
    ),
    # products
    Case("dot_mv", lambda a, b: (torch.dot(a[0], b), torch.mv(a, b)), pair((3, 4), (4,))),
    Case("dot_int", torch.dot, lambda: (torch.randint(-5, 5, (5,)), torch.randint(-5, 5, (5,)))),
    Case("outer", lambda a, b: (torch.outer(a, b), torch.ger(a, b), torch.outer(a > 0, b > 0)), pair((3,), (4,))),
    Case(
        "outer_int32",
        torch.outer,
        lambda: (torch.randint(-5, 5, (3,), dtype=torch.int32), torch.randint(-5, 5, (2,), dtype=torch.int32)),
    ),
    Case(
        "cross",
        lambda a, b: (torch.cross(a, b, dim=1), torch.linalg.cross(a, b), torch.cross(a.t(), b.t())),
        pair((4, 3), (4, 3)),
    ),
    Case(
        "linalg_cross_bcast_dim",
        lambda a, b: (torch.linalg.cross(a, b, dim=0), torch.linalg.cross(a.t(), b.t())),
        pair((3, 4), (3, 1)),
    ),
    Case(
        "linalg_cross_int",
        torch.linalg.cross,
        lambda: (torch.randint(-5, 5, (2, 4, 3)), torch.randint(-5, 5, (2, 4, 3))),
    ),
    Case(
        "tensordot",
        lambda a, b: (torch.tensordot(a, b, dims=([1, 2], [0, 1])), torch.tensordot(a, b, dims=([1], [0]))),
        pair((2, 3, 4), (3, 4, 5)),
    ),
    Case(
        "tensordot_forms",
        lambda a, b: (
            torch.tensordot(a, b, dims=([0, 2], [2, 0])),
            torch.tensordot(a[0], a[1], dims=2),
            torch.tensordot(a[0], b[0, 0], dims=0),
        ),
        pair((2, 3, 4), (4, 5, 2)),
    ),
    Case(
        "tensordot_int",
        lambda a, b: torch.tensordot(a, b, dims=1),
        lambda: (torch.randint(-5, 5, (2, 3)), torch.randint(-5, 5, (3, 4))),
    ),
    Case(
        "einsum",
        lambda a, b: (
            torch.einsum("ij,jk->ik", a[0], b[0]),
            torch.einsum("...ij, ...jk -> ...ik", a, b),
            torch.einsum("bij,bjk", a, b),
            torch.einsum("bij->jb", a),
        ),
        pair((2, 2, 3), (2, 3, 2)),
    ),
    Case(
        "einsum_attention",
        lambda q, k: torch.einsum("bhqd,bhkd->bhqk", q, k).softmax(-1),
        pair((2, 3, 4, 5), (2, 3, 6, 5)),
    ),
    Case(
        "einsum_three_operands",
        lambda a, b, c: (
            torch.einsum("ij,jk,kl->il", a, b, c),
            torch.einsum("i,j,k", a[0], b[0], c[0]),
            torch.einsum("ij,kj,ji->k", a, b.t(), a.t()),
        ),
        lambda: (torch.randn(2, 3), torch.randn(3, 4), torch.randn(4, 2)),
    ),
    Case(
        "einsum_broadcast_ellipsis",
        lambda a, b: (torch.einsum("...ij,jk->...ik", a, b[0]), torch.einsum("bij,...jk->bik", a, b[:1])),
        pair((2, 2, 3), (2, 3, 2)),
    ),
    Case(
        "einsum_sum_out",
        lambda a: (torch.einsum("ijk->", a), torch.einsum("ijk->ki", a), torch.einsum("ijk", a)),
        f32(2, 3, 4),
    ),
    Case(
        "einsum_int_bool",
        lambda a, b: (torch.einsum("i,j->ij", a, b), torch.einsum("i,i->i", a > 1, a > 0)),
        lambda: (torch.arange(3), torch.arange(4)),
    ),
    Case(
        "einsum_diagonal",
        lambda a: (torch.einsum("bii->b", a), torch.einsum("ii->i", a[0])),
        f32(2, 3, 3),
        min_opset=12,
    ),
    # determinants
    Case("det", lambda a: (torch.det(a[0, :3, :3]), torch.linalg.det(a)), f32(2, 4, 4), min_opset=11, atol=1e-4),
    Case("logdet", torch.logdet, lambda: (torch.eye(3) * 2 + torch.randn(3, 3) * 0.1,), min_opset=11),
    Case("logdet_negative_is_nan", torch.logdet, lambda: (torch.diag(torch.tensor([1.0, -2.0, 3.0])),), min_opset=11),
    # Mixtral grouped experts (torch 2.13 runs _grouped_mm on CPU; K * 4 bytes a multiple of 16)
    Case("grouped_mm_2d_3d", _grouped_mm, grouped(8, 8, 4, (3, 3, 8))),
    Case(
        "grouped_mm_2d_2d",
        _grouped_mm,
        lambda: (torch.randn(4, 8), torch.randn(8, 4), torch.tensor([3, 8], dtype=torch.int32)),
    ),
    Case(
        "grouped_mm_3d_2d",
        _grouped_mm,
        lambda: (torch.randn(2, 4, 8), torch.randn(8, 8), torch.tensor([3, 8], dtype=torch.int32)),
    ),
    Case("grouped_mm_3d_3d", _grouped_mm, lambda: (torch.randn(2, 4, 8), torch.randn(2, 8, 4))),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["diagonal_offset_dims", "grouped_mm_2d_3d"]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


DYNAMIC = [
    Case("tril_dyn", lambda x: x.tril(1), f32(5, 3)),
    Case("diagonal_dyn", lambda x: x.diagonal(1), f32(5, 3)),
    Case("diagonal_dyn_batch", lambda x: x.diagonal(-1, 1, 2), f32(2, 5, 3)),
]


# Ops that need an op from a later opset once sizes are dynamic (none here).
_DYNAMIC_MIN_OPSET: dict[str, int] = {}


@pytest.mark.parametrize("opset", lowering_opsets("aten::matmul", "aten::einsum", helpers=True))
@pytest.mark.parametrize("case", DYNAMIC, ids=[c.name for c in DYNAMIC])
def test_dynamic_sizes(case: Case, opset: int) -> None:
    if opset < _DYNAMIC_MIN_OPSET.get(case.name, 9):
        pytest.skip("needs a run-time bound input")
    inputs = case.inputs()
    x = inputs[0]
    bigger = (torch.cat([x, x[:1]]),) + inputs[1:]
    assert_matches_torch(
        Wrap(case.fn),
        inputs,
        opset=opset,
        other_inputs=[bigger],
        input_names=[f"in{i}" for i in range(len(inputs))],
        dynamic_axes={"in0": {0: "n"}},
    )


@pytest.mark.parametrize(
    ("fn", "inputs", "first_opset"),
    [
        (torch.linalg.det, (torch.randn(3, 3),), 11),
        (torch.logdet, (torch.randn(3, 3),), 11),
    ],
    ids=["linalg_det", "logdet"],
)
def test_unsupported_below_first_opset(
    fn: Callable[..., object], inputs: tuple[torch.Tensor, ...], first_opset: int
) -> None:
    with pytest.raises(UnsupportedOperatorError, match=f"supported from opset {first_opset}"):
        assert_matches_torch(Wrap(fn), inputs, opset=first_opset - 1)


@pytest.mark.parametrize("opset", lowering_opsets_below("aten::einsum"))
def test_einsum_diagonal_below_opset_12_names_it(opset: int) -> None:
    with pytest.raises(SymbolicError, match="opset 12"):
        assert_matches_torch(Wrap(lambda a: torch.einsum("ii->i", a)), (torch.randn(3, 3),), opset=opset)
