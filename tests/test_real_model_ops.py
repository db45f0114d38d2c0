"""Ops seen failing in real transformers models (issue #15): lift_fresh (BigBird), histc and
_grouped_mm (Mixtral experts), the one-argument where (Mixtral eager experts), diff (Whisper),
cat/stack type promotion, ceil_mode pooling at opset 9 and linear/cubic interpolation at 9/10.

Each case is traced, exported, run in onnxruntime and compared with eager torch (dtype, shape,
values) at 9, the newest opset and every opset where one of its ops' lowering changes
(tests/cases.py); the helper branches (Slice 10, Clip/Pad 11, ReduceSum 13, Reduce* 18) run for
a representative set.
"""

from __future__ import annotations

import io

import pytest
import torch
import torch.nn.functional as F
from cases import Case, helper_params, op_params, run_case
from conftest import Wrap, assert_matches_torch

import exporter
from exporter.errors import ExporterError


def rand(*shape: int, dtype: torch.dtype = torch.float32):  # noqa: ANN201 - an inputs factory
    return lambda: (torch.randn(*shape).to(dtype),)


def histc_edges() -> tuple[torch.Tensor, ...]:
    """Values on the bin edges (min, max, interior edges), outside [min, max] and NaN."""
    x = torch.randn(60)
    x[:8] = torch.tensor([-1.0, 1.0, -0.5, 0.0, 0.5, 1.5, -3.0, float("nan")])
    return (x,)


def expert_indices() -> tuple[torch.Tensor, ...]:
    """Mixtral: top-2 expert indices of 10 tokens over 8 experts, as float for histc."""
    return (torch.randint(0, 8, (10, 2)).float(),)


def grouped(m: int, k: int, n: int, ends: tuple[int, ...]):  # noqa: ANN201 - an inputs factory
    return lambda: (torch.randn(m, k), torch.randn(len(ends), k, n), torch.tensor(ends, dtype=torch.int32))


