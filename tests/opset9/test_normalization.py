"""Normalization, convolution variants, pooling with indices, adaptive pooling, interpolation,
dropout variants, grid sampling and affine grids: traced (and some scripted) graphs exported,
run in onnxruntime and compared with eager torch at every opset where its lowering changes (tests/cases.py) they support."""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterator

import pytest
import torch
import torch.nn.functional as F
from cases import Case, helper_params, op_params, run_case
from conftest import NEWEST, Wrap, assert_matches_torch, export_to_bytes, run_model

from exporter.errors import ExporterError
from exporter.symbolic_opset9 import pooling


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread() -> Iterator[None]:
    """Small eager kernels run several times faster single-threaded on a loaded machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def rand(*shapes: tuple[int, ...], dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: tuple(torch.randn(s).to(dtype) for s in shapes)


def distinct(*shape: int, dtype: torch.dtype = torch.float32) -> Callable[[], tuple[torch.Tensor, ...]]:
    """Values without ties, so max-pool indices are unique."""
    n = 1
    for d in shape:
        n *= d
    return lambda: ((torch.randperm(n).reshape(shape).to(torch.float32) / n - 0.5).to(dtype),)


def grid_inputs(
    n: int = 2, c: int = 3, h: int = 5, w: int = 6, oh: int = 4, ow: int = 3
) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randn(n, c, h, w), torch.rand(n, oh, ow, 2) * 2.4 - 1.2)


HALF = dict(atol=2e-3, rtol=2e-3)

CASES = [
    # group_norm
    Case("group_norm", lambda x: F.group_norm(x, 3), rand((2, 6, 5, 4))),
    Case("group_norm_affine", lambda x, w, b: F.group_norm(x, 2, w, b, eps=1e-3), rand((2, 6, 7), (6,), (6,))),
    Case("group_norm_rank2", lambda x, w: F.group_norm(x, 3, w), rand((4, 6), (6,))),
    Case("group_norm_half", lambda x: F.group_norm(x, 2), rand((2, 4, 3, 3), dtype=torch.float16), **HALF),
    # instance_norm
    Case("instance_norm", lambda x: F.instance_norm(x), rand((2, 3, 5, 4))),
    Case(
        "instance_norm_affine",
        lambda x, w, b: F.instance_norm(x, weight=w, bias=b, eps=1e-3),
        rand((2, 3, 7), (3,), (3,)),
    ),
    Case(
        "instance_norm_running_stats",
        lambda x, w, b, m: F.instance_norm(x, m, m.abs() + 0.5, w, b, use_input_stats=False),
        rand((2, 3, 4, 4), (3,), (3,), (3,)),
    ),
    Case(
        "instance_norm_running_no_affine",
        lambda x, m: F.instance_norm(x, m, m.abs() + 0.5, use_input_stats=False),
        rand((2, 3, 2, 2, 2), (3,)),
    ),
    Case("instance_norm_half", lambda x: F.instance_norm(x), rand((2, 3, 6), dtype=torch.float16), **HALF),
    # native_layer_norm (three outputs)
    Case("native_layer_norm", lambda x, w, b: torch.native_layer_norm(x, [4], w, b, 1e-5), rand((2, 3, 4), (4,), (4,))),
    Case(
        "native_layer_norm_2d_no_affine",
        lambda x: torch.native_layer_norm(x, [3, 4], None, None, 1e-3),
        rand((2, 3, 4)),
    ),
    Case(
        "native_layer_norm_half",
        lambda x: torch.native_layer_norm(x, [8], None, None, 1e-5),
        rand((2, 8), dtype=torch.float16),
        **HALF,
    ),
    # _weight_norm
    Case("weight_norm_dim0", lambda v, m: torch._weight_norm(v, m, 0), rand((4, 3, 2), (4, 1, 1))),
    Case("weight_norm_whole", lambda v, m: torch._weight_norm(v, m, -1), rand((4, 3), ())),
    # rms_norm (decomposed, RMSNormalization from 23)
    Case("rms_norm", lambda x: F.rms_norm(x, [5]), rand((2, 3, 5))),
    Case("rms_norm_weight_eps", lambda x, w: F.rms_norm(x, [3, 5], w, eps=1e-3), rand((2, 3, 5), (3, 5))),
    Case("rms_norm_half", lambda x, w: F.rms_norm(x, [6], w), rand((3, 6), (6,), dtype=torch.float16), **HALF),
    Case("rms_norm_double", lambda x: F.rms_norm(x, [6]), rand((3, 6), dtype=torch.float64)),
    # convolution variants
    Case("conv_tbc", lambda x, w, b: torch.conv_tbc(x, w, b, 1), rand((7, 2, 4), (3, 4, 5), (5,))),
    # pooling with indices
    Case(
        "max_pool1d_indices", lambda x: F.max_pool1d(x, 3, stride=2, padding=1, return_indices=True), distinct(2, 3, 11)
    ),
    Case("max_pool2d_indices", lambda x: F.max_pool2d(x, 2, return_indices=True), distinct(2, 3, 6, 6)),
    Case(
        "max_pool2d_indices_ceil",
        lambda x: F.max_pool2d(x, 3, stride=2, ceil_mode=True, return_indices=True),
        distinct(1, 2, 8, 9),
    ),
    Case(
        "max_pool2d_indices_ceil_pad_edge",
        lambda x: F.max_pool2d(x, 2, stride=2, padding=1, ceil_mode=True, return_indices=True),
        distinct(1, 1, 5, 6),
    ),
    Case(
        "max_pool2d_indices_dilation",
        lambda x: F.max_pool2d(x, 2, dilation=2, return_indices=True),
        distinct(1, 2, 7, 7),
        min_opset=10,
    ),
    Case(
        "max_pool3d_indices",
        lambda x: F.max_pool3d(x, 2, stride=(1, 2, 2), return_indices=True),
        distinct(1, 2, 4, 4, 5),
    ),
    Case(
        "max_pool2d_indices_unbatched", lambda x: F.max_pool2d(x, 2, stride=1, return_indices=True), distinct(3, 4, 5)
    ),
    Case(
        "max_pool1d_indices_unbatched_ceil",
        lambda x: F.max_pool1d(x, 3, stride=2, ceil_mode=True, return_indices=True),
        distinct(3, 10),
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
        distinct(1, 2, 4, 4, dtype=torch.float64),
    ),
    # adaptive max pooling (values and indices)
    Case("adaptive_max_pool1d_divides", lambda x: F.adaptive_max_pool1d(x, 4, return_indices=True), distinct(2, 3, 8)),
    Case("adaptive_max_pool1d_uneven", lambda x: F.adaptive_max_pool1d(x, 3, return_indices=True), distinct(2, 3, 7)),
    Case(
        "adaptive_max_pool2d_divides",
        lambda x: F.adaptive_max_pool2d(x, (3, 2), return_indices=True),
        distinct(2, 3, 6, 4),
    ),
    Case(
        "adaptive_max_pool2d_uneven",
        lambda x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True),
        distinct(2, 3, 7, 5),
    ),
    Case(
        "adaptive_max_pool2d_upsample",
        lambda x: F.adaptive_max_pool2d(x, (5, 3), return_indices=True),
        distinct(1, 2, 3, 2),
    ),
    Case(
        "adaptive_max_pool3d_uneven",
        lambda x: F.adaptive_max_pool3d(x, (2, 3, 2), return_indices=True),
        distinct(1, 2, 5, 4, 3),
    ),
    Case(
        "adaptive_max_pool2d_unbatched",
        lambda x: F.adaptive_max_pool2d(x, (2, 3), return_indices=True),
        distinct(3, 5, 7),
    ),
    Case(
        "adaptive_max_pool1d_unbatched_divides",
        lambda x: F.adaptive_max_pool1d(x, 2, return_indices=True),
        distinct(3, 6),
    ),
    Case(
        "adaptive_max_pool3d_global",
        lambda x: F.adaptive_max_pool3d(x, 1, return_indices=True),
        distinct(1, 2, 3, 4, 3),
    ),
    # interpolation: nearest at every opset
    Case("nearest2d_scale", lambda x: F.interpolate(x, scale_factor=2), rand((1, 2, 3, 4))),
    Case("nearest2d_scale_uneven", lambda x: F.interpolate(x, scale_factor=(1.5, 2.5)), rand((1, 2, 4, 3))),
    Case("nearest2d_size", lambda x: F.interpolate(x, size=(7, 5)), rand((2, 1, 3, 4))),
    Case("nearest2d_downsample", lambda x: F.interpolate(x, size=(2, 3)), rand((1, 2, 5, 7))),
    Case("nearest1d_size", lambda x: F.interpolate(x, size=7), rand((2, 3, 4))),
    Case("nearest3d_scale", lambda x: F.interpolate(x, scale_factor=2), rand((1, 2, 2, 3, 2))),
    Case("nearest3d_size", lambda x: F.interpolate(x, size=(3, 5, 4)), rand((1, 2, 2, 3, 2))),
    Case(
        "nearest2d_recompute",
        lambda x: F.interpolate(x, scale_factor=1.7, recompute_scale_factor=True),
        rand((1, 2, 4, 5)),
    ),
    Case(
        "nearest2d_uint8",
        lambda x: F.interpolate(x, scale_factor=(2, 3)),
        lambda: (torch.randint(0, 255, (1, 2, 3, 3), dtype=torch.uint8),),
    ),
    Case("nearest2d_half_size", lambda x: F.interpolate(x, size=(5, 8)), rand((1, 2, 3, 3), dtype=torch.float16)),
    Case(
        "bilinear_half",
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
        rand((1, 2, 3, 3), dtype=torch.float16),
        min_opset=11,
        **HALF,
    ),
    # linear / cubic from opset 11
    Case("linear1d", lambda x: F.interpolate(x, scale_factor=2.5, mode="linear"), rand((2, 3, 4)), min_opset=11),
    Case(
        "linear1d_align",
        lambda x: F.interpolate(x, size=9, mode="linear", align_corners=True),
        rand((2, 3, 4)),
        min_opset=11,
    ),
    Case(
        "bilinear_scale", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), rand((1, 2, 3, 4)), min_opset=11
    ),
    Case(
        "bilinear_size_down", lambda x: F.interpolate(x, size=(3, 2), mode="bilinear"), rand((1, 2, 7, 5)), min_opset=11
    ),
    Case(
        "bilinear_align",
        lambda x: F.interpolate(x, size=(7, 5), mode="bilinear", align_corners=True),
        rand((1, 2, 3, 4)),
        min_opset=11,
    ),
    Case("bilinear_to_one", lambda x: F.interpolate(x, size=(1, 3), mode="bilinear"), rand((1, 2, 4, 5)), min_opset=11),
    Case(
        "bilinear_align_to_one",
        lambda x: F.interpolate(x, size=(1, 3), mode="bilinear", align_corners=True),
        rand((1, 2, 4, 5)),
        min_opset=11,
    ),
    Case(
        "trilinear",
        lambda x: F.interpolate(x, scale_factor=(2, 1.5, 2), mode="trilinear"),
        rand((1, 2, 2, 4, 3)),
        min_opset=11,
    ),
    Case(
        "trilinear_align",
        lambda x: F.interpolate(x, size=(3, 5, 4), mode="trilinear", align_corners=True),
        rand((1, 1, 2, 3, 2)),
        min_opset=11,
    ),
    Case(
        "bicubic",
        lambda x: F.interpolate(x, scale_factor=2, mode="bicubic"),
        rand((1, 2, 4, 5)),
        min_opset=11,
        atol=1e-4,
    ),
    Case(
        "bicubic_size_align",
        lambda x: F.interpolate(x, size=(9, 7), mode="bicubic", align_corners=True),
        rand((1, 2, 4, 5)),
        min_opset=11,
        atol=1e-4,
    ),
    Case(
        "bicubic_down",
        lambda x: F.interpolate(x, size=(3, 2), mode="bicubic"),
        rand((1, 2, 7, 5)),
        min_opset=11,
        atol=1e-4,
    ),
    # dropout variants in eval
    Case("alpha_dropout_eval", lambda x: F.alpha_dropout(x, 0.5, training=False) * 2, rand((3, 4))),
    Case("feature_alpha_dropout_eval", lambda x: F.feature_alpha_dropout(x, 0.5, training=False) + 1, rand((2, 3, 4))),
    Case("native_dropout_eval", lambda x: torch.native_dropout(x, 0.5, False), rand((3, 4))),
    # grid sampling and affine grids
    Case("grid_sample_bilinear", lambda x, gr: F.grid_sample(x, gr, align_corners=False), grid_inputs(), min_opset=16),
    Case(
        "grid_sample_nearest_border",
        lambda x, gr: F.grid_sample(x, gr, mode="nearest", padding_mode="border", align_corners=True),
        grid_inputs(),
        min_opset=16,
    ),
    Case(
        "grid_sample_bicubic_reflection",
        lambda x, gr: F.grid_sample(x, gr, mode="bicubic", padding_mode="reflection", align_corners=False),
        grid_inputs(),
        min_opset=16,
        atol=1e-4,
    ),
    Case(
        "grid_sample_3d",
        lambda x, gr: F.grid_sample(x, gr, align_corners=True),
        lambda: (torch.randn(1, 2, 3, 4, 5), torch.rand(1, 2, 3, 4, 3) * 2 - 1),
        min_opset=20,
    ),
    Case("affine_grid", lambda t: F.affine_grid(t, [2, 3, 4, 5], align_corners=False), rand((2, 2, 3))),
    Case("affine_grid_align", lambda t: F.affine_grid(t, [2, 3, 4, 5], align_corners=True), rand((2, 2, 3))),
    Case("affine_grid_single_row", lambda t: F.affine_grid(t, [1, 3, 1, 4], align_corners=True), rand((1, 2, 3))),
    Case("affine_grid_3d", lambda t: F.affine_grid(t, [2, 3, 2, 3, 4], align_corners=False), rand((2, 3, 4))),
    Case(
        "affine_grid_then_sample",
        lambda x, t: F.grid_sample(x, F.affine_grid(t, [2, 3, 5, 6], align_corners=False), align_corners=False),
        rand((2, 3, 5, 6), (2, 2, 3)),
        min_opset=16,
        atol=1e-4,
    ),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = [
    "group_norm",
    "instance_norm",
    "rms_norm",
    "max_pool2d_indices",
    "adaptive_max_pool2d_uneven",
    "nearest2d_scale",
    "bilinear_align",
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


# -- scripted graphs: these record conv_transposeNd, __interpolate and the non-vec upsample overloads


@torch.jit.script
def _scripted_conv_transpose1d(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2, dilation=2)


@torch.jit.script
def _scripted_conv_transpose2d(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)


@torch.jit.script
def _scripted_conv_transpose3d(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return F.conv_transpose3d(x, w, stride=(1, 2, 2))


@torch.jit.script
def _scripted_interpolate_scale_list(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.__interpolate(x, None, [2.0, 1.5], "bilinear", False, None, False)


@torch.jit.script
def _scripted_interpolate_size_list(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.__interpolate(x, [5, 7], None, "nearest", None, None, False)


@torch.jit.script
def _scripted_interpolate_scalar_size(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.__interpolate(x, 6, None, "linear", True, None, False)


@torch.jit.script
def _scripted_interpolate_recompute(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.__interpolate(x, None, [1.7, 2.3], "nearest", None, True, False)


@torch.jit.script
def _scripted_interpolate_bicubic_align(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.__interpolate(x, [6, 5], None, "bicubic", True, None, False)


@torch.jit.script
def _scripted_upsample_nearest2d_scales(x: torch.Tensor) -> torch.Tensor:
    return torch._C._nn.upsample_nearest2d(x, [6, 7], 2.0, 2.5)


@torch.jit.script
def _scripted_upsample_nearest3d(x: torch.Tensor) -> torch.Tensor:
    return torch._C._nn.upsample_nearest3d(x, [3, 5, 2])


@torch.jit.script
def _scripted_upsample_bilinear2d(x: torch.Tensor) -> torch.Tensor:
    return torch._C._nn.upsample_bilinear2d(x, [5, 6], True)


@torch.jit.script
def _scripted_upsample_linear1d_scale(x: torch.Tensor) -> torch.Tensor:
    return torch._C._nn.upsample_linear1d(x, [10], False, 2.5)


SCRIPTED = [
    ("conv_transpose1d", _scripted_conv_transpose1d, rand((2, 3, 5), (3, 4, 3), (4,)), 9),
    ("conv_transpose2d", _scripted_conv_transpose2d, rand((1, 4, 3, 3), (4, 3, 3, 3), (6,)), 9),
    ("conv_transpose3d", _scripted_conv_transpose3d, rand((1, 2, 2, 3, 3), (2, 3, 2, 2, 2)), 9),
    ("interpolate_scale_list", _scripted_interpolate_scale_list, rand((1, 2, 3, 4)), 11),
    ("interpolate_size_list", _scripted_interpolate_size_list, rand((1, 2, 3, 4)), 9),
    ("interpolate_scalar_size", _scripted_interpolate_scalar_size, rand((2, 3, 4)), 11),
    ("interpolate_recompute", _scripted_interpolate_recompute, rand((1, 2, 4, 3)), 9),
    ("interpolate_bicubic_align", _scripted_interpolate_bicubic_align, rand((1, 2, 3, 4)), 11),
    ("upsample_nearest2d_scales", _scripted_upsample_nearest2d_scales, rand((1, 2, 3, 3)), 9),
    ("upsample_nearest3d", _scripted_upsample_nearest3d, rand((1, 2, 2, 3, 4)), 9),
    ("upsample_bilinear2d", _scripted_upsample_bilinear2d, rand((1, 2, 3, 4)), 11),
    ("upsample_linear1d_scale", _scripted_upsample_linear1d_scale, rand((2, 3, 4)), 11),
]


@pytest.mark.parametrize("opset", [9, 10, 11, 13, 18, NEWEST])
@pytest.mark.parametrize(("fn", "inputs", "min_opset"), [s[1:] for s in SCRIPTED], ids=[s[0] for s in SCRIPTED])
def test_scripted(
    fn: torch.jit.ScriptFunction, inputs: Callable[[], tuple[torch.Tensor, ...]], min_opset: int, opset: int
) -> None:
    if opset < min_opset:
        pytest.skip(f"needs opset {min_opset}")
    assert_matches_torch(fn, inputs(), opset=opset, atol=1e-4)


# -- adaptive average pooling with sizes that do not divide


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


@pytest.mark.parametrize("opset", [9, 13, 18, NEWEST])
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


# -- dynamic shapes


DYNAMIC = [
    ("max_pool2d_indices", lambda x: F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True), 9),
    ("max_pool1d_indices_ceil", lambda x: F.max_pool1d(x.flatten(2), 2, ceil_mode=True, return_indices=True), 10),
    (
        "max_pool2d_indices_ceil_pad",
        lambda x: F.max_pool2d(x, 2, stride=2, padding=1, ceil_mode=True, return_indices=True),
        10,
    ),
    ("group_norm", lambda x: F.group_norm(x, 3), 9),
    ("instance_norm", lambda x: F.instance_norm(x), 9),
    ("rms_norm", lambda x: F.rms_norm(x, [x.shape[-1]]), 9),
    ("nearest_size", lambda x: F.interpolate(x, size=(4, 5)), 11),
    ("nearest_scale_up", lambda x: F.interpolate(x, scale_factor=2), 9),
    ("bilinear_scale", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), 11),
]


@pytest.mark.parametrize("opset", [9, 10, 11, 18, NEWEST])
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


# -- what each opset emits


def _op_types(model: torch.nn.Module, args: tuple[torch.Tensor, ...], opset: int) -> set[str]:
    _, onnx_model = export_to_bytes(model, args, opset_version=opset)
    return {node.op_type for node in onnx_model.graph}


def test_rms_norm_uses_rmsnormalization_from_23() -> None:
    model, args = Wrap(lambda x: F.rms_norm(x, [4])), (torch.randn(2, 4),)
    assert "RMSNormalization" not in _op_types(model, args, 22)
    assert "RMSNormalization" in _op_types(model, args, 23)
    assert_matches_torch(model, args, opset=22)
    assert_matches_torch(model, args, opset=23)


def test_interpolation_ops_per_opset() -> None:
    nearest = Wrap(lambda x: F.interpolate(x, scale_factor=2))
    args = (torch.randn(1, 2, 3, 3),)
    assert "Resize" in _op_types(nearest, args, 11)
    assert "Resize" not in _op_types(nearest, args, 9)
    affine = Wrap(lambda t: F.affine_grid(t, [2, 3, 4, 5], align_corners=False))
    assert "AffineGrid" in _op_types(affine, (torch.randn(2, 2, 3),), 20)
    assert "AffineGrid" not in _op_types(affine, (torch.randn(2, 2, 3),), 19)


def test_pool_ceil_padding_matches_torch_sizes() -> None:
    for size in range(4, 12):
        for kernel, stride, pad in [(3, 2, 1), (2, 2, 1), (3, 3, 0), (2, 1, 0), (4, 3, 2)]:
            expected = F.max_pool1d(torch.zeros(1, 1, size), kernel, stride, pad, ceil_mode=True).shape[-1]
            extra = pooling.pool_ceil_padding(size, kernel, stride, pad, 1)
            floor_out = (size + 2 * pad + extra - kernel) // stride + 1
            assert floor_out == expected, (size, kernel, stride, pad)


# -- refusals name the opset that works


@pytest.mark.parametrize("opset", [9, 10])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_linear_and_cubic_below_11_name_opset_11(mode: str, opset: int) -> None:
    model = Wrap(lambda x: F.interpolate(x, scale_factor=2, mode=mode))
    with pytest.raises(ExporterError, match="opset 11"):
        export_to_bytes(model, (torch.randn(1, 2, 3, 3),), opset_version=opset)


def test_grid_sampler_below_16_names_opset_16() -> None:
    model = Wrap(lambda x, gr: F.grid_sample(x, gr, align_corners=False))
    with pytest.raises(ExporterError, match="16"):
        export_to_bytes(model, grid_inputs()(), opset_version=15)


def test_grid_sampler_5d_at_16_names_opset_20() -> None:
    model = Wrap(lambda x, gr: F.grid_sample(x, gr, align_corners=False))
    with pytest.raises(ExporterError, match="opset 20"):
        export_to_bytes(model, (torch.randn(1, 2, 3, 4, 5), torch.rand(1, 2, 3, 4, 3)), opset_version=16)


def test_native_dropout_training_below_12_names_opset_12() -> None:
    model = Wrap(lambda x: torch.native_dropout(x, 0.5, True))
    with pytest.raises(ExporterError, match="opset 12"):
        export_to_bytes(model, (torch.randn(4, 4),), opset_version=11)


def test_alpha_dropout_training_is_refused() -> None:
    model = Wrap(lambda x: F.alpha_dropout(x, 0.5, training=True))
    with pytest.raises(ExporterError, match="alpha_dropout"):
        export_to_bytes(model, (torch.randn(4, 4),), opset_version=13)


# -- random: native_dropout in training mode


@pytest.mark.parametrize("opset", [12, 13, NEWEST])
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


# -- the same ops as nn modules record them


class Layers(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv2d(3, 6, 3, padding=1))
        self.group = torch.nn.GroupNorm(3, 6)
        self.instance = torch.nn.InstanceNorm2d(6, affine=True, track_running_stats=True)
        self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
        self.deconv = torch.nn.ConvTranspose2d(6, 2, 3, stride=2, padding=1, output_padding=1)
        self.pool = torch.nn.AdaptiveMaxPool2d((5, 3))
        self.dropout = torch.nn.AlphaDropout(0.3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = self.instance(self.group(self.conv(x)))
        return self.pool(self.deconv(self.up(y))), self.dropout(y)


@pytest.mark.parametrize("opset", [9, 13, 18, NEWEST])
def test_layers(opset: int) -> None:
    model = Layers().eval()
    with torch.no_grad():
        model.instance.running_mean.normal_()
        model.instance.running_var.uniform_(0.5, 2.0)
    assert_matches_torch(model, (torch.randn(2, 3, 6, 5),), opset=opset, atol=1e-4)


def test_ceil_mode_with_dynamic_sizes_at_opset_9_names_opset_10() -> None:
    model = Wrap(lambda x: F.max_pool2d(x, 2, ceil_mode=True, return_indices=True))
    with pytest.raises(ExporterError, match="opset 10"):
        export_to_bytes(
            model, (torch.randn(1, 2, 5, 5),), opset_version=9, input_names=["x"], dynamic_axes={"x": [2, 3]}
        )


def test_ceil_mode_with_static_sizes_works_at_opset_9() -> None:
    model = Wrap(lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, return_indices=True))
    assert_matches_torch(model, distinct(1, 2, 6, 8)(), opset=9)


@pytest.mark.parametrize("opset", [9, 12, NEWEST])
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


@pytest.mark.parametrize("opset", [9, 17, 20])
@pytest.mark.parametrize(
    "fn",
    [lambda x: F.group_norm(x, 3), lambda x: F.instance_norm(x), lambda x, w=torch.rand(6): F.group_norm(x, 2, w, w)],
    ids=["group_norm", "instance_norm", "group_norm_affine"],
)
def test_norms_use_one_instance_normalization(fn: Callable[..., object], opset: int) -> None:
    """GroupNorm and InstanceNorm statistics are one InstanceNormalization kernel (as in
    torch's exporter), not a decomposition into a dozen reductions and elementwise ops."""
    model = assert_matches_torch(Wrap(fn), (torch.randn(2, 6, 5, 4),), opset=opset)
    ops = collections.Counter(n.op_type for n in model.graph if n.op_type != "Constant")
    assert ops["InstanceNormalization"] == 1, ops
    assert not {"ReduceMean", "Sqrt", "Pow"} & set(ops), ops
