"""passes/remove_inplace.py on small traced graphs: in-place ops and writes through views become
functional ops written back into their base, and check_no_inplace holds afterwards; writes it
cannot express are refused naming the user's line."""

from __future__ import annotations

import pytest
import torch

from exporter.capture.lowering import inline_calls
from exporter.errors import ExporterError
from exporter.passes import check_no_inplace, remove_dead_code, remove_inplace


def _graph(fn, *args: torch.Tensor) -> torch._C.Graph:  # noqa: ANN001
    graph = torch.jit.trace(fn, args, check_trace=False).graph.copy()
    inline_calls(graph)
    remove_dead_code(graph)
    return graph


def _scripted_graph(fn) -> torch._C.Graph:  # noqa: ANN001
    graph = torch.jit.script(fn).graph.copy()
    inline_calls(graph)
    remove_dead_code(graph)
    return graph


def _kinds(graph: torch._C.Graph) -> list[str]:
    return [n.kind() for n in graph.nodes() if n.kind() != "prim::Constant"]


def test_inplace_ops_become_functional_and_later_reads_see_the_new_value() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        y.add_(1)
        y.relu_()
        return y + y

    graph = _graph(fn, torch.randn(3))
    assert "aten::add_" in _kinds(graph)
    remove_inplace(graph)
    assert check_no_inplace(graph) == []
    assert _kinds(graph) == ["aten::mul", "aten::add", "aten::relu", "aten::add"]
    final_add = [n for n in graph.nodes() if n.kind() == "aten::add"][-1]
    relu = [n for n in graph.nodes() if n.kind() == "aten::relu"][0]
    assert [i.node() for i in final_add.inputs()][:2] == [relu, relu]


def test_scripted_mutation_rewires_uses_after_the_write() -> None:
    @torch.jit.script
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        before = y * 1
        y.mul_(3)
        return y - before

    graph = fn.graph.copy()
    inline_calls(graph)
    remove_dead_code(graph)
    remove_inplace(graph)
    assert check_no_inplace(graph) == []
    sub = [n for n in graph.nodes() if n.kind() == "aten::sub"][0]
    first, second = [i.node().kind() for i in sub.inputs()][:2]
    assert (first, second) == ("aten::mul", "aten::mul")
    # the value read before the write still reads the clone
    before_mul = list(sub.inputs())[1].node()
    assert before_mul.inputsAt(0).node().kind() == "aten::clone"


def test_special_inplace_names() -> None:
    def fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = x.clone()
        z.copy_(y)
        w = x.clone()
        w.zero_()
        return z + w

    graph = _graph(fn, torch.randn(3), torch.randn(3))
    remove_inplace(graph)
    assert {"aten::copy", "aten::zero"} <= set(_kinds(graph))


def test_write_through_a_view_is_written_back_into_the_base() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y[0].add_(1)
        y[:, 1:2] = 0.0
        return y

    graph = _graph(fn, torch.randn(3, 2))
    remove_inplace(graph)
    assert check_no_inplace(graph) == []
    kinds = _kinds(graph)
    assert "aten::select_scatter" in kinds and "aten::slice_scatter" in kinds
    returned = list(graph.outputs())[0].node()
    assert returned.kind() == "aten::slice_scatter"


@pytest.mark.parametrize(
    ("view", "kind", "instead"),
    [
        (lambda y: y.as_strided((2, 2), (1, 2)), "aten::as_strided", "write through slice, select, diagonal or view"),
        (lambda y: y[:1].expand(1, 3), "aten::expand", "write into the tensor before expanding it"),
        (lambda y: y.unfold(1, 2, 1), "aten::unfold", "whose windows overlap"),
    ],
    ids=["as_strided", "expand", "overlapping_unfold"],
)
def test_write_through_a_view_without_an_inverse_is_refused_by_name(view, kind: str, instead: str) -> None:  # noqa: ANN001
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        view(y).add_(1)  # the refused write
        return y

    graph = _graph(fn, torch.randn(3, 3))
    with pytest.raises(ExporterError, match=f"writes through {kind} at .*test_remove_inplace.py") as info:
        remove_inplace(graph)
    assert instead in str(info.value)


def test_mutating_a_graph_input_warns() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        x.mul_(2)
        return x + 1

    graph = _graph(fn, torch.randn(3))
    with pytest.warns(UserWarning, match="writes in place into its input"):
        remove_inplace(graph)


def _run(graph: torch._C.Graph, *args: torch.Tensor) -> object:
    return torch._C._create_function_from_graph("fn", graph)(*args)


