"""F.interpolate(..., antialias=True): torch's antialiased bilinear and bicubic kernels
(``aten::_upsample_bilinear2d_aa``, ``aten::_upsample_bicubic2d_aa``), which vision models use to
resize learned position embeddings to the input's patch grid (timm's NaFlexViT). Lowered as two
MatMuls by constant resampling matrices at every opset; the patterns are rebuilt from plain torch."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from conftest import Wrap, assert_matches_torch

import exporter

OPSETS = [9, 11, 13, 17, 18]


def _aa(**kwargs: object) -> Wrap:
    return Wrap(lambda x: F.interpolate(x, antialias=True, **kwargs))


CASES = {
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


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_antialias_interpolate(name: str, opset: int) -> None:
    model, shape = CASES[name]
    assert_matches_torch(model, (torch.randn(*shape),), opset=opset)


def test_antialias_double() -> None:
    model, shape = CASES["bicubic_down"]
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


@pytest.mark.parametrize("opset", [9, 17])
def test_position_embedding_resized_to_the_patch_grid(opset: int) -> None:
    assert_matches_torch(PosEmbedResize().eval(), (torch.randn(2, 10, 12, 8),), opset=opset)


@pytest.mark.parametrize("opset", [13, 17])
def test_antialias_with_a_dynamic_batch(opset: int) -> None:
    model, _ = CASES["bicubic_down"]
    assert_matches_torch(
        model,
        (torch.randn(1, 3, 16, 16),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": {0: "batch", 1: "channels"}},
        other_inputs=[(torch.randn(3, 2, 16, 16),)],
    )


class ScriptedResize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, size=[6, 7], mode="bilinear", antialias=True)


@pytest.mark.parametrize("opset", [9, 11, 17])
def test_scripted_antialias_interpolate(opset: int) -> None:
    assert_matches_torch(torch.jit.script(ScriptedResize()), (torch.randn(1, 2, 13, 11),), opset=opset)


class ResizeByInputSize(torch.nn.Module):
    """Antialiased resampling to a size computed from the input's (dynamic) sizes."""

    def __init__(self, mode: str, align_corners: bool = False) -> None:
        super().__init__()
        self.mode, self.align_corners = mode, align_corners

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size = (x.shape[2] // 2 + 1, x.shape[3] * 2 // 3)
        return F.interpolate(x, size=size, mode=self.mode, antialias=True, align_corners=self.align_corners)


DYNAMIC_SPATIAL = {"input_names": ["x"], "dynamic_axes": {"x": {0: "batch", 2: "height", 3: "width"}}}


@pytest.mark.parametrize("opset", [17, 18])
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
