"""Errors name the op, the argument, the opset and the user's source line."""

from __future__ import annotations

import io
import re

import onnx_ir as ir
import pytest
import torch

import exporter
from exporter.errors import SymbolicError, TracingError
from exporter.graph_context import GraphContext
from exporter.registry import REGISTRY


class TwoUnsupported(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.special.bessel_j0(x)  # line A
        z = torch.special.bessel_j1(x)
        return y + z + torch.special.bessel_j0(z)


def test_every_unsupported_op_is_listed_once_with_counts_and_lines() -> None:
    with pytest.raises(exporter.UnsupportedOperatorError) as info:
        exporter.export(TwoUnsupported(), (torch.randn(3),), io.BytesIO(), opset_version=17)
    message = str(info.value)
    assert "2 operator(s) cannot be exported at opset 17" in message
    assert "aten::special_bessel_j0 (x2)" in message
    assert "aten::special_bessel_j1 (x1)" in message
    line = next(i for i, text in enumerate(open(__file__), 1) if text.rstrip().endswith("# line A"))
    assert f"test_errors.py:{line} (in forward)" in message
    assert '@exporter.onnx_symbolic("aten::special_bessel_j0", opset=17)' in message
    assert {op.name for op in info.value.ops} == {"aten::special_bessel_j0", "aten::special_bessel_j1"}


class UnsupportedInBranches(torch.nn.Module):
    def forward(self, x: torch.Tensor, mode: str = "plain") -> torch.Tensor:
        if x.dim() == 1:  # decided at export time: the branch with bessel_j1 is never emitted
            y = x + 1
        else:
            y = torch.special.bessel_j1(x)
        if mode == "plain":  # also decided
            return y * 2
        return torch.special.bessel_j0(y)


class UnsupportedInRunTimeBranch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool(x.sum() > 0):
            return torch.special.bessel_j1(x)
        return torch.special.bessel_j0(x) + torch.special.bessel_j1(x)


def test_ops_without_symbolic_in_branches_decided_at_export_time_are_not_needed() -> None:
    """Scripted library code (torch.norm) holds ops for other arguments in branches that export
    finds decided; only a branch that is emitted needs its ops. One that is emitted reports
    every op found in branches, in one error."""
    from conftest import assert_matches_torch

    assert_matches_torch(torch.jit.script(UnsupportedInBranches()), (torch.randn(3),), opset=17)
    with pytest.raises(exporter.UnsupportedOperatorError) as info:
        exporter.export(torch.jit.script(UnsupportedInBranches()), (torch.randn(2, 3),), io.BytesIO(), opset_version=17)
    # the `mode` branch is decided before emission (exporter.passes.specialize): its op is not needed
    assert {op.name for op in info.value.ops} == {"aten::special_bessel_j1"}
    with pytest.raises(exporter.UnsupportedOperatorError) as info:
        exporter.export(
            torch.jit.script(UnsupportedInRunTimeBranch()), (torch.randn(3),), io.BytesIO(), opset_version=17
        )
    assert "aten::special_bessel_j1 (x2)" in str(info.value)


def test_unsupported_below_first_opset_names_the_opset() -> None:
    def only_at_15(g: GraphContext, self: ir.Value) -> ir.Value:
        return g.op("Identity", self)

    with REGISTRY.scoped_custom("aten::special_bessel_j0", 15, only_at_15):
        model = torch.nn.Module()
        model.forward = lambda x: torch.special.bessel_j0(x)  # type: ignore[method-assign]
        with pytest.raises(exporter.UnsupportedOperatorError, match="supported from opset 15"):
            exporter.export(model, (torch.randn(3),), io.BytesIO(), opset_version=13)
        exporter.export(model, (torch.randn(3),), io.BytesIO(), opset_version=15)


def test_failing_symbolic_is_wrapped_with_op_arguments_opset_and_line() -> None:
    def broken(g: GraphContext, self: ir.Value) -> ir.Value:
        raise RuntimeError("boom")

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(x)

    with REGISTRY.scoped_custom("aten::relu", 9, broken):
        with pytest.raises(exporter.SymbolicError) as info:
            exporter.export(Model(), (torch.randn(2, 3),), io.BytesIO(), opset_version=13)
    message = str(info.value)
    assert message.startswith("aten::relu at opset 13 (")
    assert "test_errors.py" in message and "RuntimeError: boom" in message
    assert "self=Value(FLOAT, [2,3])" in message
    assert isinstance(info.value.__cause__, RuntimeError)


def test_unhandled_non_default_argument_is_an_error() -> None:
    def ignores_approximate(g: GraphContext, self: ir.Value) -> ir.Value:
        return g.op("Identity", self)

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.gelu(x, approximate="tanh")

    with REGISTRY.scoped_custom("aten::gelu", 9, ignores_approximate):
        with pytest.raises(exporter.SymbolicError, match="argument approximate='tanh' is not handled"):
            exporter.export(Model(), (torch.randn(2),), io.BytesIO())


def test_wrong_return_type_is_caught_at_the_symbolic() -> None:
    def returns_int(g: GraphContext, self: ir.Value) -> ir.Value:
        return 3  # type: ignore[return-value]

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.tanh(x)

    with REGISTRY.scoped_custom("aten::tanh", 9, returns_int):
        with pytest.raises(exporter.SymbolicError, match="aten::tanh.*return"):
            exporter.export(Model(), (torch.randn(2),), io.BytesIO())


def test_symbolic_returning_wrong_dtype_is_caught() -> None:
    def wrong_dtype(g: GraphContext, self: ir.Value) -> ir.Value:
        return g.op("Cast", self, to=ir.DataType.DOUBLE)

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.sigmoid(x)

    with REGISTRY.scoped_custom("aten::sigmoid", 9, wrong_dtype):
        with pytest.raises(exporter.SymbolicError, match="returned DOUBLE where torch computes FLOAT"):
            exporter.export(Model(), (torch.randn(2),), io.BytesIO())


def test_bad_model_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="model must be"):
        exporter.export(42, (torch.randn(2),), io.BytesIO())


