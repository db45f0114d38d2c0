"""Fused transformer kernels, grouped-query attention and random ops.

Deterministic ops are compared with eager torch. Random ops are checked by dtype, shape,
support and statistics over ~10k samples (never values), and by the graph holding a random
node (the noise must not have been folded into a constant).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from cases import Case, graph_kinds, op_params, opsets_for_kinds, run_case
from conftest import Wrap, assert_matches_torch, export_to_bytes, run_model

# onnxruntime (1.31) has no CPU kernels for RandomUniform/RandomNormal(/Like)/Multinomial at
# their opset-22 versions, so random models exported at 22+ are valid ONNX that it cannot load.
ORT_RANDOM_MAX_OPSET = 21

# ============================================================================================
# Fused transformer kernels
# ============================================================================================


class EncoderFastPath(torch.nn.Module):
    """Calls the kernel nn.TransformerEncoderLayer's fast path runs, with the layer's weights."""

    def __init__(self, norm_first: bool = False, activation: str = "relu", mask_type: int | None = None) -> None:
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(
            16, 4, 32, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first
        )
        self.use_gelu = activation == "gelu"
        self.mask_type = mask_type

    def forward(self, src: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        layer, attn = self.layer, self.layer.self_attn
        return torch._transformer_encoder_layer_fwd(
            src,
            attn.embed_dim,
            attn.num_heads,
            attn.in_proj_weight,
            attn.in_proj_bias,
            attn.out_proj.weight,
            attn.out_proj.bias,
            self.use_gelu,
            layer.norm_first,
            layer.norm1.eps,
            layer.norm1.weight,
            layer.norm1.bias,
            layer.norm2.weight,
            layer.norm2.bias,
            layer.linear1.weight,
            layer.linear1.bias,
            layer.linear2.weight,
            layer.linear2.bias,
            mask,
            None if mask is None else self.mask_type,
        )


class AttentionFastPath(torch.nn.Module):
    """Calls the kernel nn.MultiheadAttention's fast path runs."""

    def __init__(
        self, need_weights: bool = True, average: bool = True, mask_type: int | None = None, self_attention: bool = True
    ) -> None:
        super().__init__()
        self.mha = torch.nn.MultiheadAttention(16, 4, batch_first=True)
        self.need_weights, self.average, self.mask_type, self.self_attention = (
            need_weights,
            average,
            mask_type,
            self_attention,
        )

    def forward(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if self.self_attention:
            key = value = query
        mha = self.mha
        return torch._native_multi_head_attention(
            query,
            key,
            value,
            mha.embed_dim,
            mha.num_heads,
            mha.in_proj_weight,
            mha.in_proj_bias,
            mha.out_proj.weight,
            mha.out_proj.bias,
            mask,
            self.need_weights,
            self.average,
            self.mask_type,
        )


def _padding_mask() -> torch.Tensor:
    return torch.tensor([[False] * 5, [False, False, False, True, True]])


def _attn_mask() -> torch.Tensor:
    mask = torch.rand(5, 5) > 0.6
    mask.fill_diagonal_(False)
    return mask


def _x() -> torch.Tensor:
    return torch.randn(2, 5, 16)


def _qkv() -> tuple[torch.Tensor, ...]:
    return torch.randn(2, 5, 16), torch.randn(2, 5, 16), torch.randn(2, 5, 16)


FUSED_CASES = [
    Case("encoder_relu", lambda: EncoderFastPath().eval(), lambda: (_x(),), factory=True),
    Case(
        "mha_key_padding_mask",
        lambda: AttentionFastPath(True, True, 1, False).eval(),
        lambda: (*_qkv(), _padding_mask()),
        factory=True,
    ),
    Case("encoder_norm_first_gelu", lambda: EncoderFastPath(True, "gelu").eval(), lambda: (_x(),), factory=True),
    Case(
        "encoder_key_padding_mask",
        lambda: EncoderFastPath(False, "relu", 1).eval(),
        lambda: (_x(), _padding_mask()),
        factory=True,
    ),
    # nn.TransformerEncoderLayer hands the kernel its padding mask as a float 0/-inf mask
    Case(
        "encoder_float_padding_mask",
        lambda: EncoderFastPath(False, "relu", 1).eval(),
        lambda: (_x(), torch.zeros(2, 5).masked_fill(_padding_mask(), float("-inf"))),
        factory=True,
    ),
    Case(
        "encoder_attn_mask_norm_first",
        lambda: EncoderFastPath(True, "relu", 0).eval(),
        lambda: (_x(), _attn_mask()),
        factory=True,
    ),
    Case(
        "encoder_merged_4d_mask_gelu",
        lambda: EncoderFastPath(False, "gelu", 2).eval(),
        lambda: (_x(), torch.rand(2, 4, 5, 5) > 0.7),
        factory=True,
    ),
    Case("mha_self_need_weights", lambda: AttentionFastPath().eval(), lambda: _qkv()[:1] * 3, factory=True),
    Case("mha_no_weights", lambda: AttentionFastPath(need_weights=False).eval(), lambda: _qkv()[:1] * 3, factory=True),
    Case("mha_separate_qkv_per_head", lambda: AttentionFastPath(True, False, None, False).eval(), _qkv, factory=True),
    # a fully masked row: torch's _masked_softmax gives NaN there, so does Softmax over -inf
    Case(
        "mha_attn_mask_full_row",
        lambda: AttentionFastPath(True, False, 0, False).eval(),
        lambda: (*_qkv(), torch.tensor([[True] * 5] + [[False, True, False, True, False]] * 4)),
        factory=True,
    ),
    # float masks are made bool by the kernel (nonzero masks), not added
    Case(
        "mha_float_mask_is_bool",
        lambda: AttentionFastPath(True, False, 0, False).eval(),
        lambda: (*_qkv(), (torch.rand(5, 5) > 0.6).float() * 3.0),
        factory=True,
    ),
    Case(
        "mha_4d_mask_no_type",
        lambda: AttentionFastPath(True, True, None, False).eval(),
        lambda: (*_qkv(), torch.rand(2, 4, 5, 5) > 0.6),
        factory=True,
    ),
]


FUSED = {c.name: c for c in FUSED_CASES}


@pytest.mark.parametrize(("case", "opset"), op_params(FUSED_CASES))
def test_fused(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_fused_half() -> None:
    model = EncoderFastPath(True, "gelu").eval().half()
    assert_matches_torch(model, (_x().half(),), opset=17, atol=2e-2, rtol=2e-2)


def test_fused_dynamic_batch_and_length() -> None:
    model = AttentionFastPath(True, True, None, True).eval()
    assert_matches_torch(
        model,
        (torch.randn(2, 5, 16),) * 3,
        opset=13,
        other_inputs=[(torch.randn(3, 7, 16),) * 3],
        input_names=["query", "key", "value"],
        dynamic_axes={
            "query": {0: "batch", 1: "length"},
            "key": {0: "batch", 1: "length"},
            "value": {0: "batch", 1: "length"},
        },
    )


@torch.jit.script
def _scripted_attention(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, pw: torch.Tensor, pb: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    return torch._native_multi_head_attention(x, x, x, 16, 4, w, b, pw, pb, mask, True, False, 1)


@pytest.mark.parametrize("opset", [9, 13, 18])
def test_fused_scripted_function(opset: int) -> None:
    """Scripted code keeps the fused node (nothing disables the fast path there)."""
    assert "aten::_native_multi_head_attention" in str(_scripted_attention.graph)
    args = (
        torch.randn(2, 5, 16),
        torch.randn(48, 16) * 0.2,
        torch.randn(48),
        torch.randn(16, 16) * 0.2,
        torch.randn(16),
        _padding_mask(),
    )
    assert_matches_torch(_scripted_attention, args, opset=opset)


def test_encoder_fast_path_node_is_exported() -> None:
    """The model really records the fused node (the test would be vacuous otherwise)."""
    onnx_model = assert_matches_torch(EncoderFastPath().eval(), (_x(),), opset=9)
    ops = {node.op_type for node in onnx_model.graph}
    assert {"MatMul", "Softmax", "Relu"} <= ops
    graph = torch.jit.trace(EncoderFastPath().eval(), (_x(),), check_trace=False).graph
    assert "aten::_transformer_encoder_layer_fwd" in str(graph)


# ============================================================================================
# Grouped-query attention (proposed scaled_dot_product_attention, tested as a custom symbolic)
# ============================================================================================


GQA_CASES = {
    "gqa": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
        lambda: (torch.randn(2, 8, 5, 4), torch.randn(2, 2, 6, 4), torch.randn(2, 2, 6, 4)),
    ),
    "gqa_causal_3d": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
        lambda: (torch.randn(6, 5, 4), torch.randn(3, 5, 4), torch.randn(3, 5, 4)),
    ),
    "gqa_mask_scale": (
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.5, enable_gqa=True),
        lambda: (torch.randn(1, 4, 3, 8), torch.randn(1, 1, 3, 8), torch.randn(1, 1, 3, 8), torch.randn(3, 3)),
    ),
    "gqa_same_heads": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
        lambda: (torch.randn(1, 2, 3, 4),) * 3,
    ),
}


