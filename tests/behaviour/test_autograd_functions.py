"""Custom autograd Functions (traced as prim::PythonOp): exported through their ``symbolic``
staticmethod, a symbolic registered for them by name (or for every prim::PythonOp, torch's
form), or inlined by tracing their forward when they have none. Symbolics here are written the
way torch's documentation writes them: ``g.op`` with torch's attribute suffixes. A symbolic
written against torch's exporter internals (``value.type().dtype()``, as SEW-D's ``XSoftmax``)
cannot run on this exporter's values: its forward is traced instead, with a warning. With
``autograd_inlining=False`` a Function without a symbolic is kept as one prim::PythonOp node,
refused unless ``operator_export_type=ONNX_FALLTHROUGH`` passes it through, as torch does."""

from __future__ import annotations

import io
import warnings

import onnx
import onnx_ir as ir
import pytest
import torch
from conftest import (
    BASE_OPSETS,
    assert_matches_torch,
    assert_outputs_match,
    comparable_with_torch,
    export_to_bytes,
    run_model,
)

import exporter
from exporter.errors import SymbolicError


def _op_types(model: ir.Model) -> list[str]:
    return [node.op_type for node in model.graph]


# -- Functions with a symbolic staticmethod ---------------------------------------------------


class MyClip(torch.autograd.Function):
    """torch's documented example: a scalar argument becomes Clip's bound."""

    @staticmethod
    def forward(ctx, input, scalar):  # noqa: ANN001, ANN205, A002 - torch's documented signature
        ctx.save_for_backward(input)
        return input.clamp(min=scalar)

    @staticmethod
    def symbolic(g, input, scalar):  # noqa: ANN001, ANN205, A002
        if g.opset < 11:
            return g.op("Clip", input, min_f=scalar)
        return g.op("Clip", input, g.op("Constant", value_t=torch.tensor(scalar, dtype=torch.float)))


class LeakyPadTopK(torch.autograd.Function):
    """Tensors and non-tensor arguments interleaved (a float, a list, a string, an int), two
    outputs, and every attribute kind: _f, _i (one and a list), _s, _t."""

    @staticmethod
    def forward(ctx, x, slope, pads, mode, y, k):  # noqa: ANN001, ANN205
        z = torch.nn.functional.leaky_relu(x, slope) + y
        z = torch.nn.functional.pad(z, pads, mode=mode)
        values, indices = torch.topk(z, k, dim=-1)
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def symbolic(g, x, slope, pads, mode, y, k):  # noqa: ANN001, ANN205
        z = g.op("Add", g.op("LeakyRelu", x, alpha_f=slope), y)
        onnx_pads = [0, 0, pads[0], 0, 0, pads[1]]  # a 3-d input, torch pads the last dim: (left, right)
        if g.opset < 11:
            z = g.op("Pad", z, pads_i=onnx_pads, mode_s=mode)
        else:
            z = g.op("Pad", z, g.op("Constant", value_t=torch.tensor(onnx_pads)), mode_s=mode)
        if g.opset < 10:
            return g.op("TopK", z, k_i=k, axis_i=-1, outputs=2)
        return g.op("TopK", z, g.op("Constant", value_t=torch.tensor([k])), axis_i=-1, outputs=2)


class ScaleByList(torch.autograd.Function):
    """A float list attribute (``_f`` with a list, and the explicit ``_fs``) and Python numbers
    as inputs (made constants)."""

    @staticmethod
    def forward(ctx, x, scales):  # noqa: ANN001, ANN205
        return x * torch.tensor(scales) + 1.0

    @staticmethod
    def symbolic(g, x, scales):  # noqa: ANN001, ANN205
        if g.opset >= 12:
            scale = g.op("Constant", value_floats_f=[float(s) for s in scales])
            assert g.op("Constant", value_floats_fs=scales) is not None
        else:
            scale = g.op("Constant", value_t=torch.tensor(scales, dtype=torch.float))
        return g.op("Add", g.op("Mul", x, scale), torch.tensor(1.0))


class MyRelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # noqa: ANN001, ANN205
        return x.clamp(min=0)

    @staticmethod
    def symbolic(g, x):  # noqa: ANN001, ANN205
        return g.op("com.example::MyRelu", x)