def test_bad_training_value() -> None:
    with pytest.raises(ValueError, match="training must be"):
        exporter.export(torch.nn.ReLU(), (torch.randn(2),), io.BytesIO(), training="yes")


def test_verify_catches_a_wrong_symbolic() -> None:
    def wrong_relu(g: GraphContext, self: ir.Value) -> ir.Value:
        return g.op("Abs", self)

    model = torch.nn.ReLU()
    x = torch.randn(10)
    with REGISTRY.scoped_custom("aten::relu", 9, wrong_relu):
        data = io.BytesIO()
        exporter.export(model, (x,), data)
    report = exporter.verify(model, (x,), data.getvalue())
    assert not report.passed and report.max_abs_diff > 0.01
    assert exporter.verify(model, (x,), exporter.export(model, (x,), io.BytesIO())).passed


def test_a_model_that_raises_on_the_example_inputs_is_a_runtime_error() -> None:
    """As torch's exporter lets tracing's RuntimeError through (torch's suite expects one), and a
    ValueError: the inputs do not fit the model."""

    class NeedsTwoDims(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.stft(x, n_fft=16, center=False, return_complex=False)

    with pytest.raises(exporter.errors.ModelRaisedError, match="the model raised on the example inputs") as info:
        exporter.export(torch.jit.script(NeedsTwoDims()), (torch.randn(1, 1, 32),), io.BytesIO(), opset_version=17)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("scripted", [False, True], ids=["trace", "script"])
def test_a_complex_input_is_refused_by_name_with_what_works(scripted: bool, tmp_path) -> None:  # noqa: ANN001
    """onnxruntime cannot load a model taking complex64; the export says so before writing."""

    class FirstColumn(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x[:, 0]

    model = torch.jit.script(FirstColumn()) if scripted else FirstColumn()
    target = tmp_path / "m.onnx"
    with pytest.raises(exporter.ExporterError, match=r"input 'x' is a torch.complex64 tensor.*view_as_real"):
        exporter.export(model, (torch.randn(4, 3, dtype=torch.cfloat),), str(target))
    assert not target.exists()


# -- errors inside torch's own scripted code name the user's call sites --------------------


def _line(marker: str) -> int:
    return next(i for i, text in enumerate(open(__file__), 1) if text.rstrip().endswith(marker))


class PadsAtRunTime(torch.nn.Module):
    def forward(self, x: torch.Tensor, amount: torch.Tensor) -> torch.Tensor:
        pad = [int(amount), int(amount)]  # amounts known only at run time
        return torch.nn.functional.pad(x, pad, mode="reflect")  # line pad


def test_scripted_error_in_torch_code_names_the_users_call_then_torchs_line() -> None:
    """After inlining, aten::pad's source range is functional.py's; the error names the
    user's F.pad call first, then torch's line in the function the user called."""
    with pytest.raises(exporter.SymbolicError) as info:
        exporter.export(
            torch.jit.script(PadsAtRunTime()), (torch.randn(1, 2, 5), torch.tensor(1)), io.BytesIO(), opset_version=9
        )
    message = str(info.value)
    assert "needs opset 11" in message
    assert f"test_errors.py:{_line('# line pad')} (return torch.nn.functional.pad(" in message
    assert ") -> torch/nn/functional.py:" in message and "(in pad)" in message
    assert message.index("test_errors.py") < message.index("functional.py")


@torch.jit.script
def _grid_sampled(y: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.grid_sample(y, y[:, :2].permute(0, 2, 3, 1))  # line helper


class _Block(torch.nn.Module):
    def __init__(self, shift: bool) -> None:
        super().__init__()
        self.shift = shift  # a bool attribute read in forward: lowered through freezing
        self.drop = torch.nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.shift:
            x = x + 1
        return self.drop(_grid_sampled(x)) * 2  # line block


class _Nested(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = _Block(True)
        self.rest = torch.nn.Sequential(_Block(False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.first(x)  # line first
        return self.rest(y)  # line rest


def test_unsupported_op_in_torch_code_names_every_user_frame_of_each_call() -> None:
    """Through submodules (one inside nn.Sequential, torch's code), a scripted function, and a
    module lowered by freezing: each of the two grid_sample nodes, from the same torch line,
    is named by its own chain of the user's frames."""
    with pytest.raises(exporter.UnsupportedOperatorError) as info:
        exporter.export(torch.jit.script(_Nested().eval()), (torch.randn(1, 2, 5, 5),), io.BytesIO(), opset_version=13)
    (op,) = info.value.ops
    assert op.name == "aten::grid_sampler" and op.count == 2
    frames = [[frame.split(" (", 1)[0].rsplit("/", 1)[-1] for frame in loc.split(" -> ")] for loc in op.locations]
    here = "test_errors.py:"
    inner = [here + str(_line("# line block")), here + str(_line("# line helper"))]
    assert [f[:-1] for f in frames] == [
        [here + str(_line("# line first")), *inner],
        [here + str(_line("# line rest")), *inner],
    ]
    assert all(loc.split(" -> ")[-1].startswith("torch/nn/functional.py:") for loc in op.locations)
    assert "(in grid_sample)" in op.locations[0]


def test_traced_model_calling_a_scripted_function_names_the_functions_line() -> None:
    class Traced(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return _grid_sampled(x) - 1

    with pytest.raises(exporter.UnsupportedOperatorError) as info:
        exporter.export(Traced(), (torch.randn(1, 2, 5, 5),), io.BytesIO(), opset_version=13)
    assert f"test_errors.py:{_line('# line helper')} (return torch.nn.functional.grid_sample(" in str(info.value)


class _Antialiased(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=True)  # line aa


def test_substituted_interpolate_keeps_the_users_line() -> None:
    # antialiased resampling needs the spatial sizes at export time (its matrices are constants)
    with pytest.raises(exporter.SymbolicError, match="antialias") as info:
        exporter.export(
            torch.jit.script(_Antialiased()),
            (torch.randn(1, 2, 8, 8),),
            io.BytesIO(),
            opset_version=13,
            input_names=["x"],
            dynamic_axes={"x": {2: "height"}},
        )
    assert f"test_errors.py:{_line('# line aa')}" in str(info.value)


class _MaybeSampled(torch.nn.Module):
    def __init__(self, sample: bool) -> None:
        super().__init__()
        self.sample = sample

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.sample:
            x = torch.nn.functional.grid_sample(x, x[:, :2].permute(0, 2, 3, 1))  # line maybe
        return x * 2


class _TwoMaybe(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = _MaybeSampled(True)
        self.b = _MaybeSampled(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.a(x)  # line maybe a
        return self.b(y)  # line maybe b


def test_a_call_site_that_freezing_makes_ambiguous_names_every_candidate() -> None:
    """Freezing drops b's grid_sample (its branch is decided by the attribute): the node left
    cannot be told apart by its source range, so both user chains are named."""
    with pytest.raises(exporter.UnsupportedOperatorError) as info:
        exporter.export(
            torch.jit.script(_TwoMaybe().eval()), (torch.randn(1, 2, 5, 5),), io.BytesIO(), opset_version=13
        )
    ((location,),) = [op.locations for op in info.value.ops]
    first, second = location.split(" or ")
    assert (
        f"test_errors.py:{_line('# line maybe a')}" in first and f"test_errors.py:{_line('# line maybe b')}" in second
    )
    assert all(f"test_errors.py:{_line('# line maybe')} (" in part for part in (first, second))


# -- errors and warnings of the passes name the user's call sites too ------------------------


@torch.jit.script
def _relu_of_strided(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.relu(x.as_strided((2, 2), (1, 2)), inplace=True)  # line strided


class _DiagonalInPlace(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _relu_of_strided(x) + 1  # line call


def test_remove_inplace_error_in_torch_code_names_the_users_call_chain() -> None:
    """F.relu(..., inplace=True)'s relu_ is torch's line; remove_inplace cannot write back through
    an as_strided view. The error names the in-place op by the user's call chain (forward, the
    scripted helper, then torch's line in relu), as emission errors do, the view by its line, and
    what to write instead."""
    with pytest.raises(exporter.ExporterError) as info:
        exporter.export(torch.jit.script(_DiagonalInPlace()), (torch.randn(3, 3),), io.BytesIO(), opset_version=17)
    message = str(info.value)
    here = "test_errors.py:"
    call, strided = here + str(_line("# line call")), here + str(_line("# line strided"))
    chain = message.split(" writes through ")[0]
    assert chain.startswith("aten::relu_ at ")
    assert [frame.split(" (", 1)[0].rsplit("/", 1)[-1] for frame in chain.split(" -> ")][:2] == [call, strided]
    assert " -> torch/nn/functional.py:" in chain and chain.endswith("(in relu)")
    assert f"writes through aten::as_strided at {__file__}:{_line('# line strided')} (" in message
    assert "write through slice, select, diagonal or view of the tensor instead" in message


class _HardtanhInPlace(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardtanh(x, inplace=True) * 2  # line hardtanh


def test_remove_inplace_warning_names_the_write_by_the_users_call_chain() -> None:
    with pytest.warns(UserWarning, match="writes in place into its input") as record:
        exporter.export(torch.jit.script(_HardtanhInPlace()), (torch.randn(3, 3),), io.BytesIO(), opset_version=17)
    (message,) = [str(w.message) for w in record if "writes in place" in str(w.message)]
    assert f"'x' at {__file__}:{_line('# line hardtanh')} (" in message
    assert "-> torch/nn/functional.py:" in message and "(in hardtanh)" in message


class DiffersWhenTraced(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        heads = 2 if torch.jit.is_tracing() else 4
        return x.view(x.shape[0], 4, -1) + torch.ones(heads, 1)  # the line the error names


class AlwaysFails(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ torch.ones(5, 2)


def test_forward_failing_only_while_traced_names_the_line_and_the_cause() -> None:
    model, x = DiffersWhenTraced(), torch.randn(3, 8)
    model(x)  # runs eagerly
    with pytest.raises(TracingError) as info:
        exporter.export(model, (x,), io.BytesIO())
    message = str(info.value)
    line = DiffersWhenTraced.forward.__code__.co_firstlineno + 2
    assert re.search(rf"test_errors\.py:{line} \(in forward\): RuntimeError: The size of tensor", message)
    assert "run eagerly" in message and "torch.jit.is_tracing()" in message
    assert isinstance(info.value.__cause__, RuntimeError)


def test_forward_failing_eagerly_says_so() -> None:
    with pytest.raises(TracingError, match=r"(?s)test_errors\.py:\d+ \(in forward\).*when run eagerly"):
        exporter.export(AlwaysFails(), (torch.randn(3, 4),), io.BytesIO())


def test_run_time_value_for_a_constant_argument_says_what_would_work() -> None:
    @torch.jit.script
    def swapped(x: torch.Tensor, n: int) -> torch.Tensor:
        return x.transpose(n, 0)  # ONNX Transpose takes its permutation as an attribute

    with pytest.raises(SymbolicError) as info:
        exporter.export(swapped, (torch.randn(4, 3), 1), io.BytesIO(), opset_version=17)
    message = str(info.value)
    assert "aten::transpose" in message and "argument 'dim0'" in message
    assert "test_errors.py:" in info.value.location
    assert "make it a Python constant in the model" in message


class NestedToList(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows: list[list[list[float]]] = x.tolist()
        return torch.tensor(rows[0])


def test_a_node_without_a_source_range_is_located_by_its_user() -> None:
    """prim::tolist carries no source range of its own; the error names the line using it
    (tolist of a 3-d tensor is not supported)."""
    with pytest.raises(exporter.ExporterError, match=r"prim::tolist .*test_errors.py:\d+ \(return"):
        exporter.export(
            torch.jit.script(NestedToList()),
            (torch.randn(2, 3, 2),),
            io.BytesIO(),
            input_names=["x"],
            dynamic_axes={"x": {0: "n"}},
        )


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
    assert "test_errors.py" in message


@torch.jit.ignore
def python_helper(x):  # noqa: ANN001, ANN201 - TorchScript reads unannotated as Tensor
    return x * 3


class CallsPython(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return python_helper(x) + 1


def test_call_to_python_function_fails_naming_it() -> None:
    with pytest.raises(exporter.UnsupportedOperatorError, match=r"prim::PythonOp.*test_errors.py"):
        exporter.export(torch.jit.script(CallsPython()), (torch.randn(2),), io.BytesIO())
