"""The op table for pooling: max, average, adaptive and lp pooling (exporter.opset9.pooling).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from cases import (
    Case,
    f32,
    helper_params,
    lowering_opsets,
    one_torch_thread,
    op_params,
    rand,
    run_case,
    signature_opsets,
)
from conftest import Wrap, assert_matches_torch, export_to_bytes

import exporter
from exporter.errors import ExporterError
from exporter.symbolic_opset9 import pooling

# small eager kernels run several times faster single-threaded on a loaded machine
_one_torch_thread = pytest.fixture(autouse=True, scope="module")(one_torch_thread)


def distinct_inputs(*shape: int, dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    """Values without ties, so max-pool indices are unique."""
    n = 1
    for d in shape:
        n *= d
    return lambda: ((torch.randperm(n).reshape(shape).to(torch.float32) / n - 0.5).to(dtype),)


CASES = [
    # pooling on unbatched and integer inputs
    Case("max_pool_unbatched", lambda x: F.max_pool2d(x, 2), f32(3, 8, 8)),
    Case("avg_pool_unbatched", lambda x: F.avg_pool2d(x, 2), f32(3, 8, 8)),
    Case("max_pool_int64", lambda x: F.max_pool2d(x, 2), lambda: (torch.randint(-50, 50, (1, 3, 8, 8)),)),
    # pooling with indices
    Case(
        "max_pool1d_indices",
        lambda x: F.max_pool1d(x, 3, stride=2, padding=1, return_indices=True),
        distinct_inputs(2, 3, 11),
    ),
    Case("max_pool2d_indices", lambda x: F.max_pool2d(x, 2, return_indices=True), distinct_inputs(2, 3, 6, 6)),
    Case(
        "max_pool2d_indices_ceil",
        lambda x: F.max_pool2d(x, 3, stride=2, ceil_mode=True, return_indices=True),
        distinct_inputs(1, 2, 8, 9),
    ),
    Case(
        "max_pool2d_indices_ceil_pad_edge",
        lambda x: F.max_pool2d(x, 2, stride=2, padding=1, ceil_mode=True, return_indices=True),
        distinct_inputs(1, 1, 5, 6),
    ),
    Case(
        "max_pool2d_indices_dilation",
        lambda x: F.max_pool2d(x, 2, dilation=2, return_indices=True),
        distinct_inputs(1, 2, 7, 7),
        min_opset=10,
    ),
    Case(
        "max_pool3d_indices",
        lambda x: F.max_pool3d(x, 2, stride=(1, 2, 2), return_indices=True),
        distinct_inputs(1, 2, 4, 4, 5),
    ),
    Case(
        "max_pool2d_indices_unbatched",
        lambda x: F.max_pool2d(x, 2, stride=1, return_indices=True),
        distinct_inputs(3, 4, 5),
    ),
    Case(
        "max_pool1d_indices_unbatched_ceil",
        lambda x: F.max_pool1d(x, 3, stride=2, ceil_mode=True, return_indices=True),
        distinct_inputs(3, 10),
    ),
    Case(
        "max_pool2d_indices_int64",
        lambda x: F.max_pool2d(x, 2, return_indices=True),
        lambda: (torch.randperm(32).reshape(1, 2, 4, 4) - 16,),
    ),
    Case(
        "max_pool1d_indices_int32",
        lambda x: F.max_pool1d(x, 3, stride=2, padding=1, return_indices=True),
        lambda: ((torch.randperm(18) * 1000).reshape(1, 2, 9).int(),),
    ),
    Case(
        "max_pool2d_indices_uint8",
        lambda x: F.max_pool2d(x, 2, return_indices=True),
        lambda: (torch.randperm(32).reshape(1, 2, 4, 4).to(torch.uint8),),
    ),
    Case(
        "max_pool2d_indices_double",
        lambda x: F.max_pool2d(x, 2, return_indices=True),
        distinct_inputs(1, 2, 4, 4, dtype=torch.float64),
    ),
    # adaptive max pooling (values and indices)
    Case(
        "adaptive_max_pool1d_divides",
        lambda x: F.adaptive_max_pool1d(x, 4, return_indices=True),
        distinct_inputs(2, 3, 8),
    ),
    Case(
        "adaptive_max_pool1d_uneven",
        lambda x: F.adaptive_max_pool1d(x, 3, return_indices=True),
        distinct_inputs(2, 3, 7),
    ),
    Case(
        "adaptive_max_pool2d_divides",
        lambda x: F.adaptive_max_pool2d(x, (3, 2), return_indices=True),
        distinct_inputs(2, 3, 6, 4),
    ),
    Case(
        "adaptive_max_pool2d_uneven",
        lambda x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True),
        distinct_inputs(2, 3, 7, 5),
    ),
    Case(
        "adaptive_max_pool2d_upsample",
        lambda x: F.adaptive_max_pool2d(x, (5, 3), return_indices=True),
        distinct_inputs(1, 2, 3, 2),
    ),
    Case(
        "adaptive_max_pool3d_uneven",
        lambda x: F.adaptive_max_pool3d(x, (2, 3, 2), return_indices=True),
        distinct_inputs(1, 2, 5, 4, 3),
    ),
    Case(
        "adaptive_max_pool2d_unbatched",
        lambda x: F.adaptive_max_pool2d(x, (2, 3), return_indices=True),
        distinct_inputs(3, 5, 7),
    ),
    Case(
        "adaptive_max_pool1d_unbatched_divides",
        lambda x: F.adaptive_max_pool1d(x, 2, return_indices=True),
        distinct_inputs(3, 6),
    ),
    Case(
        "adaptive_max_pool3d_global",
        lambda x: F.adaptive_max_pool3d(x, 1, return_indices=True),
        distinct_inputs(1, 2, 3, 4, 3),
    ),
    # ceil_mode pooling (opset 9 has no ceil_mode: the tail is padded)
    Case("max_pool2d_ceil", lambda x: F.max_pool2d(x, 2, 2, ceil_mode=True), f32(1, 2, 5, 5)),
    Case("max_pool2d_ceil_pad", lambda x: F.max_pool2d(x, 3, 2, padding=1, ceil_mode=True), f32(1, 2, 6, 7)),
    Case("max_pool1d_ceil", lambda x: F.max_pool1d(x, 3, 2, ceil_mode=True), f32(2, 3, 8)),
    Case("max_pool3d_ceil", lambda x: F.max_pool3d(x, 2, 2, ceil_mode=True), f32(1, 1, 3, 5, 4)),
    Case("avg_pool2d_ceil", lambda x: F.avg_pool2d(x, 2, 2, ceil_mode=True), f32(1, 2, 5, 5)),
    Case("avg_pool2d_ceil_pad", lambda x: F.avg_pool2d(x, 3, 2, padding=1, ceil_mode=True), f32(1, 2, 6, 7)),
    Case(
        "avg_pool2d_ceil_exclude_pad",
        lambda x: F.avg_pool2d(x, 3, 2, padding=1, ceil_mode=True, count_include_pad=False),
        f32(1, 2, 6, 7),
    ),
    Case("avg_pool1d_ceil_pad", lambda x: F.avg_pool1d(x, 4, 3, padding=2, ceil_mode=True), f32(2, 3, 10)),
    Case("avg_pool3d_ceil", lambda x: F.avg_pool3d(x, 2, 2, ceil_mode=True), f32(1, 1, 3, 5, 4)),
    Case("avg_pool2d_ceil_unbatched", lambda x: F.avg_pool2d(x, 2, 2, ceil_mode=True), f32(2, 5, 5)),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = [
    "max_pool_unbatched",
    "max_pool2d_indices",
    "adaptive_max_pool2d_uneven",
    "max_pool2d_ceil_pad",
    "avg_pool2d_ceil_pad",
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


@pytest.mark.parametrize("opset", lowering_opsets("aten::max_pool2d", "aten::avg_pool2d", helpers=True, min_opset=10))
def test_pooling_ceil_mode_and_dilation(opset: int) -> None:
    model = Wrap(lambda x: F.max_pool2d(x, 3, stride=2, ceil_mode=True).sum() + F.max_pool2d(x, 2, dilation=2).sum())
    assert_matches_torch(model, (torch.randn(1, 2, 9, 9),), opset=opset)


def test_ceil_mode_at_opset_9_pads_the_tail() -> None:
    """MaxPool/AveragePool-9 have no ceil_mode: the tail is padded so the sizes come out."""
    model = Wrap(
        lambda x: (
            F.max_pool2d(x, 3, stride=2, ceil_mode=True),
            F.avg_pool2d(x, 3, stride=2, ceil_mode=True),
            F.avg_pool2d(x, 2, stride=2, padding=1, ceil_mode=True, count_include_pad=True),
        )
    )
    assert_matches_torch(model, (torch.randn(1, 2, 8, 9),), opset=9)


ADAPTIVE_AVG = [
    ("2d_uneven", lambda x: F.adaptive_avg_pool2d(x, (3, 2)), rand((2, 3, 7, 5))),
    ("2d_upsample", lambda x: F.adaptive_avg_pool2d(x, (4, 5)), rand((1, 2, 3, 2))),
    ("2d_none", lambda x: F.adaptive_avg_pool2d(x, (3, None)), rand((1, 2, 8, 5))),
    ("2d_half", lambda x: F.adaptive_avg_pool2d(x, 3), rand((1, 2, 7, 7), dtype=torch.float16)),
    ("2d_divides", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), rand((1, 2, 4, 6))),
    ("2d_global", lambda x: F.adaptive_avg_pool2d(x, 1), rand((1, 2, 5, 3))),
    ("1d_uneven", lambda x: F.adaptive_avg_pool1d(x, 3), rand((2, 3, 7))),
    ("2d_unbatched_uneven", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), rand((3, 5, 7))),
    ("2d_unbatched_divides", lambda x: F.adaptive_avg_pool2d(x, (2, 1)), rand((3, 4, 4))),
    ("3d_uneven", lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)), rand((1, 2, 5, 4, 3))),
]


@pytest.mark.parametrize("opset", lowering_opsets("aten::adaptive_avg_pool2d", helpers=True))
@pytest.mark.parametrize(("fn", "inputs"), [a[1:] for a in ADAPTIVE_AVG], ids=[a[0] for a in ADAPTIVE_AVG])
def test_adaptive_avg_pool_general(
    fn: Callable[..., object], inputs: Callable[[], tuple[torch.Tensor, ...]], opset: int
) -> None:
    x = inputs()
    tolerance = dict(atol=2e-3, rtol=2e-3) if x[0].dtype == torch.float16 else {}
    assert_matches_torch(Wrap(fn), x, opset=opset, **tolerance)


def test_adaptive_windows_match_torch() -> None:
    for size_in, size_out in [(7, 3), (5, 4), (3, 5), (10, 10), (1, 4), (11, 4)]:
        # adaptive average pooling of the identity: column o is 1/len on window o
        weights = F.adaptive_avg_pool1d(torch.eye(size_in).unsqueeze(0), size_out)[0]
        torch_windows = []
        for o in range(size_out):
            rows = torch.nonzero(weights[:, o]).flatten().tolist()
            torch_windows.append((rows[0], rows[-1] + 1))
        assert pooling.adaptive_windows(size_in, size_out) == torch_windows


DYNAMIC = [
    ("max_pool2d_indices", lambda x: F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True), 9),
    ("max_pool1d_indices_ceil", lambda x: F.max_pool1d(x.flatten(2), 2, ceil_mode=True, return_indices=True), 10),
    (
        "max_pool2d_indices_ceil_pad",
        lambda x: F.max_pool2d(x, 2, stride=2, padding=1, ceil_mode=True, return_indices=True),
        10,
    ),
]


@pytest.mark.parametrize("opset", lowering_opsets("aten::max_pool2d", "aten::avg_pool2d", helpers=True))
@pytest.mark.parametrize(("fn", "min_opset"), [d[1:] for d in DYNAMIC], ids=[d[0] for d in DYNAMIC])
def test_dynamic_shapes(fn: Callable[..., object], min_opset: int, opset: int) -> None:
    if opset < min_opset:
        pytest.skip(f"needs opset {min_opset}")
    assert_matches_torch(
        Wrap(fn),
        (torch.randn(2, 6, 5, 6),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0, 2, 3]},
        other_inputs=[(torch.randn(1, 6, 7, 3),)],
    )


def test_pool_ceil_padding_matches_torch_sizes() -> None:
    for size in range(4, 12):
        for kernel, stride, pad in [(3, 2, 1), (2, 2, 1), (3, 3, 0), (2, 1, 0), (4, 3, 2)]:
            expected = F.max_pool1d(torch.zeros(1, 1, size), kernel, stride, pad, ceil_mode=True).shape[-1]
            extra = pooling.pool_ceil_padding(size, kernel, stride, pad, 1)
            floor_out = (size + 2 * pad + extra - kernel) // stride + 1
            assert floor_out == expected, (size, kernel, stride, pad)


def test_ceil_mode_with_dynamic_sizes_at_opset_9_names_opset_10() -> None:
    model = Wrap(lambda x: F.max_pool2d(x, 2, ceil_mode=True, return_indices=True))
    with pytest.raises(ExporterError, match="opset 10"):
        export_to_bytes(
            model, (torch.randn(1, 2, 5, 5),), opset_version=9, input_names=["x"], dynamic_axes={"x": [2, 3]}
        )


def test_ceil_mode_with_static_sizes_works_at_opset_9() -> None:
    model = Wrap(lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, return_indices=True))
    assert_matches_torch(model, distinct_inputs(1, 2, 6, 8)(), opset=9)


@pytest.mark.parametrize(
    "opset",
    sorted({*lowering_opsets("aten::max_pool2d_with_indices", helpers=True), *signature_opsets("max_pool_dtype")}),
)
def test_max_pool_indices_int64_dynamic(opset: int) -> None:
    model = Wrap(lambda x: F.max_pool2d(x, 2, return_indices=True))
    assert_matches_torch(
        model,
        (torch.randperm(50).reshape(1, 2, 5, 5),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0, 2, 3]},
        other_inputs=[(torch.randperm(84).reshape(2, 2, 7, 3),)],
    )


def test_ceil_mode_pooling_with_dynamic_sizes_at_9_names_opset_10() -> None:
    model = Wrap(lambda x: F.max_pool2d(x, 2, 2, ceil_mode=True))
    with pytest.raises(ExporterError, match="opset 10"):
        exporter.export(
            model,
            (torch.randn(1, 1, 5, 5),),
            io.BytesIO(),
            opset_version=9,
            input_names=["x"],
            dynamic_axes={"x": {2: "h"}},
        )