def test_write_through_a_permute_is_the_inverse_permute_and_reads_no_sizes() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y.permute(1, 2, 0).mul_(2)
        return y

    x = torch.randn(2, 3, 4)
    graph = _graph(fn, x)
    # traced permute dims are a ListConstruct of constants, not one constant
    assert graph.findNode("aten::permute").inputsAt(1).node().kind() == "prim::ListConstruct"
    remove_inplace(graph)
    assert check_no_inplace(graph) == []
    returned = list(graph.outputs())[0].node()
    assert returned.kind() == "aten::permute"
    assert returned.inputsAt(1).toIValue() == [2, 0, 1]
    assert "aten::size" not in _kinds(graph)
    torch.testing.assert_close(_run(graph, x), fn(x))


def test_scripted_write_through_permute_with_dynamic_sizes() -> None:
    @torch.jit.script
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.view(x.size(0), x.size(1), 2, -1).permute(0, 2, 1, 3)
        y[:, 0] += 1.0
        y.mul_(3.0)
        return x

    graph = fn.graph.copy()
    inline_calls(graph)
    remove_dead_code(graph)
    with pytest.warns(UserWarning, match="writes in place into its input"):
        remove_inplace(graph)
    assert check_no_inplace(graph) == []
    for shape in [(2, 3, 8), (1, 5, 4)]:
        x = torch.randn(shape)
        torch.testing.assert_close(_run(graph, x.clone()), fn(x.clone()))


def test_a_view_written_twice_is_taken_again_from_the_written_base() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        z = y.transpose(0, 1)
        z.add_(1)
        z[0] += 3
        return y

    x = torch.randn(3, 4)
    graph = _graph(fn, x)
    remove_inplace(graph)
    assert check_no_inplace(graph) == []
    returned = list(graph.outputs())[0].node()
    assert returned.kind() == "aten::transpose"
    # the second write's select reads a transpose of the first write-back, not the first add
    assert returned.inputsAt(0).node().kind() == "aten::select_scatter"
    assert returned.inputsAt(0).node().inputsAt(0).node().inputsAt(0).node().kind() == "aten::transpose"
    torch.testing.assert_close(_run(graph, x), fn(x))


def test_a_whole_dim_slice_writes_back_as_itself() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y[:, :, 0] += 1
        return y

    x = torch.randn(2, 3, 2)
    graph = _graph(fn, x)
    remove_inplace(graph)
    kinds = _kinds(graph)
    assert "aten::select_scatter" in kinds and "aten::slice_scatter" not in kinds
    torch.testing.assert_close(_run(graph, x), fn(x))


@pytest.mark.parametrize("scripted", [False, True])
def test_contiguous_of_a_transposed_view_is_a_copy(scripted: bool) -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        c = y.t().contiguous()
        c.add_(1)
        return y + c.t()

    x = torch.randn(3, 4)
    graph = _scripted_graph(fn) if scripted else _graph(fn, x)
    remove_inplace(graph)
    assert "aten::t" in _kinds(graph) and "aten::clone" in _kinds(graph)
    # y is read as the clone: the write into the copy is not written back
    final = [n for n in graph.nodes() if n.kind() == "aten::add"][-1]
    assert final.inputsAt(0).node().kind() == "aten::clone"
    torch.testing.assert_close(_run(graph, x), fn(x))


def test_contiguous_of_a_contiguous_tensor_aliases_it() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y.contiguous().mul_(2)
        return y

    x = torch.randn(3, 4)
    graph = _graph(fn, x)
    remove_inplace(graph)
    torch.testing.assert_close(_run(graph, x), fn(x))


def test_a_view_written_in_a_loop_and_if_keeps_reaching_its_base() -> None:
    @torch.jit.script
    def fn(x: torch.Tensor, n: int) -> torch.Tensor:
        y = x.clone()
        z = y.t()
        for i in range(n):
            z[0] += 1.0
            if i > 1:
                z.mul_(2.0)
        return y + z.sum()

    graph = fn.graph.copy()
    inline_calls(graph)
    remove_dead_code(graph)
    remove_inplace(graph)
    assert check_no_inplace(graph) == []
    x = torch.randn(3, 4)
    for n in (0, 1, 4):
        torch.testing.assert_close(_run(graph, x, n), fn(x, n))


def _diagonal(y: torch.Tensor) -> None:
    y.diagonal(dim1=-2, dim2=-1).fill_(0)


def _linalg_diagonal(y: torch.Tensor) -> None:
    torch.linalg.diagonal(y, offset=1).add_(1)


def _narrow_from_the_end(y: torch.Tensor) -> None:
    y.narrow(-1, -2, 2).mul_(3)


def _movedim(y: torch.Tensor) -> None:
    y.movedim(0, -1)[0].add_(1)


def _mt(y: torch.Tensor) -> None:
    y.mT[1].zero_()


def _chunk_item(y: torch.Tensor) -> None:
    _, b = y.chunk(2, -1)
    b.mul_(2)


def _split_sizes_item(y: torch.Tensor) -> None:
    y.split([1, 3], 1)[1].add_(1)


