"""A scripted model's list arguments are ONNX sequence inputs, as in torch's exporter.

torch's TorchScript exporter declares a scripted ``List[int]``/``List[float]``/``List[bool]``
argument as one ``seq(tensor)`` input and its suite feeds the list as one Python list
(test_pad_types); a trace flattens lists into one input per item. The list's length is then
chosen when the model runs. Sequences exist from opset 11: below it the export is refused.
A ``List[Tensor]`` argument is one input per tensor, as a trace makes it (torch declares a
sequence there and then fails on cat/stack of it), so every list operation unrolls.
"""

from __future__ import annotations

import io
import warnings
from typing import Any

import onnx
import pytest
import torch
from conftest import (
    FEATURE_OPSETS,
    SEQUENCE_OPSET,
    SEQUENCE_OPSETS,
    assert_outputs_match,
    assert_runs_match_torch,
    comparable_with_torch,
    export_to_bytes,
    opsets_below,
    run_model,
)

import exporter

# Pad-11 takes amounts as an input, Pad-13 bool data, Pad-18 axes, Pad-19 wrap mode; sequences from 11


def _inputs(data: bytes) -> list[tuple[str, str]]:
    """(name, type) of each graph input: a tensor's element type, or seq(<item type>)."""
    found = []
    for i in onnx.load_from_string(data).graph.input:
        if i.type.HasField("sequence_type"):
            item = i.type.sequence_type.elem_type.tensor_type.elem_type
            found.append((i.name, f"seq({onnx.TensorProto.DataType.Name(item)})"))
        else:
            found.append((i.name, onnx.TensorProto.DataType.Name(i.type.tensor_type.elem_type)))
    return found


def _torch_inputs(model: Any, args: Any, opset: int) -> list[str]:
    """The input types torch's TorchScript exporter declares, for comparison only."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        export = torch.onnx.export  # noqa: TID251 - only to compare with torch's interface
        export(model, args, buffer, dynamo=False, opset_version=opset)
    return [kind for _, kind in _inputs(buffer.getvalue())]


class Pad(torch.nn.Module):
    def forward(self, x: torch.Tensor, pad: list[int]) -> torch.Tensor:
        return torch.nn.functional.pad(x, pad)


@pytest.mark.parametrize("opset", comparable_with_torch(SEQUENCE_OPSETS))
@torch.no_grad()
def test_list_of_ints_pads_with_any_length_at_run_time(opset: int) -> None:
    """torch's test_pad_types (scalar_list): one int64 sequence input; at run time the pads may
    have another length than the example's (Pad takes a run-time amounts tensor from opset 11)."""
    model = torch.jit.script(Pad().eval())
    x = torch.randn(2, 2, 4, 4)
    data, _ = export_to_bytes(model, (x, [2, 4]), opset_version=opset)
    assert _inputs(data) == [("x", "FLOAT"), ("pad", "seq(INT64)")]
    assert [kind for _, kind in _inputs(data)] == _torch_inputs(model, (x, [2, 4]), opset)
    others = [[0, 1], [1, 2, 0, 3], [1, 0, 2, 1, 0, 1, 1, 0], [-1, 2], [torch.tensor(3), torch.tensor(1)]]
    assert_runs_match_torch(data, model, [(x, [2, 4])] + [(x, pad) for pad in others])


@torch.no_grad()
def test_list_of_int_tensors_is_the_same_interface() -> None:
    """torch's test_pad_types (scalar_tensor_list): 0-d tensors given for a List[int] are its
    items, fed as int64; plain ints feed the same model."""
    model = torch.jit.script(Pad().eval())
    x = torch.randn(2, 2, 4, 4)
    args = (x, [torch.tensor(2), torch.tensor(4)])
    data, _ = export_to_bytes(model, args, opset_version=17)
    assert _inputs(data) == [("x", "FLOAT"), ("pad", "seq(INT64)")]
    assert_runs_match_torch(
        data, model, [args, (x, [1, 1, 1, 1]), (x, [torch.tensor(0, dtype=torch.int32), torch.tensor(2)])]
    )


class Scale(torch.nn.Module):
    def forward(self, x: torch.Tensor, s: list[float]) -> torch.Tensor:
        return x * s[0] + s[-1] * len(s)


@pytest.mark.parametrize("opset", comparable_with_torch(SEQUENCE_OPSETS))
@torch.no_grad()
def test_list_of_floats_is_a_sequence_of_doubles(opset: int) -> None:
    """A deviation in the item type: torch declares seq(FLOAT) and indexes it with Gather, a model
    onnxruntime refuses to load; a TorchScript float is a double, the suite feeds Python floats
    as float64 arrays, and ours declares seq(DOUBLE), read with SequenceAt."""
    model = torch.jit.script(Scale().eval())
    x = torch.randn(3, 4)
    data, _ = export_to_bytes(model, (x, [2.0, 0.5]), opset_version=opset)
    assert _inputs(data) == [("x", "FLOAT"), ("s", "seq(DOUBLE)")]
    assert _torch_inputs(model, (x, [2.0, 0.5]), opset)[1] == "seq(FLOAT)"
    assert_runs_match_torch(data, model, [(x, [2.0, 0.5]), (x, [-1.5]), (x, [3.0, 1.0, 0.25])])


