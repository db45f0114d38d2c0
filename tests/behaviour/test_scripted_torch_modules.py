"""torch.nn's own modules scripted whole, as users script them: nn.LSTM and nn.GRU (bidirectional,
stacked, packed sequences, cells stepped by hand), nn.TransformerEncoder (with a padding mask),
nn.MultiheadAttention, nn.TransformerDecoder with a causal mask and in a greedy decoding loop.
Their scripted code asks about devices, autocast and grad mode and checks masks, all decided at
export time.
"""

from __future__ import annotations

import pytest
import torch
from cases import lowering_opsets
from conftest import (
    OPTIONAL_OPSET,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    assert_matches_torch_from,
)

import exporter


class ManualLSTM(torch.nn.Module):
    """Two stacked LSTM cells stepped by hand over a run-time length, hidden state tuples in a
    list, outputs stacked; a reverse pass reading the sequence backwards."""

    def __init__(self, width: int = 6, hidden: int = 7) -> None:
        super().__init__()
        self.cells = torch.nn.ModuleList([torch.nn.LSTMCell(width, hidden), torch.nn.LSTMCell(hidden, hidden)])
        self.backward_cell = torch.nn.GRUCell(width, hidden)
        self.hidden = hidden

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        batch = x.size(1)
        states: list[tuple[torch.Tensor, torch.Tensor]] = []
        for _ in range(len(self.cells)):
            states.append((torch.zeros(batch, self.hidden), torch.zeros(batch, self.hidden)))
        outputs: list[torch.Tensor] = []
        for t in range(x.size(0)):
            inp = x[t]
            new_states: list[tuple[torch.Tensor, torch.Tensor]] = []
            for i, cell in enumerate(self.cells):
                h, c = cell(inp, states[i])
                new_states.append((h, c))
                inp = h
            states = new_states
            outputs.append(inp)
        back = torch.zeros(batch, self.hidden)
        for t in range(x.size(0) - 1, -1, -1):
            back = self.backward_cell(x[t], back)
        return torch.stack(outputs), back, states[-1]


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_manual_lstm_cells(opset: int) -> None:
    model = torch.jit.script(ManualLSTM().eval())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "t", 1: "b"}}}
    others = [(torch.randn(1, 1, 6),), (torch.randn(9, 3, 6),)]
    assert_matches_torch(model, (torch.randn(4, 2, 6),), opset=opset, other_inputs=others, **dynamic)


def _encoder() -> torch.nn.Module:
    layer = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_scripted_transformer_encoder(opset: int) -> None:
    model = torch.jit.script(_encoder())
    dynamic = {"input_names": ["src"], "dynamic_axes": {"src": {0: "b", 1: "t"}}}
    others = [(torch.randn(1, 2, 16),), (torch.randn(3, 9, 16),)]
    assert_matches_torch(
        model, (torch.randn(2, 5, 16),), opset=opset, other_inputs=others, rtol=1e-4, atol=1e-4, **dynamic
    )


