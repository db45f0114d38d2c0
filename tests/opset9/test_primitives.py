"""The op table for the base symbolics, crossed with the opsets where a helper changes.

Each case is a function of tensors. It is traced, exported, run in onnxruntime and compared
with eager torch, at every opset where its lowering changes (tests/cases.py) from its first supported one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from cases import HELPER_OPSETS, Case, graph_kinds, helper_params, op_params, opsets_for_kinds, run_case
from conftest import Wrap, assert_matches_torch


def f32(*shape: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randn(*shape),)


def pair(
    shape_a: tuple[int, ...], shape_b: tuple[int, ...], dtype: torch.dtype = torch.float32
) -> Callable[[], tuple[torch.Tensor, ...]]:
    def make() -> tuple[torch.Tensor, ...]:
        if dtype.is_floating_point:
            return torch.randn(*shape_a).to(dtype), torch.randn(*shape_b).to(dtype)
        a = torch.randint(-20, 20, shape_a, dtype=dtype)
        b = torch.randint(1, 7, shape_b, dtype=dtype) * torch.where(torch.rand(shape_b) > 0.5, 1, -1).to(dtype)
        return a, b

    return make


def ints(*shape: int, dtype: torch.dtype = torch.int64) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randint(-10, 10, shape, dtype=dtype),)


def positive(*shape: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.rand(*shape) + 0.1,)


CASES = [
    # elementwise arithmetic
    Case("add", lambda a, b: a + b, pair((2, 3), (3,))),
    Case("add_alpha", lambda a, b: torch.add(a, b, alpha=2.5), pair((2, 3), (2, 3))),
    Case("add_scalar_half", lambda a: a + 2, lambda: (torch.randn(4).half(),), atol=1e-3),
    Case("add_int32_float_scalar", lambda a: a + 2.5, ints(5, dtype=torch.int32)),
    Case("add_int32_int64", lambda a, b: a + b, lambda: (torch.arange(4, dtype=torch.int32), torch.arange(4))),
    Case("add_bool", lambda a, b: a + b, lambda: (torch.rand(5) > 0.5, torch.rand(5) > 0.5)),
    Case("sub", lambda a, b: a - b, pair((2, 3), (2, 3))),
    Case("sub_alpha_int", lambda a, b: torch.sub(a, b, alpha=3), pair((4,), (4,), torch.int64)),
    Case("rsub", lambda a: 1 - a, f32(2, 3)),
    Case("mul", lambda a, b: a * b, pair((2, 3), (2, 1))),
    Case("mul_int_scalar", lambda a: a * 3, ints(6)),
    Case("div", lambda a, b: a / b, pair((3,), (3,))),
    Case("div_int_true", lambda a, b: a / b, pair((8,), (8,), torch.int64)),
    Case("div_floor_int", lambda a, b: torch.div(a, b, rounding_mode="floor"), pair((16,), (16,), torch.int64)),
    Case("div_trunc_int", lambda a, b: torch.div(a, b, rounding_mode="trunc"), pair((16,), (16,), torch.int64)),
    Case("div_trunc_float", lambda a, b: torch.div(a, b, rounding_mode="trunc"), pair((16,), (16,))),
    Case("floordiv_int_negative", lambda a, b: a // b, pair((16,), (16,), torch.int64)),
    Case("floordiv_int32_scalar", lambda a: a // 3, ints(12, dtype=torch.int32)),
    Case("floordiv_float", lambda a, b: a // b, pair((16,), (16,))),
    Case("remainder_int_negative", lambda a, b: a % b, pair((16,), (16,), torch.int64)),
    Case("remainder_float", lambda a, b: torch.remainder(a, b), pair((16,), (16,))),
    Case("neg", torch.neg, f32(3)),
    Case("abs", torch.abs, f32(3)),
    Case("abs_int", torch.abs, ints(5)),
    Case("pow_scalar", lambda a: a**2, f32(5)),
    Case("pow_tensor", lambda a, b: torch.pow(a, b), lambda: (torch.rand(5) + 0.5, torch.randn(5))),
    Case("pow_int_keeps_int", lambda a: a**3, ints(6)),
    Case(
        "pow_int32_tensor",
        lambda a, b: a**b,
        lambda: (torch.randint(-4, 4, (6,), dtype=torch.int32), torch.randint(0, 4, (6,), dtype=torch.int32)),
    ),
    Case("sqrt", torch.sqrt, positive(4)),
    Case("rsqrt", torch.rsqrt, positive(4)),
    Case("exp", torch.exp, f32(4)),
    Case("log", torch.log, positive(4)),
    Case("reciprocal", torch.reciprocal, positive(4)),
    Case("floor", torch.floor, f32(6)),
    Case("ceil", torch.ceil, f32(6)),
    Case("erf", torch.erf, f32(6)),
    Case("sin_cos", lambda a: torch.sin(a) + torch.cos(a), f32(6)),
    # activations
    Case("relu", torch.relu, f32(2, 3)),
    Case("relu6", F.relu6, lambda: (torch.randn(20) * 5,)),
    Case("leaky_relu", lambda a: F.leaky_relu(a, 0.2), f32(8)),
    Case("hardtanh", lambda a: F.hardtanh(a, -0.5, 0.5), f32(8)),
    Case("sigmoid", torch.sigmoid, f32(2, 3)),
    Case("tanh", torch.tanh, f32(2, 3)),
    Case("silu", F.silu, f32(2, 3)),
    Case("gelu", F.gelu, f32(2, 3)),
    Case("gelu_tanh", lambda a: F.gelu(a, approximate="tanh"), f32(2, 3)),
    Case("softmax_last", lambda a: torch.softmax(a, -1), f32(2, 3, 4)),
    Case("softmax_middle", lambda a: torch.softmax(a, 1), f32(2, 3, 4)),
    Case("softmax_dtype", lambda a: torch.softmax(a, 0, dtype=torch.float64), f32(3, 2)),
    Case("log_softmax", lambda a: F.log_softmax(a, 1), f32(2, 3, 4)),
    # comparison and selection
    Case(
        "eq_float",
        lambda a, b: a == b,
        lambda: (torch.tensor([1.0, 2.0, float("nan"), 4.0]), torch.tensor([1.0, 3.0, float("nan"), 4.0])),
    ),
    Case(
        "ne_float",
        lambda a, b: a != b,
        lambda: (torch.tensor([1.0, 2.0, float("nan")]), torch.tensor([1.0, 3.0, float("nan")])),
    ),
    Case("eq_int_scalar", lambda a: a == 3, ints(10)),
    Case("gt", lambda a, b: a > b, pair((5,), (5,))),
    Case("lt_scalar", lambda a: a < 0.5, f32(5)),
    Case(
        "ge_nan",
        lambda a, b: a >= b,
        lambda: (torch.tensor([1.0, 2.0, float("nan"), 3.0]), torch.tensor([1.0, 3.0, 1.0, 2.0])),
    ),
    Case("le_int", lambda a, b: a <= b, pair((8,), (8,), torch.int64)),
    Case("lt_half", lambda a, b: a < b, pair((5,), (5,), torch.float16)),
    Case("where", lambda c, a, b: torch.where(c > 0, a, b), lambda: (torch.randn(4), torch.randn(4), torch.randn(4))),
    Case("where_scalar", lambda a: torch.where(a > 0, a, 0.0), f32(6)),
    Case("masked_fill", lambda a: a.masked_fill(a > 0, -1.0), f32(3, 4)),
    Case("masked_fill_int", lambda a: a.masked_fill(a > 0, 7), ints(3, 4)),
    Case("clamp", lambda a: torch.clamp(a, -0.5, 0.5), f32(10)),
    Case("clamp_min", lambda a: torch.clamp(a, min=0.1), f32(10)),
    Case("clamp_int", lambda a: torch.clamp(a, -3, 4), ints(10)),
    Case("clamp_tensor", lambda a, lo: torch.clamp(a, min=lo), pair((6,), (6,))),
    # reductions
    Case("mean_all", torch.mean, f32(3, 4)),
    Case("mean_dim", lambda a: a.mean(dim=1), f32(3, 4, 5)),
    Case("mean_dims_keep", lambda a: a.mean(dim=(0, 2), keepdim=True), f32(3, 4, 5)),
    Case("sum_all", torch.sum, f32(3, 4)),
    Case("sum_dim", lambda a: a.sum(-1), f32(3, 4)),
    Case("sum_int32", lambda a: a.sum(0), ints(3, 4, dtype=torch.int32)),
    Case("sum_bool", lambda a: (a > 0).sum(), f32(10)),
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
    # shape
    Case("view", lambda a: a.view(4, -1), f32(2, 3, 4)),
    Case("view_dynamic_size", lambda a: a.view(a.size(0), -1), f32(2, 3, 4)),
    Case("reshape", lambda a: a.reshape(-1), f32(2, 3)),
    Case("view_as", lambda a, b: a.view_as(b), pair((2, 6), (3, 4))),
    Case("flatten", lambda a: a.flatten(1), f32(2, 3, 4)),
    Case("flatten_middle", lambda a: a.flatten(1, 2), f32(2, 3, 4, 5)),
    Case("unflatten", lambda a: a.unflatten(1, (2, 3)), f32(4, 6)),
    Case("permute", lambda a: a.permute(2, 0, 1), f32(2, 3, 4)),
    Case("transpose", lambda a: a.transpose(-1, 0), f32(2, 3, 4)),
    Case("t", lambda a: a.t(), f32(2, 3)),
    Case("contiguous", lambda a: a.transpose(0, 1).contiguous() + 1, f32(2, 3)),
    Case("unsqueeze", lambda a: a.unsqueeze(-1), f32(2, 3)),
    Case("squeeze", lambda a: a.squeeze(), f32(2, 1, 3, 1)),
    Case("squeeze_dim", lambda a: a.squeeze(1), f32(2, 1, 3)),
    Case("squeeze_noop", lambda a: a.squeeze(0) * 2, f32(2, 1, 3)),
    Case("cat", lambda a, b: torch.cat([a, b], dim=1), pair((2, 3), (2, 5))),
    Case("stack", lambda a, b: torch.stack([a, b], dim=-1), pair((2, 3), (2, 3))),
    Case("expand", lambda a: a.expand(4, -1, 3), f32(1, 2, 1)),
    Case("expand_as", lambda a, b: a.expand_as(b), pair((3, 1), (3, 4))),
    Case("size_arith", lambda a: a.new_zeros(a.size(0) * 2, a.size(1)) + 1, f32(2, 3)),
    # indexing
    Case("slice", lambda a: a[:, 1:3], f32(4, 5)),
    Case("slice_negative", lambda a: a[..., -2:], f32(4, 5)),
    Case("slice_step", lambda a: a[::2], f32(6, 2), min_opset=10),
    Case("select", lambda a: a[1], f32(4, 5)),
    Case("select_negative", lambda a: a[:, -1], f32(4, 5)),
    Case("embedding_fn", lambda w, i: F.embedding(i, w), lambda: (torch.randn(10, 4), torch.tensor([[1, 2], [9, 0]]))),
    # casts and creation
    Case("to_float", lambda a: a.to(torch.float32) * 1.5, ints(5)),
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
    # pooling on unbatched and integer inputs
    Case("max_pool_unbatched", lambda x: F.max_pool2d(x, 2), f32(3, 8, 8)),
    Case("avg_pool_unbatched", lambda x: F.avg_pool2d(x, 2), f32(3, 8, 8)),
    Case("max_pool_int64", lambda x: F.max_pool2d(x, 2), lambda: (torch.randint(-50, 50, (1, 3, 8, 8)),)),
    # in-place forms become functional
    Case("inplace_chain", lambda a: a.clone().add_(1).mul_(2).sub_(0.5).div_(3).relu_(), f32(8)),
    Case("inplace_masked_fill", lambda a: a.clone().masked_fill_(a < 0, 0.0).clamp_(max=0.5), f32(8)),
    Case("inplace_fill_zero", lambda a: torch.cat([a.clone().fill_(2.0), a.clone().zero_()]), f32(3)),
    Case("inplace_copy", lambda a, b: a.clone().copy_(b) + 1, pair((2, 3), (3,))),
    # attention
    Case(
        "sdpa",
        F.scaled_dot_product_attention,
        lambda: (torch.randn(2, 4, 5, 8), torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 8)),
    ),
    Case(
        "sdpa_causal",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        lambda: (torch.randn(2, 3, 5, 8),) * 3,
    ),
    Case(
        "sdpa_bool_mask",
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        lambda: (torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.rand(4, 4) > 0.3),
    ),
    Case(
        "sdpa_float_mask_scale",
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3),
        lambda: (torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(4, 4)),
    ),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = [
    "slice",
    "slice_step",
    "select_negative",
    "clamp",
    "clamp_int",
    "unsqueeze",
    "squeeze_dim",
    "sum_dim",
    "mean_dims_keep",
    "softmax_middle",
    "max_pool_unbatched",
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


class Layers(torch.nn.Module):
    """Module-backed ops: conv, pooling, norms, linear, embedding, dropout."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv1d(3, 4, 3, stride=2, padding=1)
        self.conv2 = torch.nn.Conv2d(3, 4, 3, padding=1, groups=1, dilation=2)
        self.conv3 = torch.nn.Conv3d(3, 4, 2)
        self.convt = torch.nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=1)
        self.conv_same = torch.nn.Conv2d(3, 4, 4, padding="same")
        self.bn = torch.nn.BatchNorm2d(4)
        self.ln = torch.nn.LayerNorm([6])
        self.embedding = torch.nn.Embedding(10, 6, padding_idx=0)
        self.dropout = torch.nn.Dropout(0.5)

    def forward(
        self, x1: torch.Tensor, x2: torch.Tensor, x3: torch.Tensor, idx: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        return (
            self.conv1(x1),
            F.max_pool2d(self.bn(self.conv2(x2)), 2),
            self.conv3(x3),
            self.convt(x2),
            F.avg_pool2d(self.conv_same(x2), 2, count_include_pad=False, padding=1),
            F.adaptive_avg_pool2d(x2, 1),
            F.adaptive_avg_pool2d(x2, (4, 2)),
            self.dropout(self.ln(self.embedding(idx))),
            F.max_pool1d(x1, 2),
        )


def _layer_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(2, 3, 9), torch.randn(2, 3, 8, 8), torch.randn(1, 3, 4, 4, 4), torch.tensor([[0, 3, 9]])


LAYER_OPSETS = sorted(set(opsets_for_kinds(graph_kinds(Layers().eval(), _layer_inputs()))) | set(HELPER_OPSETS))


@pytest.mark.parametrize("opset", LAYER_OPSETS)
def test_layers(opset: int) -> None:
    model = Layers().eval()
    with torch.no_grad():
        model.bn.running_mean.normal_()
        model.bn.running_var.uniform_(0.5, 2.0)
    assert_matches_torch(model, _layer_inputs(), opset=opset, atol=1e-4)


@pytest.mark.parametrize("opset", [10, 11, 17])
def test_pooling_ceil_mode_and_dilation(opset: int) -> None:
    model = Wrap(lambda x: F.max_pool2d(x, 3, stride=2, ceil_mode=True).sum() + F.max_pool2d(x, 2, dilation=2).sum())
    assert_matches_torch(model, (torch.randn(1, 2, 9, 9),), opset=opset)


def test_ceil_mode_at_opset_9_names_opset_10() -> None:
    from exporter.errors import SymbolicError

    model = Wrap(lambda x: F.max_pool2d(x, 3, stride=2, ceil_mode=True))
    with pytest.raises(SymbolicError, match="opset 10"):
        assert_matches_torch(model, (torch.randn(1, 2, 9, 9),), opset=9)
