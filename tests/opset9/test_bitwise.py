"""The op table for bitwise and shift ops (exporter.opset9.bitwise).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from cases import Case, bools, int_pair, lowering_opsets, op_params, run_case
from conftest import NEWEST, Wrap, assert_matches_torch, export_to_bytes


def full_range(dtype: torch.dtype, count: int = 64) -> Callable[[], tuple[torch.Tensor, ...]]:
    """Two tensors over the whole range of an integer dtype, extremes included."""
    info = torch.iinfo(dtype)

    def make() -> tuple[torch.Tensor, ...]:
        edges = torch.tensor([info.min, info.max, 0, -1 if info.min < 0 else 1, 1], dtype=torch.int64).to(dtype)
        a = torch.cat([edges, torch.randint(info.min, info.max, (count,), dtype=dtype)])
        b = torch.cat([edges.flip(0), torch.randint(info.min, info.max, (count,), dtype=dtype)])
        return a, b

    return make


def shift_amounts(dtype: torch.dtype, bits: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    def make() -> tuple[torch.Tensor, ...]:
        info = torch.iinfo(dtype)
        x = torch.cat(
            [
                torch.tensor([info.min, info.max, -1, 1, 0], dtype=torch.int64).to(dtype),
                torch.randint(info.min, info.max, (35,), dtype=dtype),
            ]
        )
        amount = torch.arange(-2, bits + 3, dtype=torch.int64)[: x.numel()]
        amount = torch.cat([amount, torch.randint(0, bits, (x.numel() - amount.numel(),))]).to(dtype)
        return x, amount

    return make


CASES = [
    # bitwise
    Case("and_bool", lambda a, b: a & b, bools()),
    Case("or_bool", lambda a, b: a | b, bools()),
    Case("xor_bool", lambda a, b: a ^ b, bools()),
    Case("not_bool", lambda a: ~a, bools(1)),
    Case("bitwise_ops_int64", lambda a, b: (a & b, a | b, a ^ b, ~a), full_range(torch.int64)),
    Case(
        "bitwise_ops_int32",
        lambda a, b: (torch.bitwise_and(a, b), torch.bitwise_or(a, b), torch.bitwise_xor(a, b), torch.bitwise_not(a)),
        full_range(torch.int32),
    ),
    Case("bitwise_ops_int16", lambda a, b: (a & b, a | b, a ^ b, ~a), full_range(torch.int16)),
    Case("bitwise_ops_int8", lambda a, b: (a & b, a | b, a ^ b, ~a), full_range(torch.int8)),
    Case("bitwise_ops_uint8", lambda a, b: (a & b, a | b, a ^ b, ~a), full_range(torch.uint8)),
    Case("bitwise_scalar", lambda a, b: (a & 0xF0, a | -8, b ^ 5, b & 1), full_range(torch.int64)),
    Case("bitwise_scalar_int32", lambda a, b: (a & 0xF0, a | 3, a ^ -1), full_range(torch.int32)),
    Case(
        "bitwise_broadcast_mixed",
        lambda a, b: (a & b, a | b),
        lambda: (torch.randint(-100, 100, (3, 4), dtype=torch.int32), torch.randint(-100, 100, (4,))),
    ),
    Case("bitwise_bool_int_scalar", lambda a: a & 1, bools(1)),
    Case("lshift_int64", lambda a, b: a << b, shift_amounts(torch.int64, 64)),
    Case("rshift_int64", lambda a, b: a >> b, shift_amounts(torch.int64, 64)),
    Case("lshift_int32", lambda a, b: torch.bitwise_left_shift(a, b), shift_amounts(torch.int32, 32)),
    Case("rshift_int32", lambda a, b: torch.bitwise_right_shift(a, b), shift_amounts(torch.int32, 32)),
    Case("shifts_int8", lambda a, b: (a << b, a >> b), shift_amounts(torch.int8, 8)),
    Case("shifts_uint8", lambda a, b: (a << b, a >> b), shift_amounts(torch.uint8, 8)),
    Case("shifts_int16", lambda a, b: (a << b, a >> b), shift_amounts(torch.int16, 16)),
    Case("shift_scalar", lambda a, b: (a << 3, a >> 2, b << 63, b >> 63, a >> 70), full_range(torch.int64)),
    Case("shift_scalar_uint8", lambda a, b: (a << 3, b >> 2), full_range(torch.uint8)),
    Case(
        "inplace_int",
        lambda a, b: a.clone().bitwise_or_(b).bitwise_and_(b).bitwise_left_shift_(2).bitwise_not_(),
        int_pair((6,), torch.int64, -50, 50),
    ),
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("opset", lowering_opsets("aten::bitwise_and", before_changes=True))
def test_integer_bitwise_ops_use_bitwise_nodes_from_18(opset: int) -> None:
    native = opset >= 18
    model = Wrap(lambda a, b: (a & b, a | b, a ^ b, ~a))
    _, onnx_model = export_to_bytes(model, full_range(torch.int32)(), opset_version=opset)
    op_types = {node.op_type for node in onnx_model.graph}
    bitwise = {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"}
    assert (bitwise <= op_types) if native else not (bitwise & op_types)


def test_augmented_bitwise_assignment() -> None:
    def fn(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        c = a.clone()
        c &= b
        c <<= 2
        c |= 1
        return c, a + 1

    assert_matches_torch(Wrap(fn), int_pair((6,), torch.int64, -50, 50)(), opset=NEWEST)


@pytest.mark.parametrize(
    "opset", lowering_opsets("aten::bitwise_and", "aten::isnan", "aten::__rshift__", "aten::maximum", helpers=True)
)
def test_dynamic_batch(opset: int) -> None:
    """Lowerings that build shapes or new axes (isnan of integers, the bit decomposition)
    on an axis known only at run time."""
    model = Wrap(lambda a, b: (torch.isnan(a), torch.isfinite(a), a & b, a ^ 7, a >> b.abs() % 70, torch.maximum(a, b)))
    make = int_pair((5, 3), torch.int64, -1000, 1000)
    assert_matches_torch(
        model,
        make(),
        opset=opset,
        other_inputs=[int_pair((9, 3), torch.int64, -1000, 1000)()],
        input_names=["a", "b"],
        dynamic_axes={"a": [0], "b": [0]},
    )


class MixedBitwise(torch.nn.Module):
    def forward(
        self, a: torch.Tensor, b: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        return a & 20, torch.bitwise_and(a, b), a | b, a ^ b, b & torch.tensor([1, 2], dtype=torch.int32)


@pytest.mark.parametrize("opset", lowering_opsets("aten::bitwise_and", before_changes=True))
@pytest.mark.parametrize("script", [False, True])
def test_bitwise_ops_promote_their_operands(opset: int, script: bool) -> None:
    """uint8 & int8 is int16 in torch; a scripted graph's shape propagation records uint8, so
    the operands are promoted like arithmetic's (a Python int keeps the tensor's dtype)."""
    model = torch.jit.script(MixedBitwise()) if script else MixedBitwise()
    a = torch.randint(0, 255, (3, 4, 2), dtype=torch.uint8)
    b = torch.randint(-128, 127, (3, 4, 2), dtype=torch.int8)
    onnx_model = assert_matches_torch(model, (a, b), opset=opset)
    assert [o.dtype.name for o in onnx_model.graph.outputs] == ["UINT8", "INT16", "INT16", "INT16", "INT32"]