def _grouped_mm(*args: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten._grouped_mm(*args)


CASES = [
    # BigBird: a tensor made by torch.tensor() inside forward is lifted
    Case("lift_fresh", lambda x: torch.ops.aten.lift_fresh(x) * 2, rand(3, 4)),
    # Mixtral: tokens per expert
    Case("histc_data_range", lambda x: torch.histc(x, bins=5), rand(40)),
    Case("histc_given_range", lambda x: torch.histc(x, bins=4, min=-1, max=1), histc_edges),
    Case("histc_experts", lambda x: torch.histc(x, bins=8, min=0, max=7), expert_indices),
    Case("histc_constant_input", lambda x: torch.histc(x * 0 + 2, bins=3), rand(2, 3)),
    Case("histc_min_equals_max", lambda x: torch.histc(x, bins=4, min=1, max=1), rand(30)),
    Case("histc_double", lambda x: torch.histc(x, bins=6), rand(25, dtype=torch.float64)),
    # Mixtral eager experts: torch.where(mask) is nonzero(as_tuple=True)
    Case("where_condition", lambda x: torch.where(x > 0), rand(3, 4)),
    Case("where_condition_1d", lambda x: torch.where(x > 0)[0] * 2, rand(7)),
    Case("where_condition_float", lambda x: torch.where(x.relu()), rand(2, 3, 4)),
    Case("where_three_args", lambda c, x: torch.where(c > 0, x, x * 2), lambda: (torch.randn(3, 4), torch.randn(3, 4))),
    Case("where_scalar_other", lambda c, x: torch.where(c > 0, x, 0.5), lambda: (torch.randn(3, 4), torch.randn(3, 4))),
    Case("where_scalar_self", lambda c, x: torch.where(c > 0, 1.5, x), lambda: (torch.randn(3, 4), torch.randn(3, 4))),
    # Whisper
    Case("diff", lambda x: torch.diff(x), rand(3, 5)),
    Case("diff_n2_dim0", lambda x: torch.diff(x, n=2, dim=0), rand(5, 4)),
    Case("diff_n0", lambda x: torch.diff(x, n=0), rand(3, 4)),
    Case(
        "diff_prepend_append",
        lambda x, p, a: torch.diff(x, dim=1, prepend=p, append=a),
        lambda: (torch.randn(3, 4), torch.randn(3, 1), torch.randn(3, 2)),
    ),
    Case("diff_bool", lambda x: torch.diff(x > 0), rand(3, 6)),
    Case("diff_int", lambda x: torch.diff(x, n=3), lambda: (torch.randint(-9, 9, (2, 7)),)),
    Case(
        "diff_dynamic_length",
        lambda x: torch.diff(x, n=2),
        rand(2, 6),
        dynamic={"x0": {1: "n"}},
        others=lambda: [(torch.randn(2, 9),)],
        min_opset=10,
    ),
    # cat/stack promote like torch.result_type
    Case("cat_int_float", lambda a, b: torch.cat([a, b]), lambda: (torch.arange(3), torch.randn(2))),
    Case(
        "cat_half_float_int",
        lambda a, b, c: torch.cat([a, b, c], dim=1),
        lambda: (torch.randn(2, 1).half(), torch.randn(2, 2), torch.ones(2, 1, dtype=torch.int32)),
    ),
    Case("cat_bool_int", lambda a, b: torch.cat([a > 0, b]), lambda: (torch.randn(3), torch.arange(2))),
    Case("stack_int_float", lambda a, b: torch.stack([a, b], dim=-1), lambda: (torch.arange(3), torch.randn(3))),
    Case("stack_int32_int64", lambda a, b: torch.stack([a, b]), lambda: (torch.arange(3).int(), torch.arange(3))),
    # ceil_mode pooling (opset 9 has no ceil_mode: the tail is padded)
    Case("max_pool2d_ceil", lambda x: F.max_pool2d(x, 2, 2, ceil_mode=True), rand(1, 2, 5, 5)),
    Case("max_pool2d_ceil_pad", lambda x: F.max_pool2d(x, 3, 2, padding=1, ceil_mode=True), rand(1, 2, 6, 7)),
    Case("max_pool1d_ceil", lambda x: F.max_pool1d(x, 3, 2, ceil_mode=True), rand(2, 3, 8)),
    Case("max_pool3d_ceil", lambda x: F.max_pool3d(x, 2, 2, ceil_mode=True), rand(1, 1, 3, 5, 4)),
    Case("avg_pool2d_ceil", lambda x: F.avg_pool2d(x, 2, 2, ceil_mode=True), rand(1, 2, 5, 5)),
    Case("avg_pool2d_ceil_pad", lambda x: F.avg_pool2d(x, 3, 2, padding=1, ceil_mode=True), rand(1, 2, 6, 7)),
    Case(
        "avg_pool2d_ceil_exclude_pad",
        lambda x: F.avg_pool2d(x, 3, 2, padding=1, ceil_mode=True, count_include_pad=False),
        rand(1, 2, 6, 7),
    ),
    Case("avg_pool1d_ceil_pad", lambda x: F.avg_pool1d(x, 4, 3, padding=2, ceil_mode=True), rand(2, 3, 10)),
    Case("avg_pool3d_ceil", lambda x: F.avg_pool3d(x, 2, 2, ceil_mode=True), rand(1, 1, 3, 5, 4)),
    Case("avg_pool2d_ceil_unbatched", lambda x: F.avg_pool2d(x, 2, 2, ceil_mode=True), rand(2, 5, 5)),
    # linear and cubic interpolation with torch's half-pixel / align_corners coordinates
    Case("bilinear_scale", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), rand(1, 2, 3, 4)),
    Case("bilinear_fraction", lambda x: F.interpolate(x, scale_factor=1.7, mode="bilinear"), rand(1, 2, 4, 5)),
    Case("bilinear_size_down", lambda x: F.interpolate(x, size=(3, 2), mode="bilinear"), rand(1, 2, 7, 5)),
    Case("bilinear_to_one", lambda x: F.interpolate(x, size=(1, 3), mode="bilinear"), rand(1, 2, 4, 5)),
    Case(
        "bilinear_align",
        lambda x: F.interpolate(x, size=(7, 5), mode="bilinear", align_corners=True),
        rand(1, 2, 3, 4),
    ),
    Case(
        "bilinear_recompute",
        lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear", recompute_scale_factor=True),
        rand(1, 2, 3, 5),
    ),
    Case("bicubic_scale", lambda x: F.interpolate(x, scale_factor=2, mode="bicubic"), rand(1, 2, 3, 4)),
    Case("bicubic_fraction", lambda x: F.interpolate(x, scale_factor=1.5, mode="bicubic"), rand(1, 2, 4, 5)),
    Case("bicubic_size_down", lambda x: F.interpolate(x, size=(2, 3), mode="bicubic"), rand(1, 2, 6, 7)),
    Case(
        "bicubic_align",
        lambda x: F.interpolate(x, size=(5, 7), mode="bicubic", align_corners=True),
        rand(1, 1, 3, 3),
    ),
    Case("linear1d", lambda x: F.interpolate(x, scale_factor=2.5, mode="linear"), rand(2, 3, 4)),
    Case("trilinear", lambda x: F.interpolate(x, scale_factor=(2, 1.5, 2), mode="trilinear"), rand(1, 2, 2, 4, 3)),
    Case(
        "bilinear_double",
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
        rand(1, 2, 3, 4, dtype=torch.float64),
    ),
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

HELPER_CASES = [
    "histc_data_range",
    "histc_given_range",
    "diff_prepend_append",
    "max_pool2d_ceil_pad",
    "avg_pool2d_ceil_pad",
    "bilinear_scale",
    "bicubic_fraction",
    "grouped_mm_2d_3d",
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_real_model_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_where_condition_outputs_one_index_tensor_per_dim() -> None:
    x = torch.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    model = assert_matches_torch(Wrap(lambda c: torch.where(c != 0)), (x,), opset=9)
    assert len(model.graph.outputs) == 2


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


@pytest.mark.parametrize("opset", [9, 10])
def test_bilinear_with_dynamic_sizes_below_11_names_opset_11(opset: int) -> None:
    model = Wrap(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"))
    with pytest.raises(ExporterError, match="opset 11"):
        exporter.export(
            model,
            (torch.randn(1, 1, 3, 3),),
            io.BytesIO(),
            opset_version=opset,
            input_names=["x"],
            dynamic_axes={"x": {2: "h", 3: "w"}},
        )


class ScriptedResize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, size=[5, 7], mode="bilinear", align_corners=False)


@pytest.mark.parametrize("opset", [9, 10])
def test_scripted_bilinear_below_11_matches_torch(opset: int) -> None:
    assert_matches_torch(torch.jit.script(ScriptedResize()), (torch.randn(1, 2, 3, 4),), opset=opset)
