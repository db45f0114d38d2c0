"""The op table for random ops and dropout (exporter.opset9.random_ops).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from cases import Case, graph_kinds, lowering_opsets, op_params, opsets_for_kinds, rand, run_case
from conftest import ORT_COMPLETE_OPSET, Wrap, export_to_bytes, run_model

from exporter.errors import ExporterError


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


def _category_frequencies(samples: np.ndarray, classes: int) -> np.ndarray:
    return np.bincount(samples.reshape(-1), minlength=classes) / samples.size


def _check_columns(got: np.ndarray, want: np.ndarray, mean: np.ndarray, std: np.ndarray) -> None:
    assert np.isfinite(got).all() and (got > 0).all()
    assert np.abs(got.mean(0) - mean).max() < 0.05 * std.max(), (got.mean(0), mean)
    assert np.abs(got.std(0) - std).max() < 0.05 * std.max(), (got.std(0), std)
    # the shape of the distribution too: medians agree with torch's own draw
    assert np.abs(np.median(got, 0) - np.median(want, 0)).max() < 0.05 * std.max()


CASES = [
    # dropout variants in eval
    Case("alpha_dropout_eval", lambda x: F.alpha_dropout(x, 0.5, training=False) * 2, rand((3, 4))),
    Case("feature_alpha_dropout_eval", lambda x: F.feature_alpha_dropout(x, 0.5, training=False) + 1, rand((2, 3, 4))),
    Case("native_dropout_eval", lambda x: torch.native_dropout(x, 0.5, False), rand((3, 4))),
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


def test_native_dropout_training_below_12_names_opset_12() -> None:
    model = Wrap(lambda x: torch.native_dropout(x, 0.5, True))
    with pytest.raises(ExporterError, match="opset 12"):
        export_to_bytes(model, (torch.randn(4, 4),), opset_version=11)


def test_alpha_dropout_training_is_refused() -> None:
    model = Wrap(lambda x: F.alpha_dropout(x, 0.5, training=True))
    with pytest.raises(ExporterError, match="alpha_dropout"):
        export_to_bytes(model, (torch.randn(4, 4),), opset_version=13)


@pytest.mark.parametrize("opset", lowering_opsets("aten::native_dropout", helpers=True, min_opset=12))
@pytest.mark.parametrize("train", [True, None])
def test_native_dropout_training_statistics(opset: int, train: bool | None) -> None:
    model = Wrap(lambda x: torch.native_dropout(x, 0.3, train))
    x = torch.rand(200, 100) + 1.0  # never zero, so a zero output means dropped
    data, _ = export_to_bytes(model, (x,), opset_version=opset)
    out, mask = run_model(data, [x])
    assert out.shape == (200, 100) and out.dtype == x.numpy().dtype
    assert mask.shape == (200, 100) and mask.dtype == bool
    kept = mask.mean()
    assert 0.65 < kept < 0.75, kept
    expected = torch.where(torch.from_numpy(mask), x / 0.7, torch.zeros(()))
    torch.testing.assert_close(torch.from_numpy(out), expected, rtol=1e-5, atol=1e-6)
    out2, mask2 = run_model(data, [x])
    assert (mask != mask2).any(), "the mask must be random per run"


# onnxruntime (1.31) has no CPU kernels for RandomUniform/RandomNormal(/Like)/Multinomial at
# their opset-22 versions, so random models exported at 22+ are valid ONNX that it cannot load.
ORT_RANDOM_MAX_OPSET = 21


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


RANDOM = {c.name: c for c in RANDOM_CASES}


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


@pytest.mark.parametrize(
    "opset",
    sorted({*lowering_opsets("aten::rand", "aten::randn", "aten::bernoulli", helpers=True), ORT_COMPLETE_OPSET}),
)
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


PROBS = torch.tensor([0.1, 0.0, 0.2, 0.3, 0.4])


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


ALPHA = torch.tensor([0.3, 1.0, 4.0])


CONCENTRATION = torch.tensor([1.0, 2.0, 3.0])


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


def test_random_unbounded_int64_is_refused() -> None:
    from exporter.errors import SymbolicError

    with pytest.raises(SymbolicError, match="2\\*\\*32"):
        export_to_bytes(Wrap(lambda x: x.clone().random_()), (torch.zeros(3, dtype=torch.int64),), opset_version=13)
