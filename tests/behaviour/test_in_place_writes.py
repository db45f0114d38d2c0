"""In-place writes through views, indices and masks become functional ONNX (passes/
remove_inplace.py writes them back into their base), with static and dynamic sizes.

The write-back of a permute is the inverse permute (no sizes needed), a slice over a whole dim
writes back as itself, and a view written twice is taken again from the written base, so the
second write still reaches it: patterns from BEiT/Data2Vec's relative position index and
DeBERTa's ``transpose_for_scores``. ``x.set_(y)`` makes later reads of x read y; outputs
preallocated and written step by step in a loop (``outputs[t] = h``).
"""

from __future__ import annotations

import collections

import pytest
import torch
from conftest import (
    BASE_OPSETS,
    CONTROL_FLOW_SEQUENCE_OPSET,
    CONTROL_FLOW_SEQUENCE_OPSETS,
    FEATURE_OPSETS,
    MIN_OPSET,
    NEWEST,
    SEQUENCE_OPSET,
    SEQUENCE_OPSETS,
    Wrap,
    assert_matches_torch,
    dynamic_inputs,
)


def slice_write(y: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    y[:, 1:3] = v
    return y


def strided_write(y: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    y[::2] = v
    return y


def select_inplace(y: torch.Tensor) -> torch.Tensor:
    y[0].add_(1)
    y[1, 2] = 5.0
    return y


def view_write(y: torch.Tensor) -> torch.Tensor:
    flat = y.view(-1)
    flat[3] = 7.0
    return y


def transposed_write(y: torch.Tensor) -> torch.Tensor:
    y.t()[1].mul_(3)
    return y


def copy_into(y: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    y.copy_(v)
    return y * 2


CASES = {
    "slice_write": (slice_write, lambda: (torch.randn(3, 5), torch.randn(3, 2))),
    "slice_write_broadcast": (slice_write, lambda: (torch.randn(3, 5), torch.randn(2))),
    "strided_write": (strided_write, lambda: (torch.randn(5, 4), torch.randn(3, 4))),
    "select_inplace": (select_inplace, lambda: (torch.randn(3, 4),)),
    "view_write": (view_write, lambda: (torch.randn(3, 4),)),
    "transposed_write": (transposed_write, lambda: (torch.randn(3, 4),)),
    "copy_into": (copy_into, lambda: (torch.randn(3, 4), torch.randn(4))),
}


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_view_writes(name: str, opset: int) -> None:
    fn, inputs = CASES[name]
    assert_matches_torch(Wrap(fn), inputs(), opset=opset)


def test_slice_assignment_is_small() -> None:
    """y[:, 1:3] = v with static shapes: the index computation folds away (torch's exporter
    emits 21 nodes besides Constants)."""
    model = assert_matches_torch(Wrap(slice_write), (torch.randn(3, 5), torch.randn(3, 2)), opset=17)
    ops = collections.Counter(n.op_type for n in model.graph if n.op_type != "Constant")
    assert sum(ops.values()) <= 5, ops


def test_mutated_input_is_visible_through_the_output() -> None:
    class MutatesInput(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x.add_(1)
            return x

    x = torch.randn(3)
    before = x.clone()
    with pytest.warns(UserWarning, match="writes in place into its input"):
        model = assert_matches_torch(MutatesInput(), (x,), opset=13)
    assert [n.op_type for n in model.graph if n.op_type != "Constant"] == ["Add"]
    # export itself leaves the caller's tensor alone (the eager check above mutated it once)
    assert torch.equal(x, before + 1)


class _SetSource(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        before = x * 2
        x.set_(y)  # x now reads y: its data, shape and dtype
        return x + 1, before


class _SetOnly(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x.set_(y)
        return x


@pytest.mark.parametrize("opset", BASE_OPSETS)
@pytest.mark.parametrize("mode", ["trace", "script"])
@pytest.mark.filterwarnings("ignore:the model writes in place")
def test_set_makes_the_target_read_the_source(mode: str, opset: int) -> None:
    """x.set_(y): later reads of x read y, whatever its shape; an x read only before the set_
    stays an input, one never read is dropped (as torch's exporter does)."""
    for module, inputs in ((_SetSource(), ["x", "y"]), (_SetOnly(), ["y"])):
        model = torch.jit.script(module) if mode == "script" else module
        onnx_model = assert_matches_torch(
            model,
            (torch.ones(2, 3), torch.randn(4, 6)),
            opset=opset,
            input_names=["x", "y"],
            dynamic_axes={"x": [0, 1], "y": [0, 1]},
            other_inputs=[(torch.ones(2, 3), torch.randn(5, 2))],
        )
        assert [v.name for v in onnx_model.graph.inputs] == inputs


class _BroadcastWrite(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x[:, x.size(0) :] = torch.tensor([1.0, 2.0, 3.0])  # traced as copy_(view, expand(v, [2, 3, 3]))
        return x


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
@pytest.mark.parametrize("mode", ["trace", "script"])
@pytest.mark.filterwarnings("ignore:the model writes in place")
def test_broadcast_write_with_dynamic_sizes(mode: str, opset: int) -> None:
    """The sizes tracing bakes into the expand of a written value are the example's; the write
    broadcasts the value itself, so other sizes work (from 11: run-time slice_scatter bounds)."""
    model = torch.jit.script(_BroadcastWrite()) if mode == "script" else _BroadcastWrite()
    assert_matches_torch(
        model,
        (torch.ones(2, 5, 3),),
        opset=opset,
        input_names=["x"],
        dynamic_axes={"x": [0, 1]},
        other_inputs=[(torch.randn(3, 4, 3),)],
    )


class PreallocatedOutputs(torch.nn.Module):
    """An RNN decoder writing each step into a preallocated output (``outputs[t] = h``)."""

    def __init__(self) -> None:
        super().__init__()
        self.cell = torch.nn.GRUCell(3, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        steps, batch = x.size(0), x.size(1)
        outputs = torch.zeros(steps, batch, 4)
        h = torch.zeros(batch, 4)
        for t in range(steps):
            h = self.cell(x[t], h)
            outputs[t] = h
            outputs[t, :, 0] += 1.0
        return outputs


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_preallocated_outputs_written_in_a_loop(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "t", 1: "b"}}}
    others = [(torch.randn(1, 1, 3),), (torch.randn(6, 3, 3),)]
    assert_matches_torch(
        torch.jit.script(PreallocatedOutputs().eval()),
        (torch.randn(4, 2, 3),),
        opset=opset,
        other_inputs=others,
        **dynamic,
    )


class RecursiveIntoZeros(torch.nn.Module):
    """torchaudio's lfilter loop: y[t] = x[t] - 0.5 y[t-1], written sample by sample into a zero
    buffer whose size is fixed at export, so the buffer and every view of it fold to constants
    (a (1, 1) select of it has stride n in torch); a torch.tensor constant is written too."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = torch.zeros(2, 1, x.shape[-1] + 1)
        a = torch.tensor([[0.5, 0.0]])
        for i, o0 in enumerate(x.permute(2, 0, 1)):
            window = out[:, :, i : i + 2]
            o0 = o0 - (window.transpose(0, 1) @ a.unsqueeze(2))[..., 0].t()
            out[:, :, i + 1] = o0
        scale = torch.tensor([[1.0, 2.0, 3.0]])
        scale[:, 1] = x[0, 0, 0]
        return out, scale


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_traced_writes_into_views_of_a_constant_buffer(opset: int) -> None:
    assert_matches_torch(RecursiveIntoZeros(), (torch.randn(2, 1, 8),), opset=opset)


# -- writes through permuted and transposed views -----------------------------------------------


class RelativePositionIndex(torch.nn.Module):
    """BEiT's generate_relative_position_index on the input's trailing (h, w) dims."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, w = x.shape[-2], x.shape[-1]
        coords = torch.stack(torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij"))
        coords_flatten = torch.flatten(coords, 1)
        relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]
        relative_coords = relative_coords.permute(1, 2, 0).contiguous()
        relative_coords[:, :, 0] += h - 1
        relative_coords[:, :, 1] += w - 1
        relative_coords[:, :, 0] *= 2 * w - 1
        index = torch.zeros(size=(w * h + 1,) * 2, dtype=torch.int64)
        index[1:, 1:] = relative_coords.sum(-1)
        index[0, 0:] = 7
        index[0:, 0] = 8
        index[0, 0] = 9
        return index + x.sum().long()


class TransposeForScores(torch.nn.Module):
    """DeBERTa-style: view into heads, permute, then write in place through the permuted view."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x.clone()
        new_shape = x.size()[:-1] + (2, x.size(-1) // 2)
        y = x.view(new_shape).permute(0, 2, 1, 3)
        y.mul_(2)
        y[:, 0] += 1
        return y, x


class TransposeTwice(torch.nn.Module):
    """One transposed view written twice: the second write goes through a select of it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        z = y.transpose(0, 1)
        z.add_(1)
        z[0] += 3
        return y * z.sum()


class WriteIntoTransposedRow(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y.t()[0] = 5.0
        y.t()[1].mul_(3)
        return y


class SliceOfPermute(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y.permute(2, 0, 1)[1:, :, :2].add_(10)
        return y


class PermuteOfSlice(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        p = y[:, 1:].permute(1, 2, 0)
        p[0] -= 4
        p.mul_(2)
        return y + p.sum()


class ContiguousCopies(torch.nn.Module):
    """contiguous() of a transposed view copies: writes into the copy leave the base alone."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = x.clone()
        c = y.t().contiguous()
        c.add_(1)
        return y, c


PERMUTED_VIEW_CASES = {
    "relative_position_index": (RelativePositionIndex(), torch.randn(1, 3, 4), torch.randn(1, 5, 2), {1: "h", 2: "w"}),
    "transpose_for_scores": (TransposeForScores(), torch.randn(2, 3, 8), torch.randn(3, 5, 8), {0: "b", 1: "s"}),
    "transpose_twice": (TransposeTwice(), torch.randn(3, 4), torch.randn(5, 2), {0: "a", 1: "b"}),
    "transposed_row": (WriteIntoTransposedRow(), torch.randn(3, 4), torch.randn(5, 2), {0: "a", 1: "b"}),
    "slice_of_permute": (SliceOfPermute(), torch.randn(2, 3, 4), torch.randn(3, 5, 4), {0: "a", 1: "b"}),
    "permute_of_slice": (PermuteOfSlice(), torch.randn(2, 3, 4), torch.randn(3, 5, 6), {0: "a", 1: "b", 2: "c"}),
    "contiguous_copies": (ContiguousCopies(), torch.randn(3, 4), torch.randn(5, 2), {0: "a", 1: "b"}),
}


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
@pytest.mark.parametrize("name", list(PERMUTED_VIEW_CASES))
def test_write_through_permuted_view_static(name: str, opset: int) -> None:
    model, x, _, _ = PERMUTED_VIEW_CASES[name]
    assert_matches_torch(model, (x,), opset=opset)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
@pytest.mark.parametrize("name", list(PERMUTED_VIEW_CASES))
def test_write_through_permuted_view_dynamic(name: str, opset: int) -> None:
    """At opset 9 too: slice writes into a dim known only at run time keep the untouched parts
    with constant-bound slices (Slice-1 takes no run-time bounds)."""
    model, x, other, axes = PERMUTED_VIEW_CASES[name]
    assert_matches_torch(model, (x,), opset=opset, other_inputs=[(other,)], input_names=["x"], dynamic_axes={"x": axes})


class ChunksAndMaskedWrites(torch.nn.Module):
    def forward(self, x: torch.Tensor, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        parts = torch.chunk(x, 3, dim=1)
        picked = torch.gather(x, 1, index)
        y = x.clone()
        for i in range(x.size(0)):
            y[i][y[i] < 0] = 0.0
        return torch.cat([p.sum(1, keepdim=True) for p in parts], 1), picked + y.sum()


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_masked_writes_in_a_loop_next_to_chunks(opset: int) -> None:
    """Chunks in a comprehension next to masked writes in a loop: torch's shape propagation
    asserts on that graph, so the input types alone are used."""
    assert_matches_torch(
        torch.jit.script(ChunksAndMaskedWrites()),
        (torch.randn(2, 6), torch.tensor([[0, 5], [1, 1]])),
        opset=opset,
        other_inputs=[(torch.randn(3, 6), torch.tensor([[2, 2], [0, 0], [5, 4]]))],
        **dynamic_inputs(x={0: "b"}, index={0: "b"}),
    )


# -- writes through every view op with an inverse ----------------------------------------------
# Module-level functions, so they script as well as trace; each clones its input, writes
# through one view op and returns the written base (and the view read after the write).


def diagonal_fill(x: torch.Tensor) -> torch.Tensor:
    dist = x.clone()
    dist.diagonal(dim1=-2, dim2=-1).fill_(0)
    return dist


def diagonal_offset_copy(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.diagonal(1, 0, 2).copy_(torch.ones(1))
    return y


def linalg_diagonal_write(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    torch.linalg.diagonal(y, offset=-1).mul_(3)
    return y


def select_write(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.select(1, -1).zero_()
    return y


def stepped_slice_write(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[:, 1::2].add_(10)
    return y


def narrow_write(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.narrow(1, 1, 2).mul_(3)
    y.narrow(-1, -2, 2).add_(1)
    return y


def squeeze_unsqueeze_write(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.unsqueeze(0)[0, 1].add_(1)
    y[:, :1].squeeze(1).mul_(-1)
    return y


def regrouping_write(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    y = x.clone()
    flat = y.flatten()
    flat[::3].add_(10)
    y.view(-1)[1] = 7.0
    y.unflatten(-1, (2, -1))[..., 0, :].mul_(2)
    y.reshape(y.size(0), -1)[:, -1].zero_()
    return y, flat


def moving_write(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.movedim(0, -1)[0].add_(1)
    y.mT[0].mul_(2)
    y.swapaxes(0, 1)[-1].sub_(5)
    y.permute(2, 0, 1)[1].zero_()
    return y


def split_items_write(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    y = x.clone()
    a, b = y.chunk(2, -1)
    b.mul_(2)
    y.split([1, 2], 1)[1].add_(1)
    y.unbind(1)[-1].zero_()
    y.tensor_split(2, 1)[1].add_(100)
    return y, a


def split_items_counted_at_run_time(x: torch.Tensor) -> torch.Tensor:
    """The last item of a list whose length depends on a dynamic dim."""
    y = x.clone()
    parts = y.split(2, 0)
    parts[-1].sub_(7)
    parts[0].add_(1)
    return y


def split_items_in_a_loop(x: torch.Tensor) -> torch.Tensor:
    """Each item written in a loop: the list is read again in the next iteration, so it is
    loop-carried (an ONNX sequence through Loop, from opset 13)."""
    y = x.clone()
    for part in y.split(2, 0):
        part.mul_(2)
    return y


def unfold_write(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.unfold(-1, 2, 2)[..., 1].add_(10)  # windows tile the dim
    y.unfold(1, 1, 2).mul_(-1)  # windows with gaps
    return y


def identity_view_write(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.positive().add_(1)
    y.detach()[0].zero_()
    y.conj().mul_(2)
    return y


def real_view_write(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.real.mul_(2)
    return y


BOTH = ("trace", "script")
# name -> (function, example input, other input's sizes, dynamic axes of x, modes, lowest opset):
# a traced list of items has the example's count, so lists whose count follows a dynamic dim
# are scripted, and need ONNX sequences (opset 11; through a Loop, 13); aten::real is exported
# from opset 17
VIEW_OP_WRITES = {
    "diagonal": (diagonal_fill, torch.randn(2, 4, 4), (3, 5, 5), {0: "b", 1: "n", 2: "n"}, BOTH, MIN_OPSET),
    "diagonal_offset": (
        diagonal_offset_copy,
        torch.randn(3, 2, 4),
        (4, 3, 2),
        {0: "a", 1: "b", 2: "c"},
        BOTH,
        MIN_OPSET,
    ),
    "linalg_diagonal": (
        linalg_diagonal_write,
        torch.randn(2, 4, 3),
        (1, 3, 5),
        {0: "a", 1: "b", 2: "c"},
        BOTH,
        MIN_OPSET,
    ),
    "select": (select_write, torch.randn(3, 4), (2, 6), {0: "a", 1: "b"}, BOTH, MIN_OPSET),
    "stepped_slice": (stepped_slice_write, torch.randn(3, 5), (2, 8), {0: "a", 1: "b"}, BOTH, MIN_OPSET),
    "narrow": (narrow_write, torch.randn(2, 5), (3, 4), {0: "a", 1: "b"}, BOTH, MIN_OPSET),
    "squeeze_unsqueeze": (squeeze_unsqueeze_write, torch.randn(3, 4), (2, 5), {0: "a", 1: "b"}, BOTH, MIN_OPSET),
    "regrouping": (regrouping_write, torch.randn(3, 4), (2, 6), {0: "a", 1: "b"}, BOTH, MIN_OPSET),
    "moving": (moving_write, torch.randn(3, 4, 5), (4, 2, 3), {0: "a", 1: "b", 2: "c"}, BOTH, MIN_OPSET),
    "split_items": (split_items_write, torch.randn(4, 3, 6), (2, 3, 8), {0: "a", 2: "b"}, BOTH, MIN_OPSET),
    "split_items_counted_at_run_time": (
        split_items_counted_at_run_time,
        torch.randn(4, 3),
        (5, 2),
        {0: "a", 1: "b"},
        ("script",),
        SEQUENCE_OPSET,
    ),
    "split_items_in_a_loop": (
        split_items_in_a_loop,
        torch.randn(4, 3),
        (5, 2),
        {0: "a", 1: "b"},
        ("script",),
        CONTROL_FLOW_SEQUENCE_OPSET,
    ),
    "unfold": (unfold_write, torch.randn(2, 5, 6), (3, 4, 8), {0: "a", 1: "b", 2: "c"}, BOTH, MIN_OPSET),
    "identity_views": (identity_view_write, torch.randn(3, 4), (2, 2), {0: "a", 1: "b"}, BOTH, MIN_OPSET),
    "real": (real_view_write, torch.randn(3, 4), (2, 2), {0: "a", 1: "b"}, BOTH, 17),
}


def _view_op_write_params() -> list[tuple[str, str, int]]:
    return [
        (name, mode, opset)
        for name, (*_, modes, lowest) in VIEW_OP_WRITES.items()
        for mode in modes
        for opset in (lowest, NEWEST)
    ]


@pytest.mark.parametrize(("name", "mode", "opset"), _view_op_write_params())
def test_write_through_view_op_static(name: str, mode: str, opset: int) -> None:
    fn, x, *_ = VIEW_OP_WRITES[name]
    model = torch.jit.script(fn) if mode == "script" else Wrap(fn)
    assert_matches_torch(model, (x,), opset=opset)


@pytest.mark.parametrize(("name", "mode", "opset"), _view_op_write_params())
def test_write_through_view_op_dynamic(name: str, mode: str, opset: int) -> None:
    """The view's size depends on the dynamic axes: the write-back reads it at run time."""
    fn, x, other, axes, *_ = VIEW_OP_WRITES[name]
    model = torch.jit.script(fn) if mode == "script" else Wrap(fn)
    assert_matches_torch(model, (x,), opset=opset, other_inputs=[(torch.randn(other),)], **dynamic_inputs(x=axes))
