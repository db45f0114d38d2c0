"""In-place writes through views, indices and masks become functional ONNX."""

from __future__ import annotations

import collections

import pytest
import torch
from conftest import (
    SEQUENCE_OPSETS,
    assert_matches_torch,
)


class Wrap(torch.nn.Module):
    def __init__(self, fn) -> None:  # noqa: ANN001
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return self.fn(*[a.clone() for a in args])


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


@pytest.mark.parametrize("opset", [9, 11, 13, 17, 20])
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


@pytest.mark.parametrize("opset", [9, 17])
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


@pytest.mark.parametrize("opset", [11, 17])
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
