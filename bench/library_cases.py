"""The library sweep's cases: modules and functions of libraries written for ``torch.jit.script``.

A case builds an :class:`Example` (a module, its example inputs, and for dynamic cases inputs of
other sizes and the axes that vary). Functions are wrapped in small modules whose ``forward``
calls them with fixed options, so the same wrapper is traced and scripted. ``script=False`` marks
what the library cannot script (checked in eager torch: ``torch.jit.script`` raises), so only its
traced export is measured. ``quick=True`` puts a case in the ``--quick`` smoke subset.

Inputs are plain tensors; every input is named ``in0``, ``in1``, ... in the exported file, and the
dynamic axes are given by input position. Each library is imported only by its own cases.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import torch
from torch import Tensor, nn


class Example(NamedTuple):
    model: nn.Module
    args: tuple[Tensor, ...]
    other: tuple[Tensor, ...] | None = None  # inputs of other sizes along the dynamic axes
    dynamic: dict[int, dict[int, str]] | None = None  # input position -> {axis: name}


@dataclass(frozen=True)
class Case:
    library: str
    name: str
    build: Callable[[], Example]
    script: bool
    quick: bool


# library -> its distribution name on PyPI (for versions and the install hint)
LIBRARIES: dict[str, str] = {
    "kornia": "kornia",
    "torch_geometric": "torch-geometric",
    "einops": "einops",
    "torchmetrics": "torchmetrics",
    "torchvision": "torchvision",
    "torchaudio": "torchaudio",
    "monai": "monai",
    "julius": "julius",
    "asteroid_filterbanks": "asteroid-filterbanks",
    "pytorch_msssim": "pytorch-msssim",
}
CASES: dict[str, Case] = {}


def case(library: str, *, script: bool = True, quick: bool = False) -> Callable[[Callable[[], Example]], Any]:
    """Register ``build`` as the case ``library.<function name>``; a name registered twice is an error."""

    def register(build: Callable[[], Example]) -> Callable[[], Example]:
        name = f"{library}.{build.__name__}"
        if name in CASES:
            raise ValueError(f"case {name} registered twice")
        CASES[name] = Case(library, name, build, script, quick)
        return build

    return register


def import_library(library: str) -> None:
    """Import what a library needs first: torchvision's compiled ops through the shim (torchvision,
    and torchmetrics/monai, which import it), torchaudio without its compiled extension."""
    if library in ("torchvision", "torchmetrics", "monai"):
        import sweep_runner

        sweep_runner.import_torchvision()
    if library == "torchaudio":
        import_torchaudio()


def import_torchaudio() -> None:
    """``import torchaudio`` without its compiled extension. The PyPI wheel is a CUDA build whose
    ``_torchaudio.so`` cannot load beside a CPU torch; torchaudio treats a missing library
    directory (its ``pex`` case) as "no extension", and the transforms and models swept here are
    plain torch. So its loader module is loaded first with the library directory pointed away."""
    if "torchaudio" in sys.modules:
        return
    spec = importlib.util.find_spec("torchaudio")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("torchaudio is not installed")
    path = Path(spec.origin).parent / "_extension" / "utils.py"
    loader_spec = importlib.util.spec_from_file_location("torchaudio._extension.utils", path)
    assert loader_spec is not None and loader_spec.loader is not None
    utils = importlib.util.module_from_spec(loader_spec)
    sys.modules[loader_spec.name] = utils
    loader_spec.loader.exec_module(utils)
    utils._LIB_DIR = Path("/nonexistent/torchaudio/lib")
    import torchaudio  # noqa: F401


def image(batch: int = 1, height: int = 32, width: int = 40) -> Tensor:
    return torch.rand(batch, 3, height, width)


HW = {2: "height", 3: "width"}
NCHW = {0: "batch", 2: "height", 3: "width"}


def dynamic_image(model: nn.Module, axes: dict[int, str] = HW) -> Example:
    """An image case with dynamic axes, run again on a 24x48 image (batch 2 if the batch is dynamic)."""
    other = image(2 if 0 in axes else 1, 24, 48)
    return Example(model, (image(),), (other,), {0: axes})


def image_pair(model: nn.Module) -> Example:
    a = image()
    return Example(model, (a, (a + 0.1 * torch.rand_like(a)).clamp(0, 1)))


# ------------------------------------------------------------------ kornia


@case("kornia", quick=True)
def rgb_to_hsv() -> Example:
    import kornia

    return dynamic_image(kornia.color.RgbToHsv())


@case("kornia")
def rgb_to_lab() -> Example:
    import kornia

    return dynamic_image(kornia.color.RgbToLab())


@case("kornia")
def hsv_to_rgb() -> Example:
    import kornia

    return dynamic_image(kornia.color.HsvToRgb())


@case("kornia")
def adjust_saturation() -> Example:
    import kornia

    return dynamic_image(kornia.enhance.AdjustSaturation(0.5))


@case("kornia")
def warp_perspective() -> Example:
    import kornia

    class KorniaWarpPerspective(nn.Module):
        def forward(self, img: Tensor, matrix: Tensor) -> Tensor:
            return kornia.geometry.transform.warp_perspective(img, matrix, (24, 28))

    matrix = torch.eye(3)[None] + 0.05 * torch.rand(1, 3, 3)
    return Example(KorniaWarpPerspective(), (image(), matrix))


@case("kornia")
def dilation() -> Example:
    import kornia

    class KorniaDilation(nn.Module):
        def forward(self, img: Tensor) -> Tensor:
            return kornia.morphology.dilation(img, torch.ones(3, 3))

    return dynamic_image(KorniaDilation())


@case("kornia")
def total_variation() -> Example:
    import kornia

    return dynamic_image(kornia.losses.TotalVariation(), NCHW)


@case("kornia")
def psnr_loss() -> Example:
    import kornia

    return image_pair(kornia.losses.PSNRLoss(1.0))


@case("kornia")
def zca_whitening() -> Example:
    import kornia

    model = kornia.enhance.ZCAWhitening().fit(torch.rand(20, 3, 4, 4))
    return Example(model, (torch.rand(5, 3, 4, 4),), (torch.rand(7, 3, 4, 4),), {0: {0: "batch"}})


@case("kornia")
def image_histogram2d() -> Example:
    import kornia

    class KorniaHistogram(nn.Module):
        def forward(self, img: Tensor) -> Tensor:
            return kornia.enhance.image_histogram2d(img, n_bins=16)[0]

    return dynamic_image(KorniaHistogram())


@case("kornia")
def max_blur_pool2d() -> Example:
    import kornia

    return Example(kornia.filters.MaxBlurPool2D(3), (image(1, 32, 40),), (image(2, 16, 24),), {0: NCHW})


@case("kornia", script=False, quick=True)
def gaussian_blur2d() -> Example:
    import kornia

    return dynamic_image(kornia.filters.GaussianBlur2d((5, 5), (1.5, 1.5)))


@case("kornia", script=False)
def sobel() -> Example:
    import kornia

    return dynamic_image(kornia.filters.Sobel())


@case("kornia", script=False)
def canny() -> Example:
    import kornia

    return Example(kornia.filters.Canny(), (image(),))


@case("kornia", script=False)
def median_blur() -> Example:
    import kornia

    return dynamic_image(kornia.filters.MedianBlur((3, 3)))


@case("kornia", script=False)
def resize() -> Example:
    import kornia

    return dynamic_image(kornia.geometry.transform.Resize((16, 20)))


@case("kornia", script=False)
def rotate() -> Example:
    import kornia

    return Example(kornia.geometry.transform.Rotate(torch.tensor([30.0])), (image(),))


@case("kornia", script=False)
def ssim_loss() -> Example:
    import kornia

    return image_pair(kornia.losses.SSIMLoss(5))


@case("kornia", script=False)
def rotation_matrix_to_quaternion() -> Example:
    import kornia

    class KorniaMatrixToQuaternion(nn.Module):
        def forward(self, matrix: Tensor) -> Tensor:
            return kornia.geometry.conversions.rotation_matrix_to_quaternion(matrix)

    def rotations(n: int) -> Tensor:
        q = torch.nn.functional.normalize(torch.randn(n, 4), dim=-1)
        w, x, y, z = q.unbind(-1)
        return torch.stack(
            [
                torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                torch.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                torch.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
            ],
            -2,
        )

    return Example(KorniaMatrixToQuaternion(), (rotations(8),), (rotations(5),), {0: {0: "n"}})


# ------------------------------------------------------------------ torch_geometric


def graph(nodes: int, edges: int, features: int = 8) -> tuple[Tensor, Tensor]:
    return torch.rand(nodes, features), torch.randint(0, nodes, (2, edges))


def graph_example(model: nn.Module, features: int = 8) -> Example:
    """A graph of 10 nodes and 30 edges, nodes and edges dynamic, run again on 14 nodes and 44 edges."""
    return Example(model, graph(10, 30, features), graph(14, 44, features), {0: {0: "nodes"}, 1: {1: "edges"}})


@case("torch_geometric", quick=True)
def gcn_conv() -> Example:
    from torch_geometric.nn import GCNConv

    return graph_example(GCNConv(8, 16))


@case("torch_geometric")
def sage_conv() -> Example:
    from torch_geometric.nn import SAGEConv

    return graph_example(SAGEConv(8, 16))


@case("torch_geometric")
def gin_conv() -> Example:
    from torch_geometric.nn import GINConv

    return graph_example(GINConv(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16))))


@case("torch_geometric")
def graph_conv() -> Example:
    from torch_geometric.nn import GraphConv

    return graph_example(GraphConv(8, 16, aggr="max"))


@case("torch_geometric")
def cheb_conv() -> Example:
    from torch_geometric.nn import ChebConv

    return graph_example(ChebConv(8, 16, K=3))


@case("torch_geometric")
def edge_conv() -> Example:
    from torch_geometric.nn import EdgeConv

    return graph_example(EdgeConv(nn.Sequential(nn.Linear(16, 16), nn.ReLU())))


@case("torch_geometric")
def gen_conv() -> Example:
    from torch_geometric.nn import GENConv

    return graph_example(GENConv(8, 16))


@case("torch_geometric")
def gated_graph_conv() -> Example:
    from torch_geometric.nn import GatedGraphConv

    return graph_example(GatedGraphConv(16, 2), features=16)


@case("torch_geometric")
def appnp() -> Example:
    from torch_geometric.nn import APPNP

    return graph_example(APPNP(3, 0.1))


@case("torch_geometric")
def graphsage_model() -> Example:
    from torch_geometric.nn.models import GraphSAGE

    return graph_example(GraphSAGE(8, 16, 2, 4))


@case("torch_geometric", script=False)
def gat_conv() -> Example:
    from torch_geometric.nn import GATConv

    return graph_example(GATConv(8, 16, heads=2))


@case("torch_geometric", script=False)
def transformer_conv() -> Example:
    from torch_geometric.nn import TransformerConv

    return graph_example(TransformerConv(8, 16, heads=2))


@case("torch_geometric")
def global_pooling() -> Example:
    from torch_geometric.nn import global_max_pool, global_mean_pool

    class PygPooling(nn.Module):
        """Mean and max pooling of node features per graph of the batch (``batch`` sorted)."""

        def forward(self, x: Tensor, batch: Tensor) -> tuple[Tensor, Tensor]:
            return global_mean_pool(x, batch), global_max_pool(x, batch)

    batch = torch.tensor([0, 0, 0, 0, 1, 1, 1, 2, 2, 2])
    return Example(PygPooling(), (torch.rand(10, 8), batch))


@case("torch_geometric")
def graph_norm() -> Example:
    from torch_geometric.nn import GraphNorm

    batch = torch.tensor([0, 0, 0, 0, 1, 1, 1, 2, 2, 2])
    return Example(GraphNorm(8), (torch.rand(10, 8), batch))


# ------------------------------------------------------------------ einops


@case("einops", quick=True)
def rearrange_patches() -> Example:
    from einops.layers.torch import Rearrange

    model = Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=4, p2=4)
    return dynamic_image(model, NCHW)


@case("einops")
def rearrange_flatten() -> Example:
    from einops.layers.torch import Rearrange

    return dynamic_image(Rearrange("b c h w -> b (c h w)"), NCHW)


@case("einops")
def reduce_max_pool() -> Example:
    from einops.layers.torch import Reduce

    return dynamic_image(Reduce("b c (h 2) (w 2) -> b c h w", "max"), NCHW)


@case("einops")
def reduce_mean() -> Example:
    from einops.layers.torch import Reduce

    return dynamic_image(Reduce("b c h w -> b c", "mean"), NCHW)


@case("einops")
def einmix() -> Example:
    from einops.layers.torch import EinMix

    model = EinMix("b c h w -> b d h w", weight_shape="c d", bias_shape="d", c=3, d=5)
    return dynamic_image(model, NCHW)


@case("einops")
def patch_embedding() -> Example:
    from einops.layers.torch import Rearrange, Reduce

    model = nn.Sequential(
        Rearrange("b c (h p1) (w p2) -> b h w (p1 p2 c)", p1=4, p2=4),
        nn.Linear(48, 16),
        Rearrange("b h w d -> b d h w"),
        Reduce("b d h w -> b d", "mean"),
    )
    return dynamic_image(model, NCHW)


# ------------------------------------------------------------------ torchmetrics


def vectors(n: int = 16) -> tuple[Tensor, Tensor]:
    a = torch.rand(n)
    return a, a + 0.3 * torch.rand(n)


def vector_pair(model: nn.Module) -> Example:
    return Example(model, vectors(16), vectors(24), {0: {0: "n"}, 1: {0: "n"}})


@case("torchmetrics", quick=True)
def spearman_corrcoef() -> Example:
    from torchmetrics.functional import spearman_corrcoef

    class SpearmanCorrcoef(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return spearman_corrcoef(preds, target)

    return vector_pair(SpearmanCorrcoef())


@case("torchmetrics")
def tweedie_deviance() -> Example:
    from torchmetrics.functional import tweedie_deviance_score

    class TweedieDeviance(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return tweedie_deviance_score(preds, target, 1.5)

    return vector_pair(TweedieDeviance())


@case("torchmetrics")
def minkowski() -> Example:
    from torchmetrics.functional import minkowski_distance

    class MinkowskiDistance(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return minkowski_distance(preds, target, 3.0)

    return vector_pair(MinkowskiDistance())


@case("torchmetrics")
def log_cosh() -> Example:
    from torchmetrics.functional import log_cosh_error

    class LogCoshError(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return log_cosh_error(preds, target)

    return vector_pair(LogCoshError())


@case("torchmetrics")
def image_gradients() -> Example:
    from torchmetrics.functional.image import image_gradients

    class ImageGradients(nn.Module):
        def forward(self, img: Tensor) -> tuple[Tensor, Tensor]:
            return image_gradients(img)

    return dynamic_image(ImageGradients(), NCHW)


@case("torchmetrics", script=False)
def mean_squared_error() -> Example:
    from torchmetrics.functional import mean_squared_error

    class MeanSquaredError(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return mean_squared_error(preds, target)

    return vector_pair(MeanSquaredError())


@case("torchmetrics", script=False)
def r2_score() -> Example:
    from torchmetrics.functional import r2_score

    class R2Score(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return r2_score(preds, target)

    return vector_pair(R2Score())


@case("torchmetrics", script=False)
def pearson_corrcoef() -> Example:
    from torchmetrics.functional import pearson_corrcoef

    class PearsonCorrcoef(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return pearson_corrcoef(preds, target)

    return vector_pair(PearsonCorrcoef())


@case("torchmetrics", script=False)
def psnr() -> Example:
    from torchmetrics.functional.image import peak_signal_noise_ratio

    class PeakSignalNoiseRatio(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return peak_signal_noise_ratio(preds, target, data_range=1.0)

    return image_pair(PeakSignalNoiseRatio())


@case("torchmetrics", script=False, quick=True)
def ssim() -> Example:
    from torchmetrics.functional.image import structural_similarity_index_measure

    class StructuralSimilarity(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return structural_similarity_index_measure(preds, target, data_range=1.0)

    return image_pair(StructuralSimilarity())


@case("torchmetrics", script=False)
def binary_accuracy() -> Example:
    from torchmetrics.functional.classification import binary_accuracy

    class BinaryAccuracy(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return binary_accuracy(preds, target)

    def inputs(n: int) -> tuple[Tensor, Tensor]:
        return torch.rand(n), torch.randint(0, 2, (n,))

    return Example(BinaryAccuracy(), inputs(16), inputs(24), {0: {0: "n"}, 1: {0: "n"}})


@case("torchmetrics", script=False)
def multiclass_accuracy() -> Example:
    from torchmetrics.functional.classification import multiclass_accuracy

    class MulticlassAccuracy(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return multiclass_accuracy(preds, target, num_classes=4)

    def inputs(n: int) -> tuple[Tensor, Tensor]:
        return torch.rand(n, 4), torch.randint(0, 4, (n,))

    return Example(MulticlassAccuracy(), inputs(16), inputs(24), {0: {0: "n"}, 1: {0: "n"}})


@case("torchmetrics", script=False)
def binary_auroc() -> Example:
    from torchmetrics.functional.classification import binary_auroc

    class BinaryAuroc(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return binary_auroc(preds, target)

    return Example(BinaryAuroc(), (torch.rand(16), torch.randint(0, 2, (16,))))


@case("torchmetrics", script=False)
def confusion_matrix() -> Example:
    from torchmetrics.functional.classification import multiclass_confusion_matrix

    class ConfusionMatrix(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return multiclass_confusion_matrix(preds, target, num_classes=4)

    def inputs(n: int) -> tuple[Tensor, Tensor]:
        return torch.randint(0, 4, (n,)), torch.randint(0, 4, (n,))

    return Example(ConfusionMatrix(), inputs(16), inputs(24), {0: {0: "n"}, 1: {0: "n"}})


@case("torchmetrics", script=False)
def si_sdr() -> Example:
    from torchmetrics.functional.audio import scale_invariant_signal_distortion_ratio

    class SignalNoiseRatio(nn.Module):
        def forward(self, preds: Tensor, target: Tensor) -> Tensor:
            return scale_invariant_signal_distortion_ratio(preds, target)

    target = torch.randn(2, 400)
    return Example(SignalNoiseRatio(), (target + 0.1 * torch.randn(2, 400), target))


@case("torchmetrics", script=False)
def pairwise_cosine() -> Example:
    from torchmetrics.functional import pairwise_cosine_similarity

    class PairwiseCosine(nn.Module):
        def forward(self, x: Tensor, y: Tensor) -> Tensor:
            return pairwise_cosine_similarity(x, y)

    return Example(
        PairwiseCosine(),
        (torch.rand(4, 8), torch.rand(5, 8)),
        (torch.rand(6, 8), torch.rand(3, 8)),
        {0: {0: "n"}, 1: {0: "m"}},
    )


# ------------------------------------------------------------------ torchvision


def boxes(n: int) -> Tensor:
    corners = torch.rand(n, 2) * 30
    return torch.cat([corners, corners + 2 + torch.rand(n, 2) * 10], 1)


@case("torchvision", quick=True)
def nms() -> Example:
    from torchvision.ops import nms

    class Nms(nn.Module):
        def forward(self, boxes: Tensor, scores: Tensor) -> Tensor:
            return nms(boxes, scores, 0.5)

    return Example(Nms(), (boxes(20), torch.rand(20)), (boxes(33), torch.rand(33)), {0: {0: "n"}, 1: {0: "n"}})


@case("torchvision")
def batched_nms() -> Example:
    from torchvision.ops import batched_nms

    class BatchedNms(nn.Module):
        def forward(self, boxes: Tensor, scores: Tensor, idxs: Tensor) -> Tensor:
            return batched_nms(boxes, scores, idxs, 0.5)

    def inputs(n: int) -> tuple[Tensor, Tensor, Tensor]:
        return boxes(n), torch.rand(n), torch.randint(0, 3, (n,))

    return Example(BatchedNms(), inputs(20), inputs(33), {0: {0: "n"}, 1: {0: "n"}, 2: {0: "n"}})


@case("torchvision")
def box_iou() -> Example:
    from torchvision.ops import box_iou, generalized_box_iou

    class BoxIou(nn.Module):
        def forward(self, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
            return box_iou(a, b), generalized_box_iou(a, b)

    return Example(BoxIou(), (boxes(10), boxes(4)), (boxes(7), boxes(6)), {0: {0: "n"}, 1: {0: "m"}})


@case("torchvision")
def box_convert() -> Example:
    from torchvision.ops import box_convert, clip_boxes_to_image

    class BoxConvert(nn.Module):
        def forward(self, boxes: Tensor) -> Tensor:
            return box_convert(clip_boxes_to_image(boxes, (24, 28)), "xyxy", "cxcywh")

    return Example(BoxConvert(), (boxes(10),), (boxes(7),), {0: {0: "n"}})


@case("torchvision")
def roi_align() -> Example:
    from torchvision.ops import roi_align

    class RoiAlign(nn.Module):
        def forward(self, features: Tensor, rois: Tensor) -> Tensor:
            return roi_align(features, rois, [5, 5], 0.5, 2, True)

    def rois(n: int) -> Tensor:
        return torch.cat([torch.randint(0, 2, (n, 1)).float(), boxes(n)], 1)

    return Example(RoiAlign(), (image(2), rois(6)), (image(2, 24, 48), rois(9)), {0: HW, 1: {0: "n"}})


class MultiScaleRoiAlign(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from torchvision.ops import MultiScaleRoIAlign

        self.pool = MultiScaleRoIAlign(["p2", "p3"], 4, 2)

    def forward(self, p2: Tensor, p3: Tensor, boxes: Tensor) -> Tensor:
        return self.pool({"p2": p2, "p3": p3}, [boxes], [(64, 64)])


@case("torchvision")
def multiscale_roi_align() -> Example:
    return Example(MultiScaleRoiAlign(), (torch.rand(1, 8, 16, 16), torch.rand(1, 8, 8, 8), boxes(6) * 1.5))


class Fpn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from torchvision.ops import FeaturePyramidNetwork

        self.fpn = FeaturePyramidNetwork([8, 16], 8)

    def forward(self, c2: Tensor, c3: Tensor) -> list[Tensor]:
        return list(self.fpn({"c2": c2, "c3": c3}).values())


@case("torchvision")
def feature_pyramid() -> Example:
    return Example(
        Fpn(),
        (torch.rand(1, 8, 16, 16), torch.rand(1, 16, 8, 8)),
        (torch.rand(1, 8, 24, 20), torch.rand(1, 16, 12, 10)),
        {0: HW, 1: HW},
    )


@case("torchvision")
def squeeze_excitation() -> Example:
    from torchvision.ops import SqueezeExcitation

    return Example(SqueezeExcitation(8, 4), (torch.rand(1, 8, 8, 8),), (torch.rand(2, 8, 5, 7),), {0: NCHW})


@case("torchvision")
def sigmoid_focal_loss() -> Example:
    from torchvision.ops import sigmoid_focal_loss

    class FocalLoss(nn.Module):
        def forward(self, logits: Tensor, targets: Tensor) -> Tensor:
            return sigmoid_focal_loss(logits, targets, reduction="mean")

    return Example(FocalLoss(), (torch.randn(8, 4), torch.rand(8, 4).round()))


@case("torchvision", quick=True)
def transforms_resize_normalize() -> Example:
    from torchvision import transforms

    model = nn.Sequential(
        transforms.Resize([24, 30], antialias=True), transforms.Normalize([0.5, 0.4, 0.3], [0.2, 0.3, 0.25])
    )
    return dynamic_image(model, NCHW)


@case("torchvision")
def transforms_center_crop() -> Example:
    from torchvision import transforms

    return Example(transforms.CenterCrop(20), (image(),))


@case("torchvision")
def transforms_gaussian_blur() -> Example:
    from torchvision import transforms

    return dynamic_image(transforms.GaussianBlur(5, 1.5), NCHW)


@case("torchvision")
def transforms_grayscale() -> Example:
    from torchvision import transforms

    return dynamic_image(transforms.Grayscale(3), NCHW)


@case("torchvision")
def adjust_hue() -> Example:
    from torchvision.transforms import functional

    class AdjustHue(nn.Module):
        def forward(self, img: Tensor) -> Tensor:
            return functional.adjust_hue(img, 0.1)

    return dynamic_image(AdjustHue(), NCHW)


@case("torchvision")
def equalize() -> Example:
    from torchvision.transforms import functional

    class Equalize(nn.Module):
        def forward(self, img: Tensor) -> Tensor:
            return functional.equalize(img)

    return Example(Equalize(), ((image() * 255).to(torch.uint8),))


@case("torchvision")
def autocontrast() -> Example:
    from torchvision.transforms import functional

    class Autocontrast(nn.Module):
        def forward(self, img: Tensor) -> Tensor:
            return functional.autocontrast(img)

    return dynamic_image(Autocontrast(), NCHW)


@case("torchvision")
def rotate_image() -> Example:
    from torchvision.transforms import functional

    class Rotate(nn.Module):
        def forward(self, img: Tensor) -> Tensor:
            return functional.rotate(img, 30.0)

    return Example(Rotate(), (image(),))


@case("torchvision")
def perspective() -> Example:
    from torchvision.transforms import functional

    class Perspective(nn.Module):
        def forward(self, img: Tensor) -> Tensor:
            start = [[0, 0], [39, 0], [39, 31], [0, 31]]
            end = [[2, 1], [37, 0], [39, 30], [1, 31]]
            return functional.perspective(img, start, end)

    return Example(Perspective(), (image(),))


class RcnnTransform(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from torchvision.models.detection.transform import GeneralizedRCNNTransform

        self.transform = GeneralizedRCNNTransform(32, 48, [0.5, 0.4, 0.3], [0.2, 0.3, 0.25])

    def forward(self, a: Tensor, b: Tensor) -> Tensor:
        return self.transform([a, b])[0].tensors


@case("torchvision")
def rcnn_transform() -> Example:
    return Example(RcnnTransform(), (torch.rand(3, 32, 40), torch.rand(3, 28, 36)))


class RpnHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from torchvision.models.detection.rpn import RPNHead

        self.head = RPNHead(8, 3)

    def forward(self, p2: Tensor, p3: Tensor) -> tuple[list[Tensor], list[Tensor]]:
        return self.head([p2, p3])


@case("torchvision")
def rpn_head() -> Example:
    return Example(
        RpnHead(),
        (torch.rand(1, 8, 16, 16), torch.rand(1, 8, 8, 8)),
        (torch.rand(2, 8, 12, 20), torch.rand(2, 8, 6, 10)),
        {0: NCHW, 1: NCHW},
    )


# ------------------------------------------------------------------ torchaudio


def waveform_example(model: nn.Module, samples: int = 4000) -> Example:
    """One channel of ``samples`` samples, time dynamic, run again on 2 channels of 3000 samples."""
    return Example(model, (torch.randn(1, samples),), (torch.randn(2, 3000),), {0: {0: "channel", 1: "time"}})


@case("torchaudio", quick=True)
def spectrogram() -> Example:
    import torchaudio

    return waveform_example(torchaudio.transforms.Spectrogram(n_fft=256))


@case("torchaudio")
def mel_spectrogram() -> Example:
    import torchaudio

    return waveform_example(torchaudio.transforms.MelSpectrogram(16000, n_fft=256, n_mels=32))


@case("torchaudio")
def mfcc() -> Example:
    import torchaudio

    return waveform_example(torchaudio.transforms.MFCC(16000, n_mfcc=13, melkwargs={"n_fft": 256, "n_mels": 32}))


@case("torchaudio")
def resample() -> Example:
    import torchaudio

    return waveform_example(torchaudio.transforms.Resample(16000, 8000))


@case("torchaudio")
def resample_fractional() -> Example:
    import torchaudio

    return waveform_example(torchaudio.transforms.Resample(12000, 8000))


@case("torchaudio")
def amplitude_to_db() -> Example:
    import torchaudio

    return Example(torchaudio.transforms.AmplitudeToDB(top_db=80.0), (torch.rand(1, 40, 30) * 10,))


@case("torchaudio")
def compute_deltas() -> Example:
    import torchaudio

    model = torchaudio.transforms.ComputeDeltas()
    return Example(model, (torch.rand(1, 13, 40),), (torch.rand(2, 13, 25),), {0: {0: "batch", 2: "time"}})


@case("torchaudio")
def spectral_centroid() -> Example:
    import torchaudio

    return waveform_example(torchaudio.transforms.SpectralCentroid(16000, n_fft=256))


@case("torchaudio")
def griffin_lim() -> Example:
    import torchaudio

    model = torchaudio.transforms.GriffinLim(n_fft=256, n_iter=4, rand_init=False)
    return Example(model, (torch.rand(1, 129, 32),))


@case("torchaudio")
def mu_law_encoding() -> Example:
    import torchaudio

    return Example(torchaudio.transforms.MuLawEncoding(), (torch.randn(1, 400).tanh(),))


@case("torchaudio")
def fade() -> Example:
    import torchaudio

    return waveform_example(torchaudio.transforms.Fade(400, 400, "logarithmic"))


@case("torchaudio")
def deemphasis() -> Example:
    import torchaudio

    return Example(torchaudio.transforms.Deemphasis(), (torch.randn(1, 100),))


@case("torchaudio")
def lowpass_biquad() -> Example:
    import torchaudio

    class LowpassBiquad(nn.Module):
        def forward(self, waveform: Tensor) -> Tensor:
            return torchaudio.functional.lowpass_biquad(waveform, 16000, 1000.0)

    return Example(LowpassBiquad(), (torch.randn(1, 100),))


@case("torchaudio")
def wav2letter() -> Example:
    import torchaudio

    model = torchaudio.models.Wav2Letter(num_classes=10, input_type="mfcc", num_features=13)
    return Example(model, (torch.rand(1, 13, 50),), (torch.rand(2, 13, 70),), {0: {0: "batch", 2: "time"}})


@case("torchaudio")
def conv_tasnet() -> Example:
    import torchaudio

    model = torchaudio.models.ConvTasNet(
        num_sources=2,
        enc_kernel_size=16,
        enc_num_feats=32,
        msk_kernel_size=3,
        msk_num_feats=16,
        msk_num_hidden_feats=32,
        msk_num_layers=2,
        msk_num_stacks=1,
    )
    return Example(model, (torch.rand(1, 1, 800),), (torch.rand(2, 1, 1200),), {0: {0: "batch", 2: "time"}})


@case("torchaudio")
def conformer() -> Example:
    import torchaudio

    model = torchaudio.models.Conformer(16, 2, 32, 2, 7)
    return Example(
        model,
        (torch.rand(2, 20, 16), torch.tensor([20, 15])),
        (torch.rand(3, 26, 16), torch.tensor([26, 9, 20])),
        {0: {0: "batch", 1: "time"}, 1: {0: "batch"}},
    )


@case("torchaudio")
def emformer() -> Example:
    import torchaudio

    model = torchaudio.models.Emformer(16, 2, 32, 2, segment_length=4)
    return Example(model, (torch.rand(2, 20, 16), torch.tensor([20, 15])))


# ------------------------------------------------------------------ monai


def volume_example(model: nn.Module, side: int = 32, channels: int = 1) -> Example:
    """A 2-D image of ``side`` x ``side``, batch/height/width dynamic, run again on 2 x 48 x 32."""
    return Example(model, (torch.rand(1, channels, side, side),), (torch.rand(2, channels, 48, 32),), {0: NCHW})


@case("monai", quick=True)
def unet() -> Example:
    from monai.networks.nets import UNet

    return volume_example(UNet(2, 1, 2, (4, 8, 16), (2, 2), num_res_units=1))


@case("monai")
def basic_unet() -> Example:
    from monai.networks.nets import BasicUNet

    return volume_example(BasicUNet(2, 1, 2, features=(4, 4, 8, 8, 16, 4)))


@case("monai")
def dyn_unet() -> Example:
    from monai.networks.nets import DynUNet

    return volume_example(DynUNet(2, 1, 2, [3, 3, 3], [1, 2, 2], [2, 2], filters=[4, 8, 16]))


@case("monai")
def attention_unet() -> Example:
    from monai.networks.nets import AttentionUnet

    return volume_example(AttentionUnet(2, 1, 2, (4, 8, 16), (2, 2)))


@case("monai")
def segresnet() -> Example:
    from monai.networks.nets import SegResNet

    return volume_example(SegResNet(2, 8, 1, 2))


@case("monai")
def densenet() -> Example:
    from monai.networks.nets import DenseNet

    return volume_example(DenseNet(2, 1, 3, init_features=8, growth_rate=4, block_config=(2, 2)))


@case("monai")
def unetr() -> Example:
    from monai.networks.nets import UNETR

    model = UNETR(1, 2, (32, 32), feature_size=4, hidden_size=32, mlp_dim=64, num_heads=2, spatial_dims=2)
    return Example(model, (torch.rand(1, 1, 32, 32),), (torch.rand(2, 1, 32, 32),), {0: {0: "batch"}})


@case("monai")
def vnet() -> Example:
    from monai.networks.nets import VNet

    return volume_example(VNet(2, 1, 2))


@case("monai")
def autoencoder() -> Example:
    from monai.networks.nets import AutoEncoder

    return volume_example(AutoEncoder(2, 1, 1, (4, 8), (2, 2)))


@case("monai")
def highresnet() -> Example:
    from monai.networks.nets import HighResNet

    return volume_example(HighResNet(2, 1, 2))


@case("monai")
def efficientnet() -> Example:
    from monai.networks.nets import EfficientNetBN

    model = EfficientNetBN("efficientnet-b0", pretrained=False, spatial_dims=2, in_channels=1, num_classes=3)
    return volume_example(model)


@case("monai")
def vit() -> Example:
    from monai.networks.nets import ViT

    model = ViT(1, (32, 32), (8, 8), hidden_size=32, mlp_dim=64, num_layers=2, num_heads=2, spatial_dims=2)
    return Example(model, (torch.rand(1, 1, 32, 32),), (torch.rand(2, 1, 32, 32),), {0: {0: "batch"}})


@case("monai")
def unet_3d() -> Example:
    from monai.networks.nets import UNet

    model = UNet(3, 1, 2, (4, 8), (2,))
    return Example(
        model, (torch.rand(1, 1, 16, 16, 16),), (torch.rand(1, 1, 8, 16, 24),), {0: {2: "d", 3: "h", 4: "w"}}
    )


# ------------------------------------------------------------------ julius


@case("julius", quick=True)
def resample_frac() -> Example:
    import julius

    return waveform_example(julius.ResampleFrac(4, 3))


@case("julius")
def lowpass_filter() -> Example:
    import julius

    return waveform_example(julius.LowPassFilter(0.1))


@case("julius")
def lowpass_filters() -> Example:
    import julius

    return waveform_example(julius.LowPassFilters([0.05, 0.2]))


@case("julius")
def highpass_filter() -> Example:
    import julius

    return waveform_example(julius.HighPassFilter(0.1))


@case("julius")
def bandpass_filter() -> Example:
    import julius

    return waveform_example(julius.BandPassFilter(0.1, 0.3))


@case("julius")
def split_bands() -> Example:
    import julius

    return waveform_example(julius.SplitBands(16000, n_bands=4))


@case("julius")
def fft_conv1d() -> Example:
    import julius

    model = julius.FFTConv1d(1, 4, 64)
    return Example(model, (torch.randn(1, 1, 4000),), (torch.randn(2, 1, 3000),), {0: {0: "batch", 2: "time"}})


# ------------------------------------------------------------------ asteroid_filterbanks


def asteroid_example(model: nn.Module) -> Example:
    return Example(model, (torch.randn(1, 1, 4000),), (torch.randn(2, 1, 3000),), {0: {0: "batch", 2: "time"}})


@case("asteroid_filterbanks", quick=True)
def stft_encoder() -> Example:
    from asteroid_filterbanks import make_enc_dec

    return asteroid_example(make_enc_dec("stft", n_filters=64, kernel_size=64, stride=16)[0])


@case("asteroid_filterbanks")
def stft_decoder() -> Example:
    from asteroid_filterbanks import make_enc_dec

    model = make_enc_dec("stft", n_filters=64, kernel_size=64, stride=16)[1]
    return Example(model, (torch.rand(1, 66, 247),), (torch.rand(2, 66, 180),), {0: {0: "batch", 2: "frames"}})


@case("asteroid_filterbanks")
def free_encoder() -> Example:
    from asteroid_filterbanks import make_enc_dec

    return asteroid_example(make_enc_dec("free", n_filters=32, kernel_size=16, stride=8)[0])


@case("asteroid_filterbanks")
def param_sinc_encoder() -> Example:
    from asteroid_filterbanks import make_enc_dec

    model = make_enc_dec("param_sinc", n_filters=32, kernel_size=65, stride=16, sample_rate=16000)[0]
    return asteroid_example(model)


@case("asteroid_filterbanks")
def torch_stft_encoder() -> Example:
    from asteroid_filterbanks import Encoder, TorchSTFTFB

    return asteroid_example(Encoder(TorchSTFTFB(n_filters=64, kernel_size=64, stride=16)))


@case("asteroid_filterbanks")
def stft_magnitude() -> Example:
    from asteroid_filterbanks import make_enc_dec
    from asteroid_filterbanks.transforms import mag

    class AsteroidMagnitude(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = make_enc_dec("stft", n_filters=64, kernel_size=64, stride=16)[0]

        def forward(self, waveform: Tensor) -> Tensor:
            return mag(self.encoder(waveform))

    return asteroid_example(AsteroidMagnitude())


# ------------------------------------------------------------------ pytorch_msssim


@case("pytorch_msssim", script=False, quick=True)
def ssim_module() -> Example:
    from pytorch_msssim import SSIM

    return image_pair(SSIM(data_range=1.0, channel=3, win_size=5))


@case("pytorch_msssim", script=False)
def ms_ssim_module() -> Example:
    from pytorch_msssim import MS_SSIM

    a = torch.rand(1, 3, 64, 64)
    return Example(MS_SSIM(data_range=1.0, channel=3, win_size=3), (a, (a + 0.1 * torch.rand_like(a)).clamp(0, 1)))


@case("pytorch_msssim", script=False)
def ssim_function() -> Example:
    from pytorch_msssim import ssim

    class MsssimFunctional(nn.Module):
        def forward(self, a: Tensor, b: Tensor) -> Tensor:
            return ssim(a, b, data_range=1.0, win_size=7, size_average=False)

    return image_pair(MsssimFunctional())
