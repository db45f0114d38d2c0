"""Recurrent layers, cells and packed sequences, crossed with the opsets where a helper changes.

Each case builds a module (nn.LSTM/GRU/RNN traced, or scripted cell calls), exports it, runs
it in onnxruntime and compares every output (sequence output and final states) with eager
torch at every opset where its lowering changes (tests/cases.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

import onnx
import pytest
import torch
import torch.nn as nn
from cases import Case, helper_params, lowering_opsets, op_params, run_case
from conftest import NEWEST, assert_matches_torch, export_to_bytes
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

import exporter

Inputs = tuple[torch.Tensor, ...]


@pytest.fixture(autouse=True, scope="module")
def _one_thread() -> Iterator[None]:
    """torch's CPU RNN kernels take ~60 ms per call with two threads on a busy machine and
    under 1 ms with one; eager references of these tiny layers need no parallelism."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


class Layer(nn.Module):
    """Runs a recurrent layer with optional initial states passed as graph inputs."""

    def __init__(self, layer: nn.Module) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: torch.Tensor, *states: torch.Tensor) -> object:
        if not states:
            return self.layer(x)
        if isinstance(self.layer, nn.LSTM):
            return self.layer(x, (states[0], states[1]))
        return self.layer(x, states[0])


class Wrap(nn.Module):
    def __init__(self, fn: Callable[..., object]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> object:
        return self.fn(*args)


def lstm_weights_as_inputs(x: torch.Tensor, h: torch.Tensor, c: torch.Tensor, *weights: torch.Tensor) -> object:
    """Bidirectional LSTM whose weights are graph inputs (gate reordering done by ONNX ops)."""
    return torch.lstm(x, (h, c), list(weights), True, 1, 0.0, False, True, False)


def gru_weights_as_inputs(x: torch.Tensor, h: torch.Tensor, *weights: torch.Tensor) -> object:
    """Two-layer batch-first GRU without biases whose weights are computed in the graph."""
    return torch.gru(x, h, [w.float() * 1 for w in weights], False, 2, 0.0, False, False, True)


def lstm_weight_inputs() -> Inputs:
    weights = []
    for _ in range(2):
        weights += [torch.randn(16, 3), torch.randn(16, 4), torch.randn(16), torch.randn(16)]
    return (torch.randn(5, 2, 3), torch.randn(2, 2, 4), torch.randn(2, 2, 4), *weights)


def gru_weight_inputs() -> Inputs:
    weights = [torch.randn(12, 3), torch.randn(12, 4), torch.randn(12, 4), torch.randn(12, 4)]
    return (torch.randn(2, 5, 3), torch.randn(2, 2, 4), *(w.half() for w in weights))


class ScriptedLayers(nn.Module):
    """nn.LSTM/GRU/RNN and nn.LSTMCell/GRUCell called from scripted code."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = nn.GRU(8, 3)
        self.rnn = nn.RNN(3, 2, nonlinearity="relu")
        self.lstm_cell = nn.LSTMCell(3, 4)
        self.gru_cell = nn.GRUCell(3, 4)

    def forward(
        self, x: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        y, (h, c) = self.lstm(x)
        z, hz = self.gru(y)
        r, _ = self.rnn(z)
        step = x[:, 0]
        hc, cc = self.lstm_cell(step)
        return r, h, c, hz, hc, cc, self.gru_cell(step, hc)


@functools.cache
def _scripted_layers() -> torch.jit.ScriptModule:
    """Scripting takes about a second; one module serves every opset."""
    return torch.jit.script(ScriptedLayers())


class Stack(nn.Module):
    """LSTM -> bidirectional GRU -> relu RNN, every output and state returned."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(3, 4, num_layers=2)
        self.gru = nn.GRU(4, 3, bidirectional=True)
        self.rnn = nn.RNN(6, 2, nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> object:
        y1, states = self.lstm(x)
        y2, h2 = self.gru(y1)
        y3, h3 = self.rnn(y2)
        return y3, states, h2, h3


class Packed(nn.Module):
    """pack_padded_sequence -> layer -> pad_packed_sequence, optionally touching the packed
    data in between (so the packed layout itself is exercised, not only the shortcut)."""

    def __init__(
        self,
        layer: nn.Module,
        *,
        batch_first: bool = False,
        touch: bool = False,
        total_length: int | None = None,
        padding_value: float = 0.0,
        enforce_sorted: bool = True,
    ) -> None:
        super().__init__()
        self.layer = layer
        self.batch_first = batch_first
        self.touch = touch
        self.total_length = total_length
        self.padding_value = padding_value
        self.enforce_sorted = enforce_sorted

    def forward(self, x: torch.Tensor, lengths: torch.Tensor, *states: torch.Tensor) -> object:
        packed = pack_padded_sequence(x, lengths, batch_first=self.batch_first, enforce_sorted=self.enforce_sorted)
        if self.touch:
            packed = PackedSequence(packed.data * 2, packed.batch_sizes)
        if not states:
            out, final = self.layer(packed)
        elif isinstance(self.layer, nn.LSTM):
            out, final = self.layer(packed, (states[0], states[1]))
        else:
            out, final = self.layer(packed, states[0])
        if self.touch:
            out = PackedSequence(out.data + 1, out.batch_sizes)
        padded, out_lengths = pad_packed_sequence(
            out, batch_first=self.batch_first, padding_value=self.padding_value, total_length=self.total_length
        )
        return padded, out_lengths, final


class PackPad(nn.Module):
    """pack then pad with nothing in between: positions past each length become padding."""

    def __init__(self, *, touch: bool, total_length: int | None, padding_value: float, batch_first: bool) -> None:
        super().__init__()
        self.touch = touch
        self.total_length = total_length
        self.padding_value = padding_value
        self.batch_first = batch_first

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> object:
        packed = pack_padded_sequence(x, lengths, batch_first=self.batch_first)
        if self.touch:
            packed = PackedSequence(packed.data - 3, packed.batch_sizes)
        return pad_packed_sequence(
            packed, batch_first=self.batch_first, padding_value=self.padding_value, total_length=self.total_length
        )


class PackedData(nn.Module):
    """Returns PackedSequence.data and batch_sizes themselves (torch's packed layout)."""

    def __init__(self, layer: nn.Module | None) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> object:
        packed = pack_padded_sequence(x, lengths)
        if self.layer is None:
            return packed.data, packed.batch_sizes
        out, final = self.layer(packed)
        return out.data, final


class CellModule(nn.Module):
    """Holds one cell's weights (``gates`` blocks of hidden size 4, input size 3)."""

    def __init__(self, gates: int) -> None:
        super().__init__()
        self.w_ih = nn.Parameter(torch.randn(gates * 4, 3))
        self.w_hh = nn.Parameter(torch.randn(gates * 4, 4))
        self.b_ih = nn.Parameter(torch.randn(gates * 4))
        self.b_hh = nn.Parameter(torch.randn(gates * 4))


class Cells(nn.Module):
    """Scripted module calling every aten cell op with constant weights (initializers, so
    the export-time gate reordering is exercised), with and without biases."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = CellModule(4)
        self.gru = CellModule(3)
        self.rnn = CellModule(1)

    def forward(
        self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor
    ) -> tuple[
        torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor
    ]:
        lstm = torch.lstm_cell(x, [h, c], self.lstm.w_ih, self.lstm.w_hh, self.lstm.b_ih, self.lstm.b_hh)
        lstm_no_bias = torch.lstm_cell(x, [h, c], self.lstm.w_ih, self.lstm.w_hh)
        return (
            lstm[0],
            lstm[1],
            lstm_no_bias[0],
            lstm_no_bias[1],
            torch.gru_cell(x, h, self.gru.w_ih, self.gru.w_hh, self.gru.b_ih, self.gru.b_hh),
            torch.gru_cell(x, c, self.gru.w_ih, self.gru.w_hh),
            torch.rnn_tanh_cell(x, h, self.rnn.w_ih, self.rnn.w_hh, self.rnn.b_ih, self.rnn.b_hh),
            torch.rnn_relu_cell(x, c, self.rnn.w_ih, self.rnn.w_hh, self.rnn.b_ih, None),
        )


@torch.jit.script
def lstm_cell_fn(
    x: torch.Tensor,
    h: torch.Tensor,
    c: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    out = torch.lstm_cell(x, [h, c], w_ih, w_hh, b_ih, b_hh)
    one_bias = torch.lstm_cell(x, [h, c], w_ih, w_hh, None, b_hh)
    return out[0], out[1], one_bias[0], one_bias[1]


@torch.jit.script
def small_cells_fn(
    x: torch.Tensor, h: torch.Tensor, w_ih: torch.Tensor, w_hh: torch.Tensor, b_ih: torch.Tensor, b_hh: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh),
        torch.rnn_tanh_cell(x, h, w_ih[:4], w_hh[:4], b_ih[:4], b_hh[:4]),
        torch.rnn_relu_cell(x, h, w_ih[4:8], w_hh[4:8]),
    )


def seq(
    steps: int, batch: int, features: int, *states: tuple[int, ...], dtype: torch.dtype = torch.float32
) -> Callable[[], Inputs]:
    return lambda: tuple(torch.randn(*shape).to(dtype) for shape in [(steps, batch, features), *states])


def packed_inputs(
    steps: int, lengths: list[int], features: int = 3, batch_first: bool = False, *states: tuple[int, ...]
) -> Callable[[], Inputs]:
    def make() -> Inputs:
        shape = (len(lengths), steps, features) if batch_first else (steps, len(lengths), features)
        return (torch.randn(*shape), torch.tensor(lengths), *(torch.randn(*s) for s in states))

    return make


def other_lengths(
    steps: int, lengths_list: list[list[int]], features: int = 3, batch_first: bool = False, *states: tuple[int, ...]
) -> Callable[[], list[Inputs]]:
    return lambda: [packed_inputs(steps, lengths, features, batch_first, *states)() for lengths in lengths_list]


CASES = [
    # nn.LSTM
    Case("lstm", lambda: Layer(nn.LSTM(3, 4)), seq(5, 2, 3), factory=True),
    Case(
        "lstm_2layers_bidirectional",
        lambda: Layer(nn.LSTM(3, 4, num_layers=2, bidirectional=True)),
        seq(5, 2, 3),
        factory=True,
    ),
    Case(
        "lstm_initial_state",
        lambda: Layer(nn.LSTM(3, 4, num_layers=2)),
        seq(5, 2, 3, (2, 2, 4), (2, 2, 4)),
        factory=True,
    ),
    Case(
        "lstm_batch_first_bidirectional_state",
        lambda: Layer(nn.LSTM(3, 5, num_layers=2, bidirectional=True, batch_first=True)),
        seq(2, 6, 3, (4, 2, 5), (4, 2, 5)),
        factory=True,
    ),
    Case("lstm_no_bias", lambda: Layer(nn.LSTM(3, 4, bias=False, bidirectional=True)), seq(4, 3, 3), factory=True),
    Case("lstm_proj_size", lambda: Layer(nn.LSTM(3, 5, proj_size=2)), seq(4, 2, 3), factory=True),
    Case(
        "lstm_proj_size_2layers_bidirectional_state_batch_first",
        lambda: Layer(nn.LSTM(3, 5, proj_size=2, num_layers=2, bidirectional=True, batch_first=True)),
        seq(2, 4, 3, (4, 2, 2), (4, 2, 5)),
        factory=True,
    ),
    Case(
        "lstm_proj_size_no_bias",
        lambda: Layer(nn.LSTM(3, 4, proj_size=3, bias=False, bidirectional=True)),
        seq(3, 2, 3),
        factory=True,
    ),
    Case("lstm_unbatched", lambda: Layer(nn.LSTM(3, 4, num_layers=2)), lambda: (torch.randn(5, 3),), factory=True),
    Case(
        "lstm_float16",
        lambda: Layer(nn.LSTM(3, 4, bidirectional=True).half()),
        seq(5, 2, 3, dtype=torch.float16),
        atol=2e-3,
        rtol=1e-2,
        factory=True,
    ),
    Case("lstm_gru_rnn_float64", lambda: Stack().double(), seq(5, 2, 3, dtype=torch.float64), factory=True),
    Case("lstm_weights_as_inputs", lambda: Wrap(lstm_weights_as_inputs), lstm_weight_inputs, factory=True),
    Case("gru_weights_as_inputs", lambda: Wrap(gru_weights_as_inputs), gru_weight_inputs, factory=True),
    # nn.GRU
    Case(
        "gru_3layers_bidirectional",
        lambda: Layer(nn.GRU(3, 4, num_layers=3, bidirectional=True)),
        seq(5, 2, 3),
        factory=True,
    ),
    Case(
        "gru_initial_state_batch_first",
        lambda: Layer(nn.GRU(3, 4, num_layers=2, batch_first=True)),
        seq(2, 5, 3, (2, 2, 4)),
        factory=True,
    ),
    Case(
        "gru_no_bias_bidirectional_state",
        lambda: Layer(nn.GRU(3, 4, bias=False, bidirectional=True)),
        seq(5, 2, 3, (2, 2, 4)),
        factory=True,
    ),
    Case(
        "gru_float16",
        lambda: Layer(nn.GRU(3, 4).half()),
        seq(5, 2, 3, dtype=torch.float16),
        atol=2e-3,
        rtol=1e-2,
        factory=True,
    ),
    # nn.RNN
    Case(
        "rnn_tanh_2layers_bidirectional_state",
        lambda: Layer(nn.RNN(3, 4, num_layers=2, bidirectional=True)),
        seq(5, 2, 3, (4, 2, 4)),
        factory=True,
    ),
    Case("rnn_relu", lambda: Layer(nn.RNN(3, 4, nonlinearity="relu")), seq(5, 2, 3), factory=True),
    Case(
        "rnn_relu_bidirectional_batch_first_no_bias",
        lambda: Layer(
            nn.RNN(3, 4, nonlinearity="relu", bidirectional=True, batch_first=True, bias=False, num_layers=2)
        ),
        seq(2, 5, 3, (4, 2, 4)),
        factory=True,
    ),
    # packed sequences (lengths are a graph input; later runs use other lengths)
    Case(
        "packed_lstm",
        lambda: Packed(nn.LSTM(3, 4)),
        packed_inputs(6, [5, 3]),
        others=other_lengths(6, [[5, 5], [5, 1]]),
        factory=True,
    ),
    Case(
        "packed_lstm_2layers_bidirectional_state",
        lambda: Packed(nn.LSTM(3, 4, num_layers=2, bidirectional=True)),
        packed_inputs(6, [6, 4, 1], 3, False, (4, 3, 4), (4, 3, 4)),
        others=other_lengths(6, [[6, 6, 6], [6, 5, 2]], 3, False, (4, 3, 4), (4, 3, 4)),
        factory=True,
    ),
    Case(
        "packed_gru_batch_first_bidirectional",
        lambda: Packed(nn.GRU(3, 4, bidirectional=True, batch_first=True), batch_first=True),
        packed_inputs(5, [5, 2], 3, True),
        others=other_lengths(5, [[5, 5], [5, 1]], 3, True),
        factory=True,
    ),
    Case(
        "packed_rnn_relu_touched_total_length",
        lambda: Packed(
            nn.RNN(3, 4, nonlinearity="relu", num_layers=2, bidirectional=True),
            touch=True,
            total_length=8,
            padding_value=-1.5,
        ),
        packed_inputs(6, [5, 3]),
        others=other_lengths(6, [[5, 5], [5, 1]]),
        factory=True,
    ),
    Case(
        "packed_lstm_touched_batch_first",
        lambda: Packed(nn.LSTM(3, 4, bias=False, batch_first=True), touch=True, batch_first=True),
        packed_inputs(4, [4, 3, 3], 3, True),
        others=other_lengths(4, [[4, 2, 1]], 3, True),
        factory=True,
    ),
    Case(
        "packed_rnn_tanh_state",
        lambda: Packed(nn.RNN(3, 4), padding_value=2.0),
        packed_inputs(5, [5, 4, 2], 3, False, (1, 3, 4)),
        others=other_lengths(5, [[5, 2, 1]], 3, False, (1, 3, 4)),
        factory=True,
    ),
    Case(
        "packed_gru_unsorted",
        lambda: Packed(nn.GRU(3, 4), enforce_sorted=False),
        packed_inputs(5, [3, 5, 1]),
        others=other_lengths(5, [[1, 2, 5], [5, 5, 5]]),
        factory=True,
    ),
    Case(
        "packed_lstm_proj_size_bidirectional_state",
        lambda: Packed(nn.LSTM(3, 5, proj_size=2, num_layers=2, bidirectional=True)),
        packed_inputs(5, [5, 3, 1], 3, False, (4, 3, 2), (4, 3, 5)),
        others=other_lengths(5, [[5, 5, 5], [5, 2, 2]], 3, False, (4, 3, 2), (4, 3, 5)),
        factory=True,
    ),
    Case(
        "pack_pad",
        lambda: PackPad(touch=False, total_length=None, padding_value=0.0, batch_first=False),
        packed_inputs(6, [5, 2]),
        others=other_lengths(6, [[5, 5]]),
        factory=True,
    ),
    Case(
        "pack_pad_touched_batch_first_padding",
        lambda: PackPad(touch=True, total_length=7, padding_value=-2.0, batch_first=True),
        packed_inputs(6, [6, 2, 1], 2, True),
        others=other_lengths(6, [[6, 6, 6]], 2, True),
        factory=True,
    ),
    Case(
        "pack_pad_truncating_total_length",
        lambda: PackPad(touch=False, total_length=5, padding_value=1.0, batch_first=False),
        lambda: (torch.randn(7, 2, 2, 3), torch.tensor([5, 3])),
        others=lambda: [(torch.randn(7, 2, 2, 3), torch.tensor([5, 1]))],
        factory=True,
    ),
    Case(
        "pack_pad_int64_touched",
        lambda: PackPad(touch=True, total_length=None, padding_value=-1, batch_first=True),
        lambda: (torch.randint(0, 100, (3, 4)), torch.tensor([4, 2, 1])),
        others=lambda: [(torch.randint(0, 100, (3, 4)), torch.tensor([4, 4, 3]))],
        factory=True,
    ),
    Case(
        "pack_pad_bool",
        lambda: PackPad(touch=False, total_length=6, padding_value=0.0, batch_first=False),
        lambda: (torch.rand(5, 2) > 0.5, torch.tensor([5, 2])),
        factory=True,
    ),
    Case(
        "packed_lstm_float16_touched",
        lambda: Packed(nn.LSTM(3, 4).half(), touch=True, padding_value=0.5),
        lambda: (torch.randn(5, 2, 3).half(), torch.tensor([5, 3])),
        atol=2e-3,
        rtol=1e-2,
        factory=True,
    ),
    Case(
        "packed_data_layout",
        lambda: PackedData(None),
        packed_inputs(5, [5, 3, 2]),
        others=other_lengths(5, [[5, 4, 1]]),
        factory=True,
    ),
    Case(
        "packed_data_lstm_output",
        lambda: PackedData(nn.LSTM(3, 4, bidirectional=True)),
        packed_inputs(5, [5, 3, 2]),
        factory=True,
    ),
    Case(
        "packed_data_lstm_proj_output",
        lambda: PackedData(nn.LSTM(3, 5, proj_size=2, bidirectional=True)),
        packed_inputs(4, [4, 3, 2]),
        factory=True,
    ),
    # cells (they only appear in scripted code: tracing records the cell's arithmetic)
    Case(
        "lstm_cell_weights_as_inputs",
        lambda: lstm_cell_fn,
        lambda: (
            torch.randn(2, 3),
            torch.randn(2, 4),
            torch.randn(2, 4),
            torch.randn(16, 3),
            torch.randn(16, 4),
            torch.randn(16),
            torch.randn(16),
        ),
        factory=True,
    ),
    Case(
        "gru_rnn_cells_weights_as_inputs",
        lambda: small_cells_fn,
        lambda: (
            torch.randn(2, 3),
            torch.randn(2, 4),
            torch.randn(12, 3),
            torch.randn(12, 4),
            torch.randn(12),
            torch.randn(12),
        ),
        factory=True,
    ),
    Case(
        "scripted_layers_and_cells",
        lambda: _scripted_layers(),
        lambda: (torch.randn(2, 5, 3),),
        factory=True,
    ),
    Case(
        "cells_constant_weights",
        lambda: torch.jit.script(Cells()),
        lambda: (torch.randn(2, 3), torch.randn(2, 4), torch.randn(2, 4)),
        factory=True,
    ),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["lstm_2layers_bidirectional", "gru_initial_state_batch_first", "pack_pad"]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_recurrent(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def _op_types(model: object, args: Inputs, opset: int) -> list[str]:
    data, _ = export_to_bytes(model, args, opset_version=opset)
    return [node.op_type for node in onnx.load_from_string(data).graph.node]


@pytest.mark.parametrize("opset", lowering_opsets("aten::lstm", helpers=True))
def test_one_fused_node_per_layer(opset: int) -> None:
    """Each layer is one ONNX LSTM node with reordered constant weights (no weight math at
    run time), and the default zero initial state is left out."""
    ops = _op_types(Layer(nn.LSTM(3, 4, num_layers=3, bidirectional=True)), seq(5, 2, 3)(), opset)
    assert ops.count("LSTM") == 3
    assert "Slice" not in ops and "ConstantOfShape" not in ops


def test_gru_uses_linear_before_reset() -> None:
    data, _ = export_to_bytes(Layer(nn.GRU(3, 4)), seq(5, 2, 3)(), opset_version=NEWEST)
    (gru,) = [n for n in onnx.load_from_string(data).graph.node if n.op_type == "GRU"]
    assert {a.name: onnx.helper.get_attribute_value(a) for a in gru.attribute}["linear_before_reset"] == 1


def test_packed_shortcut_leaves_no_gathers() -> None:
    """pack -> LSTM -> pad feeds the padded input straight to LSTM's sequence_lens: the
    packed rows are never computed (no Compress of the input, no unpacking Gather of it)."""
    data, _ = export_to_bytes(Packed(nn.LSTM(3, 4)), packed_inputs(6, [5, 3])(), opset_version=NEWEST)
    nodes = list(onnx.load_from_string(data).graph.node)
    (lstm,) = [n for n in nodes if n.op_type == "LSTM"]
    assert lstm.input[0] == "x"
    # the one Compress left computes batch_sizes, which the traced code reads for the
    # default hidden state's batch size
    assert [n.op_type for n in nodes].count("Compress") == 1


def test_proj_size_over_dynamic_steps_is_refused() -> None:
    """proj_size is unrolled, so packed data that lost its padded source (here: touched
    between pack and LSTM) has a run-time step count and cannot be exported."""
    model = Packed(nn.LSTM(3, 4, proj_size=3), touch=True)
    with pytest.raises(exporter.SymbolicError, match="proj_size needs a static sequence length"):
        export_to_bytes(model, packed_inputs(4, [4, 2])(), opset_version=NEWEST)


def test_training_dropout_is_refused() -> None:
    model = Layer(nn.LSTM(3, 4, num_layers=2, dropout=0.5))
    with pytest.raises(exporter.SymbolicError, match="dropout"):
        export_to_bytes(model, seq(5, 2, 3)(), opset_version=NEWEST, training=True)


@pytest.mark.parametrize("opset", lowering_opsets("aten::lstm", "aten::gru"))
@pytest.mark.parametrize(
    "layer",
    [
        nn.LSTM(3, 4, num_layers=2, bidirectional=True),
        nn.GRU(3, 4, batch_first=True),
        nn.RNN(3, 4, nonlinearity="relu", bidirectional=True),
    ],
    ids=["lstm", "gru_batch_first", "rnn_relu"],
)
def test_dynamic_sequence_and_batch(layer: nn.Module, opset: int) -> None:
    """With dynamic axes the default initial state is built at run time from the batch size."""
    assert_matches_torch(
        Layer(layer),
        (torch.randn(5, 2, 3),),
        opset=opset,
        dynamic_axes={"x": {0: "a", 1: "b"}},
        other_inputs=[(torch.randn(7, 3, 3),), (torch.randn(1, 1, 3),)],
    )


@pytest.mark.parametrize(
    "opset", lowering_opsets("aten::_pack_padded_sequence", "aten::_pad_packed_sequence", "aten::lstm")
)
def test_packed_dynamic(opset: int) -> None:
    """Packed sequences with dynamic time and batch: batch_sizes and the padded length are
    read at run time (max(lengths)), so other lengths and sizes work too."""
    assert_matches_torch(
        Packed(nn.LSTM(3, 4, bidirectional=True)),
        packed_inputs(5, [5, 3])(),
        opset=opset,
        dynamic_axes={"x": {0: "t", 1: "b"}, "lengths": {0: "b"}},
        other_inputs=[packed_inputs(7, [6, 6, 2])(), packed_inputs(3, [2])()],
    )
