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


def test_antialias_with_dynamic_spatial_sizes_is_refused_by_name(tmp_path: Path) -> None:
    model, _ = CASES["bilinear_down"]
    with pytest.raises(exporter.ExporterError, match=r"_upsample_bilinear2d_aa(.|\n)*size of dim 2 at export time"):
        exporter.export(
            model,
            (torch.randn(1, 3, 16, 16),),
            tmp_path / "m.onnx",
            opset_version=17,
            input_names=["x"],
            dynamic_axes={"x": {2: "height"}},
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