GQA = [Case(name, fn, inputs) for name, (fn, inputs) in GQA_CASES.items()]


@pytest.mark.parametrize(("case", "opset"), op_params(GQA))
def test_sdpa_gqa(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize("opset", [9, 18])
def test_sdpa_gqa_dynamic_length(opset: int) -> None:
    fn, _ = GQA_CASES["gqa"]
    args = (torch.randn(2, 8, 5, 4), torch.randn(2, 2, 6, 4), torch.randn(2, 2, 6, 4))
    assert_matches_torch(
        Wrap(fn),
        args,
        opset=opset,
        input_names=["q", "k", "v"],
        dynamic_axes={"q": {0: "b", 2: "l"}, "k": {0: "b", 2: "s"}, "v": {0: "b", 2: "s"}},
        other_inputs=[(torch.randn(3, 8, 2, 4), torch.randn(3, 2, 9, 4), torch.randn(3, 2, 9, 4))],
    )


# ============================================================================================
# Random ops
# ============================================================================================

N = (100, 100)  # 10k samples per draw


@dataclasses.dataclass(frozen=True)
class Stats:
    mean: float
    std: float
    low: float | None = None  # inclusive support bounds
    high: float | None = None
    integral: bool = False


@dataclasses.dataclass(frozen=True)
class RandomCase:
    name: str
    fn: Callable[..., object]
    inputs: Callable[[], tuple[torch.Tensor, ...]]
    stats: Stats
    min_opset: int = 9
    tolerance: float = 0.06  # on mean and std, relative to the expected std


def _uniform_stats(low: float, high: float) -> Stats:
    return Stats((low + high) / 2, (high - low) / math.sqrt(12), low, high)


def _discrete_uniform(low: int, high: int) -> Stats:
    n = high - low
    return Stats((low + high - 1) / 2, math.sqrt((n * n - 1) / 12), low, high - 1, integral=True)


def _bernoulli_stats(p: float) -> Stats:
    return Stats(p, math.sqrt(p * (1 - p)), 0, 1, integral=True)


def _x10k(dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.zeros(N, dtype=dtype),)


def _const(value: float, dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.full(N, value, dtype=dtype),)


RANDOM_CASES = [
    RandomCase("rand", lambda x: torch.rand(100, 100), _x10k(), _uniform_stats(0, 1)),
    RandomCase("rand_double", lambda x: torch.rand(100, 100, dtype=torch.float64), _x10k(), _uniform_stats(0, 1)),
    RandomCase("rand_half", lambda x: torch.rand(100, 100, dtype=torch.float16), _x10k(), _uniform_stats(0, 1)),
    RandomCase("rand_size_of_input", lambda x: torch.rand(x.shape) + x, _x10k(), _uniform_stats(0, 1)),
    RandomCase("randn", lambda x: torch.randn(100, 100), _x10k(), Stats(0, 1)),
    RandomCase("randn_half", lambda x: torch.randn(100, 100, dtype=torch.float16), _x10k(), Stats(0, 1)),
    RandomCase("rand_like", torch.rand_like, _x10k(), _uniform_stats(0, 1)),
    RandomCase("rand_like_half", torch.rand_like, _x10k(torch.float16), _uniform_stats(0, 1)),
    RandomCase("randn_like_double", lambda x: torch.randn_like(x, dtype=torch.float64), _x10k(), Stats(0, 1)),
    RandomCase("randn_like", lambda x: torch.randn_like(x) * 2 + 1, _x10k(), Stats(1, 2)),
    RandomCase("randint", lambda x: torch.randint(10, (100, 100)), _x10k(), _discrete_uniform(0, 10)),
    RandomCase(
        "randint_low_int32",
        lambda x: torch.randint(-3, 4, (100, 100), dtype=torch.int32),
        _x10k(),
        _discrete_uniform(-3, 4),
    ),
    RandomCase(
        "randint_float",
        lambda x: torch.randint(0, 2, (100, 100), dtype=torch.float32),
        _x10k(),
        _discrete_uniform(0, 2),
    ),
    RandomCase(
        "randint_dynamic_high", lambda x: torch.randint(x.size(0) // 10, (100, 100)), _x10k(), _discrete_uniform(0, 10)
    ),
    RandomCase("randint_like_int32", lambda x: torch.randint_like(x, 6), _x10k(torch.int32), _discrete_uniform(0, 6)),
    RandomCase("randint_like_low", lambda x: torch.randint_like(x, 5, 8), _x10k(), _discrete_uniform(5, 8)),
    RandomCase(
        "randint_like_tensor_high",
        lambda x: torch.randint_like(x, x.new_tensor(7, dtype=torch.int64) + x.sum().long()),
        _x10k(),
        _discrete_uniform(0, 7),
    ),
    RandomCase("bernoulli_self", torch.bernoulli, _const(0.3), _bernoulli_stats(0.3)),
    RandomCase("bernoulli_self_double", torch.bernoulli, _const(0.7, torch.float64), _bernoulli_stats(0.7)),
    RandomCase("bernoulli_self_half", torch.bernoulli, _const(0.7, torch.float16), _bernoulli_stats(0.7)),
    RandomCase("bernoulli_float_p", lambda x: torch.bernoulli(x, 0.2), _x10k(), _bernoulli_stats(0.2)),
    RandomCase("bernoulli_inplace_int", lambda x: x.clone().bernoulli_(0.6), _x10k(torch.int64), _bernoulli_stats(0.6)),
    RandomCase("bernoulli_inplace_bool", lambda x: x.clone().bernoulli_(0.4), _x10k(torch.bool), _bernoulli_stats(0.4)),
    RandomCase(
        "bernoulli_inplace_tensor_p",
        lambda x: x.clone().bernoulli_(torch.full((100,), 0.9)),
        _x10k(),
        _bernoulli_stats(0.9),
    ),
    RandomCase("random_to", lambda x: x.clone().random_(7), _x10k(), _discrete_uniform(0, 7)),
    RandomCase(
        "random_from_to_int32", lambda x: x.clone().random_(-5, 5), _x10k(torch.int32), _discrete_uniform(-5, 5)
    ),
    RandomCase("random_bool", lambda x: x.clone().random_(), _x10k(torch.bool), _discrete_uniform(0, 2)),
    RandomCase("random_int8", lambda x: x.clone().random_(), _x10k(torch.int8), _discrete_uniform(0, 128)),
    RandomCase("uniform_inplace", lambda x: x.clone().uniform_(-2, 3), _x10k(), _uniform_stats(-2, 3)),
    RandomCase("uniform_inplace_half", lambda x: x.clone().uniform_(1, 2), _x10k(torch.float16), _uniform_stats(1, 2)),
    RandomCase("exponential", lambda x: x.clone().exponential_(2.0), _x10k(), Stats(0.5, 0.5, 0, None)),
    RandomCase("exponential_double", lambda x: x.clone().exponential_(), _x10k(torch.float64), Stats(1, 1, 0, None)),
    RandomCase("normal_tensor_float", lambda x: torch.normal(x + 3, 2.0), _x10k(), Stats(3, 2)),
    RandomCase("normal_float_tensor", lambda x: torch.normal(-1.0, x + 0.5), _x10k(), Stats(-1, 0.5)),
    RandomCase("normal_tensor_tensor_broadcast", lambda x: torch.normal(x[:, :1] + 2, x[:1] + 3), _x10k(), Stats(2, 3)),
    RandomCase("normal_float_float", lambda x: torch.normal(4.0, 0.5, (100, 100)), _x10k(), Stats(4, 0.5)),
    RandomCase(
        "normal_float_float_double",
        lambda x: torch.normal(4.0, 0.5, (100, 100), dtype=torch.float64),
        _x10k(),
        Stats(4, 0.5),
    ),
    RandomCase("normal_functional", lambda x: torch.ops.aten.normal_functional(x, -2.0, 0.5), _x10k(), Stats(-2, 0.5)),
    RandomCase("normal_inplace", lambda x: x.clone().normal_(1.0, 3.0), _x10k(), Stats(1, 3)),
    RandomCase("normal_inplace_half", lambda x: x.clone().normal_(), _x10k(torch.float16), Stats(0, 1)),
]


RANDOM_OPS = {"RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike", "Multinomial", "Bernoulli"}


def _export_and_run(model: torch.nn.Module, args: tuple[torch.Tensor, ...], opset: int) -> list[np.ndarray]:
    """Export, check the draw is a random node (not noise folded into a constant), run.

    Beyond ORT_RANDOM_MAX_OPSET the model runs in onnx's reference evaluator instead, which
    has every random op but Multinomial.
    """
    data, onnx_model = export_to_bytes(model, args, opset_version=opset)
    ops = {node.op_type for node in onnx_model.graph}
    assert RANDOM_OPS & ops
    if opset <= ORT_RANDOM_MAX_OPSET:
        return run_model(data, list(args))
    import onnx
    from onnx.reference import ReferenceEvaluator

    proto = onnx.load_from_string(data)
    onnx.checker.check_model(proto, full_check=True)
    assert "Multinomial" not in ops, "onnx's reference evaluator has no Multinomial: mark the test"
    feed = {i.name: t.numpy() for i, t in zip(proto.graph.input, args)}
    return list(ReferenceEvaluator(proto).run(None, feed))


def _check_stats(got: np.ndarray, stats: Stats, tolerance: float) -> None:
    values = got.astype(np.float64)
    assert np.isfinite(values).all()
    slack = tolerance * max(stats.std, 1e-3)
    assert abs(values.mean() - stats.mean) < slack, f"mean {values.mean()} vs {stats.mean}"
    assert abs(values.std() - stats.std) < slack, f"std {values.std()} vs {stats.std}"
    if stats.low is not None:
        assert values.min() >= stats.low
    if stats.high is not None:
        assert values.max() <= stats.high if stats.integral else values.max() < stats.high + 1e-3
    if stats.integral:
        assert (values == np.round(values)).all()
        span = (stats.high or 0) - (stats.low or 0)
        if span < 20:  # every value is drawn
            assert len(np.unique(values)) == span + 1


RANDOM = {c.name: c for c in RANDOM_CASES}


def _random_grid(cases: dict[str, RandomCase]) -> list[tuple[str, int]]:
    """(name, opset) pairs: each case at the opsets where an op of its graph changes lowering."""
    pairs = []
    for name, case in cases.items():
        torch.manual_seed(0)
        for opset in opsets_for_kinds(graph_kinds(Wrap(case.fn), case.inputs()), case.min_opset):
            pairs.append((name, opset))
    return pairs


def _opsets_of(fn: Callable[..., object], *inputs: torch.Tensor) -> list[int]:
    return opsets_for_kinds(graph_kinds(Wrap(fn), inputs))


@pytest.mark.parametrize(("name", "opset"), _random_grid(RANDOM))
def test_random(name: str, opset: int) -> None:
    case = RANDOM[name]
    if opset < case.min_opset:
        pytest.skip(f"{case.name} needs opset {case.min_opset}")
    args = case.inputs()
    with torch.no_grad():
        want = Wrap(case.fn)(*args).numpy()
    (got,) = _export_and_run(Wrap(case.fn), args, opset)
    assert got.dtype == want.dtype, f"dtype {got.dtype} != torch {want.dtype}"
    assert got.shape == want.shape
    _check_stats(got, case.stats, case.tolerance)
    _check_stats(want, case.stats, case.tolerance)  # the expectation itself is right


@pytest.mark.parametrize("opset", [9, 15, 20])
def test_random_dynamic_shapes(opset: int) -> None:
    """Sizes known only at run time take the *Like forms and follow the input."""

    def fn(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return torch.rand(x.size(0), 50), torch.randn_like(x), torch.randint(3, 9, x.shape), torch.bernoulli(x)

    model = Wrap(fn)
    data, _ = export_to_bytes(
        model, (torch.zeros(4, 50),), opset_version=opset, input_names=["x"], dynamic_axes={"x": {0: "n"}}
    )
    x = torch.full((200, 50), 0.25)
    outs = run_model(data, [x])
    assert [o.shape for o in outs] == [(200, 50)] * 4
    _check_stats(outs[0], _uniform_stats(0, 1), 0.06)
    _check_stats(outs[1], Stats(0, 1), 0.06)
    _check_stats(outs[2], _discrete_uniform(3, 9), 0.06)
    _check_stats(outs[3], _bernoulli_stats(0.25), 0.06)


def test_onnxruntime_bernoulli_is_inverted() -> None:
    """Why aten::bernoulli avoids ONNX Bernoulli: onnxruntime's kernel draws 1 with
    probability 1 - p. When this starts failing, Bernoulli can be used from opset 15."""
    import onnx
    import onnx.helper as oh
    import onnxruntime

    node = oh.make_node("Bernoulli", ["p"], ["y"])
    graph = oh.make_graph(
        [node],
        "g",
        [oh.make_tensor_value_info("p", onnx.TensorProto.FLOAT, [10000])],
        [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 15)], ir_version=8)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (drawn,) = session.run(None, {"p": np.full(10000, 0.1, np.float32)})
    assert abs(drawn.mean() - 0.9) < 0.03
    ops = {n.op_type for n in export_to_bytes(Wrap(torch.bernoulli), _const(0.5)(), opset_version=17)[1].graph}
    assert "Bernoulli" not in ops


def test_random_generator_is_refused() -> None:
    from exporter.errors import SymbolicError

    gen = torch.Generator().manual_seed(1)
    with pytest.raises(SymbolicError, match="Generator"):
        export_to_bytes(Wrap(lambda x: torch.rand(3, generator=gen) + x), (torch.zeros(3),), opset_version=13)


# -- multinomial -------------------------------------------------------------------------------

PROBS = torch.tensor([0.1, 0.0, 0.2, 0.3, 0.4])


def _category_frequencies(samples: np.ndarray, classes: int) -> np.ndarray:
    return np.bincount(samples.reshape(-1), minlength=classes) / samples.size


# onnxruntime registers its Multinomial CPU kernel for opsets 7-21 only (fixed upstream by
# microsoft/onnxruntime#32201), and onnx's reference evaluator has no Multinomial.
MULTINOMIAL_OPSETS = [
    opset
    if opset <= ORT_RANDOM_MAX_OPSET
    else pytest.param(
        opset,
        marks=pytest.mark.xfail(
            reason="no Multinomial kernel from opset 22 until microsoft/onnxruntime#32201",
            strict=True,
            raises=AssertionError,
        ),
    )
    for opset in _opsets_of(
        lambda p: (torch.multinomial(p, 5000, replacement=True), torch.multinomial(p[0] * 3, 1)),
        torch.stack([PROBS, PROBS]),
    )
]


@pytest.mark.parametrize("opset", MULTINOMIAL_OPSETS)
def test_multinomial_with_replacement(opset: int) -> None:
    model = Wrap(lambda p: (torch.multinomial(p, 5000, replacement=True), torch.multinomial(p[0] * 3, 1)))
    probs = torch.stack([PROBS, PROBS])
    with torch.no_grad():
        want = [t.numpy() for t in model(probs)]
    first = _export_and_run(model, (probs,), opset)
    for got, expected in zip(first, want):
        assert got.dtype == expected.dtype == np.int64 and got.shape == expected.shape
    assert np.abs(_category_frequencies(first[0], 5) - PROBS.numpy()).max() < 0.02


@pytest.mark.parametrize("opset", _opsets_of(lambda p: torch.multinomial(p, 3), PROBS.expand(4000, 5).contiguous()))
def test_multinomial_without_replacement(opset: int) -> None:
    """Gumbel-top-k: distinct categories; first picks follow p, zero-probability never drawn."""
    model = Wrap(lambda p: torch.multinomial(p, 3))
    probs = PROBS.expand(4000, 5).contiguous()
    with torch.no_grad():
        want = model(probs).numpy()
    (got,) = _export_and_run(model, (probs,), opset)
    assert got.dtype == want.dtype and got.shape == want.shape == (4000, 3)
    assert all(len(set(row)) == 3 for row in got.tolist())
    assert not (got == 1).any()
    for column in range(3):  # the position-wise frequencies match torch's sequential sampling
        diff = np.abs(_category_frequencies(got[:, column], 5) - _category_frequencies(want[:, column], 5))
        assert diff.max() < 0.04, (column, diff)


# -- gamma and Dirichlet -----------------------------------------------------------------------

ALPHA = torch.tensor([0.3, 1.0, 4.0])
CONCENTRATION = torch.tensor([1.0, 2.0, 3.0])


def _check_columns(got: np.ndarray, want: np.ndarray, mean: np.ndarray, std: np.ndarray) -> None:
    assert np.isfinite(got).all() and (got > 0).all()
    assert np.abs(got.mean(0) - mean).max() < 0.05 * std.max(), (got.mean(0), mean)
    assert np.abs(got.std(0) - std).max() < 0.05 * std.max(), (got.std(0), std)
    # the shape of the distribution too: medians agree with torch's own draw
    assert np.abs(np.median(got, 0) - np.median(want, 0)).max() < 0.05 * std.max()


@pytest.mark.parametrize(
    "opset", _opsets_of(lambda a, c: (torch._standard_gamma(a), torch._sample_dirichlet(c)), ALPHA, CONCENTRATION)
)
def test_gamma_and_dirichlet(opset: int) -> None:
    model = Wrap(lambda a, c: (torch._standard_gamma(a), torch._sample_dirichlet(c)))
    args = (ALPHA.repeat(10000, 1), CONCENTRATION.repeat(10000, 1))
    with torch.no_grad():
        want = [t.numpy() for t in model(*args)]
    got = _export_and_run(model, args, opset)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
    a = ALPHA.numpy()
    _check_columns(got[0], want[0], a, np.sqrt(a))
    c = CONCENTRATION.numpy()
    total = c.sum()
    _check_columns(got[1], want[1], c / total, np.sqrt(c * (total - c) / (total**2 * (total + 1))))
    assert np.allclose(got[1].sum(-1), 1.0, atol=1e-5)


def test_gamma_dynamic_shape_and_double() -> None:
    """Dynamic sizes draw the proposals through an expanded template; double stays double."""
    model = Wrap(lambda a: torch._standard_gamma(a).float())
    data, _ = export_to_bytes(
        model, (ALPHA.double().repeat(4, 1),), opset_version=13, input_names=["a"], dynamic_axes={"a": {0: "n"}}
    )
    (got,) = run_model(data, [ALPHA.double().repeat(10000, 1)])
    assert got.shape == (10000, 3)
    a = ALPHA.numpy()
    assert np.abs(got.mean(0) - a).max() < 0.1 and np.abs(got.std(0) - np.sqrt(a)).max() < 0.1


# ============================================================================================
# STFT (opset 17)
# ============================================================================================

STFT_CASES = {
    "stft_rect_center": (
        lambda x: torch.stft(x, 16, window=torch.ones(16), return_complex=False),
        lambda: (torch.randn(2, 100),),
    ),
    "stft_short_hann_normalized": (
        lambda x, w: torch.stft(x, 16, 5, 12, w, normalized=True, return_complex=False),
        lambda: (torch.randn(2, 100), torch.hann_window(12)),
    ),
    "stft_1d_double_twosided": (
        lambda x: torch.stft(
            x, 16, 4, window=torch.ones(16, dtype=torch.float64), center=False, onesided=False, return_complex=False
        ),
        lambda: (torch.randn(64, dtype=torch.float64),),
    ),
    "stft_center_constant_pad": (
        lambda x, w: torch.stft(x, 8, 2, window=w, pad_mode="constant", return_complex=False),
        lambda: (torch.randn(3, 40), torch.hamming_window(8)),
    ),
}


STFT = [Case(name, fn, inputs, min_opset=17, atol=1e-4) for name, (fn, inputs) in STFT_CASES.items()]


@pytest.mark.parametrize(("case", "opset"), op_params(STFT))
def test_stft(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_stft_below_17_names_17_and_complex_is_refused() -> None:
    from exporter.errors import SymbolicError, UnsupportedOperatorError

    fn, inputs = STFT_CASES["stft_rect_center"]
    with pytest.raises(UnsupportedOperatorError, match="17"):
        export_to_bytes(Wrap(fn), inputs(), opset_version=16)
    with pytest.raises(SymbolicError, match="return_complex"):
        export_to_bytes(
            Wrap(lambda x: torch.stft(x, 16, window=torch.ones(16), return_complex=True).abs()),
            inputs(),
            opset_version=17,
        )


def test_random_unbounded_int64_is_refused() -> None:
    from exporter.errors import SymbolicError

    with pytest.raises(SymbolicError, match="2\\*\\*32"):
        export_to_bytes(Wrap(lambda x: x.clone().random_()), (torch.zeros(3, dtype=torch.int64),), opset_version=13)