class _Apply(torch.nn.Module):
    def __init__(self, fn, *extra) -> None:  # noqa: ANN001
        super().__init__()
        self.linear = torch.nn.Linear(6, 6)
        self.fn = fn
        self.extra = extra

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn.apply(self.linear(x), *self.extra)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_symbolic_staticmethod_with_scalar_argument(opset: int) -> None:
    model = assert_matches_torch(_Apply(MyClip, 0.1).eval(), (torch.randn(3, 6),), opset=opset)
    assert "Clip" in _op_types(model) and "Max" not in _op_types(model)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_symbolic_attribute_suffixes_non_tensor_arguments_and_two_outputs(opset: int) -> None:
    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            values, indices = LeakyPadTopK.apply(x, 0.2, [1, 2], "constant", y, 3)
            return values * 2, indices

    # y lifts the values above the padding's zeros: no ties for TopK's indices
    model = assert_matches_torch(Model(), (torch.randn(2, 3, 5), torch.rand(2, 3, 5) + 5), opset=opset)
    assert {"LeakyRelu", "Pad", "TopK"} <= set(_op_types(model))
    leaky = next(node for node in model.graph if node.op_type == "LeakyRelu")
    assert leaky.attributes["alpha"].type == ir.AttributeType.FLOAT
    pad = next(node for node in model.graph if node.op_type == "Pad")
    assert pad.attributes["mode"].value == "constant"


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_symbolic_float_list_attribute_and_constant_inputs(opset: int) -> None:
    model = assert_matches_torch(_Apply(ScaleByList, [1.0, 2, 3.0, 4, 5, 6]), (torch.randn(2, 6),), opset=opset)
    if opset >= 12:
        constant = next(n for n in model.graph if n.op_type == "Constant" and "value_floats" in n.attributes)
        assert constant.attributes["value_floats"].type == ir.AttributeType.FLOATS


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_symbolic_in_a_custom_domain(opset: int) -> None:
    model = _Apply(MyRelu)
    x = torch.randn(3, 6)
    _, onnx_model = export_to_bytes(model, (x,), opset_version=opset, custom_opsets={"com.example": 1})
    custom = [node for node in onnx_model.graph if node.domain == "com.example"]
    assert [node.op_type for node in custom] == ["MyRelu"]
    assert onnx_model.opset_imports["com.example"] == 1
    # give onnxruntime the op's meaning as a model-local function, then compare with torch
    inp = ir.Value(name="x")
    body = ir.Node("", "Relu", [inp], num_outputs=1)
    graph = ir.Graph([inp], body.outputs, nodes=[body], opset_imports={"": opset})
    onnx_model.functions[("com.example", "MyRelu", "")] = ir.Function(
        "com.example", "MyRelu", graph=graph, attributes=[]
    )
    with torch.no_grad():
        assert_outputs_match(run_model(onnx_model, [x]), model(x))


# -- Functions without a symbolic: inlined ----------------------------------------------------


def bloom_gelu_forward(x: torch.Tensor) -> torch.Tensor:
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


def bloom_gelu_back(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    x = x[0]
    tanh_out = torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x))
    ff = 0.5 * x * ((1 - tanh_out * tanh_out) * (0.79788456 + 0.1070322243 * x * x)) + 0.5 * (1 + tanh_out)
    return ff * g


class GeLUFunction(torch.autograd.Function):
    """BLOOM's GELU (transformers' modeling_bloom), used when training."""

    @staticmethod
    def forward(ctx, input):  # noqa: ANN001, ANN205, A002
        ctx.save_for_backward(input)
        return bloom_gelu_forward(input)

    @staticmethod
    def backward(ctx, grad_output):  # noqa: ANN001, ANN205
        input = ctx.saved_tensors  # noqa: A001
        return bloom_gelu_back(grad_output, input)


class NewStyleSquarePlus(torch.autograd.Function):
    """forward without ctx (setup_context), calling another Function without a symbolic."""

    @staticmethod
    def forward(x, beta):  # noqa: ANN001, ANN205
        return GeLUFunction.apply(x * x) + beta

    @staticmethod
    def setup_context(ctx, inputs, output):  # noqa: ANN001, ANN205
        ctx.save_for_backward(inputs[0])
        ctx.beta = inputs[1]

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001, ANN205
        raise NotImplementedError


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_bloom_gelu_without_symbolic_is_inlined(opset: int) -> None:
    model = assert_matches_torch(_Apply(GeLUFunction), (torch.randn(4, 6),), opset=opset)
    assert "Tanh" in _op_types(model)
    assert "apply" not in GeLUFunction.__dict__  # the Function is left as it was
    x = torch.randn(3, requires_grad=True)
    GeLUFunction.apply(x).sum().backward()  # its backward still runs
    torch.testing.assert_close(x.grad, bloom_gelu_back(torch.ones(3), (x.detach(),)))


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_nested_and_setup_context_functions_are_inlined(opset: int) -> None:
    model = assert_matches_torch(_Apply(NewStyleSquarePlus, 0.5), (torch.randn(4, 6),), opset=opset)
    assert "Tanh" in _op_types(model)
    assert "apply" not in NewStyleSquarePlus.__dict__ and "apply" not in GeLUFunction.__dict__


