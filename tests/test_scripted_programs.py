"""A corpus of scripted programs as production code writes them: decoding loops with ``while`` and
``break``, box post-processing, CRF decoding, tokenizer-like integer work, module structure
(ModuleList/ModuleDict, ignored methods, Final constants, Optional arguments, dict/list outputs,
scripted helper functions, jit.save archives) and recurrent/attention modules scripted whole.

Each program is scripted, exported, run in onnxruntime and compared with eager torch on at least
two input sets of different sizes or values, so data-dependent control flow is exercised.
"""

import io
import math
from typing import Final, NamedTuple, Optional

import pytest
import torch
import torch.nn.functional as F
from conftest import (
    CONTROL_FLOW_SEQUENCE_OPSET,
    CONTROL_FLOW_SEQUENCE_OPSETS,
    FEATURE_OPSETS,
    NEWEST,
    OPTIONAL_OPSET,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    assert_matches_torch_from,
)

import exporter

# --------------------------------------------------------------------------- decoding


class WhileGreedyDecoder(torch.nn.Module):
    """Greedy decoding with ``while`` + ``break``: tokens grow with ``torch.cat``; stop on EOS."""

    def __init__(self, vocab: int = 11, hidden: int = 12, eos: int = 3, max_len: int = 9) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.cell = torch.nn.LSTMCell(hidden, hidden)
        self.proj = torch.nn.Linear(hidden, vocab)
        self.eos = eos
        self.max_len = max_len

    def forward(self, h: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch = h.size(0)
        state = (h, torch.zeros_like(h))
        tokens = torch.zeros(batch, 1, dtype=torch.long)
        done = torch.zeros(batch, dtype=torch.bool)
        step = 0
        while step < self.max_len:
            state = self.cell(self.embed(tokens[:, -1]), state)
            logits = self.proj(state[0]) + bias
            next_token = logits.argmax(-1)
            next_token = next_token.masked_fill(done, self.eos)
            tokens = torch.cat([tokens, next_token.unsqueeze(1)], dim=1)
            done = done | (next_token == self.eos)
            step += 1
            if bool(done.all()):
                break
        return tokens, state[0]


def _bias(vocab: int, eos: int, eos_bias: float) -> torch.Tensor:
    bias = torch.zeros(vocab)
    bias[eos] = eos_bias
    return bias


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_while_greedy_decoder(opset: int) -> None:
    model = torch.jit.script(WhileGreedyDecoder().eval())
    dynamic = {"input_names": ["h", "bias"], "dynamic_axes": {"h": {0: "batch"}}}
    others = [(torch.randn(3, 12), _bias(11, 3, 40.0)), (torch.randn(1, 12), _bias(11, 3, -40.0))]
    assert_matches_torch(model, (torch.randn(2, 12), _bias(11, 3, 0.0)), opset=opset, other_inputs=others, **dynamic)


class TopKDecoder(torch.nn.Module):
    """Top-k "sampling" without randomness: keep the k best, renormalise, pick the first whose
    cumulative probability passes a run-time threshold (a deterministic nucleus cut)."""

    def __init__(self, vocab: int = 13, hidden: int = 8, k: int = 4, eos: int = 0) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.cell = torch.nn.GRUCell(hidden, hidden)
        self.proj = torch.nn.Linear(hidden, vocab)
        self.k = k
        self.eos = eos

    def forward(self, h: torch.Tensor, threshold: torch.Tensor, max_len: int) -> torch.Tensor:
        token = torch.ones(1, dtype=torch.long)
        out = token
        for _ in range(max_len):
            h = self.cell(self.embed(token), h)
            probs = torch.softmax(self.proj(h), -1)
            top_p, top_i = probs.topk(self.k, dim=-1)
            top_p = top_p / top_p.sum(-1, keepdim=True)
            passed = (top_p.cumsum(-1) >= threshold).to(torch.long)
            choice = passed.argmax(-1)
            token = top_i.gather(1, choice.unsqueeze(1)).squeeze(1)
            out = torch.cat([out, token])
            if int(token[0]) == self.eos:
                break
        return out


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_top_k_decoder(opset: int) -> None:
    model = torch.jit.script(TopKDecoder().eval())
    others = [(torch.randn(1, 8), torch.tensor(0.9), 3), (torch.randn(1, 8), torch.tensor(0.1), 12)]
    assert_matches_torch(model, (torch.randn(1, 8), torch.tensor(0.5), 6), opset=opset, other_inputs=others)


# --------------------------------------------------------------------------- detection post-processing


def _iou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter / (area_a[:, None] + area_b[None, :] - inter)


class MultiClassNMS(torch.nn.Module):
    """Per-class NMS with an IoU matrix and an upper-triangular suppression mask, classes
    visited in a loop, kept detections collected in lists and concatenated."""

    def __init__(self, iou_threshold: float = 0.5, score_threshold: float = 0.3) -> None:
        super().__init__()
        self.iou_threshold = iou_threshold
        self.score_threshold = score_threshold

    def forward(self, boxes: torch.Tensor, scores: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        kept_boxes: list[torch.Tensor] = []
        kept_scores: list[torch.Tensor] = []
        kept_labels: list[torch.Tensor] = []
        for c in range(scores.size(1)):
            s = scores[:, c]
            candidates = torch.nonzero(s > self.score_threshold).squeeze(1)
            if candidates.numel() == 0:
                continue
            b = boxes[candidates]
            s = s[candidates]
            order = s.argsort(descending=True)
            b = b[order]
            s = s[order]
            iou = _iou(b, b).triu(diagonal=1)
            suppressed = (iou > self.iou_threshold).any(0)
            keep = ~suppressed
            kept_boxes.append(b[keep])
            kept_scores.append(s[keep])
            kept_labels.append(torch.full_like(s[keep], c, dtype=torch.long))
        if len(kept_boxes) == 0:
            return torch.zeros(0, 4), torch.zeros(0), torch.zeros(0, dtype=torch.long)
        return torch.cat(kept_boxes), torch.cat(kept_scores), torch.cat(kept_labels)


def _detections(n: int, classes: int, scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    corner = torch.rand(n, 2) * 4
    size = torch.rand(n, 2) * 3 + 0.5
    return torch.cat([corner, corner + size], 1), torch.rand(n, classes) * scale


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_multi_class_nms(opset: int) -> None:
    model = torch.jit.script(MultiClassNMS())
    dynamic = {"input_names": ["boxes", "scores"], "dynamic_axes": {"boxes": {0: "n"}, "scores": {0: "n"}}}
    others = [_detections(3, 3), _detections(25, 3), _detections(5, 3, scale=0.1)]
    assert_matches_torch_from(
        CONTROL_FLOW_SEQUENCE_OPSET, model, _detections(10, 3), opset=opset, other_inputs=others, **dynamic
    )


class AnchorDecoder(torch.nn.Module):
    """Anchor generation on a run-time feature map size, box decoding, clipping and a
    ``torch.where`` cascade that labels anchors as background / ignore / foreground."""

    def __init__(self, stride: int = 8) -> None:
        super().__init__()
        self.stride = stride
        self.register_buffer("sizes", torch.tensor([[16.0, 16.0], [32.0, 16.0], [16.0, 32.0]]))

    def forward(
        self, features: torch.Tensor, deltas: torch.Tensor, gt: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        height, width = features.shape[-2], features.shape[-1]
        ys = (torch.arange(height, dtype=torch.float32) + 0.5) * self.stride
        xs = (torch.arange(width, dtype=torch.float32) + 0.5) * self.stride
        grid_y, grid_x = torch.meshgrid(ys, xs, indexing="ij")
        centers = torch.stack([grid_x.reshape(-1), grid_y.reshape(-1)], 1)
        centers = centers[:, None, :].expand(-1, self.sizes.size(0), 2).reshape(-1, 2)
        wh = self.sizes.repeat(height * width, 1)
        anchors = torch.cat([centers - wh / 2, centers + wh / 2], 1)
        d = deltas.reshape(-1, 4)
        ctr = centers + d[:, :2] * wh
        size = wh * torch.exp(d[:, 2:].clamp(max=4.0))
        boxes = torch.cat([ctr - size / 2, ctr + size / 2], 1)
        boxes = boxes.clamp(min=0.0, max=float(width * self.stride))
        iou = _iou(anchors, gt).max(1)[0]
        labels = torch.where(
            iou >= 0.5, torch.ones_like(iou), torch.where(iou < 0.3, torch.zeros_like(iou), -torch.ones_like(iou))
        )
        return boxes, labels.to(torch.long)


def _anchor_inputs(h: int, w: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gt = torch.tensor([[4.0, 4.0, 30.0, 30.0], [10.0, 0.0, 20.0, 40.0]])
    return torch.randn(1, 2, h, w), torch.randn(h * w * 3, 4) * 0.1, gt


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_anchor_decoder(opset: int) -> None:
    model = torch.jit.script(AnchorDecoder())
    dynamic = {
        "input_names": ["features", "deltas", "gt"],
        "dynamic_axes": {"features": {2: "h", 3: "w"}, "deltas": {0: "a"}, "gt": {0: "g"}},
    }
    others = [_anchor_inputs(2, 5), _anchor_inputs(6, 3)]
    assert_matches_torch(model, _anchor_inputs(4, 4), opset=opset, other_inputs=others, rtol=1e-4, atol=1e-4, **dynamic)


# --------------------------------------------------------------------------- sequence tagging


class BatchedViterbi(torch.nn.Module):
    """Batched CRF Viterbi with a mask: scores per step, a list of backpointer tensors, then
    backtracking over that list with ``gather``."""

    def __init__(self, tags: int = 5) -> None:
        super().__init__()
        self.transitions = torch.nn.Parameter(torch.randn(tags, tags))
        self.start = torch.nn.Parameter(torch.randn(tags))
        self.end = torch.nn.Parameter(torch.randn(tags))

    def forward(self, emissions: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # emissions: (batch, steps, tags), mask: (batch, steps) bool
        score = self.start + emissions[:, 0]
        history: list[torch.Tensor] = []
        for t in range(1, emissions.size(1)):
            candidate = score.unsqueeze(2) + self.transitions + emissions[:, t].unsqueeze(1)
            best, index = candidate.max(1)
            score = torch.where(mask[:, t].unsqueeze(1), best, score)
            history.append(index)
        score = score + self.end
        best_score, best_last = score.max(1)
        lengths = mask.long().sum(1)
        path: list[torch.Tensor] = [best_last]
        current = best_last
        for t in range(len(history) - 1, -1, -1):
            previous = history[t].gather(1, current.unsqueeze(1)).squeeze(1)
            # steps past a sequence's end keep the tag chosen at its last step
            current = torch.where(t + 1 < lengths, previous, current)
            path.append(current)
        path.reverse()
        return torch.stack(path, 1), best_score


def _tagging_inputs(batch: int, steps: int) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.randint(1, steps + 1, (batch,))
    lengths[0] = steps
    mask = torch.arange(steps)[None, :] < lengths[:, None]
    return torch.randn(batch, steps, 5), mask


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_batched_viterbi(opset: int) -> None:
    model = torch.jit.script(BatchedViterbi())
    dynamic = {
        "input_names": ["emissions", "mask"],
        "dynamic_axes": {"emissions": {0: "b", 1: "t"}, "mask": {0: "b", 1: "t"}},
    }
    others = [_tagging_inputs(3, 1), _tagging_inputs(1, 8), _tagging_inputs(4, 3)]
    assert_matches_torch(model, _tagging_inputs(2, 5), opset=opset, other_inputs=others, **dynamic)


# --------------------------------------------------------------------------- tokenizer-like integer work


class PadTruncate(torch.nn.Module):
    """Right-trim padding, truncate to a maximum length, build attention mask and positions with
    ``cumsum``, ``masked_fill`` special tokens, and pad back to a multiple of 8 (a ceil division)."""

    max_length: Final[int]

    def __init__(self, pad: int = 0, max_length: int = 12, cls: int = 101) -> None:
        super().__init__()
        self.pad = pad
        self.max_length = max_length
        self.cls = cls

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        mask = ids != self.pad
        lengths = mask.long().sum(1)
        longest = int(lengths.max())
        keep = min(longest, self.max_length - 1)
        ids = ids[:, :keep]
        mask = mask[:, :keep]
        ids = torch.cat([torch.full((ids.size(0), 1), self.cls, dtype=ids.dtype), ids], 1)
        mask = torch.cat([torch.ones(mask.size(0), 1, dtype=torch.bool), mask], 1)
        positions = (mask.long().cumsum(1) - 1).masked_fill(~mask, 0)
        target = (ids.size(1) + 7) // 8 * 8
        extra = target - ids.size(1)
        ids = F.pad(ids, [0, extra], value=float(self.pad))
        mask = F.pad(mask.long(), [0, extra])
        positions = F.pad(positions, [0, extra])
        ranks = torch.arange(ids.size(1), dtype=torch.long).unsqueeze(0).expand(ids.size(0), ids.size(1))
        return ids.masked_fill(ranks >= target, self.pad), mask, positions


def _token_ids(batch: int, steps: int) -> torch.Tensor:
    ids = torch.randint(1, 50, (batch, steps))
    lengths = torch.randint(1, steps + 1, (batch,))
    return ids.masked_fill(torch.arange(steps)[None, :] >= lengths[:, None], 0)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_pad_truncate(opset: int) -> None:
    model = torch.jit.script(PadTruncate())
    dynamic = {"input_names": ["ids"], "dynamic_axes": {"ids": {0: "b", 1: "t"}}}
    others = [(_token_ids(1, 3),), (_token_ids(4, 20),), (_token_ids(3, 9),)]
    assert_matches_torch(model, (_token_ids(2, 6),), opset=opset, other_inputs=others, **dynamic)


@torch.jit.script
def lengths_to_mask(lengths: torch.Tensor, max_len: Optional[int] = None) -> torch.Tensor:
    """A scripted free function: a padding mask from lengths, arange with a run-time bound."""
    if max_len is None:
        max_len = int(lengths.max())
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


def test_scripted_function_with_run_time_arange() -> None:
    others = [(torch.tensor([1, 1]),), (torch.tensor([7, 2, 5, 1]),)]
    dynamic = {"input_names": ["lengths"], "dynamic_axes": {"lengths": {0: "b"}}}
    for opset in SEQUENCE_OPSETS:
        assert_matches_torch(lengths_to_mask, (torch.tensor([3, 5, 2]),), opset=opset, other_inputs=others, **dynamic)


# --------------------------------------------------------------------------- module structure


@torch.jit.script
def scaled_residual(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return x + alpha * y


class Block(torch.nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(width, width)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return scaled_residual(x, torch.relu(self.linear(self.norm(x))), 0.5)


class StructuredModel(torch.nn.Module):
    """ModuleList iteration, ModuleDict lookup by constant key, ``__constants__`` and ``Final``,
    an ``Optional[Tensor]`` argument, ignored/unused methods never reached, a helper method,
    size arithmetic, and Dict/List/Tuple outputs."""

    __constants__ = ["scale"]
    use_gate: Final[bool]

    def __init__(self, width: int = 8, depth: int = 3) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(width) for _ in range(depth)])
        self.scale = 0.5
        self.head = torch.nn.ModuleDict({"cls": torch.nn.Linear(width, 3), "reg": torch.nn.Linear(width, 2)})
        self.use_gate = True

    @torch.jit.unused
    def debug_dump(self, x: torch.Tensor) -> torch.Tensor:
        print(x.numpy())
        return x

    @torch.jit.ignore
    def python_only(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    def pooled(self, x: torch.Tensor, mask: Optional[torch.Tensor]) -> torch.Tensor:
        if mask is None:
            return x.mean(1)
        weights = mask.to(x.dtype).unsqueeze(-1)
        return (x * weights).sum(1) / weights.sum(1).clamp(min=1.0)

    def forward(
        self, x: torch.Tensor, mask: Optional[torch.Tensor] = None
    ) -> tuple[dict[str, torch.Tensor], list[torch.Tensor]]:
        if self.training:
            x = self.debug_dump(x)
        states: list[torch.Tensor] = []
        for block in self.blocks:
            x = block(x)
            states.append(x)
        half = x.size(1) // 2
        chunks = (x.size(1) + 2) // 3  # a ceil division on a dynamic size
        pooled = self.pooled(x, mask)
        if self.use_gate:
            pooled = pooled * torch.sigmoid(pooled)
        outputs: dict[str, torch.Tensor] = {}
        outputs["cls"] = self.head["cls"](pooled)
        outputs["reg"] = self.head["reg"](pooled) * self.scale
        outputs["first_half"] = x[:, :half].sum(1)
        outputs["chunks"] = torch.tensor(chunks)
        return outputs, states


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_structured_module_with_mask(opset: int) -> None:
    model = torch.jit.script(StructuredModel().eval())
    dynamic = {"input_names": ["x", "mask"], "dynamic_axes": {"x": {0: "b", 1: "t"}, "mask": {0: "b", 1: "t"}}}
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    others = [
        (torch.randn(1, 2, 8), torch.ones(1, 2, dtype=torch.bool)),
        (torch.randn(3, 7, 8), torch.rand(3, 7) > 0.5),
    ]
    assert_matches_torch(model, (torch.randn(2, 5, 8), mask), opset=opset, other_inputs=others, **dynamic)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_structured_module_without_mask(opset: int) -> None:
    model = torch.jit.script(StructuredModel().eval())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 1: "t"}}}
    others = [(torch.randn(1, 2, 8),), (torch.randn(3, 7, 8),)]
    assert_matches_torch(model, (torch.randn(2, 5, 8),), opset=opset, other_inputs=others, **dynamic)


def test_structured_module_saved_and_loaded(tmp_path) -> None:
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(StructuredModel().eval()), buffer)
    buffer.seek(0)
    loaded = torch.jit.load(buffer)
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 1: "t"}}}
    others = [(torch.randn(3, 7, 8),)]
    assert_matches_torch(loaded, (torch.randn(2, 5, 8),), opset=17, other_inputs=others, **dynamic)
    path = tmp_path / "model.pt"
    torch.jit.save(torch.jit.script(StructuredModel().eval()), str(path))
    assert_matches_torch(
        torch.jit.load(str(path)), (torch.randn(2, 5, 8),), opset=NEWEST, other_inputs=others, **dynamic
    )


