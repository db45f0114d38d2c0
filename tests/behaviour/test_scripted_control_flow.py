"""Scripted models: control flow, Optional values, lists, mutation in blocks, archives.

Every model is compared with eager torch in onnxruntime on input sets that take different
paths (another branch, another trip count).
"""

from __future__ import annotations

import io
from typing import Optional

import onnx
import pytest
import torch
from cases import graph_kinds, opsets_for_kinds
from conftest import assert_matches_torch, assert_outputs_match, run_model

import exporter


def _check(model: torch.nn.Module, examples: list[tuple[torch.Tensor, ...]], opset: int, **kwargs: object) -> bytes:
    buffer = io.BytesIO()
    exporter.export(model, examples[0], buffer, opset_version=opset, **kwargs)
    data = buffer.getvalue()
    for example in examples:
        with torch.no_grad():
            expected = model(*example)
        assert_outputs_match(run_model(data, list(example)), expected)
    return data


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


class OptionalArg(torch.nn.Module):
    def forward(self, x: torch.Tensor, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
        if bias is None:
            return x * 2
        return x + bias


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
    # test_runtime_lists.py vary them
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
def test_scripted(name: str, opset: int) -> None:
    cls, examples = SCRIPTED_CASES[name]
    _check(torch.jit.script(cls()), examples, opset)


@pytest.mark.parametrize("opset", [11, 13, 17])
def test_loop_with_dynamic_trip_count(opset: int) -> None:
    model = torch.jit.script(ForOverDim())
    buffer = io.BytesIO()
    exporter.export(model, (torch.randn(4, 3),), buffer, opset_version=opset, dynamic_axes={"x": {0: "n"}})
    for rows in (2, 4, 7):
        x = torch.randn(rows, 3)
        assert_outputs_match(run_model(buffer.getvalue(), [x]), model(x))


@pytest.mark.parametrize("opset", [13, 17])
def test_mutation_in_blocks_with_dynamic_trip_count(opset: int) -> None:
    model = torch.jit.script(MutationInBlocks())
    buffer = io.BytesIO()
    exporter.export(model, (torch.randn(4, 3),), buffer, opset_version=opset, dynamic_axes={"x": {0: "n"}})
    for x in (torch.randn(6, 3).abs(), -torch.randn(2, 3).abs()):
        assert_outputs_match(run_model(buffer.getvalue(), [x]), model(x))


def test_optional_argument_present_and_absent() -> None:
    model = torch.jit.script(OptionalArg())
    _check(model, [(torch.randn(3), torch.randn(3))], 13)
    _check(model, [(torch.randn(3),)], 13)


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
    data = _check(model, [(positive,), (negative,)], 13)
    assert b"If" in data


def test_torch_jit_trace_of_model_with_scripted_child() -> None:
    model = HasScriptedChild().eval()
    with torch.no_grad():
        model.linear.weight.copy_(torch.eye(4))
        model.linear.bias.zero_()
    traced = torch.jit.trace(model, (torch.randn(2, 4),))
    _check(traced, [(torch.full((2, 4), 5.0),), (torch.full((2, 4), -5.0),)], 13)


def test_jit_saved_archive(tmp_path) -> None:
    path = tmp_path / "model.pt"
    torch.jit.save(torch.jit.script(MutationInBlocks()), str(path))
    loaded = torch.jit.load(str(path))
    _check(loaded, [(torch.randn(4, 3).abs(),), (-torch.randn(4, 3).abs(),)], 17)


class StringOps(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        name = "value_" + str(x.dim())
        if name.startswith("value_2"):
            return x * 2
        return x


def test_string_ops_fail_naming_the_construct_and_line() -> None:
    with pytest.raises(exporter.ExporterError) as info:
        exporter.export(torch.jit.script(StringOps()), (torch.randn(2, 2, 2),), io.BytesIO())
    message = str(info.value)
    assert "aten::str" in message or "aten::add.str" in message or "startswith" in message
    assert "test_scripted_control_flow.py" in message


class DictMutation(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d: dict[str, torch.Tensor] = {}
        d["a"] = x
        return d["a"] * 2


def test_dict_mutation_exports() -> None:
    """Dicts with constant keys are Python dicts at export time (script_dicts.py); the dicts
    ONNX cannot hold fail by name in test_scripted_programs.py."""
    assert_matches_torch(torch.jit.script(DictMutation()), (torch.randn(2),), opset=13)


@torch.jit.ignore
def python_helper(x):  # noqa: ANN001, ANN201 - TorchScript reads unannotated as Tensor
    return x * 3


class CallsPython(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return python_helper(x) + 1


def test_call_to_python_function_fails_naming_it() -> None:
    with pytest.raises(exporter.UnsupportedOperatorError, match=r"prim::PythonOp.*test_scripted_control_flow.py"):
        exporter.export(torch.jit.script(CallsPython()), (torch.randn(2),), io.BytesIO())


@pytest.mark.parametrize("opset", [9, 17])
def test_scripted_transformer_encoder_layer(opset: int) -> None:
    """Scripted library code asks about devices, autocast and grad mode before choosing a
    fused path; those are export-time constants, so the composite path is exported."""
    layer = torch.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True).eval()
    _check(torch.jit.script(layer), [(torch.randn(2, 5, 16),)], opset)


class ScriptedResize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        up = torch.nn.functional.interpolate(x, scale_factor=2.0, mode="nearest")
        return torch.nn.functional.interpolate(up, size=[5, 7], mode="bilinear", align_corners=False)


@pytest.mark.parametrize("opset", [11, 18])
def test_scripted_interpolate_becomes_resize(opset: int) -> None:
    data = _check(torch.jit.script(ScriptedResize()), [(torch.randn(1, 2, 3, 4),)], opset)
    assert b"Resize" in data


@pytest.mark.parametrize("opset", [9, 10])
def test_scripted_bilinear_interpolate_below_11_computes_torch_coordinates(opset: int) -> None:
    """No Resize with half-pixel coordinates before 11: constant Gather indices and weights."""
    data = _check(torch.jit.script(ScriptedResize()), [(torch.randn(1, 2, 3, 4),)], opset)
    assert b"Resize" not in data and b"Upsample" not in data


# --- None flowing out of If and Loop: ONNX optionals (opset 16) ------------------------------

OPTIONAL_OPSETS = [16, 17, 20]
DYNAMIC_ROWS = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}


class OptionalOutput(torch.nn.Module):
    """An Optional[Tensor] output that is None on one run-time path."""

    def forward(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        if bool(x.sum() > 0):
            return x * 2
        return None


class OptionalLocal(torch.nn.Module):
    """A local set on one path only, then tested with `is None` and refined."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y: Optional[torch.Tensor] = None
        if bool(x.sum() > 0):
            y = x * 2
        if y is None:
            return x - 1
        return y + 1


class OptionalNested(torch.nn.Module):
    """Nested ifs, one of them leaving the optional None, the other unwrapping it."""

    def forward(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = None
        if bool(x[0, 0] > 0):
            if bool(x[0, 1] > 0):
                y = x + 4
        else:
            y = x.abs()
        if y is not None:
            y = y * 3
        return y


class OptionalLoopCarried(torch.nn.Module):
    """An Optional[Tensor] carried through a loop with a run-time trip count from None."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        best: Optional[torch.Tensor] = None
        for i in range(x.size(0)):
            if best is None:
                best = x[i]
            else:
                best = torch.max(best, x[i]) + 1
        if best is None:
            return torch.zeros(x.size(1))
        return best


class OptionalSetToNoneInLoop(torch.nn.Module):
    """A tensor that a loop with a run-time trip count may turn into None."""

    def forward(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = x * 2
        for i in range(x.size(0) - 1):
            if bool(x[i, 0] > 0):
                y = None
        return y


OPTIONAL_CASES = [OptionalOutput, OptionalLocal, OptionalNested, OptionalLoopCarried, OptionalSetToNoneInLoop]


class InputOrNone(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = None
        if x.size(0) > 1:
            y = x
        return y


class InputUntilLoopSetsNone(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = x
        for _ in range(x.size(0) - 2):
            y = None
        return y


@pytest.mark.parametrize("cls", [InputOrNone, InputUntilLoopSetsNone])
def test_optional_output_types_carry_the_element_shape(cls: type) -> None:
    """Both If branches and the graph output are optional(tensor) with the element's shape
    where every path that sets it agrees (the named dynamic dim)."""
    data = _check(torch.jit.script(cls()), _signed_inputs(), 17, **DYNAMIC_ROWS)
    proto = onnx.load_from_string(data)
    expected = onnx.helper.make_optional_type_proto(
        onnx.helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, ("n", 3))
    )
    assert proto.graph.output[0].type == expected
    branch_outputs = [
        attr.g.output[0].type for node in proto.graph.node if node.op_type == "If" for attr in node.attribute
    ]
    assert all(t == expected for t in branch_outputs)


def _signed_inputs() -> list[tuple[torch.Tensor]]:
    both = torch.tensor([[1.0, 2.0, 3.0], [4.0, -5.0, 6.0]])
    first_only = torch.tensor([[1.0, -2.0, 3.0]])
    return [(both,), (-both,), (first_only,), (torch.randn(5, 3),)]


@pytest.mark.parametrize("opset", OPTIONAL_OPSETS)
@pytest.mark.parametrize("cls", OPTIONAL_CASES)
def test_none_flowing_out_of_if_and_loop(cls: type, opset: int) -> None:
    _check(torch.jit.script(cls()), _signed_inputs(), opset, **DYNAMIC_ROWS)


@pytest.mark.parametrize("cls", OPTIONAL_CASES)
def test_none_out_of_control_flow_below_16_names_the_opset(cls: type) -> None:
    with pytest.raises(exporter.SymbolicError, match="opset 16"):
        _check(torch.jit.script(cls()), _signed_inputs(), 15, **DYNAMIC_ROWS)


class LogSoftmaxDouble(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.log_softmax(x, dim=1, dtype=torch.float64)


@pytest.mark.parametrize("opset", [9, 13])
def test_scripted_if_output_dtype_comes_from_the_taken_branch(opset: int) -> None:
    """functional.log_softmax(dtype=float64) scripted is an If on `dtype is None`; shape
    propagation types its output Float (the other branch), but the branch taken is double."""
    model = torch.jit.script(LogSoftmaxDouble())
    onnx_model = assert_matches_torch(model, (torch.randn(3, 4, 5),), opset=opset)
    assert onnx_model.graph.outputs[0].dtype.name == "DOUBLE"