def _unbind_item(y: torch.Tensor) -> None:
    y.unbind(0)[-1].zero_()


def _tensor_split_item(y: torch.Tensor) -> None:
    y.tensor_split(2, 1)[1].add_(5)


def _tiling_unfold(y: torch.Tensor) -> None:
    y.unfold(-1, 2, 2)[..., 1].add_(10)


def _unfold_with_gaps(y: torch.Tensor) -> None:
    y.unfold(1, 1, 2).mul_(-1)


def _ravel(y: torch.Tensor) -> None:
    y.ravel()[::5].add_(1)


def _positive(y: torch.Tensor) -> None:
    y.positive().add_(1)


# write -> the op its write-back is made of
WRITE_BACKS = {
    "diagonal": (_diagonal, "aten::diagonal_scatter"),
    "linalg_diagonal": (_linalg_diagonal, "aten::diagonal_scatter"),
    "narrow_from_the_end": (_narrow_from_the_end, "aten::slice_scatter"),
    "movedim": (_movedim, "aten::movedim"),
    "mT": (_mt, "aten::transpose"),
    "chunk_item": (_chunk_item, "aten::slice_scatter"),
    "split_sizes_item": (_split_sizes_item, "aten::slice_scatter"),
    "unbind_item": (_unbind_item, "aten::select_scatter"),
    "tensor_split_item": (_tensor_split_item, "aten::slice_scatter"),
    "tiling_unfold": (_tiling_unfold, "aten::slice_scatter"),
    "unfold_with_gaps": (_unfold_with_gaps, "aten::index_copy"),
    "ravel": (_ravel, "aten::reshape"),
    # the trace returns the alias written through: positive taken again from the written base
    "positive": (_positive, "aten::positive"),
}


@pytest.mark.parametrize("name", list(WRITE_BACKS))
def test_write_through_each_view_op_reaches_the_base(name: str) -> None:
    """The written base is returned: the graph after the pass computes what eager torch does,
    and its result is made by the view op's inverse."""
    write, inverse = WRITE_BACKS[name]

    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        write(y)
        return y

    x = torch.randn(3, 4, 6)
    graph = _graph(fn, x)
    remove_inplace(graph)
    assert check_no_inplace(graph) == []
    returned = list(graph.outputs())[0].node()
    assert returned.kind() == inverse
    torch.testing.assert_close(_run(graph, x), fn(x))


def test_a_view_taken_before_a_write_into_its_base_sees_the_write() -> None:
    """flat = y.view(-1) is read after writes through other views of y: it is taken again from
    each written y, as eager's alias sees them."""

    def fn(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = x.clone()
        flat = y.view(-1)
        y[0] += 1
        y.t()[1].mul_(2)
        return flat * 1, y

    x = torch.randn(3, 4)
    graph = _graph(fn, x)
    remove_inplace(graph)
    assert check_no_inplace(graph) == []
    for got, want in zip(_run(graph, x), fn(x)):
        torch.testing.assert_close(got, want)


def test_items_of_a_split_taken_before_a_write_see_it() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        a, b = y.split(2, 1)
        a.add_(1)
        y.mul_(2)
        b.sub_(3)
        return torch.cat([a, b], 1) + y

    x = torch.randn(3, 4)
    graph = _graph(fn, x)
    remove_inplace(graph)
    assert check_no_inplace(graph) == []
    torch.testing.assert_close(_run(graph, x), fn(x))


def test_an_unread_view_does_not_leave_a_loop() -> None:
    """y.t() is written in the loop and never read again: only y is loop-carried."""

    @torch.jit.script
    def fn(x: torch.Tensor, n: int) -> torch.Tensor:
        y = x.clone()
        for _ in range(n):
            y.t()[0] += 1.0
        return y

    graph = fn.graph.copy()
    inline_calls(graph)
    remove_dead_code(graph)
    remove_inplace(graph)
    loop = graph.findNode("prim::Loop")
    assert loop.outputsSize() == 1
    x = torch.randn(3, 4)
    for n in (0, 3):
        torch.testing.assert_close(_run(graph, x, n), fn(x, n))


@pytest.mark.parametrize("scripted", [False, True])
def test_a_reshape_that_copies_is_no_view(scripted: bool) -> None:
    """reshape of a transposed tensor copies: writes into the copy stay there, and writes into
    the base do not reach it."""

    def fn(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = x.clone()
        z = y.t().reshape(-1)
        w = y.reshape(-1)
        z.add_(1)
        y.mul_(2)
        return z, w

    x = torch.randn(3, 4)
    graph = _scripted_graph(fn) if scripted else _graph(fn, x)
    remove_inplace(graph)
    for got, want in zip(_run(graph, x), fn(x)):
        torch.testing.assert_close(got, want)