# --------------------------------------------------------------------------- recurrent and attention


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


class CausalAttention(torch.nn.Module):
    """Self-attention with a causal mask combined with a key padding mask built from run-time
    lengths, written out (no fused kernel)."""

    def __init__(self, width: int = 16, heads: int = 4) -> None:
        super().__init__()
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, width)
        self.heads = heads
        self.head_dim = width // heads

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        batch, steps, width = x.size(0), x.size(1), x.size(2)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(batch, steps, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(batch, steps, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(batch, steps, self.heads, self.head_dim).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / (self.head_dim**0.5)
        causal = torch.ones(steps, steps, dtype=torch.bool).triu(1)
        padding = torch.arange(steps)[None, :] >= lengths[:, None]
        blocked = causal[None, None] | padding[:, None, None, :]
        scores = scores.masked_fill(blocked, float("-inf"))
        weights = torch.softmax(scores, -1).nan_to_num(0.0)
        y = (weights @ v).transpose(1, 2).reshape(batch, steps, width)
        return self.out(y)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_causal_attention_with_run_time_lengths(opset: int) -> None:
    model = torch.jit.script(CausalAttention().eval())
    dynamic = {"input_names": ["x", "lengths"], "dynamic_axes": {"x": {0: "b", 1: "t"}, "lengths": {0: "b"}}}
    others = [(torch.randn(1, 2, 16), torch.tensor([1])), (torch.randn(3, 9, 16), torch.tensor([9, 4, 1]))]
    assert_matches_torch(
        model, (torch.randn(2, 5, 16), torch.tensor([5, 3])), opset=opset, other_inputs=others, **dynamic
    )


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


# --------------------------------------------------------------------------- dicts


class DictBuilder(torch.nn.Module):
    """Dicts built item by item, read back, iterated (keys/values/items), copied and merged."""

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {}
        out["double"] = x * 2
        out["shifted"] = x + 1
        if "double" in out:
            out["diff"] = out["double"] - out["shifted"]
        out["count"] = torch.tensor(len(out))
        total = torch.zeros_like(x)
        for key in out.keys():
            if key != "count":
                total = total + out[key]
        for key, value in out.items():
            total = total + value.float().sum()
        for value in out.values():
            total = total + value.float().mean()
        extra = out.copy()
        extra.update({"total": total})
        extra["fallback"] = out.get("missing", x)
        extra["defaulted"] = extra.setdefault("double", x * 0)
        extra.pop("shifted")
        del extra["diff"]
        return extra


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_dict_built_item_by_item(opset: int) -> None:
    model = torch.jit.script(DictBuilder())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    onnx_model = assert_matches_torch(
        model, (torch.randn(3, 4),), opset=opset, other_inputs=[(torch.randn(5, 4),)], **dynamic
    )
    assert [v.name for v in onnx_model.graph.outputs] == ["double", "count", "total", "fallback", "defaulted"]


class DictInControlFlow(torch.nn.Module):
    """Dict items written in an ``if`` on a run-time value and in a loop with a run-time trip
    count: each written key is one value threaded through the If or Loop."""

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {"acc": x[0] * 0}
        counts: dict[str, int] = {"positive": 0}
        if bool(x.sum() > 0):
            out["sign"] = torch.ones(1)
            out["acc"] = out["acc"] + 1
        else:
            out["sign"] = -torch.ones(1)
        for i in range(x.size(0)):
            out["acc"] = out["acc"] + x[i]
            if bool(x[i, 0] > 0):
                counts["positive"] = counts["positive"] + 1
        out["positive"] = torch.tensor(counts["positive"])
        return out


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_dict_items_written_in_run_time_control_flow(opset: int) -> None:
    model = torch.jit.script(DictInControlFlow())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 4) - 3,), (torch.randn(7, 4) + 0.5,)]
    assert_matches_torch(model, (torch.randn(3, 4),), opset=opset, other_inputs=others, **dynamic)


