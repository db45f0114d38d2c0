"""Interface compatibility with torch.onnx.export(dynamo=False): unknown dynamic_axes keys warn,
Python numbers in ``args`` (also inside positional tuples, lists and dicts) become 0-d graph
inputs, unused inputs are dropped as torch drops them (and kept where torch keeps them), scripted
models take tuples and lists of tensors and None/bool/int arguments, and a scripted model's None
results are empty optional outputs from opset 15, as torch's exporter writes them."""

from __future__ import annotations

import io
import warnings
from typing import Any, Optional

import onnx
import pytest
import torch
from cases import lowering_opsets
from conftest import (
    CONTROL_FLOW_SEQUENCE_OPSETS,
    NONE_OUTPUT_OPSET,
    OPTIONAL_INPUT_OPSET,
    ORT_COMPLETE_OPSET,
    TORCH_EXPORTER_NEWEST,
    around,
    assert_outputs_match,
    assert_runs_match_torch,
    comparable_with_torch,
    export_to_bytes,
    run_model,
)

import exporter
from exporter.capture.inputs import flatten_inputs, split_args
from exporter.cleanup.unused_inputs import INPUT_POSITIONS_KEY

OPSET = 17


def _signature(data: bytes) -> list[tuple[str, int]]:
    """(element type, rank) of each graph input; a sequence input is ("seq(<item type>)", -1)."""
    proto = onnx.load_from_string(data)
    found = []
    for i in proto.graph.input:
        if i.type.HasField("sequence_type"):
            item = onnx.TensorProto.DataType.Name(i.type.sequence_type.elem_type.tensor_type.elem_type)
            found.append((f"seq({item})", -1))
        else:
            found.append(
                (onnx.TensorProto.DataType.Name(i.type.tensor_type.elem_type), len(i.type.tensor_type.shape.dim))
            )
    return found


def _torch_export(model: Any, args: Any, **kwargs: Any) -> tuple[bytes, list[str]]:
    """torch's TorchScript exporter, for comparison only: the file and its warnings."""
    buffer = io.BytesIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        export = torch.onnx.export  # noqa: TID251 - only to compare with torch's behaviour
        export(model, args, buffer, dynamo=False, opset_version=OPSET, **kwargs)
    return buffer.getvalue(), [str(w.message) for w in caught]


class Numbers(torch.nn.Module):
    def forward(self, x: torch.Tensor, a: int, b: float, c: bool) -> torch.Tensor:
        return torch.where(torch.as_tensor(c), x * a + b, -x)


class ScriptedNumbers(torch.nn.Module):
    def forward(self, x: torch.Tensor, a: int, b: float, c: bool) -> torch.Tensor:
        y = x * a + b
        if c:
            return y
        return -y


def test_unknown_dynamic_axes_key_warns_and_exports() -> None:
    model = torch.nn.Linear(4, 3).eval()
    x = torch.randn(2, 4)
    with pytest.warns(UserWarning, match="'nope' is neither an input nor an output"):
        data, onnx_model = export_to_bytes(
            model, (x,), opset_version=OPSET, input_names=["x"], dynamic_axes={"nope": [0], "x": [0]}
        )
    assert str(onnx_model.graph.inputs[0].shape[0]) == "x_dynamic_axes_1"
    assert_runs_match_torch(data, model, [(x,), (torch.randn(5, 4),)])
    _, torch_warnings = _torch_export(model, (x,), input_names=["x"], dynamic_axes={"nope": [0], "x": [0]})
    assert any("Provided key nope for dynamic axes is not a valid input/output name" in w for w in torch_warnings)


@torch.no_grad()
def test_traced_python_numbers_become_inputs_like_torch() -> None:
    """torch wraps positional Python numbers as 0-d tensors before tracing (torch.jit._flatten):
    int -> int64, float -> float64 (not the default dtype), bool -> bool."""
    model = Numbers().eval()
    x = torch.randn(2, 3)
    args = (x, 3, 2.5, True)
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET)
    assert [v.name for v in onnx_model.graph.inputs] == ["x", "a", "b", "c"]
    torch_data, _ = _torch_export(model, args)
    assert _signature(data) == _signature(torch_data) == [("FLOAT", 2), ("INT64", 0), ("DOUBLE", 0), ("BOOL", 0)]
    assert_runs_match_torch(data, model, [args, (x, -2, 0.25, False), (x, 7, -1.5, True)])


@torch.no_grad()
def test_scripted_python_numbers_become_inputs_like_torch() -> None:
    model = torch.jit.script(ScriptedNumbers().eval())
    x = torch.randn(2, 3)
    args = (x, 3, 2.5, True)
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET)
    assert [v.name for v in onnx_model.graph.inputs] == ["x", "a", "b", "c"]
    torch_data, _ = _torch_export(model, args)
    assert _signature(data) == _signature(torch_data) == [("FLOAT", 2), ("INT64", 0), ("DOUBLE", 0), ("BOOL", 0)]
    assert_runs_match_torch(data, model, [args, (x, -2, 0.25, False), (x, 7, -1.5, True)])


