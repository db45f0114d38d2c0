"""The op table for interpolation: upsampling, antialiased resampling, grid_sample and affine_grid
(exporter.opset9.interpolation).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from cases import (
    HALF,
    Case,
    helper_params,
    lowering_opsets,
    lowering_opsets_below,
    one_torch_thread,
    op_params,
    op_types,
    rand,
    run_case,
)
from conftest import (
    Wrap,
    assert_matches_torch,
    export_to_bytes,
)

import exporter
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
    # linear / cubic: Resize from opset 11, constant Gather indices and weights (torch's coordinates) before
    Case("linear1d", lambda x: F.interpolate(x, scale_factor=2.5, mode="linear"), rand((2, 3, 4))),
    Case(
        "linear1d_align",
        lambda x: F.interpolate(x, size=9, mode="linear", align_corners=True),
        rand((2, 3, 4)),
        min_opset=11,
    ),
    Case("bilinear_scale", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), rand((1, 2, 3, 4))),
    Case("bilinear_size_down", lambda x: F.interpolate(x, size=(3, 2), mode="bilinear"), rand((1, 2, 7, 5))),
    Case(
        "bilinear_align",
        lambda x: F.interpolate(x, size=(7, 5), mode="bilinear", align_corners=True),
        rand((1, 2, 3, 4)),
    ),
    Case("bilinear_to_one", lambda x: F.interpolate(x, size=(1, 3), mode="bilinear"), rand((1, 2, 4, 5))),
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
    # linear and cubic interpolation with torch's half-pixel / align_corners coordinates, from opset 9
    # linear and cubic interpolation with torch's half-pixel / align_corners coordinates
    Case("bilinear_fraction", lambda x: F.interpolate(x, scale_factor=1.7, mode="bilinear"), rand((1, 2, 4, 5))),
    Case(
        "bilinear_recompute",
        lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear", recompute_scale_factor=True),
        rand((1, 2, 3, 5)),
    ),
    Case("bicubic_scale", lambda x: F.interpolate(x, scale_factor=2, mode="bicubic"), rand((1, 2, 3, 4))),
    Case("bicubic_fraction", lambda x: F.interpolate(x, scale_factor=1.5, mode="bicubic"), rand((1, 2, 4, 5))),
    Case("bicubic_size_down", lambda x: F.interpolate(x, size=(2, 3), mode="bicubic"), rand((1, 2, 6, 7))),
    Case(
        "bicubic_align",
        lambda x: F.interpolate(x, size=(5, 7), mode="bicubic", align_corners=True),
        rand((1, 1, 3, 3)),
    ),
    Case(
        "bilinear_double",
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
        rand((1, 2, 3, 4), dtype=torch.float64),
    ),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["nearest2d_scale", "bilinear_align", "bilinear_scale", "bicubic_fraction"]


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


@pytest.mark.parametrize("opset", lowering_opsets("aten::__interpolate", "aten::upsample_bilinear2d", helpers=True))
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


@pytest.mark.parametrize(
    "opset", lowering_opsets("aten::upsample_nearest2d", "aten::upsample_bilinear2d", helpers=True)
)
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


@pytest.mark.parametrize("opset", lowering_opsets_below("aten::upsample_bilinear2d"))
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


@pytest.mark.parametrize(
    "opset",
    lowering_opsets("aten::upsample_nearest2d", "aten::upsample_bilinear2d", "aten::upsample_bicubic2d", min_opset=11),
)
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


# -- F.interpolate(..., antialias=True) ------------------------------------------------------------
# torch's antialiased bilinear and bicubic kernels (aten::_upsample_bilinear2d_aa,
# aten::_upsample_bicubic2d_aa), which vision models use to resize learned position embeddings
# to the input's patch grid (timm's NaFlexViT): two MatMuls by constant resampling matrices at
# every opset; Resize-18's antialias where the sizes are known only at run time.

ANTIALIAS_OPSETS = lowering_opsets("aten::_upsample_bilinear2d_aa", "aten::_upsample_bicubic2d_aa", helpers=True)


def _aa(**kwargs: object) -> Wrap:
    return Wrap(lambda x: F.interpolate(x, antialias=True, **kwargs))


ANTIALIAS_CASES = {
    "bilinear_down": (_aa(size=(10, 10), mode="bilinear"), (1, 3, 16, 16)),
    "bicubic_down": (_aa(size=(10, 10), mode="bicubic"), (1, 3, 16, 16)),
    "bicubic_down_uneven": (_aa(size=(5, 11), mode="bicubic"), (2, 2, 13, 17)),
    "bilinear_align_corners": (_aa(size=(6, 9), mode="bilinear", align_corners=True), (1, 2, 14, 15)),
    "bicubic_align_corners": (_aa(size=(6, 9), mode="bicubic", align_corners=True), (1, 2, 14, 15)),
    "bicubic_scale_factor": (_aa(scale_factor=0.4, mode="bicubic"), (1, 2, 15, 20)),
    "bilinear_up": (_aa(size=(12, 15), mode="bilinear"), (1, 2, 7, 9)),
    "bicubic_up_and_down": (_aa(size=(12, 5), mode="bicubic"), (1, 2, 7, 9)),
    "bicubic_height_only": (_aa(size=(4, 9), mode="bicubic"), (1, 2, 11, 9)),
}


@pytest.mark.parametrize("opset", ANTIALIAS_OPSETS)
@pytest.mark.parametrize("name", sorted(ANTIALIAS_CASES))
def test_antialias_interpolate(name: str, opset: int) -> None:
    model, shape = ANTIALIAS_CASES[name]
    assert_matches_torch(model, (torch.randn(*shape),), opset=opset)


def test_antialias_double() -> None:
    model, shape = ANTIALIAS_CASES["bicubic_down"]
    assert_matches_torch(model, (torch.randn(*shape, dtype=torch.float64),), opset=17)


class PosEmbedResize(torch.nn.Module):
    """A learned (1, gh, gw, C) position embedding resized to the input's patch grid with an
    antialiased bicubic filter (as NaFlexViT's _apply_learned_pos_embed) and added to the tokens."""

    def __init__(self) -> None:
        super().__init__()
        self.pos_embed = torch.nn.Parameter(torch.randn(1, 16, 16, 8))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        grid = tokens.shape[1:3]
        pos = self.pos_embed.permute(0, 3, 1, 2)
        pos = F.interpolate(pos, size=grid, mode="bicubic", antialias=True, align_corners=False)
        return tokens + pos.permute(0, 2, 3, 1)


@pytest.mark.parametrize("opset", lowering_opsets("aten::_upsample_bicubic2d_aa"))
def test_position_embedding_resized_to_the_patch_grid(opset: int) -> None:
    assert_matches_torch(PosEmbedResize().eval(), (torch.randn(2, 10, 12, 8),), opset=opset)


@pytest.mark.parametrize("opset", lowering_opsets("aten::_upsample_bicubic2d_aa", helpers=True))
def test_antialias_with_a_dynamic_batch(opset: int) -> None:
    model, _ = ANTIALIAS_CASES["bicubic_down"]
    assert_matches_torch(
        model,
        (torch.randn(1, 3, 16, 16),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": {0: "batch", 1: "channels"}},
        other_inputs=[(torch.randn(3, 2, 16, 16),)],
    )


class ScriptedAntialiasedResize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, size=[6, 7], mode="bilinear", antialias=True)


@pytest.mark.parametrize("opset", lowering_opsets("aten::_upsample_bilinear2d_aa", helpers=True))
def test_scripted_antialias_interpolate(opset: int) -> None:
    assert_matches_torch(torch.jit.script(ScriptedAntialiasedResize()), (torch.randn(1, 2, 13, 11),), opset=opset)


class ResizeByInputSize(torch.nn.Module):
    """Antialiased resampling to a size computed from the input's (dynamic) sizes."""

    def __init__(self, mode: str, align_corners: bool = False) -> None:
        super().__init__()
        self.mode, self.align_corners = mode, align_corners

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size = (x.shape[2] // 2 + 1, x.shape[3] * 2 // 3)
        return F.interpolate(x, size=size, mode=self.mode, antialias=True, align_corners=self.align_corners)


DYNAMIC_SPATIAL = {"input_names": ["x"], "dynamic_axes": {"x": {0: "batch", 2: "height", 3: "width"}}}


@pytest.mark.parametrize("opset", lowering_opsets("aten::_upsample_bilinear2d_aa", before_changes=True, min_opset=17))
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_with_dynamic_spatial_sizes(mode: str, opset: int, tmp_path: Path) -> None:
    """Resize-18's antialias samples as torch's antialiased kernels (half-pixel); below opset 18
    the export is refused by name."""
    args = (torch.randn(1, 3, 16, 16),)
    if opset < 18:
        with pytest.raises(exporter.ExporterError, match=r"_upsample_\w+_aa(.|\n)*needs opset 18"):
            exporter.export(ResizeByInputSize(mode), args, tmp_path / "m.onnx", opset_version=opset, **DYNAMIC_SPATIAL)
        return
    assert_matches_torch(
        ResizeByInputSize(mode),
        args,
        opset=opset,
        other_inputs=[(torch.randn(2, 3, 20, 13),), (torch.randn(1, 3, 9, 30),)],
        **DYNAMIC_SPATIAL,
    )


def test_antialias_align_corners_with_dynamic_sizes_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(exporter.ExporterError, match="align_corners=True.*needs the spatial sizes at export time"):
        exporter.export(
            ResizeByInputSize("bilinear", align_corners=True),
            (torch.randn(1, 3, 16, 16),),
            tmp_path / "m.onnx",
            opset_version=18,
            **DYNAMIC_SPATIAL,
        )


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_static_at_opset_18_stays_exact_with_align_corners(mode: str) -> None:
    """Static sizes keep the constant MatMuls from opset 18 too (Resize has no antialiased
    align_corners sampling)."""
    model = _aa(size=(6, 9), mode=mode, align_corners=True)
    onnx_model = assert_matches_torch(model, (torch.randn(1, 2, 14, 15),), opset=18)
    assert "Resize" not in {node.op_type for node in onnx_model.graph}


def test_position_embedding_resized_to_a_run_time_patch_grid() -> None:
    """A ViT with a dynamic image size (timm's dynamic_img_size=True) resamples its position
    embedding to the patch grid of each input."""
    assert_matches_torch(
        PosEmbedResize().eval(),
        (torch.randn(2, 10, 12, 8),),
        opset=18,
        input_names=["tokens"],
        dynamic_axes={"tokens": {0: "batch", 1: "rows", 2: "columns"}},
        other_inputs=[(torch.randn(1, 7, 20, 8),), (torch.randn(1, 16, 16, 8),)],
    )


class ScriptedResizeToRunTimeSize(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, size=(int(y.size(0)), int(y.size(1))), mode="bicubic", antialias=True)


def test_antialias_to_a_size_known_at_run_time_is_refused_by_name() -> None:
    with pytest.raises(exporter.ExporterError, match="antialias=True needs the output size at export time"):
        exporter.export(
            torch.jit.script(ScriptedResizeToRunTimeSize()),
            (torch.randn(1, 2, 9, 9), torch.randn(4, 5)),
            io.BytesIO(),
            opset_version=17,
            input_names=["x", "y"],
            dynamic_axes={"y": {0: "rows", 1: "columns"}},
        )


def test_antialias_to_a_size_read_from_a_static_tensor() -> None:
    assert_matches_torch(
        torch.jit.script(ScriptedResizeToRunTimeSize()), (torch.randn(1, 2, 9, 9), torch.randn(4, 5)), opset=17
    )


@pytest.mark.parametrize("opset", lowering_opsets_below("aten::upsample_bilinear2d"))
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


class ScriptedBilinear(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, size=[5, 7], mode="bilinear", align_corners=False)


@pytest.mark.parametrize("opset", lowering_opsets_below("aten::upsample_bilinear2d"))
def test_scripted_bilinear_below_11_matches_torch(opset: int) -> None:
    assert_matches_torch(torch.jit.script(ScriptedBilinear()), (torch.randn(1, 2, 3, 4),), opset=opset)


class InterpolateToRunTimeSize(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        near = torch.nn.functional.interpolate(x, mode="nearest", size=(int(y.size(0)), int(y.size(1))))
        linear = torch.nn.functional.interpolate(x, mode="bilinear", size=(y.size(1), y.size(0)), align_corners=False)
        return near, linear


@pytest.mark.parametrize("opset", lowering_opsets("aten::__interpolate", helpers=True, min_opset=11))
def test_scripted_interpolate_to_a_run_time_size(opset: int) -> None:
    """A scripted F.interpolate whose size is computed from another input's shape: Resize's
    sizes input at run time, with N and C of the input."""
    model = torch.jit.script(InterpolateToRunTimeSize())
    x, y = torch.randn(1, 2, 4, 4), torch.randn(16, 12)
    assert_matches_torch(
        model,
        (x, y),
        opset=opset,
        input_names=["x", "y"],
        dynamic_axes={"x": [0, 1, 2, 3], "y": [0, 1]},
        other_inputs=[(torch.randn(2, 3, 5, 3), torch.randn(7, 9))],
    )


class ScriptedNearestThenBilinear(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        up = torch.nn.functional.interpolate(x, scale_factor=2.0, mode="nearest")
        return torch.nn.functional.interpolate(up, size=[5, 7], mode="bilinear", align_corners=False)


@pytest.mark.parametrize(
    "opset",
    lowering_opsets("aten::__interpolate", "aten::upsample_nearest2d", "aten::upsample_bilinear2d", min_opset=11),
)
def test_scripted_interpolate_becomes_resize(opset: int) -> None:
    onnx_model = assert_matches_torch(
        torch.jit.script(ScriptedNearestThenBilinear()), (torch.randn(1, 2, 3, 4),), opset=opset
    )
    assert "Resize" in {node.op_type for node in onnx_model.graph}


@pytest.mark.parametrize("opset", lowering_opsets_below("aten::upsample_bilinear2d"))
def test_scripted_bilinear_interpolate_below_11_computes_torch_coordinates(opset: int) -> None:
    """No Resize with half-pixel coordinates before 11: constant Gather indices and weights."""
    onnx_model = assert_matches_torch(
        torch.jit.script(ScriptedNearestThenBilinear()), (torch.randn(1, 2, 3, 4),), opset=opset
    )
    assert not {"Resize", "Upsample"} & {node.op_type for node in onnx_model.graph}