class KeyOnOnePath(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {}
        if bool(x.sum() > 0):
            out["positive"] = x
        return out


class PopInBranch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {"a": x, "b": x * 2}
        if bool(x.sum() > 0):
            out.pop("a")
        return out


class RunTimeKey(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> dict[int, torch.Tensor]:
        out: dict[int, torch.Tensor] = {}
        out[int(x.argmax())] = x
        return out


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (KeyOnOnePath(), r"prim::If.*out\[\"positive\"\] = x|dict key 'positive' is set on some paths"),
        (PopInBranch(), r"aten::pop on a dict inside an `if` on a value computed at run time"),
        (RunTimeKey(), r"aten::_set_item.*key computed at run time"),
    ],
)
def test_dicts_onnx_cannot_hold_fail_naming_op_and_line(model: torch.nn.Module, message: str) -> None:
    with pytest.raises(exporter.ExporterError, match=message) as info:
        exporter.export(torch.jit.script(model), (torch.randn(3),), io.BytesIO(), opset_version=17)
    assert "test_scripted_programs.py:" in str(info.value)


class PrefixedScan(torch.nn.Module):
    """A list holding items before a loop with a run-time trip count that appends one item per
    iteration: the Loop's scan output with the earlier items stacked in front (any opset)."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows: list[torch.Tensor] = [x[0] * 0, x[0]]
        lengths: list[int] = [0]
        for i in range(1, x.size(0)):
            rows.append(x[i] * 2)
            lengths.append(i)
        return torch.stack(rows), torch.tensor(lengths)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_list_with_items_appended_in_a_run_time_loop(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3),), (torch.randn(6, 3),)]
    model = torch.jit.script(PrefixedScan())
    assert_matches_torch(model, (torch.randn(4, 3),), opset=opset, other_inputs=others, **dynamic)


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


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_multi_class_nms_with_a_run_time_class_count(opset: int) -> None:
    """The class loop with ``continue`` has a run-time trip count here: the kept lists are ONNX
    sequences, appended in one branch of the If and passed through the other."""
    model = torch.jit.script(MultiClassNMS())
    dynamic = {"input_names": ["boxes", "scores"], "dynamic_axes": {"boxes": {0: "n"}, "scores": {0: "n", 1: "c"}}}
    others = [_detections(3, 1), _detections(25, 5), _detections(5, 2, scale=0.1)]
    assert_matches_torch_from(
        CONTROL_FLOW_SEQUENCE_OPSET, model, _detections(10, 3), opset=opset, other_inputs=others, **dynamic
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


# --------------------------------------------------------------------------- scalar math, windows, pooling, sorting


class SizeMath(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        n = x.size(0)
        d = x.size(1)
        half = math.ceil(n / 2)
        low = math.floor(n / 3)
        scale = 1.0 / math.sqrt(d)
        keep = max(1, min(int(n * 0.75), n - 1))
        pad = (4 - n % 4) % 4
        y = F.pad(x, [0, 0, 0, pad]) * scale
        y = y.view(-1, 4, d).sum(1)
        return y, x[:half] + x[low : low + half].mean(), torch.tensor([half, low, keep, abs(n - 5)])


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_size_math(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n", 1: "d"}}}
    others = [(torch.randn(2, 3),), (torch.randn(9, 5),)]
    assert_matches_torch(
        torch.jit.script(SizeMath()), (torch.randn(6, 4),), opset=opset, other_inputs=others, **dynamic
    )


class SlidingWindows(torch.nn.Module):
    def __init__(self, window: int = 4, stride: int = 3) -> None:
        super().__init__()
        self.window = window
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        chunks: list[torch.Tensor] = []
        start = 0
        n = x.size(0)
        while start < n:
            end = min(start + self.window, n)
            chunk = x[start:end]
            chunk = F.pad(chunk, [0, 0, 0, self.window - (end - start)])
            chunks.append(chunk)
            if end == n:
                break
            start += self.stride
        return torch.stack(chunks)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_sliding_windows(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(2, 3),), (torch.randn(11, 3),), (torch.randn(7, 3),)]
    assert_matches_torch(
        torch.jit.script(SlidingWindows()), (torch.randn(6, 3),), opset=opset, other_inputs=others, **dynamic
    )


class WordPooling(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(30, 6)

    def forward(self, ids: torch.Tensor, continuation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        word_ids = torch.cumsum((~continuation).long(), 0) - 1
        words = int(word_ids.max()) + 1
        emb = self.embed(ids)
        pooled = torch.zeros(words, emb.size(1)).index_add(0, word_ids, emb)
        counts = torch.zeros(words).scatter_add(0, word_ids, torch.ones_like(word_ids, dtype=torch.float))
        return pooled / counts.unsqueeze(1), torch.bincount(word_ids, minlength=words)


def _pieces(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    cont = torch.rand(n) > 0.6
    cont[0] = False
    return torch.randint(0, 30, (n,)), cont


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_word_pooling(opset: int) -> None:
    dynamic = {"input_names": ["ids", "cont"], "dynamic_axes": {"ids": {0: "n"}, "cont": {0: "n"}}}
    others = [_pieces(1), _pieces(15)]
    assert_matches_torch(torch.jit.script(WordPooling()), _pieces(7), opset=opset, other_inputs=others, **dynamic)


class LengthRegulator(torch.nn.Module):
    """FastSpeech's length regulator: repeat each frame by its predicted duration, per batch
    item in a loop, then pad all to the longest."""

    def forward(self, x: torch.Tensor, durations: torch.Tensor, max_len: Optional[int] = None) -> torch.Tensor:
        outputs: list[torch.Tensor] = []
        for i in range(x.size(0)):
            outputs.append(torch.repeat_interleave(x[i], durations[i], dim=0))
        longest = max_len if max_len is not None else max([int(o.size(0)) for o in outputs])
        padded = [F.pad(o, [0, 0, 0, longest - o.size(0)]) for o in outputs]
        return torch.stack(padded)


@pytest.mark.parametrize("opset", CONTROL_FLOW_SEQUENCE_OPSETS)
def test_length_regulator(opset: int) -> None:
    """Items of run-time shapes appended in a loop: an ONNX sequence carried by the Loop, which
    needs opset 13 (at 11 the scan form exports, but items of different lengths then fail in
    onnxruntime: ONNX scan outputs have one shape)."""
    dynamic = {"input_names": ["x", "d"], "dynamic_axes": {"x": {0: "b", 1: "t"}, "d": {0: "b", 1: "t"}}}
    others = [(torch.randn(1, 2, 3), torch.tensor([[1, 4]])), (torch.randn(3, 5, 3), torch.randint(0, 4, (3, 5)))]
    assert_matches_torch(
        torch.jit.script(LengthRegulator()),
        (torch.randn(2, 3, 3), torch.randint(1, 3, (2, 3))),
        opset=opset,
        other_inputs=others,
        **dynamic,
    )


class StackOfLayers(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(5, 5) for _ in range(3)])
        self.norms = torch.nn.ModuleList([torch.nn.LayerNorm(5) for _ in range(3)])
        self.heads = torch.nn.ModuleDict({"a": torch.nn.Linear(5, 2), "b": torch.nn.Linear(5, 1)})

    def forward(self, x: torch.Tensor, skip: Optional[int] = None) -> list[torch.Tensor]:
        assert x.dim() == 3, "expects (batch, steps, features)"
        if not torch.jit.is_scripting():
            x = x * 1.0
        for i, (layer, norm) in enumerate(zip(self.layers, self.norms)):
            if skip is None or i != skip:
                x = norm(x + torch.relu(layer(x)))
        outs: list[torch.Tensor] = []
        for name, head in self.heads.items():
            outs.append(head(x))
        hidden = torch.jit.annotate(list[torch.Tensor], [])
        hidden.append(x.mean(1))
        return outs + hidden


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_stack_of_layers(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 1: "t"}}}
    others = [(torch.randn(1, 1, 5),), (torch.randn(3, 8, 5),)]
    assert_matches_torch(
        torch.jit.script(StackOfLayers().eval()), (torch.randn(2, 4, 5),), opset=opset, other_inputs=others, **dynamic
    )
    assert_matches_torch(
        torch.jit.script(StackOfLayers().eval()),
        (torch.randn(2, 4, 5), 1),
        opset=opset,
        other_inputs=[(torch.randn(3, 8, 5), 1)],
        **dynamic,
    )


class SortedScores(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values: list[float] = []
        for i in range(x.size(0)):
            values.append(float(x[i].max()))
        values.sort()
        best: list[int] = []
        for i in range(x.size(0)):
            best.append(int(x[i].argmax()))
        return torch.tensor(values), torch.tensor(best)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_sorted_python_list(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3),), (torch.randn(8, 3),)]
    assert_matches_torch(
        torch.jit.script(SortedScores()), (torch.randn(4, 3),), opset=opset, other_inputs=others, **dynamic
    )


class SortedPair(torch.nn.Module):
    """``l.sort()`` of an export-time list holding run-time numbers."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [float(x[0].max()), float(x[1].min()), float(x.mean())]
        values.sort(reverse=True)
        counts = [int((x > 0).sum()), int((x < 0).sum()), 1]
        counts.sort()
        return torch.tensor(values) + torch.tensor(counts)