class WithScriptedChild(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.act = torch.jit.script(torch.nn.ReLU())

    def forward(self, x: torch.Tensor, scale: int) -> torch.Tensor:
        return self.act(x) * scale


@torch.no_grad()
def test_python_number_input_with_a_scripted_child() -> None:
    model = WithScriptedChild().eval()
    x = torch.randn(2, 3)
    data, onnx_model = export_to_bytes(model, (x, 3), opset_version=OPSET)
    assert _signature(data) == [("FLOAT", 2), ("INT64", 0)]
    assert_runs_match_torch(data, model, [(x, 3), (x, -4)])


@torch.no_grad()
def test_keyword_numbers_stay_constants() -> None:
    """A deviation from torch, which makes them inputs too: numbers in the trailing kwargs dict
    are baked in (README, API)."""

    class Scale(torch.nn.Module):
        def forward(self, x: torch.Tensor, a: int = 2) -> torch.Tensor:
            return x * a

    x = torch.randn(2, 3)
    data, onnx_model = export_to_bytes(Scale(), (x, {"a": 5}), opset_version=OPSET)
    assert [v.name for v in onnx_model.graph.inputs] == ["x"]
    assert_outputs_match(run_model(data, [x]), x * 5)


@torch.no_grad()
def test_unused_inputs_are_dropped_like_torch() -> None:
    """Like torch, inputs the graph does not use are dropped (even ones named in input_names);
    the positions that remain are recorded, so the flattened inputs (or only the kept ones) can
    be fed to the ir.Model or to the file."""

    class IgnoresY(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor, flag: bool) -> torch.Tensor:
            return x + 1 if flag else x - 1  # the traced flag is baked in

    model = IgnoresY()
    x = torch.randn(2, 3)
    args = (x, torch.randn(4), True)
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET, input_names=["a", "b"])
    torch_data, _ = _torch_export(model, args, input_names=["a", "b"])
    torch_inputs = [i.name for i in onnx.load_from_string(torch_data).graph.input]
    assert [v.name for v in onnx_model.graph.inputs] == torch_inputs == ["a"]
    assert onnx_model.metadata_props[INPUT_POSITIONS_KEY] == "0"
    assert_runs_match_torch(data, model, [args, (torch.randn(2, 3), torch.randn(4), True)])
    assert_outputs_match(run_model(data, [x]), x + 1)  # only the kept inputs, as torch's tests feed
    for exported in (data, onnx_model):
        assert exporter.verify(model, args, exported).passed


@torch.no_grad()
def test_inputs_used_only_in_a_subgraph_or_as_outputs_stay() -> None:
    class Branches(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor, unused: torch.Tensor) -> Any:
            if bool(x.sum() > 0):
                x = x + y
            return x, z

    model = torch.jit.script(Branches())
    args = (torch.randn(3), torch.randn(3), torch.randn(2), torch.randn(1))
    names = ["x", "y", "z", "unused"]
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET, input_names=names)
    torch_data, _ = _torch_export(model, args, input_names=names)
    torch_inputs = [i.name for i in onnx.load_from_string(torch_data).graph.input]
    assert [v.name for v in onnx_model.graph.inputs] == torch_inputs == ["x", "y", "z"]
    assert onnx_model.metadata_props[INPUT_POSITIONS_KEY] == "0,1,2"
    assert_runs_match_torch(data, model, [args, (-torch.ones(3), torch.randn(3), torch.randn(2), torch.randn(1))])


# Inputs read only for their shape, each with what torch's exporter keeps (static shapes): it
# folds a TorchScript node whose outputs are known at export time (y.size(0), zeros_like(y)),
# but keeps the Shape(y) inside a node computing a run-time value (view_as, expand_as).
_SHAPE_READERS: dict[str, tuple[Any, tuple[int, ...], list[str]]] = {
    "view_as": (lambda x, y: x.view_as(y), (2, 3, 4), ["x", "y"]),
    "expand_as": (lambda x, y: x[:1].expand_as(y), (1, 4), ["x", "y"]),
    "reshape_as": (lambda x, y: x.reshape_as(y) * 2, (2, 3, 4), ["x", "y"]),
    "size_view": (lambda x, y: x.view(y.size(0), -1), (2, 3, 4), ["x"]),
    "shape_view": (lambda x, y: x.view(y.shape), (6, 4), ["x"]),
    "zeros_like": (lambda x, y: x.view(6, 4) + torch.zeros_like(y), (2, 3, 4), ["x"]),
    "ones_from_size": (lambda x, y: x.view(6, 4) + torch.ones(y.shape[0], 1), (2, 3, 4), ["x"]),
    "view_as_then_size": (lambda x, y: x * x.view_as(y).size(0), (2, 3, 4), ["x"]),
    "unused": (lambda x, y: x + 1, (2, 3, 4), ["x"]),
    # torch never folds the shape of a 0-d tensor: a constant computed from one keeps it
    "full_like_0d": (lambda x, y: torch.full_like(x, 1.3, dtype=torch.int), (), ["x"]),
}


