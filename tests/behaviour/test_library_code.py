"""Library code as users bring it, specialized to what is fixed at export (exporter.passes.specialize):
a factor's rank matched to an image's in a ``while`` loop (kornia/torchvision style), dtypes
promoted with ``torch.promote_types``, a rearrangement layer reading recipes it caches in a
``Dict[int, Recipe]`` of TorchScript objects (einops style), a graph layer taking
``Union[Tensor, SparseTensor]`` and ``Optional`` arguments refined with ``isinstance`` (PyG
style), device and layout branches, and shape checks over ``List[str]`` names that raise on a
mismatch (kornia's too, looping on the flag its ``return False`` sets). Each is exported at the
base opset, the default and the newest, compared with eager torch, and run on inputs of other
sizes where axes are dynamic. A ``while`` loop that could never end and a
loop changing a rank a run-time number of times are refused, naming their source line.
"""

from __future__ import annotations

import io
from typing import Dict, List, Optional, Union  # noqa: UP035 - TorchScript reads the class annotation

import pytest
import torch
from conftest import BASE_OPSETS, assert_matches_torch, dynamic_inputs

import exporter
from exporter.errors import EndlessLoopError, RankChangingLoopError

# -- rank matching ---------------------------------------------------------------------------------


@torch.jit.script
def _match_rank(factor: torch.Tensor, image: torch.Tensor) -> torch.Tensor:
    """Append unit dims to ``factor`` until it broadcasts against ``image`` from the left."""
    while factor.dim() != image.dim():
        factor = factor[..., None]
    return factor