@pytest.mark.parametrize("opset", (9, 10, *SEQUENCE_OPSETS))
def test_sorted_export_time_list(opset: int) -> None:
    others = [(torch.randn(2, 3) + 1,), (torch.randn(2, 3) - 1,)]
    assert_matches_torch(torch.jit.script(SortedPair()), (torch.randn(2, 3),), opset=opset, other_inputs=others)


def test_scripted_lstm_itself() -> None:
    """A bare scripted nn.LSTM has no ``forward`` (only its overloads)."""
    model = torch.jit.script(torch.nn.LSTM(4, 3))
    with pytest.raises(exporter.ExporterError, match="forward"):
        exporter.export(model, (torch.randn(5, 2, 4),), "/tmp/unused.onnx")


# --------------------------------------------------------------------------- caches, packed sequences, integer ops, beams


class CachedAttention(torch.nn.Module):
    """Incremental decoding: an optional (key, value) cache from earlier steps is extended
    with this step's keys and values and returned."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.width = width

    def forward(
        self, x: torch.Tensor, past: Optional[tuple[torch.Tensor, torch.Tensor]] = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        q, k, v = self.qkv(x).split(self.width, dim=-1)
        if past is not None:
            k = torch.cat([past[0], k], dim=1)
            v = torch.cat([past[1], v], dim=1)
        steps, total = q.size(1), k.size(1)
        scores = q @ k.transpose(1, 2) / math.sqrt(self.width)
        offset = total - steps
        allowed = torch.arange(total)[None, :] <= (torch.arange(steps) + offset)[:, None]
        scores = scores.masked_fill(~allowed, float("-inf"))
        return torch.softmax(scores, -1) @ v, (k, v)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_cached_attention(opset: int) -> None:
    model = torch.jit.script(CachedAttention().eval())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 1: "t"}}}
    others = [(torch.randn(1, 1, 8),), (torch.randn(3, 6, 8),)]
    assert_matches_torch(model, (torch.randn(2, 3, 8),), opset=opset, other_inputs=others, **dynamic)
    past = (torch.randn(2, 4, 8), torch.randn(2, 4, 8))
    dynamic = {
        "input_names": ["x", "past_k", "past_v"],
        "dynamic_axes": {"x": {0: "b", 1: "t"}, "past_k": {0: "b", 1: "p"}, "past_v": {0: "b", 1: "p"}},
    }
    others = [(torch.randn(1, 1, 8), (torch.randn(1, 7, 8), torch.randn(1, 7, 8)))]
    assert_matches_torch(model, (torch.randn(2, 1, 8), past), opset=opset, other_inputs=others, **dynamic)


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


class UniqueTopK(torch.nn.Module):
    def forward(
        self, ids: torch.Tensor, scores: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        uniq, inverse, counts = torch.unique(ids, sorted=True, return_inverse=True, return_counts=True)
        k = min(3, scores.size(0))
        top, where = scores.topk(k)
        return uniq, inverse, counts, ids[where] + top.long()


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_unique_and_topk_with_run_time_k(opset: int) -> None:
    model = torch.jit.script(UniqueTopK())
    dynamic = {"input_names": ["ids", "scores"], "dynamic_axes": {"ids": {0: "n"}, "scores": {0: "n"}}}
    others = [(torch.tensor([4, 4]), torch.rand(2)), (torch.randint(0, 5, (9,)), torch.rand(9))]
    assert_matches_torch(model, (torch.randint(0, 5, (6,)), torch.rand(6)), opset=opset, other_inputs=others, **dynamic)


class IntegerTricks(torch.nn.Module):
    def forward(self, ids: torch.Tensor, shift: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        buckets = torch.div(ids, 4, rounding_mode="floor") % 3
        hashed = (ids * 31 + 7) & 1023
        rolled = torch.roll(ids, shifts=shift, dims=0)
        flags = torch.cumsum(ids > 2, 0)
        clipped = torch.clamp(ids - 2, min=0, max=5).flip(0)
        return buckets + hashed, rolled, flags, clipped


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_integer_tricks(opset: int) -> None:
    model = torch.jit.script(IntegerTricks())
    dynamic = {"input_names": ["ids", "shift"], "dynamic_axes": {"ids": {0: "n"}}}
    others = [(torch.randint(0, 50, (3,)), 5), (torch.randint(0, 50, (11,)), -2)]
    assert_matches_torch(model, (torch.randint(0, 50, (6,)), 1), opset=opset, other_inputs=others, **dynamic)


class ExportedHelpers(torch.nn.Module):
    sizes: list[int]

    def __init__(self) -> None:
        super().__init__()
        self.sizes = [2, 3]
        self.proj = torch.nn.Linear(5, 5)

    @torch.jit.export
    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.proj(x))

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        h = self.encode(x)
        parts: list[torch.Tensor] = []
        start = 0
        for size in self.sizes:
            parts.append(h[:, start : start + size])
            start += size
        return parts


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_exported_helper_method_and_list_attribute(opset: int) -> None:
    model = torch.jit.script(ExportedHelpers())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b"}}}
    assert_matches_torch(model, (torch.randn(2, 5),), opset=opset, other_inputs=[(torch.randn(4, 5),)], **dynamic)


class SamePaddingConv(torch.nn.Module):
    """TensorFlow-style 'same' padding computed from run-time sizes (EfficientNet ports)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ih, iw = x.shape[-2:]
        kh, kw = 3, 3
        sh, sw = 2, 2
        pad_h = max((math.ceil(ih / sh) - 1) * sh + kh - ih, 0)
        pad_w = max((math.ceil(iw / sw) - 1) * sw + kw - iw, 0)
        x = F.pad(x, [pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2])
        y = self.conv(x)
        return F.interpolate(y, size=(ih, iw), mode="nearest")


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_same_padding_conv(opset: int) -> None:
    model = torch.jit.script(SamePaddingConv().eval())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 2: "h", 3: "w"}}}
    others = [(torch.randn(1, 3, 7, 5),), (torch.randn(2, 3, 12, 9),)]
    assert_matches_torch(model, (torch.randn(2, 3, 8, 8),), opset=opset, other_inputs=others, **dynamic)