class _ShapeReader(torch.nn.Module):
    def __init__(self, fn: Any) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.fn(x, y)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("case", sorted(_SHAPE_READERS))
@torch.no_grad()
def test_inputs_read_for_their_shape_stay_as_torch_keeps_them(case: str, dynamic: bool) -> None:
    """An input read only for its shape stays a graph input exactly where torch's exporter keeps
    it (the suite feeds torch's inputs): when a run-time result was computed from it, though our
    static shape arithmetic leaves it no ONNX reader; it is dropped where the node reading it
    folds to a constant. With dynamic axes the shape is read at run time and both keep it."""
    fn, x_shape, static_inputs = _SHAPE_READERS[case]
    model = _ShapeReader(fn)
    args = (torch.randn(x_shape), torch.randn(6, 4))
    options: dict[str, Any] = {"input_names": ["x", "y"]}
    if dynamic:
        options["dynamic_axes"] = {"x": {0: "a"}, "y": {0: "b"}} if x_shape else {"y": {0: "b"}}
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET, **options)
    torch_data, _ = _torch_export(model, args, **options)
    torch_inputs = [i.name for i in onnx.load_from_string(torch_data).graph.input]
    assert [v.name for v in onnx_model.graph.inputs] == torch_inputs
    if not dynamic:
        assert torch_inputs == static_inputs  # the table says what torch does; it must not drift
    assert_outputs_match(run_model(data, list(args)), model(*args))


class _TwoLinears(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(3, 3)
        self.b = torch.nn.Linear(3, 3)  # never used

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.a(x)


@pytest.mark.parametrize(
    "options",
    [{"export_params": False}, {"keep_initializers_as_inputs": True}, {}],
    ids=["no_params", "kept", "default"],
)
@torch.no_grad()
def test_unused_weights_and_inputs_match_torch(options: dict[str, bool]) -> None:
    model = _TwoLinears().eval()
    args = (torch.randn(2, 3), torch.randn(2))
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET, input_names=["x", "y"], **options)
    torch_data, _ = _torch_export(model, args, input_names=["x", "y"], **options)
    torch_proto = onnx.load_from_string(torch_data)
    assert [v.name for v in onnx_model.graph.inputs] == [i.name for i in torch_proto.graph.input]
    assert sorted(onnx_model.graph.initializers) == sorted(i.name for i in torch_proto.graph.initializer)
    if options.get("export_params", True):
        assert_runs_match_torch(data, model, [args])


