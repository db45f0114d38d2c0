"""Scripted modules that write their attributes in forward (``self.count += 1``,
``self.hidden = out``): the writes become plain values, and the exported model computes one
call from the module's state at export time."""

from __future__ import annotations

import copy

import pytest
import torch
from conftest import CONTROL_FLOW_SEQUENCE_OPSETS, SEQUENCE_OPSETS, assert_matches_torch, dynamic_inputs

from exporter.capture.lowering import lower_script_module


class Counter(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.count = 3
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.count += 1
        self.calls = self.calls + 1
        return x * self.count + self.calls


class WordLanguageModel(torch.nn.Module):
    """The word language model keeps its RNN's hidden state across calls."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = torch.nn.Embedding(20, 8)
        self.rnn = torch.nn.GRU(8, 8)
        self.decoder = torch.nn.Linear(8, 20)
        self.hidden = torch.randn(1, 2, 8)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, hidden = self.rnn(self.encoder(tokens), self.hidden)
        self.hidden = hidden
        return self.decoder(out) + self.hidden.sum()


class ConvWeightReplaced(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.conv.weight = self.conv.weight * 0.5
        return self.conv(x) + self.conv.weight.sum()


class BiasInLoop(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self._bias = torch.nn.Parameter(torch.randn(4))

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        y = x
        for i in range(n):
            self._bias = self._bias + x * i
            if i % 2 == 0:
                y = y + self._bias
        return y * self._bias


class WrittenInIf(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.window_length = 2
        self.scale = torch.ones(4)

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        if x.sum() > 0:
            self.window_length = n
            self.scale = self.scale * 2
        return x[: self.window_length] * self.scale[: self.window_length]


class LSTMHidden(torch.nn.Module):
    """The word language model's LSTM variant: the hidden state is a tuple attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn = torch.nn.LSTM(4, 4)
        self.hidden = (torch.randn(1, 2, 4), torch.randn(1, 2, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, hidden = self.rnn(x, self.hidden)
        self.hidden = hidden
        return out + self.hidden[1].sum()


class Step(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.steps = 0
        self.flag = True
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.steps += 2
        if self.flag:
            x = x + 1
        return self.lin(x) * self.steps


class Steps(torch.nn.Module):
    """Submodules in a ModuleList write their own attributes; read-only non-tensor
    attributes (a bool, a str) sit beside them."""

    def __init__(self) -> None:
        super().__init__()
        self.steps = torch.nn.ModuleList([Step(), Step()])
        self.mode = "double"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for step in self.steps:
            x = step(x)
        if self.mode == "double":
            x = x * 2
        return x


def _fresh(module: torch.nn.Module) -> torch.jit.ScriptModule:
    return torch.jit.script(copy.deepcopy(module))


def _check(module: torch.nn.Module, args: tuple, opset: int) -> None:
    """Export a fresh scripted copy and compare with another fresh copy in eager."""
    scripted = _fresh(module)
    onnx_model = assert_matches_torch(copy.deepcopy(scripted), args, opset=opset)
    assert onnx_model is not None


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_counter(opset: int) -> None:
    _check(Counter(), (torch.randn(2, 3),), opset)


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_word_language_model_hidden_state(opset: int) -> None:
    _check(WordLanguageModel().eval(), (torch.randint(0, 20, (5, 2)),), opset)


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_lstm_tuple_hidden_state(opset: int) -> None:
    _check(LSTMHidden(), (torch.randn(3, 2, 4),), opset)


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_submodule_attributes_in_module_list(opset: int) -> None:
    _check(Steps(), (torch.randn(3, 4),), opset)


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_conv_weight_replaced(opset: int) -> None:
    _check(ConvWeightReplaced(), (torch.randn(1, 2, 6, 6),), opset)


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_attribute_updated_in_loop(opset: int) -> None:
    _check(BiasInLoop(), (torch.randn(4), 5), opset)


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_attribute_written_in_if(opset: int, sign: float) -> None:
    _check(WrittenInIf(), (torch.rand(4) * sign, 3), opset)


class ScaleWithoutGrad(torch.nn.Module):
    """An attribute written inside ``with torch.no_grad():``: the with statement makes a
    no_grad object (entered and exited, with an attribute of its own) that is no module value."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = torch.full((3,), 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            self.scale = self.scale * 2 + x.mean()
        return x * self.scale


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_attribute_written_under_no_grad(opset: int) -> None:
    _check(ScaleWithoutGrad(), (torch.randn(3),), opset)


class NoGradInBranch(torch.nn.Module):
    """An attribute written in an if whose branch also makes a no_grad object (RetinaNet's
    scripted forward): the object has no attribute path and no written attribute of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.offset = torch.zeros(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool(x.sum() > 0):
            with torch.no_grad():
                shifted = x + 1
            self.offset = shifted
        return x + self.offset


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_attribute_written_in_a_branch_with_no_grad(opset: int, sign: float) -> None:
    _check(NoGradInBranch(), (torch.rand(3) * sign,), opset)


def test_export_leaves_module_state() -> None:
    """Exporting runs the model once on a copy: the module's own state is unchanged."""
    scripted = _fresh(Counter())
    assert_matches_torch(scripted, (torch.randn(2, 3),), opset=17)
    assert scripted.count == 4  # the eager reference call only
    assert float(scripted.calls) == 1.0


def test_lowered_graph_has_no_module_values() -> None:
    graph, _ = lower_script_module(_fresh(BiasInLoop()))
    kinds = {n.kind() for n in graph.findAllNodes("prim::SetAttr", True) + graph.findAllNodes("prim::GetAttr", True)}
    assert not kinds
    (loop,) = graph.findAllNodes("prim::Loop")
    assert len(list(loop.outputs())) == 2  # y and self._bias


class RunningNormalizer(torch.nn.Module):
    """State kept in buffers updated in forward: a step counter and an exponential moving mean
    and variance (``mul_``/``add_``/``copy_`` on buffers), used to normalize the same call's input."""

    def __init__(self, dim: int = 3, momentum: float = 0.1) -> None:
        super().__init__()
        self.momentum = momentum
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("var", torch.ones(dim))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.steps += 1
        self.mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(0))
        self.var.copy_((1 - self.momentum) * self.var + self.momentum * x.var(0, unbiased=False))
        return (x - self.mean) / torch.sqrt(self.var + 1e-5), self.steps.clone()


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_buffers_updated_in_forward(opset: int) -> None:
    """Each input set starts from a fresh copy: eager calls advance the buffers, the exported
    graph starts from the exported buffer values every time."""
    module = RunningNormalizer()
    module.mean.fill_(0.3)
    for x in (torch.randn(4, 3), torch.randn(1, 3), torch.randn(9, 3)):
        model = torch.jit.script(copy.deepcopy(module))
        assert_matches_torch(model, (x,), opset=opset, other_inputs=[], **dynamic_inputs(x={0: "n"}))