class FinalizingBeamSearch(torch.nn.Module):
    """Beam search that moves hypotheses reaching EOS into a finished list (tokens and
    length-normalised scores), then returns the best finished one."""

    def __init__(self, vocab: int = 9, hidden: int = 8, beam: int = 2, eos: int = 1, max_len: int = 5) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.cell = torch.nn.GRUCell(hidden, hidden)
        self.out = torch.nn.Linear(hidden, vocab)
        self.vocab = vocab
        self.beam = beam
        self.eos = eos
        self.max_len = max_len

    def forward(self, h0: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = h0.expand(self.beam, h0.size(1)).contiguous()
        tokens = torch.zeros(self.beam, 1, dtype=torch.long)
        scores = torch.tensor([0.0] + [-1e9] * (self.beam - 1))
        finished_scores: list[float] = []
        finished_tokens: list[torch.Tensor] = []
        for step in range(self.max_len):
            h = self.cell(self.embed(tokens[:, -1]), h)
            logp = torch.log_softmax(self.out(h) + bias, -1)
            top, index = (scores.unsqueeze(1) + logp).reshape(-1).topk(2 * self.beam)
            origin = torch.div(index, self.vocab, rounding_mode="floor")
            token = index % self.vocab
            keep: list[int] = []
            for j in range(2 * self.beam):
                if int(token[j]) == self.eos:
                    finished_scores.append(float(top[j]) / (step + 1))
                    finished_tokens.append(F.pad(tokens[origin[j]], [0, self.max_len - step - 1], value=-1.0))
                elif len(keep) < self.beam:
                    keep.append(j)
            chosen = torch.tensor(keep)
            tokens = torch.cat([tokens[origin[chosen]], token[chosen].unsqueeze(1)], 1)
            h = h[origin[chosen]]
            scores = top[chosen]
        if len(finished_scores) == 0:
            return tokens[0, 1:], scores[0]
        best = int(torch.tensor(finished_scores).argmax())
        return finished_tokens[best][1:], torch.tensor(finished_scores[best])


def _beam_inputs(eos_bias: float) -> tuple[torch.Tensor, torch.Tensor]:
    bias = torch.zeros(9)
    bias[1] = eos_bias
    return torch.randn(1, 8), bias


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_finalizing_beam_search(opset: int) -> None:
    model = torch.jit.script(FinalizingBeamSearch().eval())
    others = [_beam_inputs(3.0), _beam_inputs(-50.0), _beam_inputs(1.5)]
    assert_matches_torch_from(CONTROL_FLOW_SEQUENCE_OPSET, model, _beam_inputs(0.0), opset=opset, other_inputs=others)


class RollByArgument(torch.nn.Module):
    def forward(self, x: torch.Tensor, shift: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.roll(x, shifts=shift, dims=1), torch.roll(x, shifts=[shift, 1], dims=[0, 1])


@pytest.mark.parametrize("opset", (9, 10, 11))
def test_roll_by_a_run_time_shift(opset: int) -> None:
    """The Gather form (opset 9) and the Mod + Slice form (10) take a shift computed at run
    time, on dims of static and of run-time size."""
    dynamic = {"input_names": ["x", "shift"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(2, 4), -7), (torch.randn(5, 4), 0)]
    assert_matches_torch(
        torch.jit.script(RollByArgument()), (torch.randn(3, 4), 2), opset=opset, other_inputs=others, **dynamic
    )


class OptionalIsInstance(torch.nn.Module):
    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        if isinstance(mask, torch.Tensor):
            return x * mask
        return x + 1


def test_isinstance_of_an_optional_argument() -> None:
    """prim::isinstance is decided at export time from what the argument is."""
    model = torch.jit.script(OptionalIsInstance())
    for opset in (9, NEWEST):
        assert_matches_torch(model, (torch.randn(3), torch.randn(3)), opset=opset)
        assert_matches_torch(model, (torch.randn(3),), opset=opset)


# --------------------------------------------------------------------------- fork/wait, interfaces, named tuples, script classes, with blocks


@torch.jit.script
def branch(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.relu(x) * scale


class ForkWait(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        futures = [torch.jit.fork(branch, x, float(i + 1)) for i in range(3)]
        results = [torch.jit.wait(f) for f in futures]
        return torch.stack(results).sum(0)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_fork_wait(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    assert_matches_torch(
        torch.jit.script(ForkWait()), (torch.randn(3, 2),), opset=opset, other_inputs=[(torch.randn(5, 2),)], **dynamic
    )


@torch.jit.interface
class Scorer(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pass


class Linear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l = torch.nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.l(x)


class WithInterface(torch.nn.Module):
    scorer: Scorer

    def __init__(self) -> None:
        super().__init__()
        self.scorer = Linear()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scorer.forward(x) * 2


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_interface_attribute(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    assert_matches_torch(
        torch.jit.script(WithInterface()),
        (torch.randn(3, 4),),
        opset=opset,
        other_inputs=[(torch.randn(5, 4),)],
        **dynamic,
    )


class Detections(NamedTuple):
    boxes: torch.Tensor
    scores: torch.Tensor
    labels: Optional[torch.Tensor]


class NamedOutputs(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> Detections:
        scores, labels = x.max(1)
        keep = scores > 0
        return Detections(x[keep], scores[keep], labels[keep])


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_named_tuple_outputs(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    assert_matches_torch(
        torch.jit.script(NamedOutputs()),
        (torch.randn(5, 4),),
        opset=opset,
        other_inputs=[(torch.randn(9, 4),)],
        **dynamic,
    )


@torch.jit.script
class Hypothesis:
    def __init__(self, tokens: torch.Tensor, score: float) -> None:
        self.tokens = tokens
        self.score = score

    def extend(self, token: int, logp: float) -> "Hypothesis":
        return Hypothesis(torch.cat([self.tokens, torch.tensor([token])]), self.score + logp)


class ScriptClassDecoder(torch.nn.Module):
    def forward(self, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hyp = Hypothesis(torch.zeros(1, dtype=torch.long), 0.0)
        logp = torch.log_softmax(logits, -1)
        for t in range(logits.size(0)):
            k = int(logp[t].argmax())
            hyp = hyp.extend(k, float(logp[t, k]))
        return hyp.tokens, torch.tensor(hyp.score)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_script_class_objects(opset: int) -> None:
    assert_matches_torch(
        torch.jit.script(ScriptClassDecoder()), (torch.randn(4, 6),), opset=opset, other_inputs=[(torch.randn(4, 6),)]
    )


class NoGradBlock(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l = torch.nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            y = self.l(x)
        return y * 2


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_no_grad_block(opset: int) -> None:
    assert_matches_torch(torch.jit.script(NoGradBlock()), (torch.randn(2, 3),), opset=opset, other_inputs=[])


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


def test_script_class_object_in_a_run_time_loop_fails_by_name() -> None:
    model = torch.jit.script(ScriptClassDecoder())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "t"}}}
    with pytest.raises(exporter.ExporterError, match=r"prim::Loop.*Hypothesis carried through a loop") as info:
        exporter.export(model, (torch.randn(4, 6),), io.BytesIO(), opset_version=17, **dynamic)
    assert "test_scripted_programs.py:" in str(info.value)


class ForkMethods(torch.nn.Module):
    """Forked submodule calls waited on directly (ensembles scripted for parallelism)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(4, 3)
        self.b = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        fa = torch.jit.fork(self.a, x)
        fb = torch.jit.fork(self.b, x)
        return torch.jit.wait(fa) - torch.jit.wait(fb)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_forked_submodules(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    assert_matches_torch(
        torch.jit.script(ForkMethods()),
        (torch.randn(3, 4),),
        opset=opset,
        other_inputs=[(torch.randn(5, 4),)],
        **dynamic,
    )


# --------------------------------------------------------------------------- frozen, traced and saved modules


class ConvNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.conv(x)))
        if y.size(2) > 4:
            y = torch.nn.functional.max_pool2d(y, 2)
        return self.head(y.mean((2, 3)))


def _convnet() -> torch.nn.Module:
    model = ConvNet().eval()
    model.bn.running_mean.uniform_(-0.5, 0.5)
    model.bn.running_var.uniform_(0.5, 1.5)
    return model


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_frozen_module(opset: int) -> None:
    model = torch.jit.freeze(torch.jit.script(_convnet()))
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 2: "h", 3: "w"}}}
    others = [(torch.randn(1, 3, 4, 4),), (torch.randn(3, 3, 10, 7),)]
    assert_matches_torch(model, (torch.randn(2, 3, 8, 8),), opset=opset, other_inputs=others, **dynamic)


class MobileBlock(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.expand = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.depthwise = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.hardswish(self.expand(x))
        y = F.relu6(self.bn(self.depthwise(y))) + y
        return torch.sigmoid(self.fc(F.adaptive_avg_pool2d(y, 1).flatten(1)))


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize("make", [_convnet, lambda: MobileBlock().eval()], ids=["convnet", "mobile_block"])
def test_optimized_for_inference(opset: int, make: object) -> None:
    """optimize_for_inference rewrites a frozen CNN into MKLDNN layouts and kernels
    (prim::mkldnn_convolution, ConstantMKLDNNTensor, MKLDNNHardSwish_/HardTanh_,
    BroadcastMKLDNNTensors, to_mkldnn/to_dense): plain ONNX ops."""
    model = torch.jit.optimize_for_inference(torch.jit.script(make()))  # type: ignore[operator]
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 2: "h", 3: "w"}}}
    others = [(torch.randn(1, 3, 5, 9),), (torch.randn(3, 3, 12, 6),)]
    assert_matches_torch(
        model, (torch.randn(2, 3, 8, 8),), opset=opset, other_inputs=others, rtol=1e-3, atol=1e-4, **dynamic
    )


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_traced_then_saved_archive(opset: int, tmp_path) -> None:
    traced = torch.jit.trace(_convnet(), torch.randn(2, 3, 8, 8))
    path = tmp_path / "traced.pt"
    torch.jit.save(traced, str(path))
    loaded = torch.jit.load(str(path))
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b"}}}
    assert_matches_torch(
        loaded, (torch.randn(2, 3, 8, 8),), opset=opset, other_inputs=[(torch.randn(4, 3, 8, 8),)], **dynamic
    )


class Mixed(torch.nn.Module):
    """A scripted wrapper around a traced backbone and a scripted decoding loop."""

    def __init__(self) -> None:
        super().__init__()
        self.backbone = torch.jit.trace(torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh()), torch.randn(2, 4))
        self.step = torch.nn.Linear(6, 6)

    def forward(self, x: torch.Tensor, steps: int) -> torch.Tensor:
        h = self.backbone(x)
        for _ in range(steps):
            h = torch.tanh(self.step(h)) + h
        return h


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_traced_backbone_in_a_scripted_module(opset: int) -> None:
    model = torch.jit.script(Mixed().eval())
    dynamic = {"input_names": ["x", "steps"], "dynamic_axes": {"x": {0: "b"}}}
    others = [(torch.randn(5, 4), 0), (torch.randn(1, 4), 4)]
    assert_matches_torch(model, (torch.randn(2, 4), 2), opset=opset, other_inputs=others, **dynamic)


class Saved(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(20, 8)
        self.rnn = torch.nn.GRU(8, 8, batch_first=True)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, h = self.rnn(self.embed(ids))
        lengths = (ids != 0).sum(1)
        last = out[torch.arange(ids.size(0)), (lengths - 1).clamp(min=0)]
        return last + h[0]


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_saved_scripted_archive_from_bytes(opset: int) -> None:
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(Saved().eval()), buffer)
    buffer.seek(0)
    loaded = torch.jit.load(buffer)
    dynamic = {"input_names": ["ids"], "dynamic_axes": {"ids": {0: "b", 1: "t"}}}
    others = [(torch.randint(1, 20, (1, 1)),), (torch.randint(0, 20, (4, 9)),)]
    assert_matches_torch(loaded, (torch.randint(0, 20, (2, 5)),), opset=opset, other_inputs=others, **dynamic)


# --------------------------------------------------------------------------- decoders, samplers, buckets


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


class TopKTopP(torch.nn.Module):
    """HF-style logits filtering: keep the top k, then the smallest set whose probability
    passes top_p (sort, cumsum, shift right, scatter back), as scripted samplers do."""

    def forward(self, logits: torch.Tensor, top_k: int, top_p: float) -> torch.Tensor:
        top_k = min(max(top_k, 1), logits.size(-1))
        kth = torch.topk(logits, top_k)[0][..., -1, None]
        logits = logits.masked_fill(logits < kth, float("-inf"))
        sorted_logits, sorted_indices = torch.sort(logits, descending=True)
        cumulative = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        remove = cumulative > top_p
        remove[..., 1:] = remove[..., :-1].clone()
        remove[..., 0] = False
        remove = remove.scatter(1, sorted_indices, remove)
        return logits.masked_fill(remove, float("-inf"))


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_top_k_top_p_filtering(opset: int) -> None:
    model = torch.jit.script(TopKTopP())
    dynamic = {"input_names": ["logits", "k", "p"], "dynamic_axes": {"logits": {0: "b", 1: "v"}}}
    others = [(torch.randn(1, 3), 10, 0.5), (torch.randn(4, 20), 1, 0.99)]
    assert_matches_torch(model, (torch.randn(2, 8), 4, 0.9), opset=opset, other_inputs=others, **dynamic)


class RelativeBuckets(torch.nn.Module):
    """T5's relative position buckets for run-time query and key lengths."""

    def __init__(self, buckets: int = 8, max_distance: int = 20) -> None:
        super().__init__()
        self.buckets = buckets
        self.max_distance = max_distance
        self.bias = torch.nn.Embedding(buckets, 2)

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        context = torch.arange(q.size(1), dtype=torch.long)[:, None]
        memory = torch.arange(k.size(1), dtype=torch.long)[None, :]
        relative = memory - context
        buckets = self.buckets // 2
        result = (relative > 0).to(torch.long) * buckets
        relative = torch.abs(relative)
        max_exact = buckets // 2
        is_small = relative < max_exact
        large = max_exact + (
            torch.log(relative.float() / max_exact) / math.log(self.max_distance / max_exact) * (buckets - max_exact)
        ).to(torch.long)
        large = torch.min(large, torch.full_like(large, buckets - 1))
        result = result + torch.where(is_small, relative, large)
        return self.bias(result).permute(2, 0, 1)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_t5_relative_buckets(opset: int) -> None:
    model = torch.jit.script(RelativeBuckets())
    dynamic = {"input_names": ["q", "k"], "dynamic_axes": {"q": {1: "t"}, "k": {1: "s"}}}
    others = [(torch.randn(1, 1, 2), torch.randn(1, 30, 2)), (torch.randn(1, 25, 2), torch.randn(1, 3, 2))]
    assert_matches_torch(
        model, (torch.randn(1, 5, 2), torch.randn(1, 7, 2)), opset=opset, other_inputs=others, **dynamic
    )


class BucketTokens(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("boundaries", torch.tensor([0.1, 0.5, 1.0, 2.0]))
        self.bag = torch.nn.EmbeddingBag(5, 3, mode="mean")

    def forward(self, values: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        ids = torch.bucketize(values, self.boundaries)
        pos = torch.searchsorted(self.boundaries, values.clamp(max=1.5))
        offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
        return self.bag(ids, offsets), pos


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_bucketize_and_embedding_bag(opset: int) -> None:
    model = torch.jit.script(BucketTokens())
    dynamic = {"input_names": ["values", "lengths"], "dynamic_axes": {"values": {0: "n"}, "lengths": {0: "b"}}}
    others = [(torch.rand(3) * 3, torch.tensor([3])), (torch.rand(9) * 3, torch.tensor([2, 4, 1, 2]))]
    assert_matches_torch(model, (torch.rand(6) * 3, torch.tensor([2, 4])), opset=opset, other_inputs=others, **dynamic)


class SearchRows(torch.nn.Module):
    def forward(self, rows: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        ordered, order = rows.sort(-1)
        return (
            torch.searchsorted(ordered, values),
            torch.searchsorted(ordered, values, right=True, out_int32=True),
            torch.searchsorted(rows, values, side="right", sorter=order),
        )


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_searchsorted_rows(opset: int) -> None:
    model = torch.jit.script(SearchRows())
    dynamic = {
        "input_names": ["rows", "values"],
        "dynamic_axes": {"rows": {0: "b", 1: "n"}, "values": {0: "b", 1: "m"}},
    }
    ties = torch.tensor([[1.0, 2.0, 2.0, 3.0]])
    others = [(ties, torch.tensor([[2.0, 0.0, 9.0]])), (torch.randn(3, 6), torch.randn(3, 2))]
    assert_matches_torch(model, (torch.randn(2, 5), torch.randn(2, 4)), opset=opset, other_inputs=others, **dynamic)


class ShapeEquality(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        same = x.size() == y.size()
        differ = x.size() != y.size()
        lengths = [x.size(0), 3] == [y.size(0), 3]
        return torch.tensor(same), torch.tensor(differ), torch.tensor(lengths)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_size_list_equality(opset: int) -> None:
    """``x.size() == y.size()`` of run-time sizes is one bool (all items equal)."""
    dynamic = {"input_names": ["x", "y"], "dynamic_axes": {"x": {0: "a", 1: "b"}, "y": {0: "c", 1: "d"}}}
    others = [(torch.randn(2, 3), torch.randn(3, 2)), (torch.randn(4, 1), torch.randn(4, 5))]
    assert_matches_torch(
        torch.jit.script(ShapeEquality()),
        (torch.randn(2, 3), torch.randn(2, 3)),
        opset=opset,
        other_inputs=others,
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


@pytest.mark.parametrize("opset", (17, NEWEST))
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


# --------------------------------------------------------------------------- CRF scoring, run-time splits, pre- and post-processing


class CRFLogLikelihood(torch.nn.Module):
    """The CRF forward algorithm (log partition) over a masked batch: logsumexp per step."""

    def __init__(self, tags: int = 4) -> None:
        super().__init__()
        self.transitions = torch.nn.Parameter(torch.randn(tags, tags))
        self.start = torch.nn.Parameter(torch.randn(tags))
        self.end = torch.nn.Parameter(torch.randn(tags))

    def forward(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        score = self.start + emissions[:, 0]
        for t in range(1, emissions.size(1)):
            nxt = torch.logsumexp(score.unsqueeze(2) + self.transitions + emissions[:, t].unsqueeze(1), dim=1)
            score = torch.where(mask[:, t].unsqueeze(1), nxt, score)
        return torch.logsumexp(score + self.end, dim=1)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_crf_log_partition(opset: int) -> None:
    model = torch.jit.script(CRFLogLikelihood())
    dynamic = {"input_names": ["e", "m"], "dynamic_axes": {"e": {0: "b", 1: "t"}, "m": {0: "b", 1: "t"}}}

    def inputs(b: int, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        lengths = torch.randint(1, t + 1, (b,))
        return torch.randn(b, t, 4), torch.arange(t)[None] < lengths[:, None]

    assert_matches_torch(model, inputs(2, 5), opset=opset, other_inputs=[inputs(1, 1), inputs(4, 9)], **dynamic)


class SplitByLengths(torch.nn.Module):
    """Split a packed batch by run-time lengths, pool each piece, pad them back."""

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        sizes: list[int] = lengths.tolist()
        pieces = torch.split(x, sizes)
        pooled: list[torch.Tensor] = []
        for piece in pieces:
            pooled.append(piece.max(0)[0])
        padded = torch.nn.utils.rnn.pad_sequence(list(pieces), batch_first=True)
        return torch.stack(pooled), padded


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_split_by_run_time_lengths(opset: int) -> None:
    model = torch.jit.script(SplitByLengths())
    dynamic = {"input_names": ["x", "lengths"], "dynamic_axes": {"x": {0: "n"}, "lengths": {0: "b"}}}
    others = [(torch.randn(3, 2), torch.tensor([3])), (torch.randn(9, 2), torch.tensor([2, 4, 1, 2]))]
    assert_matches_torch(model, (torch.randn(5, 2), torch.tensor([2, 3])), opset=opset, other_inputs=others, **dynamic)


class Preprocess(torch.nn.Module):
    """Detection preprocessing: resize keeping the aspect ratio to a target size, normalise,
    pad to a multiple of 32."""

    def __init__(self, target: int = 64) -> None:
        super().__init__()
        self.target = target
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))

    def forward(self, image: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h, w = image.shape[-2], image.shape[-1]
        scale = min(self.target / h, self.target / w)
        new_h, new_w = int(h * scale), int(w * scale)
        resized = F.interpolate(image, size=(new_h, new_w), mode="bilinear", align_corners=False)
        normalized = (resized - self.mean) / self.std
        pad_h = int(math.ceil(new_h / 32) * 32) - new_h
        pad_w = int(math.ceil(new_w / 32) * 32) - new_w
        return F.pad(normalized, [0, pad_w, 0, pad_h]), torch.tensor([new_h, new_w])


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_detection_preprocessing(opset: int) -> None:
    model = torch.jit.script(Preprocess())
    dynamic = {"input_names": ["image"], "dynamic_axes": {"image": {0: "b", 2: "h", 3: "w"}}}
    others = [(torch.rand(1, 3, 50, 120),), (torch.rand(2, 3, 200, 90),)]
    assert_matches_torch(
        model, (torch.rand(1, 3, 80, 100),), opset=opset, other_inputs=others, rtol=1e-3, atol=1e-4, **dynamic
    )


class BatchedPostprocess(torch.nn.Module):
    """Per-image detections in a loop over the batch: threshold, class-offset NMS by IoU matrix,
    keep the top-k, pad each image's result to a fixed count and stack."""

    def __init__(self, max_detections: int = 5) -> None:
        super().__init__()
        self.max_detections = max_detections

    def forward(self, boxes: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        results: list[torch.Tensor] = []
        for i in range(boxes.size(0)):
            best, labels = scores[i].max(1)
            keep = best > 0.2
            b, s, l = boxes[i][keep], best[keep], labels[keep]
            shifted = b + (l.to(b.dtype) * 100.0).unsqueeze(1)
            order = s.argsort(descending=True)
            shifted, b, s, l = shifted[order], b[order], s[order], l[order]
            lt = torch.max(shifted[:, None, :2], shifted[None, :, :2])
            rb = torch.min(shifted[:, None, 2:], shifted[None, :, 2:])
            inter = (rb - lt).clamp(min=0).prod(2)
            area = (shifted[:, 2:] - shifted[:, :2]).prod(1)
            iou = inter / (area[:, None] + area[None, :] - inter)
            survivors = ~((iou.triu(1) > 0.5).any(0))
            det = torch.cat([b[survivors], s[survivors, None], l[survivors, None].to(b.dtype)], 1)
            det = det[: self.max_detections]
            results.append(F.pad(det, [0, 0, 0, self.max_detections - det.size(0)], value=-1.0))
        return torch.stack(results)


def _batch(b: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    corner = torch.rand(b, n, 2) * 10
    return torch.cat([corner, corner + torch.rand(b, n, 2) * 5 + 1], 2), torch.rand(b, n, 3)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_batched_postprocess(opset: int) -> None:
    model = torch.jit.script(BatchedPostprocess())
    dynamic = {
        "input_names": ["boxes", "scores"],
        "dynamic_axes": {"boxes": {0: "b", 1: "n"}, "scores": {0: "b", 1: "n"}},
    }
    assert_matches_torch(model, _batch(2, 8), opset=opset, other_inputs=[_batch(1, 3), _batch(3, 20)], **dynamic)


class PadThree(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        time_major = torch.nn.utils.rnn.pad_sequence([a, b, c], padding_value=-1.0)
        left = torch.nn.utils.rnn.pad_sequence([a, b, c], batch_first=True, padding_side="left")
        return time_major, left


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_pad_sequence_of_a_fixed_list(opset: int) -> None:
    dynamic = {"input_names": ["a", "b", "c"], "dynamic_axes": {"a": {0: "x"}, "b": {0: "y"}, "c": {0: "z"}}}
    others = [(torch.randn(1, 2), torch.randn(6, 2), torch.randn(3, 2))]
    assert_matches_torch(
        torch.jit.script(PadThree()),
        (torch.randn(2, 2), torch.randn(4, 2), torch.randn(4, 2)),
        opset=opset,
        other_inputs=others,
        **dynamic,
    )


class NestedToList(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows: list[list[list[float]]] = x.tolist()
        return torch.tensor(rows[0])


class RowsToList(torch.nn.Module):
    """``tolist()`` of 2-d tensors: a list of rows, known at export time or at run time."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        rows: list[list[float]] = x.tolist()
        ids: list[list[int]] = (x > 0).long().tolist()
        total = 0.0
        for r in rows:
            total += r[0]
        return torch.tensor(rows[0]), torch.tensor(ids[-1]), torch.tensor(total)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize("axes", [{}, {0: "n"}, {1: "m"}, {0: "n", 1: "m"}], ids=["static", "rows", "cols", "both"])
def test_tolist_of_a_matrix(opset: int, axes: dict) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": axes}} if axes else {}
    other = torch.randn(5 if 0 in axes else 3, 6 if 1 in axes else 4)
    assert_matches_torch(
        torch.jit.script(RowsToList()), (torch.randn(3, 4),), opset=opset, other_inputs=[(other,)], **dynamic
    )


def test_a_node_without_a_source_range_is_located_by_its_user() -> None:
    """prim::tolist carries no source range of its own; the error names the line using it
    (tolist of a 3-d tensor is not supported)."""
    with pytest.raises(exporter.ExporterError, match=r"prim::tolist .*test_scripted_programs.py:\d+ \(return"):
        exporter.export(
            torch.jit.script(NestedToList()),
            (torch.randn(2, 3, 2),),
            io.BytesIO(),
            input_names=["x"],
            dynamic_axes={"x": {0: "n"}},
        )


# --------------------------------------------------------------------------- small constructs


class ConditionalRows(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        out = torch.jit.annotate(dict[str, torch.Tensor], {})
        rows: list[torch.Tensor] = []
        for i in range(x.size(0)):
            if bool(x[i].sum() > 0):
                rows.append(x[i] * 2)
        out["n"] = torch.tensor(len(rows))
        total = torch.zeros(x.size(1))
        for i, r in enumerate(rows):
            total = total + r * float(i)
        out["total"] = total
        return out


class DtypeChecks(torch.nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        neg = -1e9
        y = x.masked_fill(~mask, neg)
        if x.dtype == torch.float16:
            y = y.float()
        z = torch.softmax(y, -1).type_as(x) * math.pi
        assert z.size(0) == mask.size(0), f"batch mismatch {z.size(0)}"
        return z


class ChunksAndMaskedWrites(torch.nn.Module):
    def forward(self, x: torch.Tensor, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        parts = torch.chunk(x, 3, dim=1)
        picked = torch.gather(x, 1, index)
        y = x.clone()
        for i in range(x.size(0)):
            y[i][y[i] < 0] = 0.0
        return torch.cat([p.sum(1, keepdim=True) for p in parts], 1), picked + y.sum()


class ZippedLists(torch.nn.Module):
    def forward(self, xs: torch.Tensor) -> torch.Tensor:
        a: list[torch.Tensor] = []
        b: list[torch.Tensor] = []
        for i in range(xs.size(0)):
            a.append(xs[i])
            b.append(xs[i] * 2)
        s = torch.zeros(xs.size(1))
        for p, q in zip(a, b):
            s = s + p * q
        return s


@pytest.mark.parametrize(
    ("model", "args", "others", "dynamic"),
    [
        (ConditionalRows(), (torch.randn(4, 3),), [(torch.randn(6, 3),)], {"x": {0: "n"}}),
        (
            DtypeChecks(),
            (torch.randn(2, 5), torch.rand(2, 5) > 0.3),
            [(torch.randn(3, 7), torch.rand(3, 7) > 0.3)],
            {"x": {0: "b", 1: "t"}, "mask": {0: "b", 1: "t"}},
        ),
        (
            ChunksAndMaskedWrites(),
            (torch.randn(2, 6), torch.tensor([[0, 5], [1, 1]])),
            [(torch.randn(3, 6), torch.tensor([[2, 2], [0, 0], [5, 4]]))],
            {"x": {0: "b"}, "index": {0: "b"}},
        ),
        (ZippedLists(), (torch.randn(4, 3),), [(torch.randn(1, 3),)], {"xs": {0: "n"}}),
    ],
    ids=["A", "B", "C", "D"],
)
@pytest.mark.parametrize("opset", (13, 17))
def test_small_constructs(model: torch.nn.Module, args: tuple, others: list, dynamic: dict, opset: int) -> None:
    """Conditional appends (a sequence from 13), enumerate/zip over run-time lists, dtype
    checks and an f-string assert, chunks in a comprehension next to masked writes in a loop
    (torch's shape propagation asserts on that graph: the input types alone are used)."""
    names = {"A": ["x"], "B": ["x", "mask"], "C": ["x", "index"], "D": ["xs"]}[
        {"ConditionalRows": "A", "DtypeChecks": "B", "ChunksAndMaskedWrites": "C", "ZippedLists": "D"}[
            type(model).__name__
        ]
    ]
    assert_matches_torch(
        torch.jit.script(model), args, opset=opset, other_inputs=others, input_names=names, dynamic_axes=dynamic
    )


@torch.jit.script
class Box:
    def __init__(self, lo: torch.Tensor, hi: torch.Tensor) -> None:
        self.lo = lo
        self.hi = hi


class PickBox(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool(x.sum() > 0):
            box = Box(x.min(0)[0], x.max(0)[0])
        else:
            box = Box(x[0], x[-1])
        return box.hi - box.lo


def test_a_script_class_object_chosen_at_run_time_fails_by_name() -> None:
    with pytest.raises(
        exporter.ExporterError, match=r"prim::If .*test_scripted_programs.py:\d+.*ScriptObject\(.*Box\)"
    ):
        exporter.export(torch.jit.script(PickBox()), (torch.randn(3, 2),), io.BytesIO(), opset_version=17)