class Recurrent(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cell = torch.nn.LSTMCell(4, 3)

    def forward(
        self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        h, c = state
        outs: list[torch.Tensor] = []
        for t in range(x.size(0)):
            h, c = self.cell(x[t], (h, c))
            outs.append(h)
        return torch.stack(outs), (h, c)


@torch.no_grad()
def test_scripted_tuple_initial_state() -> None:
    model = torch.jit.script(Recurrent().eval())
    x = torch.randn(5, 2, 4)
    state = (torch.randn(2, 3), torch.randn(2, 3))
    data, onnx_model = export_to_bytes(model, (x, state), opset_version=OPSET)
    assert [v.name for v in onnx_model.graph.inputs] == ["x", "state_0", "state_1"]
    torch_data, _ = _torch_export(model, (x, state))
    assert _signature(data) == _signature(torch_data)  # torch flattens the tuple too
    assert_runs_match_torch(data, model, [(x, state), (torch.randn(5, 2, 4), (torch.randn(2, 3), torch.zeros(2, 3)))])


class Mixed(torch.nn.Module):
    def forward(
        self,
        x: torch.Tensor,
        pads: list[torch.Tensor],
        mask: Optional[torch.Tensor],
        negate: bool,
        repeat: int,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        y = torch.cat([torch.cat(pads, 0), x], 0)  # `pads + [x]` (aten::add.t on tensor lists) is not exportable yet
        if mask is not None:
            y = y * mask
        for _ in range(repeat):
            y = y + 1
        if negate:
            y = -y
        return y, pads[0]


@torch.no_grad()
def test_scripted_list_of_tensors_none_bool_int() -> None:
    """torch refuses None arguments of scripted models; ours bakes None in. A List[Tensor] is
    one input per tensor (see test_sequence_inputs.py), a bool and an int 0-d inputs."""
    model = torch.jit.script(Mixed().eval())
    x = torch.randn(2, 3)
    pads = [torch.randn(1, 3), torch.randn(2, 3)]
    args = (x, pads, None, True, 2)
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET)
    assert [v.name for v in onnx_model.graph.inputs] == ["x", "pads_0", "pads_1", "negate", "repeat"]
    assert _signature(data)[3:] == [("BOOL", 0), ("INT64", 0)]
    assert_runs_match_torch(data, model, [args, (x, pads, None, False, 0), (x, pads, None, True, 5)])
    with pytest.raises(ValueError, match="no args may be None"):
        _torch_export(model, args)


class _CheckedZeros(torch.nn.Module):
    def forward(self, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if float(t) < 0:
            raise Exception("Negative input")  # noqa: TRY002
        return torch.zeros(5), torch.zeros(5)


@torch.no_grad()
def test_inputs_of_a_check_that_raises_stay_as_torch_keeps_them() -> None:
    """The check is assumed to pass (ONNX cannot raise), so nothing reads t; it stays an input,
    as torch's suite (test_tuple_output_from_if_with_raised_exception) feeds it: the model's
    interface does not depend on whether a check could be expressed."""
    model = torch.jit.script(_CheckedZeros())
    args = (torch.zeros(1),)
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET, input_names=["t"])
    assert [v.name for v in onnx_model.graph.inputs] == ["t"]
    assert_outputs_match(run_model(data, list(args)), model(*args))


class _PackUnpack(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        packed = [a, b]
        c, _ = packed
        return c


@torch.no_grad()
def test_an_input_only_packed_into_a_list_is_dropped() -> None:
    """Building and unpacking a list reads nothing: b is unused, as in torch's exporter."""
    model = torch.jit.script(_PackUnpack())
    args = (torch.randn(2), torch.randn(3))
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET, input_names=["a", "b"])
    assert [v.name for v in onnx_model.graph.inputs] == ["a"]
    assert_outputs_match(run_model(data, list(args)), model(*args))


class NestedNumbers(torch.nn.Module):
    def forward(self, x: torch.Tensor, pair: tuple[int, torch.Tensor], pad: list[int], d: dict[str, Any]) -> Any:
        return torch.nn.functional.pad(x, pad) * pair[0] + d["scale"], pair[1] * d["shift"]


@torch.no_grad()
def test_traced_nested_numbers_become_inputs_like_torch() -> None:
    """torch.jit._flatten makes every Python number in the positional arguments a 0-d input,
    also inside tuples, lists and dict values; the model is traced on those tensors."""
    model = NestedNumbers().eval()
    x, y = torch.randn(2, 3), torch.randn(4)
    args = (x, (3, y), [1, 2], {"scale": 0.5, "shift": 2}, {})
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET)
    names = ["x", "pair_0", "pair_1", "pad_0", "pad_1", "d_scale", "d_shift"]
    assert [v.name for v in onnx_model.graph.inputs] == names
    torch_data, _ = _torch_export(model, args)
    expected = [("FLOAT", 2), ("INT64", 0), ("FLOAT", 1), ("INT64", 0), ("INT64", 0), ("DOUBLE", 0), ("INT64", 0)]
    assert _signature(data) == _signature(torch_data) == expected
    assert [t.shape for t in flatten_inputs(args)] == [(2, 3), (), (4,), (), (), (), ()]
    # the numbers are read at run time: other values give torch's results
    assert_runs_match_torch(data, model, [args, (x, (-2, y), [0, 3], {"scale": 1.5, "shift": -1}, {})])


@torch.no_grad()
def test_tensor_dict_keys_are_inputs_like_torch() -> None:
    """torch.jit._flatten flattens a dict as key, value, key, value: a tensor key is an input."""

    class KeyPlusValue(torch.nn.Module):
        def forward(self, d: dict[torch.Tensor, torch.Tensor]) -> torch.Tensor:
            key = next(iter(d))
            return d[key] + key

    args = ({torch.tensor(1.5): torch.randn(2, 3)}, {})
    data, _ = export_to_bytes(KeyPlusValue(), args, opset_version=OPSET)
    torch_data, _ = _torch_export(KeyPlusValue(), args)
    assert _signature(data) == _signature(torch_data) == [("FLOAT", 0), ("FLOAT", 2)]
    assert_runs_match_torch(data, KeyPlusValue(), [args, ({torch.tensor(-4.0): torch.randn(2, 3)}, {})])


class ScriptedTuple(torch.nn.Module):
    def forward(self, a: tuple[int, torch.Tensor], b: torch.Tensor) -> torch.Tensor:
        return a[1] + b * a[0]


@torch.no_grad()
def test_scripted_tuple_numbers_become_inputs_like_torch() -> None:
    """torch lowers a scripted model's tuple arguments to one input per item, numbers included."""
    model = torch.jit.script(ScriptedTuple().eval())
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    args = ((3, x), y)
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET)
    assert [v.name for v in onnx_model.graph.inputs] == ["a_0", "a_1", "b"]
    torch_data, _ = _torch_export(model, args)
    assert _signature(data) == _signature(torch_data) == [("INT64", 0), ("FLOAT", 2), ("FLOAT", 2)]
    assert_runs_match_torch(data, model, [args, ((-5, x), y)])


