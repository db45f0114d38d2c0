"""Control flow in scripted models: branches and loops on run-time values become ONNX If and
Loop (early returns, ``while``, loops over a dim with a run-time trip count, ``return`` inside a
loop, tuples of mixed dtypes from branches, asserts and raises), loops whose trip count is known
at export time unroll (``continue``/``break``, up to the unroll limit), in-place writes inside
blocks, an If's output dtype from the branch taken, and control flow kept through a traced model's
scripted child and a saved archive.

Every model is compared with eager torch in onnxruntime on input sets that take different
paths (another branch, another trip count).
"""

from __future__ import annotations

import io
import math
from typing import Optional

import pytest
import torch
from cases import graph_kinds, opsets_for_kinds
from conftest import (
    BASE_OPSETS,
    CONTROL_FLOW_SEQUENCE_OPSETS,
    FEATURE_OPSETS,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    assert_outputs_match,
    dynamic_inputs,
    run_model,
)

import exporter


class Branchy(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            y = torch.relu(x) * 2
        else:
            y = x - 1
        return y + 1


class EarlyReturn(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.mean() > 0.5:
            return x * 10
        return -x


class WhileLoop(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x
        while y.abs().sum() < 100:
            y = y * 2
        return y


class ForOverDim(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        total = torch.zeros_like(x[0])
        for i in range(x.size(0)):
            total = total + x[i] * i
        return total


class MutationInBlocks(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = x.clone()
        if bool(x.sum() > 0):
            y.add_(1)
        else:
            y.mul_(-2)
        acc = torch.zeros_like(x[0])
        k = 0
        while k < x.size(0):
            acc.add_(y[k])
            k += 1
        return y, acc


class OptionalInternal(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        best: Optional[torch.Tensor] = None
        for i in range(3):
            candidate = x * (i + 1)
            if best is None:
                best = candidate
            else:
                best = torch.where(best > candidate - 1, best, candidate - 1)
        assert best is not None
        return best


class ListsAndTuples(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        parts: list[torch.Tensor] = []
        for i in range(4):
            parts.append(x * i)
        first, second = parts[0], parts[len(parts) - 1]
        pair = (first + second, torch.stack(parts).sum(0))
        a, b = pair
        return a, b


SCRIPTED_CASES = {
    "branch": (Branchy, [(torch.randn(3, 4).abs(),), (-torch.randn(3, 4).abs(),)]),
    "early_return": (EarlyReturn, [(torch.full((2, 2), 0.9),), (torch.zeros(2, 2),)]),
    "while": (WhileLoop, [(torch.ones(2, 2),), (torch.full((2, 2), 10.0),)]),
    # static shapes fix these trip counts; test_loop_with_dynamic_trip_count and
    # test_runtime_list.py vary them
    "for_over_dim": (ForOverDim, [(torch.randn(4, 3),), (torch.randn(4, 3) * 5,)]),
    "optional_internal": (OptionalInternal, [(torch.randn(5),), (torch.linspace(-3, 3, 5),)]),
    "lists_and_tuples": (ListsAndTuples, [(torch.randn(2, 3),), (-torch.ones(2, 3),)]),
    "mutation_in_blocks": (MutationInBlocks, [(torch.randn(4, 3).abs(),), (-torch.randn(4, 3).abs(),)]),
}


def _scripted_params() -> list[tuple[str, int]]:
    """Each case at the opsets where an op of its scripted graph changes lowering (tests/cases.py)."""
    params = []
    for name in sorted(SCRIPTED_CASES):
        cls, examples = SCRIPTED_CASES[name]
        params += [(name, opset) for opset in opsets_for_kinds(graph_kinds(torch.jit.script(cls()), examples[0]))]
    return params


@pytest.mark.parametrize(("name", "opset"), _scripted_params())
def test_branches_and_loops_match_torch_on_each_path(name: str, opset: int) -> None:
    cls, examples = SCRIPTED_CASES[name]
    assert_matches_torch(torch.jit.script(cls()), examples[0], opset=opset, other_inputs=examples[1:])


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_loop_with_dynamic_trip_count(opset: int) -> None:
    model = torch.jit.script(ForOverDim())
    buffer = io.BytesIO()
    exporter.export(model, (torch.randn(4, 3),), buffer, opset_version=opset, dynamic_axes={"x": {0: "n"}})
    for rows in (2, 4, 7):
        x = torch.randn(rows, 3)
        assert_outputs_match(run_model(buffer.getvalue(), [x]), model(x))


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_mutation_in_blocks_with_dynamic_trip_count(opset: int) -> None:
    model = torch.jit.script(MutationInBlocks())
    buffer = io.BytesIO()
    exporter.export(model, (torch.randn(4, 3),), buffer, opset_version=opset, dynamic_axes={"x": {0: "n"}})
    for x in (torch.randn(6, 3).abs(), -torch.randn(2, 3).abs()):
        assert_outputs_match(run_model(buffer.getvalue(), [x]), model(x))


class HasScriptedChild(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.gate = torch.jit.script(Branchy())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gate(self.linear(x))


def test_traced_model_with_scripted_child_keeps_control_flow() -> None:
    model = HasScriptedChild().eval()
    positive = torch.full((2, 4), 5.0)
    negative = torch.full((2, 4), -5.0)
    with torch.no_grad():
        model.linear.weight.copy_(torch.eye(4))
        model.linear.bias.zero_()
    onnx_model = assert_matches_torch(model, (positive,), opset=13, other_inputs=[(negative,)])
    assert "If" in {node.op_type for node in onnx_model.graph}


def test_torch_jit_trace_of_model_with_scripted_child() -> None:
    model = HasScriptedChild().eval()
    with torch.no_grad():
        model.linear.weight.copy_(torch.eye(4))
        model.linear.bias.zero_()
    traced = torch.jit.trace(model, (torch.randn(2, 4),))
    assert_matches_torch(traced, (torch.full((2, 4), 5.0),), opset=13, other_inputs=[(torch.full((2, 4), -5.0),)])


class LogSoftmaxDouble(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.log_softmax(x, dim=1, dtype=torch.float64)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_scripted_if_output_dtype_comes_from_the_taken_branch(opset: int) -> None:
    """functional.log_softmax(dtype=float64) scripted is an If on `dtype is None`; shape
    propagation types its output Float (the other branch), but the branch taken is double."""
    model = torch.jit.script(LogSoftmaxDouble())
    onnx_model = assert_matches_torch(model, (torch.randn(3, 4, 5),), opset=opset)
    assert onnx_model.graph.outputs[0].dtype.name == "DOUBLE"


class ContinueAndBreak(torch.nn.Module):
    """``continue`` and ``break`` in a for loop over a static range make TorchScript's loop a
    while loop (``i < n`` carried); its condition is known at export time, so the loop is
    unrolled and the list it appends to stays an export-time list (any opset)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows: list[torch.Tensor] = []
        for i in range(6):
            if i % 3 == 1:
                continue
            if i == 5:
                break
            rows.append(x[i] * float(i))
        return torch.stack(rows)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_continue_and_break_in_a_static_loop(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {1: "d"}}}
    others = [(torch.randn(6, 1),), (torch.randn(6, 7),)]
    assert_matches_torch(
        torch.jit.script(ContinueAndBreak()), (torch.randn(6, 3),), opset=opset, other_inputs=others, **dynamic
    )


class LongContinueLoop(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows: list[torch.Tensor] = []
        for i in range(300):
            if i % 7 != 0:
                continue
            rows.append(x * float(i))
        return torch.stack(rows)


def test_a_static_loop_longer_than_the_unroll_limit_stays_a_loop() -> None:
    """Beyond 256 iterations the loop is not unrolled (no truncation): a Loop carrying a sequence."""
    onnx_model = assert_matches_torch(torch.jit.script(LongContinueLoop()), (torch.randn(2),), opset=17)
    assert [node.op_type for node in onnx_model.graph].count("Loop") == 1


class EarlyReturns(torch.nn.Module):
    """Early ``return`` inside a loop and inside nested ifs: the first row whose norm passes a
    threshold is returned with its index; an empty input and a row never found return early
    with sentinels."""

    def forward(self, rows: torch.Tensor, threshold: float) -> tuple[torch.Tensor, int]:
        if rows.size(0) == 0:
            return torch.zeros(rows.size(1)), -1
        for i in range(rows.size(0)):
            norm = rows[i].norm()
            if bool(norm > threshold):
                if i == 0:
                    return rows[i] * 2.0, i
                return rows[i] - rows[i - 1], i
        return rows.mean(0), rows.size(0)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_early_returns_in_loops_and_ifs(opset: int) -> None:
    model = torch.jit.script(EarlyReturns())
    rows = torch.randn(6, 3)
    others = [(rows * 10, 1.0), (rows, 100.0), (torch.randn(2, 3), 0.0)]
    assert_matches_torch(
        model,
        (rows, float(rows.norm(dim=1).sort()[0][3])),
        opset=opset,
        other_inputs=others,
        **dynamic_inputs(rows={0: "n"}),
    )


class AssertsAndRaises(torch.nn.Module):
    """Input checks as production code writes them: ``assert x.dim() == 3`` with a message, a
    ``raise ValueError`` when the channel count is wrong, a ``raise`` in a loop for a bad
    length; the valid path computes."""

    def __init__(self, channels: int = 4) -> None:
        super().__init__()
        self.channels = channels

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 3, "expected [batch, time, channels]"
        if x.size(2) != self.channels:
            raise ValueError(f"expected {self.channels} channels, got {x.size(2)}")
        for i in range(lengths.size(0)):
            if int(lengths[i]) > x.size(1):
                raise RuntimeError("a length exceeds the time axis")
        mask = torch.arange(x.size(1)).unsqueeze(0) < lengths.unsqueeze(1)
        return (x * mask.unsqueeze(-1)).sum(1)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_assertions_and_raises(opset: int) -> None:
    model = torch.jit.script(AssertsAndRaises())
    dynamic = dynamic_inputs(x={0: "b", 1: "t"}, lengths={0: "b"})
    others = [(torch.randn(1, 2, 4), torch.tensor([1])), (torch.randn(4, 9, 4), torch.tensor([9, 2, 5, 1]))]
    assert_matches_torch(
        model, (torch.randn(2, 5, 4), torch.tensor([3, 5])), opset=opset, other_inputs=others, **dynamic
    )


class MixedTupleBranches(torch.nn.Module):
    """a tuple of mixed dtypes returned from if/else."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if bool(x.sum() > 0):
            result = (x * 2, x.argmax(), 1)
        else:
            result = (x - 1, x.argmin(), 0)
        return result[0], result[1] + result[2]


class ReturnInsideLoop(torch.nn.Module):
    """``return`` inside a loop (loop-carried flags, prim::Uninitialized)."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        for i in range(x.size(0)):
            if bool(x[i].sum() > 1.0):
                return x[i], torch.tensor(i)
        return torch.zeros_like(x[0]), torch.tensor(-1)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_mixed_dtype_tuple_from_branches(opset: int) -> None:
    model = torch.jit.script(MixedTupleBranches())
    assert_matches_torch(model, (torch.randn(3, 4) + 2,), opset=opset, other_inputs=[(torch.randn(3, 4) - 2,)])


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_return_inside_loop(opset: int) -> None:
    model = torch.jit.script(ReturnInsideLoop())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    found = torch.tensor([[0.0, 0.1], [2.0, 1.0], [5.0, 5.0]])
    others = [(torch.zeros(4, 2),), (found,)]
    assert_matches_torch(model, (torch.randn(5, 2),), opset=opset, other_inputs=others, **dynamic)


def test_jit_saved_archive_keeps_its_control_flow(tmp_path) -> None:  # noqa: ANN001 - a pytest fixture
    path = tmp_path / "model.pt"
    torch.jit.save(torch.jit.script(MutationInBlocks()), str(path))
    loaded = torch.jit.load(str(path))
    assert_matches_torch(loaded, (torch.randn(4, 3).abs(),), opset=17, other_inputs=[(-torch.randn(4, 3).abs(),)])


class DtypeChecks(torch.nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        neg = -1e9
        y = x.masked_fill(~mask, neg)
        if x.dtype == torch.float16:
            y = y.float()
        z = torch.softmax(y, -1).type_as(x) * math.pi
        assert z.size(0) == mask.size(0), f"batch mismatch {z.size(0)}"
        return z


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_dtype_checks_and_an_fstring_assert(opset: int) -> None:
    """``x.dtype == torch.float16`` is decided at export time; the assert's f-string message is
    never built (ONNX cannot raise)."""
    assert_matches_torch(
        torch.jit.script(DtypeChecks()),
        (torch.randn(2, 5), torch.rand(2, 5) > 0.3),
        opset=opset,
        other_inputs=[(torch.randn(3, 7), torch.rand(3, 7) > 0.3)],
        **dynamic_inputs(x={0: "b", 1: "t"}, mask={0: "b", 1: "t"}),
    )