class Tensors(torch.nn.Module):
    def forward(self, x: torch.Tensor, ts: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        total = torch.zeros_like(x)
        for t in ts:
            total = total + t.sum(0)
        return torch.cat(ts, 0) * x[0], ts[-1] + ts[0][0], total


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
@torch.no_grad()
def test_list_of_tensors_is_one_input_per_tensor(opset: int) -> None:
    """A List[Tensor] is one input per tensor at any opset, so indexing, cat and a for loop
    over it unroll; other shapes (not counts) than the example's run."""
    model = torch.jit.script(Tensors().eval())
    x = torch.randn(2, 3)
    args = (x, [torch.randn(1, 3), torch.randn(2, 3)])
    data, _ = export_to_bytes(model, args, opset_version=opset, dynamic_axes={"ts_0": [0], "ts_1": [0]})
    assert _inputs(data) == [("x", "FLOAT"), ("ts_0", "FLOAT"), ("ts_1", "FLOAT")]
    assert_runs_match_torch(data, model, [args, (x, [torch.randn(4, 3), torch.randn(3, 3)])])


class Pick(torch.nn.Module):
    def forward(self, x: torch.Tensor, ts: list[torch.Tensor]) -> torch.Tensor:
        return ts[0] + ts[1] * x


@torch.no_grad()
def test_list_of_tensors_interface_is_the_traces() -> None:
    """Scripted or traced, each tensor of a List[Tensor] is its own input (torch's scripted
    export declares seq(FLOAT) instead: see the module docstring)."""
    x = torch.randn(2, 3)
    args = (x, [torch.randn(2, 3), torch.randn(2, 3)])
    model = torch.jit.script(Pick().eval())
    data, _ = export_to_bytes(model, args, opset_version=17)
    assert [kind for _, kind in _inputs(data)] == ["FLOAT"] * 3
    assert_runs_match_torch(data, model, [args])
    traced, _ = export_to_bytes(Pick().eval(), args, opset_version=17)
    assert [kind for _, kind in _inputs(traced)] == _torch_inputs(Pick().eval(), args, 17) == ["FLOAT"] * 3
    assert_runs_match_torch(traced, Pick().eval(), [args])


@pytest.mark.parametrize("opset", opsets_below(SEQUENCE_OPSET))
def test_below_opset_11_a_scripted_list_is_refused_by_name(opset: int) -> None:
    """ONNX has no sequences below opset 11 (torch's exporter writes a sequence input there
    anyway, a model no runtime loads): refused, naming the argument and what works."""
    x = torch.randn(1, 2, 3)
    with pytest.raises(exporter.UnsupportedOperatorError, match=r"argument 'pad' \(List\[int\]\).*opset 11.*trace"):
        export_to_bytes(torch.jit.script(Pad().eval()), (x, [1, 2]), opset_version=opset)


@torch.no_grad()
def test_input_names_and_verify_take_the_list_as_one_input() -> None:
    """input_names names the sequence input once; exporter.verify feeds the list as one input."""
    model = torch.jit.script(Pad().eval())
    x = torch.randn(1, 2, 3)
    buffer = io.BytesIO()
    onnx_model = exporter.export(model, (x, [1, 2]), buffer, opset_version=17, input_names=["data", "amounts"])
    assert [v.name for v in onnx_model.graph.inputs] == ["data", "amounts"]
    report = exporter.verify(model, (x, [1, 2]), buffer.getvalue(), inputs=[(x, [0, 1, 2, 0])])
    assert report.passed, str(report)


@torch.no_grad()
def test_keyword_lists_stay_constants() -> None:
    """Keyword arguments are baked in, lists too, as before (torch.jit._flatten only feeds the
    positional arguments): only positional lists are sequence inputs."""
    model = torch.jit.script(Pad().eval())
    x = torch.randn(1, 2, 3)
    data, _ = export_to_bytes(model, (x, {"pad": [1, 2]}), opset_version=17)
    assert _inputs(data) == [("x", "FLOAT")]
    assert_outputs_match(run_model(data, [x]), model(x, pad=[1, 2]))


class Flags(torch.nn.Module):
    def forward(self, x: torch.Tensor, flags: list[bool]) -> torch.Tensor:
        if flags[0]:
            return x + len(flags)
        return -x


@torch.no_grad()
def test_list_of_bools_decides_a_branch_at_run_time() -> None:
    model = torch.jit.script(Flags().eval())
    x = torch.randn(2, 3)
    data, _ = export_to_bytes(model, (x, [True, False]), opset_version=17)
    assert _inputs(data) == [("x", "FLOAT"), ("flags", "seq(BOOL)")]
    assert_runs_match_torch(data, model, [(x, [True, False]), (x, [False]), (x, [True, True, True])])


@pytest.mark.parametrize("axes", [{0: "n"}, [0]])
def test_dynamic_axes_naming_a_sequence_input_is_refused_by_name(axes: Any) -> None:
    """A sequence has no axes to name (its length is chosen at run time already): a
    dynamic_axes key for it is refused, naming the input and its type, not silently ignored."""
    model = torch.jit.script(Pad().eval())
    with pytest.raises(ValueError, match=r"dynamic_axes names input 'pad'.*List\[int\].*one ONNX sequence input"):
        export_to_bytes(
            model, (torch.randn(2, 2, 4, 4), [2, 4]), opset_version=17, dynamic_axes={"x": {0: "b"}, "pad": axes}
        )