class ScriptedPad(torch.nn.Module):
    def forward(self, x: torch.Tensor, pad: list[int]) -> torch.Tensor:
        return torch.nn.functional.pad(x, pad)


@torch.no_grad()
def test_scripted_list_of_numbers_is_one_sequence_input_like_torch() -> None:
    """torch makes a scripted List[int] argument one ONNX sequence input of int64 items (its
    suite feeds the list as one Python list); so does ours, and the list's length is chosen at
    run time: pad takes any even number of amounts up to twice the rank. Traced, each number
    is its own 0-d input, as in torch."""
    model = torch.jit.script(ScriptedPad().eval())
    x = torch.randn(2, 2, 4, 4)
    data, onnx_model = export_to_bytes(model, (x, [2, 4]), opset_version=OPSET)
    assert [v.name for v in onnx_model.graph.inputs] == ["x", "pad"]
    torch_data, _ = _torch_export(model, (x, [2, 4]))
    assert _signature(data) == _signature(torch_data) == [("FLOAT", 4), ("seq(INT64)", -1)]
    assert_runs_match_torch(data, model, [(x, [2, 4]), (x, [0, 1]), (x, [1, 0, 2, 3]), (x, [1, 1, 0, 2, 3, 0, 1, 2])])
    traced, traced_model = export_to_bytes(ScriptedPad().eval(), (x, [2, 4]), opset_version=OPSET)
    assert [v.name for v in traced_model.graph.inputs] == ["x", "pad_0", "pad_1"]
    assert _signature(traced) == [("FLOAT", 4), ("INT64", 0), ("INT64", 0)]
    assert_runs_match_torch(traced, ScriptedPad().eval(), [(x, [2, 4]), (x, [0, 1])])


@torch.no_grad()
def test_numbers_in_keyword_containers_stay_constants() -> None:
    model = NestedNumbers().eval()
    x, y = torch.randn(2, 3), torch.randn(4)
    args = (x, {"pair": (3, y), "pad": [1, 2], "d": {"scale": 0.5, "shift": 2}})
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET)
    assert [v.name for v in onnx_model.graph.inputs] == ["x", "pair_1"]
    assert_outputs_match(run_model(data, [x, y]), model(*split_args(args)[0], **split_args(args)[1]))


class ScriptedDict(torch.nn.Module):
    def forward(self, x: torch.Tensor, d: dict[str, float]) -> torch.Tensor:
        return x * d["scale"] + d["shift"]


class ScriptedTensorDict(torch.nn.Module):
    def forward(self, x: torch.Tensor, d: dict[str, torch.Tensor]) -> torch.Tensor:
        return x * d["scale"] + d["shift"]


@torch.no_grad()
def test_scripted_dict_numbers_become_inputs_as_traced() -> None:
    """A positional dict's numbers are 0-d inputs, as for a traced model (torch.jit._flatten)
    and a scripted tuple, so the graph reads what flatten_inputs feeds. torch's exporter
    fails on a scripted dict argument (an internal assert in its shape propagation)."""
    model = torch.jit.script(ScriptedDict().eval())
    x = torch.randn(2, 3)
    args = (x, {"scale": 0.5, "shift": 2.0}, {})
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET)
    assert [v.name for v in onnx_model.graph.inputs] == ["x", "d_scale", "d_shift"]
    assert _signature(data) == [("FLOAT", 2), ("DOUBLE", 0), ("DOUBLE", 0)]
    assert len(flatten_inputs(args)) == 3
    assert_runs_match_torch(data, model, [args, (x, {"scale": -3.0, "shift": 0.25}, {})])
    with pytest.raises(RuntimeError, match="INTERNAL ASSERT FAILED"):
        _torch_export(model, args[:-1])


@torch.no_grad()
def test_scripted_dict_of_tensors_is_one_input_per_value() -> None:
    model = torch.jit.script(ScriptedTensorDict().eval())
    x = torch.randn(2, 3)
    args = (x, {"scale": torch.randn(3), "shift": torch.randn(2, 1)}, {})
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET)
    assert [v.name for v in onnx_model.graph.inputs] == ["x", "d_scale", "d_shift"]
    assert_runs_match_torch(data, model, [args, (x, {"scale": torch.randn(3), "shift": torch.randn(2, 1)}, {})])


@torch.no_grad()
def test_scripted_keyword_dict_numbers_stay_constants() -> None:
    """Keyword arguments' numbers are baked in, as for traced models: neither the graph nor
    flatten_inputs has them."""
    model = torch.jit.script(ScriptedDict().eval())
    x = torch.randn(2, 3)
    args = (x, {"d": {"scale": 0.5, "shift": 2.0}})
    data, onnx_model = export_to_bytes(model, args, opset_version=OPSET)
    assert [v.name for v in onnx_model.graph.inputs] == ["x"]
    assert len(flatten_inputs(args)) == 1
    assert_runs_match_torch(data, model, [args])