class AdjustBrightness(torch.nn.Module):
    def forward(self, image: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
        return (image * _match_rank(factor, image)).clamp(0.0, 1.0)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_rank_matching_while_loop_unrolls(opset: int) -> None:
    model = torch.jit.script(AdjustBrightness())
    onnx_model = assert_matches_torch(
        model,
        (torch.rand(2, 3, 4, 5), torch.rand(2)),
        opset=opset,
        other_inputs=[(torch.rand(3, 3, 6, 2), torch.rand(3))],
        **dynamic_inputs(image={0: "batch", 2: "height", 3: "width"}, factor={0: "batch"}),
    )
    assert "Loop" not in {node.op_type for node in onnx_model.graph}


# -- promote_types -----------------------------------------------------------------------------------


@torch.jit.script
def _weighted_mean(values: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    dtype = torch.promote_types(values.dtype, weights.dtype)
    if not torch.empty(0, dtype=dtype).is_floating_point():
        dtype = torch.float32
    values, weights = values.to(dtype), weights.to(dtype)
    return (values * weights).sum(-1) / weights.sum(-1)


class WeightedMean(torch.nn.Module):
    def forward(self, values: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        return _weighted_mean(values, weights)


@pytest.mark.parametrize("opset", BASE_OPSETS)
@pytest.mark.parametrize(
    ("values_dtype", "weights_dtype"), [(torch.int32, torch.float32), (torch.int64, torch.int32)], ids=str
)
def test_promote_types_picks_the_dtype_at_export(
    opset: int, values_dtype: torch.dtype, weights_dtype: torch.dtype
) -> None:
    def example(rows: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.randint(0, 9, (rows, 4), dtype=values_dtype), torch.randint(1, 5, (rows, 4)).to(weights_dtype)

    assert_matches_torch(
        torch.jit.script(WeightedMean()),
        example(3),
        opset=opset,
        other_inputs=[example(5)],
        **dynamic_inputs(values={0: "rows"}, weights={0: "rows"}),
    )


# -- recipes cached in a module attribute ------------------------------------------------------------


@torch.jit.script
class Recipe:
    """How to rearrange an input of one rank: a permutation, then a merge of the last two axes."""

    def __init__(self, permutation: List[int], merge_last: bool) -> None:  # noqa: UP006
        self.permutation = permutation
        self.merge_last = merge_last


class Rearrange(torch.nn.Module):
    """Recipes parsed once per input rank and cached, read by key in forward."""

    def __init__(self) -> None:
        super().__init__()
        self.recipes: Dict[int, Recipe] = {  # noqa: UP006
            3: Recipe([0, 2, 1], False),
            4: Recipe([0, 2, 3, 1], True),
        }

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        recipe = self.recipes[x.dim()]
        y = x.permute(recipe.permutation)
        if recipe.merge_last:
            y = y.flatten(-2)
        return y


@torch.jit.script
class AxesRecipe:
    """einops' TransformRecipe: besides the permutation, a dict of axes to add, empty when the
    pattern adds none (an empty dict is no constant torch can type: it stays computed)."""

    def __init__(self, permutation: List[int], added: Dict[int, int]) -> None:  # noqa: UP006
        self.permutation = permutation
        self.added = added


class RearrangeWithAddedAxes(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        empty: Dict[int, int] = {}  # noqa: UP006
        self.recipes: Dict[int, AxesRecipe] = {3: AxesRecipe([0, 2, 1], empty)}  # noqa: UP006

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        recipe = self.recipes[x.dim()]
        y = x.permute(recipe.permutation)
        for axis, _length in recipe.added.items():
            y = y.unsqueeze(axis)
        return y * (len(recipe.added) + 1)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_a_recipe_holding_an_empty_dict_exports(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(RearrangeWithAddedAxes()),
        (torch.rand(2, 3, 4),),
        opset=opset,
        other_inputs=[(torch.rand(5, 3, 7),)],
        **dynamic_inputs(x={0: "batch", 2: "width"}),
    )


@pytest.mark.parametrize("opset", BASE_OPSETS)
@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 4, 5)], ids=str)
def test_recipes_of_a_dict_attribute_are_read_at_export(opset: int, shape: tuple[int, ...]) -> None:
    bigger = (5, *shape[1:-1], 7)
    onnx_model = assert_matches_torch(
        torch.jit.script(Rearrange()),
        (torch.rand(shape),),
        opset=opset,
        other_inputs=[(torch.rand(bigger),)],
        **dynamic_inputs(x={0: "batch", len(shape) - 1: "width"}),
    )
    assert {node.op_type for node in onnx_model.graph} <= {
        "Transpose",
        "Reshape",
        "Shape",
        "Slice",
        "Concat",
        "Gather",
        "Unsqueeze",
        "Constant",
        "Flatten",
    }


# -- Union and Optional arguments --------------------------------------------------------------------


@torch.jit.script
class SparseTensor:
    """An adjacency held as row and column indices (torch_sparse's SparseTensor, reduced)."""

    def __init__(self, row: torch.Tensor, col: torch.Tensor) -> None:
        self.row = row
        self.col = col


class GraphConv(torch.nn.Module):
    """Neighbours' features summed along edges, from an edge index or a sparse adjacency; an
    optional per-edge weight."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(
        self,
        x: torch.Tensor,
        edge_index: Union[torch.Tensor, SparseTensor],  # noqa: UP007
        edge_weight: Optional[torch.Tensor] = None,  # noqa: UP045
    ) -> torch.Tensor:
        if isinstance(edge_index, SparseTensor):
            row, col = edge_index.row, edge_index.col
            lengths = torch.bincount(row, minlength=x.size(0))
            messages = torch.segment_reduce(x[col], "sum", lengths=lengths)
        else:
            messages = x[edge_index[0]]
            if edge_weight is not None:
                messages = messages * edge_weight.unsqueeze(-1)
            messages = torch.zeros_like(x).index_add(0, edge_index[1], messages)
        return self.linear(messages + x)


def _graph(nodes: int, edges: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.rand(nodes, 4), torch.randint(0, nodes, (2, edges)), torch.rand(edges)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_isinstance_refines_a_union_argument_by_the_example(opset: int) -> None:
    model = torch.jit.script(GraphConv().eval())
    assert_matches_torch(
        model,
        _graph(5, 7),
        opset=opset,
        other_inputs=[_graph(6, 11)],
        **dynamic_inputs(x={0: "nodes"}, edge_index={1: "edges"}, edge_weight={0: "edges"}),
    )


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_an_optional_argument_given_none_drops_its_branch(opset: int) -> None:
    model = torch.jit.script(GraphConv().eval())
    x, edges, _ = _graph(5, 7)
    assert_matches_torch(model, (x, edges, None), opset=opset)


# -- device and layout branches ------------------------------------------------------------------------


@torch.jit.script
def _normalize(x: torch.Tensor) -> torch.Tensor:
    if x.is_cuda:
        return torch.nn.functional.normalize(x, dim=-1, eps=1e-6)
    if x.layout == torch.sparse_csr:
        return x.crow_indices().to(torch.float32)
    if x.is_sparse:
        return x.coalesce().values().abs()
    if x.requires_grad:
        x = x.detach()
    return x / x.abs().sum(-1, keepdim=True).clamp_min(1e-12)


class Normalize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _normalize(x)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_device_and_layout_branches_are_decided_by_the_example(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(Normalize()),
        (torch.rand(2, 5),),
        opset=opset,
        other_inputs=[(torch.rand(4, 5),)],
        **dynamic_inputs(x={0: "batch"}),
    )


# -- shape checks over names ---------------------------------------------------------------------------


@torch.jit.script
def check_shape(x: torch.Tensor, shape: List[str], channels: int) -> None:  # noqa: UP006
    """Raise unless ``x`` has one axis per name and its "C" axis has ``channels`` entries."""
    if x.dim() != len(shape):
        raise ValueError("expected a tensor of rank {}, got {}".format(len(shape), x.dim()))
    for i in range(len(shape)):
        if shape[i] == "C" and x.shape[i] != channels:
            raise ValueError("axis {} ({}) must have {} entries".format(i, shape[i], channels))
    channel_axis = shape.index("C")
    if x.shape[channel_axis - x.dim()] != channels:
        raise ValueError("bad channels")


class ChannelMix(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mix = torch.nn.Conv2d(3, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_shape(x, ["B", "C", "H", "W"], 3)
        return self.mix(x)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_shape_checks_over_a_list_of_names_go(opset: int) -> None:
    onnx_model = assert_matches_torch(
        torch.jit.script(ChannelMix().eval()),
        (torch.rand(2, 3, 4, 5),),
        opset=opset,
        other_inputs=[(torch.rand(1, 3, 7, 2),)],
        **dynamic_inputs(x={0: "batch", 2: "height", 3: "width"}),
    )
    assert {node.op_type for node in onnx_model.graph} == {"Conv"}


def kornia_check_shape(x: torch.Tensor, shape: List[str], raises: bool = True) -> bool:  # noqa: UP006
    """kornia's KORNIA_CHECK_SHAPE: numeric names must match the trailing sizes; the
    ``return False`` in the loop makes it a loop on a carried flag, unrolled while its
    condition is known."""
    shape_to_check = shape[1:]
    offset = max(len(x.shape) - len(shape_to_check), 0)
    x_shape = x.shape[offset:]
    if len(x_shape) != len(shape_to_check):
        if raises:
            raise ValueError("wrong rank")
        return False
    for i in range(len(x_shape)):
        dim_: str = shape_to_check[i]
        if not dim_.isnumeric():
            continue
        dim = int(dim_)
        if x_shape[i] != dim:
            if raises:
                raise ValueError(f"Shape mismatch at dimension {i + offset}: expected {dim}")
            return False
    return True


class GrayByNames(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        kornia_check_shape(x, ["*", "3", "H", "W"])
        return x.mean(-3)


class GrayOfHeightFour(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        kornia_check_shape(x, ["*", "3", "4", "W"])
        return x.mean(-3)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_a_check_looping_on_a_returned_flag_unrolls(opset: int) -> None:
    onnx_model = assert_matches_torch(
        torch.jit.script(GrayByNames()),
        (torch.rand(1, 3, 4, 5),),
        opset=opset,
        other_inputs=[(torch.rand(1, 3, 6, 2),)],
        **dynamic_inputs(x={2: "height", 3: "width"}),
    )
    assert {node.op_type for node in onnx_model.graph} <= {"ReduceMean", "Constant"}


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_a_check_naming_a_dynamic_size_by_number_keeps_it_to_run_time(opset: int) -> None:
    # the size named "4" is dynamic: its comparison is decided at run time, the loop still goes
    onnx_model = assert_matches_torch(
        torch.jit.script(GrayOfHeightFour()),
        (torch.rand(1, 3, 4, 5),),
        opset=opset,
        other_inputs=[(torch.rand(2, 3, 4, 2),)],
        **dynamic_inputs(x={0: "batch", 2: "height", 3: "width"}),
    )
    assert "Loop" not in {node.op_type for node in onnx_model.graph}


# -- refusals --------------------------------------------------------------------------------------------


@torch.jit.script
def _double_while_positive(x: torch.Tensor) -> torch.Tensor:
    positive = bool(x.sum() > 0)
    while positive:
        x = x * 2
    return x


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_a_loop_that_could_never_end_is_refused_by_its_line(opset: int) -> None:
    # eager never enters the loop for this example; a positive input would spin forever
    with pytest.raises(EndlessLoopError, match=r"test_library_code\.py:\d+ \(while positive:\).*`for` loop"):
        exporter.export(_double_while_positive, (-torch.rand(3),), io.BytesIO(), opset_version=opset)


@torch.jit.script
def _halve_into_rows(x: torch.Tensor) -> torch.Tensor:
    while x.size(-1) > 2:
        x = x[..., ::2].unsqueeze(0)
    return x


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_a_rank_changing_loop_unrolls_when_its_count_is_fixed(opset: int) -> None:
    assert_matches_torch(_halve_into_rows, (torch.rand(8),), opset=opset)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_a_rank_changing_loop_with_a_run_time_count_is_refused_by_its_line(opset: int) -> None:
    with pytest.raises(
        RankChangingLoopError, match=r"test_library_code\.py:\d+ \(while x\.size\(-1\) > 2:\).*run time"
    ):
        exporter.export(
            _halve_into_rows, (torch.rand(8),), io.BytesIO(), opset_version=opset, **dynamic_inputs(x={0: "n"})
        )
