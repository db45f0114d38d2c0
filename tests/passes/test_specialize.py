"""passes/specialize.py on small graphs: what is fixed at export (ranks, dtypes, devices, layouts,
sizes not named dynamic, attributes) is evaluated, dead branches go, loops whose count depends
only on such facts unroll, and what depends on run-time values stays as it was."""

from __future__ import annotations

from typing import Optional

import pytest
import torch

from exporter.capture.lowering import inline_calls
from exporter.errors import RankChangingLoopError
from exporter.passes import ExportFacts, specialize
from exporter.passes.export_values import MaybeNone, TensorFacts, merge
from exporter.passes.specialize import needs_specializing


def _specialized(
    fn: torch.jit.ScriptFunction,
    *examples: object,
    dynamic: dict[int, set[int]] | None = None,
    optional: tuple[int, ...] = (),
) -> torch._C.Graph:
    graph = fn.graph.copy()
    inline_calls(graph)
    specialize(graph, ExportFacts.of_inputs(examples, (), dynamic or {}, optional))
    return graph


def _kinds(graph: torch._C.Graph) -> list[str]:
    found = []
    for node in graph.nodes():
        found.append(node.kind())
        for block in node.blocks():
            found.extend(n.kind() for n in block.nodes())
    return found


@torch.jit.script
def _device_and_layout_branches(x: torch.Tensor) -> torch.Tensor:
    if x.is_cuda:
        return x * 2
    if x.layout == torch.sparse_csr:
        return x.crow_indices().float()
    return x + 1


def test_device_and_layout_branches_are_decided() -> None:
    graph = _specialized(_device_and_layout_branches, torch.rand(3))
    kinds = _kinds(graph)
    assert "prim::If" not in kinds
    assert "aten::crow_indices" not in kinds and "prim::is_cuda" not in kinds
    assert kinds.count("aten::add") == 1