class AffineGrid(torch.nn.Module):
    def __init__(self, align_corners: bool) -> None:
        super().__init__()
        self.align_corners = align_corners

    def forward(self, theta: torch.Tensor, size: list[int]) -> torch.Tensor:
        return torch.nn.functional.affine_grid(theta, size, self.align_corners)


@pytest.mark.parametrize("opset", lowering_opsets("aten::affine_grid_generator", before_changes=True))
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("script", [False, True], ids=["trace", "script"])
@torch.no_grad()
def test_affine_grid_sizes_at_run_time(opset: int, align_corners: bool, script: bool) -> None:
    """affine_grid's size list is model inputs: AffineGrid at opset 20, below it a base grid
    built from the sizes at run time; sizes of 1 (one sample at 0 in torch; AffineGrid puts it
    at -1 with align_corners, so the base grid is used then) and 3-D grids included. Traced,
    each size is an input; scripted, the list is one sequence input (opset 11 up), and
    affine_grid's checks of len(size) become run-time branches whose raising ones are pruned."""
    model: Any = AffineGrid(align_corners).eval()
    if script:
        model = torch.jit.script(model)
    theta2, theta3 = torch.randn(2, 2, 3), torch.randn(2, 3, 4)
    for theta, sizes in [
        (theta2, [[2, 3, 4, 5], [2, 1, 1, 3], [2, 3, 6, 1]]),
        (theta3, [[2, 1, 3, 4, 2], [2, 2, 1, 2, 1]]),
    ]:
        if script and opset < 11:
            with pytest.raises(exporter.UnsupportedOperatorError, match="argument 'size'.*sequences need opset 11"):
                export_to_bytes(model, (theta, sizes[0]), opset_version=opset)
            continue
        data, onnx_model = export_to_bytes(model, (theta, sizes[0]), opset_version=opset)
        assert len(onnx_model.graph.inputs) == (2 if script else 1 + len(sizes[0]))
        assert_runs_match_torch(data, model, [(theta, size) for size in sizes])


# Inputs torch's exporter reads where this exporter knows the value at export time: each case
# is exported by both, the declared inputs compared, then the model is run on all of them.


def _graph_inputs(data: bytes) -> list[str]:
    return [i.name for i in onnx.load_from_string(data).graph.input]


def _torch_inputs(model: Any, args: Any, opset: int, **kwargs: Any) -> list[str]:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        export = torch.onnx.export  # noqa: TID251 - only to compare with torch's behaviour
        export(model, args, buffer, dynamo=False, opset_version=opset, **kwargs)
    return _graph_inputs(buffer.getvalue())


class _SplitBySizesOf(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        first, second = torch.split(t, (x.size(1), y.size(1)), dim=1)
        return first, second


class _SplitByTensors(torch.nn.Module):
    def forward(self, x: torch.Tensor, sizes: list[torch.Tensor]) -> torch.Tensor:
        return torch.cat(list(x.split(sizes)), dim=0) * 2  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "opset",
    lowering_opsets(
        "aten::split", "aten::split_with_sizes", helpers=True, min_opset=13, max_opset=TORCH_EXPORTER_NEWEST
    ),
)
@pytest.mark.parametrize("script", [False, True], ids=["trace", "script"])
@torch.no_grad()
def test_an_implied_last_split_size_keeps_the_input_it_reads(opset: int, script: bool) -> None:
    """The last of split's sizes is implied by the others (this lowering slices to the end),
    but torch's Split takes every size, so ``y`` (read for ``y.size(1)`` at run time) stays
    an input; with static shapes both fold the sizes and keep only ``t``."""
    model = torch.jit.script(_SplitBySizesOf()) if script else _SplitBySizesOf()
    args = (torch.randn(2, 3), torch.randn(2, 4), torch.randn(2, 7))
    names = ["x", "y", "t"]
    dynamic = {"x": [0, 1], "y": [0, 1], "t": [0, 1]}
    data, _ = export_to_bytes(model, args, opset_version=opset, input_names=names, dynamic_axes=dynamic)
    assert _graph_inputs(data) == _torch_inputs(model, args, opset, input_names=names, dynamic_axes=dynamic) == names
    other = (torch.randn(3, 2), torch.randn(3, 5), torch.randn(3, 7))
    for example in (args, other):
        assert_outputs_match(run_model(data, list(example)), model(*example))
    static, _ = export_to_bytes(model, args, opset_version=opset, input_names=names)
    assert _graph_inputs(static) == ["t"]
    assert_outputs_match(run_model(static, [args[2]]), model(*args))


