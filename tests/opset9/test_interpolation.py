"""The op table for interpolation: upsampling, grid_sample and affine_grid (exporter.opset9.interpolation).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from cases import HALF, Case, helper_params, one_torch_thread, op_params, op_types, rand, run_case
from conftest import NEWEST, Wrap, assert_matches_torch, export_to_bytes

from exporter.errors import ExporterError

# small eager kernels run several times faster single-threaded on a loaded machine
_one_torch_thread = pytest.fixture(autouse=True, scope="module")(one_torch_thread)


def grid_inputs(
    n: int = 2, c: int = 3, h: int = 5, w: int = 6, oh: int = 4, ow: int = 3
) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randn(n, c, h, w), torch.rand(n, oh, ow, 2) * 2.4 - 1.2)


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


CASES = [
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
HELPER_CASES = ["nearest2d_scale", "bilinear_align"]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


SCRIPTED = [
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


DYNAMIC = [
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


def test_interpolation_ops_per_opset() -> None:
    nearest = Wrap(lambda x: F.interpolate(x, scale_factor=2))
    args = (torch.randn(1, 2, 3, 3),)
    assert "Resize" in op_types(nearest, args, 11)
    assert "Resize" not in op_types(nearest, args, 9)
    affine = Wrap(lambda t: F.affine_grid(t, [2, 3, 4, 5], align_corners=False))
    assert "AffineGrid" in op_types(affine, (torch.randn(2, 2, 3),), 20)
    assert "AffineGrid" not in op_types(affine, (torch.randn(2, 2, 3),), 19)


@pytest.mark.parametrize("opset", [9, 10])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_linear_and_cubic_below_11_use_torch_coordinates(mode: str, opset: int) -> None:
    """Before Resize-11 there are no half-pixel coordinates: constant indices and weights."""
    model = Wrap(lambda x: F.interpolate(x, scale_factor=2, mode=mode))
    onnx_model = assert_matches_torch(model, (torch.randn(1, 2, 3, 3),), opset=opset)
    assert not {"Resize", "Upsample"} & {node.op_type for node in onnx_model.graph}


def test_grid_sampler_below_16_names_opset_16() -> None:
    model = Wrap(lambda x, gr: F.grid_sample(x, gr, align_corners=False))
    with pytest.raises(ExporterError, match="16"):
        export_to_bytes(model, grid_inputs()(), opset_version=15)


def test_grid_sampler_5d_at_16_names_opset_20() -> None:
    model = Wrap(lambda x, gr: F.grid_sample(x, gr, align_corners=False))
    with pytest.raises(ExporterError, match="opset 20"):
        export_to_bytes(model, (torch.randn(1, 2, 3, 4, 5), torch.rand(1, 2, 3, 4, 3)), opset_version=16)


class _ResizeByTensorScale(torch.nn.Module):
    """torchvision's detection transform, traced: the scale is a tensor computed from the image
    size, so the output size interpolate derives from it is computed at run time."""

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size = torch._shape_as_tensor(x)[-2:].to(torch.float32)
        scale = torch.min(24.0 / size.min(), 40.0 / size.max())
        align = None if self.mode == "nearest" else False
        return F.interpolate(x, scale_factor=scale, mode=self.mode, recompute_scale_factor=True, align_corners=align)  # type: ignore[arg-type]


@pytest.mark.parametrize("opset", [11, NEWEST])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_output_size_computed_at_run_time(mode: str, opset: int) -> None:
    """upsample_*.vec with an output size the trace computes from a tensor: Resize's sizes
    input, also for an input of another size (dynamic axes)."""
    assert_matches_torch(
        _ResizeByTensorScale(mode),
        (torch.randn(1, 3, 16, 20),),
        opset=opset,
        atol=1e-4,
        input_names=["x"],
        dynamic_axes={"x": {2: "h", 3: "w"}},
        other_inputs=[(torch.randn(1, 3, 30, 18),)],
    )