# -- symbolics registered for a Function ------------------------------------------------------


class ExpTanh(torch.autograd.Function):
    """tanh written with Exp: an inlined export has Exp nodes, a registered symbolic's has Tanh."""

    @staticmethod
    def forward(ctx, x, scale):  # noqa: ANN001, ANN205
        e = torch.exp(2 * x * scale)
        return (e - 1) / (e + 1)


def exp_tanh_symbolic(g, x, scale):  # noqa: ANN001, ANN201 - written as for torch's exporter
    return g.op("Tanh", g.op("Mul", x, g.op("Constant", value_t=torch.tensor(scale, dtype=torch.float))))


@pytest.mark.parametrize("opset", BASE_OPSETS)
@pytest.mark.parametrize("name", [f"prim::PythonOp.{__name__}.ExpTanh", "prim::PythonOp.ExpTanh"])
def test_register_custom_op_symbolic_by_qualified_name(opset: int, name: str) -> None:
    exporter.register_custom_op_symbolic(name, exp_tanh_symbolic, 9)
    try:
        model = assert_matches_torch(_Apply(ExpTanh, 0.7), (torch.randn(4, 6),), opset=opset)
    finally:
        exporter.unregister_custom_op_symbolic(name, 9)
    assert "Tanh" in _op_types(model) and "Exp" not in _op_types(model)
    # without the registration it is inlined
    model = assert_matches_torch(_Apply(ExpTanh, 0.7), (torch.randn(4, 6),), opset=opset)
    assert "Exp" in _op_types(model)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_register_custom_op_symbolic_for_every_python_op_as_torch_does(opset: int) -> None:
    seen = []

    def symbolic_python_op(g, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - torch's documented form
        seen.append((kwargs["name"], kwargs["module"]))
        if kwargs["name"] == "ExpTanh":
            return exp_tanh_symbolic(g, *args)
        raise AssertionError(f"unexpected {kwargs['name']}")

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return MyClip.apply(ExpTanh.apply(x, 0.5), 0.0)  # MyClip's own symbolic wins, as in torch

    exporter.register_custom_op_symbolic("prim::PythonOp", symbolic_python_op, 9)
    try:
        model = assert_matches_torch(Model(), (torch.randn(4, 6),), opset=opset)
    finally:
        exporter.unregister_custom_op_symbolic("prim::PythonOp", 9)
    assert seen == [("ExpTanh", __name__)]
    assert {"Tanh", "Clip"} <= set(_op_types(model)) and "Exp" not in _op_types(model)


def test_invalid_function_names_are_refused() -> None:
    with pytest.raises(ValueError, match="prim::PythonOp.<module>.<QualifiedName>"):
        exporter.register_custom_op_symbolic("prim::PythonOp.", exp_tanh_symbolic, 9)


# -- errors ------------------------------------------------------------------------------------


class BadSymbolic(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # noqa: ANN001, ANN205
        return torch.relu(x)

    @staticmethod
    def symbolic(g, x):  # noqa: ANN001, ANN205
        return g.op("LeakyRelu", x, alpha=0.1)  # no type suffix


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_failing_symbolic_names_the_function_and_the_source_line(opset: int) -> None:
    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return BadSymbolic.apply(x) + 1  # the line the error names

    with pytest.raises(exporter.SymbolicError) as info:
        export_to_bytes(Model(), (torch.randn(3),), opset_version=opset)
    message = str(info.value)
    assert f"{__name__}.BadSymbolic" in message
    assert "invalid attribute specifier 'alpha'" in message
    assert "test_autograd_functions.py:" in message and "torch/autograd" not in message
    assert f"test_autograd_functions.py:{Model.forward.__code__.co_firstlineno + 1} " in info.value.location


# -- Functions exported from the graph their forward recorded ------------------------------------


class ReturnsInAnotherOrder(torch.autograd.Function):
    """Returns its results in the reverse of the order it computes them: the trace records the
    forward's results in the order they were computed (torch's own exporter swaps them)."""

    @staticmethod
    def forward(ctx, x, y):  # noqa: ANN001, ANN205
        doubled = x * 2  # computed first, returned second
        summed = y.sum(0)
        return summed, doubled


class ReturnsTwoOfOneType(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k):  # noqa: ANN001, ANN205
        return q.sin() * 2, k.cos() + 1


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_outputs_are_matched_to_what_forward_returns(opset: int) -> None:
    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            summed, doubled = ReturnsInAnotherOrder.apply(x, y)
            return doubled - summed

    assert_matches_torch(Model(), (torch.randn(3, 4), torch.randn(5, 4)), opset=opset)


def test_outputs_of_one_type_are_taken_in_the_order_they_were_computed_with_a_warning() -> None:
    class Model(torch.nn.Module):
        def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
            q2, k2 = ReturnsTwoOfOneType.apply(q, k)
            return q2 - k2

    with pytest.warns(UserWarning, match="ReturnsTwoOfOneType .*returns several tensors of one type"):
        assert_matches_torch(Model(), (torch.randn(3, 4), torch.randn(3, 4)), opset=17)


class Aliases(torch.autograd.Function):
    """Op aliases the tracer normalizes in the model's graph but not in a Function's."""

    @staticmethod
    def forward(ctx, x):  # noqa: ANN001, ANN205
        return torch.clip(torch.absolute(x), 0.1, 0.9) + torch.negative(1 - x)


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_op_aliases_in_a_forward_export(opset: int) -> None:
    model = assert_matches_torch(_Apply(Aliases), (torch.randn(4, 6),), opset=opset)
    assert "Abs" in _op_types(model)


class AddOneInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # noqa: ANN001, ANN205
        ctx.mark_dirty(x)
        return x.add_(1)


def test_a_forward_writing_into_its_input_writes_once() -> None:
    """The trace records the write in the model's graph as well as in the Function's: the
    value outside sees it once, and the Function's input is no model input to warn about."""

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(6, 6)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            hidden = self.linear(x)
            out = AddOneInPlace.apply(hidden)
            return out + hidden * 2

    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*writes in place into its input")
        assert_matches_torch(Model().eval(), (torch.randn(3, 6),), opset=17)


class OuterWithClip(torch.autograd.Function):
    """No symbolic of its own; calls a Function that has one."""

    @staticmethod
    def forward(ctx, x):  # noqa: ANN001, ANN205
        return MyClip.apply(x * 3, 0.5) - 1


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_a_function_called_by_a_function_keeps_its_symbolic(opset: int) -> None:
    model = assert_matches_torch(_Apply(OuterWithClip), (torch.randn(4, 6),), opset=opset)
    assert "Clip" in _op_types(model)


class PartialTorchStyleSymbolic(torch.autograd.Function):
    """Its symbolic builds nodes, then fails on torch._C.Value's API."""

    @staticmethod
    def forward(ctx, x):  # noqa: ANN001, ANN205
        return torch.relu(x) * 2

    @staticmethod
    def symbolic(g, x):  # noqa: ANN001, ANN205
        g.op("Neg", g.op("Exp", x))
        g.op("Constant", value_t=torch.ones(300))  # an initializer-sized constant
        return g.op("Mul", g.op("Relu", x), torch.tensor(x.type().dtype()))  # fails: torch._C.Value only


class WithoutSymbolic(torch.autograd.Function):
    forward = PartialTorchStyleSymbolic.forward


def test_a_failed_symbolic_leaves_nothing_behind() -> None:
    """The model exported after the Function's own symbolic failed is, byte for byte, the one
    exported for the same forward without a symbolic."""

    def model_of(function: type) -> torch.nn.Module:
        torch.manual_seed(0)
        return _Apply(function).eval()

    x = torch.randn(3, 6)
    with pytest.warns(UserWarning, match="PartialTorchStyleSymbolic .*symbolic staticmethod failed.*forward"):
        failed, onnx_model = export_to_bytes(model_of(PartialTorchStyleSymbolic), (x,), opset_version=17)
    plain, _ = export_to_bytes(model_of(WithoutSymbolic), (x,), opset_version=17)
    assert failed == plain
    assert "Exp" not in _op_types(onnx_model) and "Neg" not in _op_types(onnx_model)


def test_a_function_whose_result_is_unused_is_not_exported() -> None:
    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            ExpTanh.apply(x, 0.5)
            return x + 1

    model = assert_matches_torch(Model(), (torch.randn(4, 6),), opset=17)
    assert "Exp" not in _op_types(model) and "Tanh" not in _op_types(model)


class Unsupported(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # noqa: ANN001, ANN205
        return torch.nn.functional.grid_sample(x, x[..., :2].permute(0, 2, 3, 1)[:, :, :, :2], align_corners=False)


def test_an_op_without_symbolic_in_a_forward_is_reported_before_emission() -> None:
    with pytest.raises(exporter.UnsupportedOperatorError, match="aten::grid_sampler"):
        export_to_bytes(_ApplyAny(Unsupported), (torch.randn(1, 2, 4, 4),), opset_version=13)


class _ApplyAny(torch.nn.Module):
    def __init__(self, fn) -> None:  # noqa: ANN001
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn.apply(x)


def test_functions_in_a_meta_trace_export_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The graphs Functions record while traced on meta tensors are retyped as the model's."""
    from exporter.capture import meta_trace

    def export(mode: str) -> tuple[bytes, str]:
        monkeypatch.setattr(meta_trace, "MODE", mode)
        torch.manual_seed(0)
        model = _Apply(NewStyleSquarePlus, 0.5).eval()
        buffer = io.BytesIO()
        report = exporter.export(model, (torch.randn(4, 6),), buffer, opset_version=17, report=True)
        return buffer.getvalue(), report.capture

    real, real_capture = export("real")
    meta, meta_capture = export("meta")
    assert (real_capture, meta_capture) == ("trace", "meta trace")
    assert real == meta


# -- a Function's symbolic written against torch's exporter internals (SEW-D's XSoftmax) -------


class TorchStyleMaskedSoftmax(torch.autograd.Function):
    """SEW-D's XSoftmax in small: the symbolic reads ``self.type().dtype()`` (torch._C.Value's
    API), which this exporter's values do not have."""

    @staticmethod
    def forward(ctx, x, mask, dim):  # noqa: ANN001, ANN205
        blocked = ~mask.bool()
        out = torch.softmax(x.masked_fill(blocked, torch.finfo(x.dtype).min), dim)
        return out.masked_fill(blocked, 0.0)

    @staticmethod
    def symbolic(g, x, mask, dim):  # noqa: ANN001, ANN205
        lowest = torch.tensor(torch.finfo(x.type().dtype()).min)  # torch._C.Value only
        return g.op("Softmax", g.op("Where", mask, x, lowest), axis_i=dim)


class MaskedAttention(torch.nn.Module):
    def forward(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return TorchStyleMaskedSoftmax.apply(scores, mask, -1) * 2


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_torch_style_function_symbolic_falls_back_to_its_forward(opset: int) -> None:
    scores = torch.randn(2, 3, 4, 4)
    mask = torch.ones(2, 1, 1, 4, dtype=torch.long)
    mask[1, ..., :2] = 0
    with pytest.warns(UserWarning, match=r"TorchStyleMaskedSoftmax .*symbolic staticmethod failed.*TypeError"):
        model = assert_matches_torch(MaskedAttention(), (scores, mask), opset=opset)
    assert "Softmax" in {node.op_type for node in model.graph}


class MisusedAttribute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # noqa: ANN001, ANN205
        return torch.relu(x)

    @staticmethod
    def symbolic(g, x):  # noqa: ANN001, ANN205
        return g.op("LeakyRelu", x, alpha=0.1)  # this exporter refuses it: no type suffix


def test_symbolic_refused_by_this_exporter_is_still_an_error() -> None:
    """Only failures inside the symbolic's own (or torch's) code fall back; a request this
    exporter refuses is the symbolic's bug and is reported."""

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return MisusedAttribute.apply(x)

    with pytest.raises(SymbolicError, match="invalid attribute specifier 'alpha'"):
        exporter.export(Model(), (torch.randn(3),), io.BytesIO(), opset_version=17)


# -- autograd_inlining=False: a Function without a symbolic is kept as one node -------------------


class ScaledRelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):  # noqa: ANN001, ANN205
        return x.clamp(min=0) * k

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001, ANN205
        return grad, None


class SplitHalves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # noqa: ANN001, ANN205
        return x[..., :3] * 2, x[..., 3:] - 1

    @staticmethod
    def backward(ctx, a, b):  # noqa: ANN001, ANN205
        raise NotImplementedError


class _AroundFunction(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ScaledRelu.apply(x + 1, 3) - 1


def _torch_export(model: torch.nn.Module, args: tuple[torch.Tensor, ...], opset: int, **options: object) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # operator_export_type's deprecation warning
        torch.onnx.export(model, args, buffer, opset_version=opset, dynamo=False, **options)  # noqa: TID251 - to compare
    return buffer.getvalue()


def _fallthrough() -> object:
    return torch.onnx.OperatorExportTypes.ONNX_FALLTHROUGH  # noqa: TID251 - torch's member, accepted by name


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_inlining_is_the_default_and_exports_the_forward(opset: int) -> None:
    for inlining in (True, None):
        options = {} if inlining is None else {"autograd_inlining": inlining}
        model = assert_matches_torch(_AroundFunction(), (torch.randn(3, 6),), opset=opset, **options)
        assert "Clip" in _op_types(model) and "PythonOp" not in _op_types(model)


@pytest.mark.parametrize("export_type", ["ONNX", "ONNX_ATEN", "ONNX_ATEN_FALLBACK"])
def test_a_function_kept_as_a_unit_is_refused_naming_it(export_type: str) -> None:
    """As torch ("Couldn't export Python operator ScaledRelu"), under every type but
    ONNX_FALLTHROUGH; the error names the Function and the ways out."""
    with pytest.raises(
        exporter.UnsupportedOperatorError,
        match=r"(?s)prim::PythonOp\..*ScaledRelu .*autograd_inlining=False keeps the Function as one node",
    ):
        exporter.export(
            _AroundFunction(),
            (torch.randn(3, 6),),
            io.BytesIO(),
            autograd_inlining=False,
            operator_export_type=getattr(exporter.OperatorExportTypes, export_type),
        )


@pytest.mark.parametrize("opset", comparable_with_torch(BASE_OPSETS))
def test_a_function_kept_as_a_unit_passes_through_as_torch_writes_it(opset: int) -> None:
    """ONNX_FALLTHROUGH: one prim::PythonOp node taking the tensor inputs, with torch's
    attributes inplace and module, and the Function's name besides."""
    data, _ = export_to_bytes(
        _AroundFunction(),
        (torch.randn(3, 6),),
        opset_version=opset,
        autograd_inlining=False,
        operator_export_type=_fallthrough(),
    )
    ours = onnx.load_from_string(data)
    onnx.checker.check_model(ours, full_check=True)
    theirs = onnx.load_from_string(
        _torch_export(
            _AroundFunction(), (torch.randn(3, 6),), opset, autograd_inlining=False, operator_export_type=_fallthrough()
        )
    )
    ours_node, theirs_node = ([n for n in proto.graph.node if n.op_type == "PythonOp"] for proto in (ours, theirs))
    assert [(n.domain, len(n.input), len(n.output)) for n in ours_node] == [
        (n.domain, len(n.input), len(n.output)) for n in theirs_node
    ]
    attributes = {a.name: onnx.helper.get_attribute_value(a) for a in ours_node[0].attribute}
    theirs_attributes = {a.name: onnx.helper.get_attribute_value(a) for a in theirs_node[0].attribute}
    assert attributes == {**theirs_attributes, "name": b"ScaledRelu"}
    assert [n.op_type for n in ours.graph.node if n.op_type not in ("Constant",)] == ["Add", "PythonOp", "Sub"]


def test_a_function_of_two_results_kept_as_a_unit_has_two_outputs() -> None:
    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            a, b = SplitHalves.apply(x)
            return a * b

    _, model = export_to_bytes(
        Model(), (torch.randn(2, 6),), autograd_inlining=False, operator_export_type=_fallthrough()
    )
    (node,) = [n for n in model.graph if n.op_type == "PythonOp"]
    assert len(node.outputs) == 2 and node.domain == "prim"
    assert [o.dtype for o in node.outputs] == [ir.DataType.FLOAT] * 2
    assert [n.op_type for n in model.graph][-1] == "Mul"


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_a_function_with_a_symbolic_uses_it_whatever_the_inlining(opset: int) -> None:
    model = assert_matches_torch(_Apply(MyClip, 0.1).eval(), (torch.randn(3, 6),), opset=opset, autograd_inlining=False)
    assert "Clip" in _op_types(model) and "PythonOp" not in _op_types(model)


def test_autograd_inlining_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="autograd_inlining must be True or False"):
        exporter.export(_AroundFunction(), (torch.randn(3, 6),), io.BytesIO(), autograd_inlining="no")