@pytest.mark.parametrize(
    "opset",
    lowering_opsets(
        "aten::split", "aten::split_with_sizes", helpers=True, min_opset=13, max_opset=TORCH_EXPORTER_NEWEST
    ),
)
@torch.no_grad()
def test_traced_split_sizes_given_as_tensors_are_all_inputs(opset: int) -> None:
    model = _SplitByTensors()
    args = (torch.randn(6, 4), [torch.tensor(2), torch.tensor(4)])
    data, _ = export_to_bytes(model, args, opset_version=opset)
    assert len(_graph_inputs(data)) == len(_torch_inputs(model, args, opset)) == 3
    assert_outputs_match(run_model(data, flatten_inputs(args)), model(*args))


class _LengthOfChangedList(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.unbind()
        kept: list[torch.Tensor] = []
        kept.append(rows[0])
        kept.append(rows[1])
        kept.pop(1)
        kept += [rows[2], rows[3]]
        return torch.ones(len(kept))


class _FillPerItem(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        boxes = [x, x * 2, x]
        filled: list[torch.Tensor] = []
        for i, box in enumerate(boxes):
            filled.append(torch.full_like(box[:, 1], i))
        return filled[1]


@torch.jit.script
def _fill_each(boxes: list[torch.Tensor]) -> torch.Tensor:
    filled: list[torch.Tensor] = []
    for i, box in enumerate(boxes):
        filled.append(torch.full_like(box[:, 1], i))
    return filled[1]


class _TracedFillPerItem(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _fill_each([x, x * 2, x])


class _AppendBehindALengthCheck(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        items: list[torch.Tensor] = []
        for i in range(x.size(0)):
            if len(items) > 2:
                items.append(x[i])
        return items


# model, whether it is scripted, example input, the inputs both exporters keep
_SCRIPTED_LISTS: dict[str, tuple[type, bool, torch.Tensor, list[str]]] = {
    # len() of a list made by unbind and changed: SequenceLength in torch's graph, an int here
    "length_of_changed_list": (_LengthOfChangedList, True, torch.randn(6, 1), ["x"]),
    # a trace calling a scripted function keeps its loop, and the list it indexes at the
    # loop counter is a sequence, whose items' shapes torch does not know
    "fill_per_item_traced": (_TracedFillPerItem, False, torch.randn(5, 5), ["x"]),
    # a scripted model's loop over a list literal is unrolled by TorchScript: all folds
    "fill_per_item_scripted": (_FillPerItem, True, torch.randn(5, 5), []),
    # a loop torch keeps, whose `if` on a list's length it cannot decide; here never taken
    "append_behind_a_length_check": (_AppendBehindALengthCheck, True, torch.randn(4, 3), ["x"]),
}


@pytest.mark.parametrize("opset", comparable_with_torch(CONTROL_FLOW_SEQUENCE_OPSETS))
@pytest.mark.parametrize("case", sorted(_SCRIPTED_LISTS))
@torch.no_grad()
def test_scripted_lists_keep_the_inputs_torch_reads_through_sequences(case: str, opset: int) -> None:
    """Torch's exporter keeps a scripted list that is made by an op, changed in a loop it
    keeps, or indexed at a run-time position as an ONNX sequence and knows nothing read from
    it at export time, so it reads ``x``; this exporter computes those results at export
    time, and keeps ``x`` as torch does, so both models take the same inputs."""
    cls, scripted, x, expected = _SCRIPTED_LISTS[case]
    model = torch.jit.script(cls()) if scripted else cls()
    data, _ = export_to_bytes(model, (x,), opset_version=opset, input_names=["x"])
    assert _graph_inputs(data) == _torch_inputs(model, (x,), opset, input_names=["x"]) == expected
    assert_outputs_match(run_model(data, [x][: len(expected)]), model(x))


@torch.no_grad()
def test_a_list_literal_read_at_constant_positions_reads_nothing() -> None:
    """TorchScript folds ``len`` and constant indexing of a list literal never changed, so
    torch's exporter drops ``y`` here, and so does this one."""

    class Literal(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            pair = [x, y]
            return pair[0] * len(pair)

    model = torch.jit.script(Literal())
    args = (torch.randn(3), torch.randn(4))
    data, _ = export_to_bytes(model, args, opset_version=13, input_names=["x", "y"])
    assert _graph_inputs(data) == _torch_inputs(model, args, 13, input_names=["x", "y"]) == ["x"]
    assert_outputs_match(run_model(data, [args[0]]), model(*args))


class _DimArange(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch._dim_arange(x, 1)


@pytest.mark.parametrize("opset", lowering_opsets("aten::_dim_arange", helpers=True, max_opset=TORCH_EXPORTER_NEWEST))
@torch.no_grad()
def test_dim_arange_keeps_its_input_where_torch_cannot_fold_it(opset: int) -> None:
    """Below opset 11 torch's arange is NonZero(ConstantOfShape(n)), which its constant
    tracking does not evaluate, so ``_dim_arange(x, 1)`` reads Shape(x) at run time there;
    from 11 (Range) it folds, and both drop ``x``."""
    model = _DimArange()
    args = (torch.ones(5, 6),)
    data, _ = export_to_bytes(model, args, opset_version=opset, input_names=["x"])
    expected = ["x"] if opset < 11 else []
    assert _graph_inputs(data) == _torch_inputs(model, args, opset, input_names=["x"]) == expected
    assert_outputs_match(run_model(data, list(args)[: len(expected)]), model(*args))


class _DefaultTensors(torch.nn.Module):
    def forward(
        self,
        x: torch.Tensor,
        y: Optional[torch.Tensor] = torch.ones(2, 3),
        z: Optional[torch.Tensor] = torch.zeros(2, 3),
    ) -> torch.Tensor:
        if y is not None:
            return x + y
        if z is not None:
            return x * z
        return x


@pytest.mark.parametrize("opset", around(OPTIONAL_INPUT_OPSET, TORCH_EXPORTER_NEWEST))
@torch.no_grad()
def test_scripted_optional_parameters_are_optional_inputs_like_torch(opset: int) -> None:
    """From opset 15 torch's exporter declares a scripted ``Optional[Tensor]`` parameter an
    ONNX optional input and checks it at run time, so ``z`` (reached only when ``y`` is None)
    stays an input and a caller may leave either out; below 15 the checks are decided by the
    tensors given, and ``z`` is dropped."""
    import onnxruntime

    model = torch.jit.script(_DefaultTensors())
    x, y, z = torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3)
    data, _ = export_to_bytes(model, (x, y, z), opset_version=opset, input_names=["x", "y", "z"])
    torch_inputs = _torch_inputs(model, (x, y, z), opset, input_names=["x", "y", "z"])
    assert _graph_inputs(data) == torch_inputs == (["x", "y", "z"] if opset >= 15 else ["x", "y"])
    assert_outputs_match(run_model(data, [x, y, z][: len(torch_inputs)]), model(x, y, z))
    if opset < 15:
        return
    types = [i.type.WhichOneof("value") for i in onnx.load_from_string(data).graph.input]
    assert types == ["tensor_type", "optional_type", "optional_type"]
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    for feed, expected in (({"y": y}, model(x, y, None)), ({"z": z}, model(x, None, z)), ({}, model(x, None, None))):
        (got,) = session.run(None, {"x": x.numpy(), **{k: v.numpy() for k, v in feed.items()}})
        torch.testing.assert_close(torch.from_numpy(got), expected)


@torch.no_grad()
def test_an_optional_parameter_passed_to_an_op_stays_a_tensor_input() -> None:
    """Only a parameter that is just checked and refined is an optional input; one given as
    it is to an op (an Optional[Tensor] argument) stays a tensor."""

    class Bias(torch.nn.Module):
        def forward(self, x: torch.Tensor, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
            return torch.nn.functional.linear(x, torch.ones(2, 3), bias)

    model = torch.jit.script(Bias())
    args = (torch.randn(4, 3), torch.randn(2))
    data, _ = export_to_bytes(model, args, opset_version=17, input_names=["x", "bias"])
    assert [i.type.WhichOneof("value") for i in onnx.load_from_string(data).graph.input] == ["tensor_type"] * 2
    assert_outputs_match(run_model(data, list(args)), model(*args))


@torch.no_grad()
def test_a_derived_input_name_given_to_another_input_takes_a_suffix() -> None:
    """``input_names=["y"]`` names the first input; the default-filled parameter ``y`` then
    becomes ``y_1`` (torch's ``y.1``), not a second input called ``y``."""

    class Pick(torch.nn.Module):
        def forward(self, x: Optional[torch.Tensor] = torch.ones(2), y: Optional[torch.Tensor] = torch.zeros(2)) -> Any:
            if x is not None:
                return x
            if y is not None:
                return y
            return torch.tensor(-1.0)

    model = torch.jit.script(Pick())
    data, _ = export_to_bytes(model, ({"y": torch.randn(2)},), opset_version=17, input_names=["y"])
    assert _graph_inputs(data) == ["y", "y_1"]


class NestedNones(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, None, tuple[torch.Tensor, None]]]:
        return x, (x + 1, None, (x * 2, None))


@pytest.mark.parametrize("opset", around(NONE_OUTPUT_OPSET, ORT_COMPLETE_OPSET))
def test_scripted_none_results_are_empty_optional_outputs(opset: int) -> None:
    """torch's exporter keeps a scripted model's None results as outputs from opset 15 (empty
    optionals, which onnxruntime returns as None) and drops them below, as traces always do."""
    model = torch.jit.script(NestedNones())
    x = torch.randn(3, 4)
    data, onnx_model = export_to_bytes(model, (x,), opset_version=opset)
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    actual = run_model(data, [x])
    if opset >= 15:
        assert [a is None for a in actual] == [False, False, True, False, True]
    else:
        assert len(actual) == 3
    assert_outputs_match(actual, model(x))
    _, traced = export_to_bytes(NestedNones(), (x,), opset_version=opset)
    assert len(traced.graph.outputs) == 3