class EncoderWithPadding(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = _encoder()

    def forward(self, src: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        padding = torch.arange(src.size(1))[None, :] >= lengths[:, None]
        return self.encoder(src, src_key_padding_mask=padding)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_scripted_transformer_encoder_with_padding_mask(opset: int) -> None:
    model = torch.jit.script(EncoderWithPadding().eval())
    dynamic = {"input_names": ["src", "lengths"], "dynamic_axes": {"src": {0: "b", 1: "t"}, "lengths": {0: "b"}}}
    others = [(torch.randn(1, 2, 16), torch.tensor([2])), (torch.randn(3, 9, 16), torch.tensor([9, 4, 1]))]
    assert_matches_torch(
        model,
        (torch.randn(2, 5, 16), torch.tensor([5, 3])),
        opset=opset,
        other_inputs=others,
        rtol=1e-4,
        atol=1e-4,
        **dynamic,
    )


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_scripted_multihead_attention(opset: int) -> None:
    model = torch.jit.script(torch.nn.MultiheadAttention(16, 4, batch_first=True).eval())
    dynamic = {
        "input_names": ["q", "k", "v"],
        "dynamic_axes": {"q": {0: "b", 1: "t"}, "k": {0: "b", 1: "s"}, "v": {0: "b", 1: "s"}},
    }

    def inputs(b: int, t: int, s: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        kv = torch.randn(b, s, 16)
        return torch.randn(b, t, 16), kv, kv

    others = [inputs(1, 1, 3), inputs(3, 7, 2)]
    assert_matches_torch(model, inputs(2, 4, 5), opset=opset, other_inputs=others, rtol=1e-4, atol=1e-4, **dynamic)


class Tagger(torch.nn.Module):
    """A bidirectional two-layer LSTM or GRU under a linear head, as taggers are scripted: the
    call resolves to the recurrent module's tensor overload of forward."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.rnn = getattr(torch.nn, kind)(6, 5, num_layers=2, batch_first=True, bidirectional=True)
        self.head = torch.nn.Linear(10, 3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y, state = self.rnn(x)
        return self.head(y), state[0] if isinstance(state, tuple) else state


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_scripted_recurrent_modules(opset: int, kind: str) -> None:
    model = torch.jit.script(Tagger(kind).eval())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 1: "t"}}}
    others = [(torch.randn(1, 1, 6),), (torch.randn(4, 9, 6),)]
    assert_matches_torch(model, (torch.randn(2, 5, 6),), opset=opset, other_inputs=others, **dynamic)


def test_scripted_lstm_itself() -> None:
    """A bare scripted nn.LSTM has no ``forward`` (only its overloads)."""
    model = torch.jit.script(torch.nn.LSTM(4, 3))
    with pytest.raises(exporter.ExporterError, match="forward"):
        exporter.export(model, (torch.randn(5, 2, 4),), "/tmp/unused.onnx")


class PackedTagger(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = torch.nn.LSTM(4, 5, batch_first=True)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        padded, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return padded


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_packed_lstm(opset: int) -> None:
    model = torch.jit.script(PackedTagger().eval())
    dynamic = {"input_names": ["x", "lengths"], "dynamic_axes": {"x": {0: "b", 1: "t"}, "lengths": {0: "b"}}}
    others = [(torch.randn(3, 6, 4), torch.tensor([6, 2, 4]))]
    assert_matches_torch(
        model, (torch.randn(2, 5, 4), torch.tensor([3, 5])), opset=opset, other_inputs=others, **dynamic
    )


class TransformerGreedy(torch.nn.Module):
    """Greedy decoding with a scripted nn.TransformerDecoder: the target grows by one token
    per step (a loop-carried tensor whose length changes), with a causal mask rebuilt each step."""

    def __init__(self, vocab: int = 11, width: int = 16, bos: int = 1, eos: int = 2, max_len: int = 6) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        layer = torch.nn.TransformerDecoderLayer(width, 4, 32, dropout=0.0, batch_first=True)
        self.decoder = torch.nn.TransformerDecoder(layer, 2)
        self.out = torch.nn.Linear(width, vocab)
        self.bos = bos
        self.eos = eos
        self.max_len = max_len

    def forward(self, memory: torch.Tensor) -> torch.Tensor:
        tokens = torch.full((memory.size(0), 1), self.bos, dtype=torch.long)
        for _ in range(self.max_len):
            steps = tokens.size(1)
            mask = torch.triu(torch.full((steps, steps), float("-inf")), diagonal=1)
            hidden = self.decoder(self.embed(tokens), memory, tgt_mask=mask)
            next_token = self.out(hidden[:, -1]).argmax(-1)
            tokens = torch.cat([tokens, next_token.unsqueeze(1)], 1)
            if bool((next_token == self.eos).all()):
                break
        return tokens


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_transformer_decoder_greedy(opset: int) -> None:
    model = torch.jit.script(TransformerGreedy().eval())
    dynamic = {"input_names": ["memory"], "dynamic_axes": {"memory": {0: "b", 1: "s"}}}
    others = [(torch.randn(1, 2, 16),), (torch.randn(3, 7, 16),)]
    assert_matches_torch_from(
        OPTIONAL_OPSET,
        model,
        (torch.randn(2, 4, 16),),
        opset=opset,
        other_inputs=others,
        rtol=1e-3,
        atol=1e-4,
        **dynamic,
    )


class DecoderWithMask(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layer = torch.nn.TransformerDecoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
        self.decoder = torch.nn.TransformerDecoder(layer, 1)

    def forward(self, tgt: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        steps = tgt.size(1)
        mask = torch.triu(torch.full((steps, steps), float("-inf")), diagonal=1)
        return self.decoder(tgt, memory, tgt_mask=mask)


@pytest.mark.parametrize("opset", lowering_opsets("aten::layer_norm", min_opset=17))
def test_scripted_transformer_decoder_with_a_causal_mask(opset: int) -> None:
    """TransformerDecoder compares the mask with a causal one of the run-time length: its
    is_causal is a run-time bool (an If over both attention forms) and the attention mask an
    ONNX optional."""
    model = torch.jit.script(DecoderWithMask().eval())
    dynamic = {"input_names": ["t", "m"], "dynamic_axes": {"t": {0: "b", 1: "t"}, "m": {0: "b", 1: "s"}}}
    others = [(torch.randn(1, 1, 16), torch.randn(1, 2, 16)), (torch.randn(3, 6, 16), torch.randn(3, 5, 16))]
    assert_matches_torch(
        model,
        (torch.randn(2, 3, 16), torch.randn(2, 4, 16)),
        opset=opset,
        other_inputs=others,
        rtol=1e-3,
        atol=1e-4,
        **dynamic,
    )


@pytest.mark.parametrize("opset", lowering_opsets("aten::layer_norm"))
def test_scripted_transformer_encoder_layer(opset: int) -> None:
    """Scripted library code asks about devices, autocast and grad mode before choosing a
    fused path; those are export-time constants, so the composite path is exported."""
    layer = torch.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True).eval()
    assert_matches_torch(torch.jit.script(layer), (torch.randn(2, 5, 16),), opset=opset)