@torch.jit.script
def _promoted(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    dtype = torch.promote_types(a.dtype, b.dtype)
    return a.to(dtype) + b.to(dtype)


def test_promote_types_becomes_the_dtype_constant() -> None:
    graph = _specialized(_promoted, torch.rand(3).half(), torch.rand(3))
    assert "aten::promote_types" not in _kinds(graph)
    casts = [n for n in graph.nodes() if n.kind() == "aten::to"]
    assert [c.inputsAt(1).toIValue() for c in casts] == [6, 6]  # torch.float32 as TorchScript holds it


@torch.jit.script
def _rank_matched(factor: torch.Tensor, image: torch.Tensor) -> torch.Tensor:
    while factor.dim() != image.dim():
        factor = factor[..., None]
    return image * factor


def test_rank_matching_while_loop_unrolls() -> None:
    graph = _specialized(_rank_matched, torch.rand(3), torch.rand(3, 4, 5))
    kinds = _kinds(graph)
    assert "prim::Loop" not in kinds
    assert kinds.count("aten::unsqueeze") == 2
    last = [n for n in graph.nodes() if n.kind() == "aten::unsqueeze"][-1]
    assert last.output().type().dim() == 3  # each copy is typed from what it computes


def test_rank_matching_loop_runs_as_often_as_the_ranks_say() -> None:
    graph = _specialized(_rank_matched, torch.rand(3, 4, 5), torch.rand(3, 4, 5))
    assert "aten::unsqueeze" not in _kinds(graph)  # ranks agree: the loop never runs


@torch.jit.script
def _halve_while_long(x: torch.Tensor) -> torch.Tensor:
    while x.size(0) > 2:
        x = x[::2]
    return x


def test_loop_on_a_dynamic_size_stays_a_loop() -> None:
    assert "prim::Loop" in _kinds(_specialized(_halve_while_long, torch.rand(8), dynamic={0: {0}}))


def test_loop_on_a_static_size_unrolls() -> None:
    graph = _specialized(_halve_while_long, torch.rand(8))
    assert "prim::Loop" not in _kinds(graph)
    assert _kinds(graph).count("aten::slice") == 2  # 8 -> 4 -> 2


@torch.jit.script
def _by_sizes(x: torch.Tensor) -> torch.Tensor:
    y = x
    if x.size(0) > 1:
        y = y * 2
    if x.shape[1] == 3:
        y = y + 1
    return y.reshape([x.size(0), x.dim(), -1])


def _ifs_and_folded_dims(graph: torch._C.Graph) -> tuple[int, list[object]]:
    (reshape,) = graph.findAllNodes("aten::reshape")
    (shape,) = [v.node() for v in reshape.inputs() if v.node().kind() == "prim::ListConstruct"]
    folded = [v.toIValue() if v.node().kind() == "prim::Constant" else None for v in shape.inputs()]
    return len(graph.findAllNodes("prim::If")), folded


def test_branches_on_sizes_not_named_dynamic_are_decided() -> None:
    graph = _specialized(_by_sizes, torch.rand(2, 3), dynamic={0: {0}})
    # the branch on the dynamic size stays; the sizes themselves are left to the emitter to fold
    # (which keeps the inputs torch's exporter reads for them), the rank is folded here
    assert _ifs_and_folded_dims(graph) == (1, [None, 2, -1])


def test_without_facts_no_branch_on_a_size_is_decided() -> None:
    graph = _by_sizes.graph.copy()
    specialize(graph)
    assert _ifs_and_folded_dims(graph)[0] == 2


@torch.jit.script
def _check_shape(x: torch.Tensor, shape: list[str]) -> torch.Tensor:
    if x.dim() != len(shape):
        raise ValueError("rank mismatch")
    for i in range(len(shape)):
        if shape[i] == "C" and x.shape[i] != 3:
            raise ValueError("C must be 3")
    return x + 1


@torch.jit.script
def _check_nchw(x: torch.Tensor) -> torch.Tensor:
    return _check_shape(x, ["B", "C", "H", "W"])


@pytest.mark.parametrize("dynamic", [{}, {0: {0, 2, 3}}])
def test_shape_checks_over_a_list_of_names_go(dynamic: dict[int, set[int]]) -> None:
    graph = _specialized(_check_nchw, torch.rand(2, 3, 4, 5), dynamic=dynamic)
    # the rank check goes; the loop over the names is left to the emitter, which unrolls it
    # (a for loop of fixed count keeping its ranks) and decides its checks on every iteration
    assert [n.kind() for n in graph.nodes() if n.kind() in ("prim::If", "prim::Loop")] == ["prim::Loop"]


def _trailing_sizes_are(x: torch.Tensor, names: list[str], raises: bool = True) -> bool:
    sizes = x.shape[x.dim() - len(names) :]
    for i in range(len(names)):
        if names[i].isnumeric() and sizes[i] != int(names[i]):
            if raises:
                raise ValueError(f"size {i} is not {names[i]}")
            return False
    return True


@torch.jit.script
def _check_names(x: torch.Tensor) -> torch.Tensor:
    _trailing_sizes_are(x, ["3", "4", "W"])
    return x + 1


@pytest.mark.parametrize(("dynamic", "raises"), [({}, 0), ({0: {0, 3}}, 0), ({0: {2, 3}}, 1)])
def test_a_loop_on_the_flag_of_a_return_unrolls_while_its_condition_is_known(
    dynamic: dict[int, set[int]], raises: int
) -> None:
    # `return False` inside the for loop makes its condition a carried flag: every iteration's
    # is known (a numeric name checked against a size raises where it differs), so it unrolls;
    # the check of a dynamic size named "4" stays, decided at run time
    graph = _specialized(_check_names, torch.rand(1, 3, 4, 5), dynamic=dynamic)
    assert not graph.findAllNodes("prim::Loop", True)
    assert len(graph.findAllNodes("prim::RaiseException", True)) == raises


@torch.jit.script
def _check_channels(x: torch.Tensor) -> torch.Tensor:
    if x.shape[1] != 3:
        raise ValueError("expected 3 channels, got {}".format(x.shape[1]))
    return x + 1


@pytest.mark.parametrize(("dynamic", "raises"), [({}, 0), ({0: {0}}, 0), ({0: {1}}, 1)])
def test_a_check_on_a_dynamic_size_stays(dynamic: dict[int, set[int]], raises: int) -> None:
    graph = _specialized(_check_channels, torch.rand(2, 3), dynamic=dynamic)
    assert len(graph.findAllNodes("prim::RaiseException", True)) == raises


@torch.jit.script
class _Sparse:
    def __init__(self, row: torch.Tensor, col: torch.Tensor) -> None:
        self.row = row
        self.col = col


@torch.jit.script
def _aggregate(x: torch.Tensor, edges: torch.Tensor | _Sparse) -> torch.Tensor:
    if isinstance(edges, _Sparse):
        return torch.segment_reduce(x, "sum", lengths=edges.row)
    return x.index_select(0, edges[0])


def test_isinstance_refines_a_union_argument_by_the_example() -> None:
    graph = _specialized(_aggregate, torch.rand(3, 4), torch.tensor([[0, 1], [1, 2]]))
    kinds = _kinds(graph)
    assert "prim::isinstance" not in kinds and "aten::segment_reduce" not in kinds


@torch.jit.script
def _maybe_masked(x: torch.Tensor, mask: Optional[torch.Tensor]) -> torch.Tensor:
    if mask is not None:
        return x * mask
    return x


def test_an_optional_input_decided_at_run_time_keeps_its_check() -> None:
    graph = _specialized(_maybe_masked, torch.rand(3), torch.rand(3), optional=(1,))
    assert "prim::If" in _kinds(graph)
    assert "prim::If" not in _kinds(_specialized(_maybe_masked, torch.rand(3), torch.rand(3)))


@torch.jit.script
def _grow(x: torch.Tensor, n: int) -> torch.Tensor:
    for _ in range(n):
        x = x.unsqueeze(0)
    return x


@torch.jit.script
def _grow_twice(x: torch.Tensor) -> torch.Tensor:
    return _grow(x, 2)


def test_a_for_loop_changing_a_rank_unrolls_when_its_count_is_known() -> None:
    graph = _grow_twice.graph.copy()
    inline_calls(graph)
    specialize(graph, ExportFacts.of_inputs((torch.rand(3),), (), {}))
    assert "prim::Loop" not in _kinds(graph)
    assert _kinds(graph).count("aten::unsqueeze") == 2


def test_a_loop_changing_a_rank_with_a_run_time_count_is_refused_by_name() -> None:
    with pytest.raises(RankChangingLoopError, match=r"test_specialize\.py:\d+ \(for _ in range\(n\):\)"):
        _specialized(_grow, torch.rand(3), None)


@torch.jit.script
def _accumulate(x: torch.Tensor, n: int) -> torch.Tensor:
    total = torch.zeros_like(x)
    for _ in range(n):
        if total.dim() == 1:
            total = total + x
    return total


def test_a_kept_loop_is_specialized_on_what_holds_in_every_iteration() -> None:
    graph = _specialized(_accumulate, torch.rand(3), None)
    (loop,) = graph.findAllNodes("prim::Loop", True)
    inside = [n.kind() for n in next(iter(loop.blocks())).nodes()]
    assert "prim::If" not in inside and "aten::dim" not in inside
    assert "aten::add" in inside


@torch.jit.script
def _count_dims(x: torch.Tensor) -> int:
    dims: list[int] = []
    for d in range(x.dim()):
        dims.append(d)
    dims.append(x.dim())
    return len(dims)


def test_a_list_changed_in_place_is_read_from_its_changes_not_its_start() -> None:
    graph = _specialized(_count_dims, torch.rand(2, 3))
    # the loop appending to the list carries nothing and unrolls; len() is left to the emitter,
    # which follows the appends (the pass never folds a list the graph changes)
    assert "aten::len" in _kinds(graph)


@torch.jit.script
class _Recipe:
    def __init__(self, axes: list[int], groups: int) -> None:
        self.axes = axes
        self.groups = groups


class _Rearrange(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.recipes: dict[int, _Recipe] = {3: _Recipe([0, 2, 1], 2), 4: _Recipe([0, 2, 3, 1], 1)}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        recipe = self.recipes[x.dim()]
        return x.permute(recipe.axes) * recipe.groups


def test_a_recipe_cached_in_a_module_attribute_is_read_at_export() -> None:
    from exporter.capture import capture

    captured = capture(torch.jit.script(_Rearrange()), (torch.rand(2, 3, 4),))
    specialize(captured.graph, ExportFacts.of_inputs(captured.inputs, captured.params, {}))
    (permute,) = captured.graph.findAllNodes("aten::permute")
    assert permute.inputsAt(1).toIValue() == [0, 2, 1]
    assert not captured.graph.findAllNodes("prim::GetAttr")


def test_a_traced_graph_is_not_walked() -> None:
    traced = torch.jit.trace(lambda x: x.relu() + 1, (torch.rand(3),))
    assert not needs_specializing(traced.graph)
    assert needs_specializing(_rank_matched.graph)


@torch.jit.script
def _strides_read(x: torch.Tensor) -> tuple[int, int, int, int]:
    t = x.t()
    (rows, columns) = x.permute(1, 0).contiguous().stride()
    return x.stride(0), t.stride(0), t.stride(1), rows + 10 * columns


def _folded_outputs(graph: torch._C.Graph) -> list[object]:
    """The graph's result items, each as the constant it became (None where it stays computed)."""
    (result,) = graph.outputs()
    return [v.toIValue() if v.node().kind() == "prim::Constant" else None for v in result.node().inputs()]


@pytest.mark.parametrize(
    ("example", "dynamic", "folded"),
    [
        (torch.rand(2, 3), {}, [3, 1, 3, 12]),
        # a dynamic batch changes no stride of x; it is inside the rows of the permuted copy
        (torch.rand(2, 3), {0: {0}}, [3, 1, 3, None]),
        (torch.rand(2, 3), {0: {1}}, [None, 1, None, None]),
        # the example's own layout is the one the exported model assumes
        (torch.rand(3, 2).t(), {}, [1, 2, 1, 12]),
        # an example that is not dense has no strides to assume, nor has what is computed from it
        # here (a meta run would lay it out contiguous); the emitter folds a contiguous() result's
        (torch.rand(2, 6)[:, ::2], {}, [None, None, None, None]),
    ],
    ids=["static", "dynamic_batch", "dynamic_rows", "transposed", "stepped"],
)
def test_strides_fixed_at_export_are_folded(example: torch.Tensor, dynamic: dict, folded: list[object]) -> None:  # type: ignore[type-arg]
    graph = _specialized(_strides_read, example, dynamic=dynamic)
    assert _folded_outputs(graph) == folded
    assert graph.findAllNodes("aten::stride") or None not in folded


def test_facts_meeting_keep_what_holds_on_both_paths() -> None:
    a = TensorFacts(torch.float32, torch.device("cpu"), (2, 3), (2, 3))
    b = TensorFacts(torch.float32, torch.device("cpu"), (2, 4), (2, 4))
    assert merge(a, b) == TensorFacts(torch.float32, torch.device("cpu"), (2, None), (2, 3))
    c = TensorFacts(torch.float16, torch.device("cpu"), (2,), (2,))
    assert merge(a, c) == TensorFacts(None, torch.device("cpu"), None, None)
    from exporter.passes.export_values import Known

    assert merge(a, Known(None)) == MaybeNone(a)
    strided = TensorFacts(torch.float32, None, (2, 3), (2, 3), strides=(3, 1), order=(1, 0))
    wider = TensorFacts(torch.float32, None, (2, 4), (2, 4), strides=(4, 1), order=(1, 0))
    assert merge(strided, wider) == TensorFacts(torch.float32, None, (2, None), (2, 3), strides=(None, 1), order=(1, 0))
    assert merge(Known(1), Known(1.0)) != Known(1)
