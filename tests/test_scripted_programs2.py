"""A second corpus of scripted programs as users bring them (see test_scripted_programs.py for the
first): speech decoding (CTC, transducers, beam search over hypothesis tensors), audio
frontends, tokenizer-like integer post-processing, box coders and keypoints, packing by
lengths, chunked long inputs, message passing with index_add/scatter_reduce, and the
TorchScript language as production code uses it (Optional arguments, NamedTuple and nested
tuple returns, string-keyed dicts, lists of tuples built in loops, early returns, exported and
unused methods, ``torch.jit.annotate``, assertions and raises, buffers updated in forward).

Each program is scripted, exported, run in onnxruntime and compared with eager torch on 2-4
input sets of different sizes or values, at the opsets it needs.
"""

from __future__ import annotations

import copy
import math
from typing import NamedTuple, Optional

import pytest
import torch
import torch.nn.functional as F
from conftest import (
    FEATURE_OPSETS,
    OPTIONAL_OPSET,
    SEQUENCE_OPSET,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    assert_matches_torch_from,
    dynamic_inputs,
)

# --------------------------------------------------------------------------- speech decoding


class CTCBestPath(torch.nn.Module):
    """Batched CTC best-path decoding without a Python loop: argmax per frame, frames past each
    utterance's length masked, repeats and blanks dropped, survivors compacted to the left of a
    padded output by cumsum positions and scatter; returns the tokens (-1 padded) and counts."""

    def __init__(self, blank: int = 0) -> None:
        super().__init__()
        self.blank = blank

    def forward(self, log_probs: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch, steps = log_probs.size(0), log_probs.size(1)
        best = log_probs.argmax(-1)
        valid = torch.arange(steps).unsqueeze(0) < lengths.unsqueeze(1)
        previous = torch.cat([torch.full((batch, 1), -1, dtype=best.dtype), best[:, :-1]], 1)
        keep = valid & (best != previous) & (best != self.blank)
        positions = keep.to(torch.long).cumsum(1) - 1
        positions = torch.where(keep, positions, torch.full_like(positions, steps))
        out = torch.full((batch, steps + 1), -1, dtype=torch.long)
        out = out.scatter(1, positions, torch.where(keep, best, torch.full_like(best, -1)))
        return out[:, :steps], keep.sum(1)


def _ctc_inputs(batch: int, steps: int, vocab: int = 6) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.randint(1, steps + 1, (batch,))
    lengths[0] = steps
    return torch.randn(batch, steps, vocab).log_softmax(-1), lengths


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_ctc_best_path_batched(opset: int) -> None:
    model = torch.jit.script(CTCBestPath())
    dynamic = dynamic_inputs(log_probs={0: "b", 1: "t"}, lengths={0: "b"})
    others = [_ctc_inputs(1, 3), _ctc_inputs(4, 17)]
    assert_matches_torch(model, _ctc_inputs(2, 9), opset=opset, other_inputs=others, **dynamic)


class CTCForwardScore(torch.nn.Module):
    """The CTC forward algorithm (what a prefix scorer runs per hypothesis): the label sequence
    extended with blanks, alpha recursed over time with logsumexp of the stay / step / skip
    transitions, skips allowed only between different labels."""

    def __init__(self, blank: int = 0) -> None:
        super().__init__()
        self.blank = blank

    def forward(self, log_probs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        steps = log_probs.size(0)
        extended = torch.full((2 * labels.size(0) + 1,), self.blank, dtype=torch.long)
        extended[1::2] = labels
        states = extended.size(0)
        skip = torch.zeros(states, dtype=torch.bool)
        skip[2:] = (extended[2:] != self.blank) & (extended[2:] != extended[:-2])
        neg_inf = torch.full((states,), -1e30)
        alpha = neg_inf.clone()
        alpha[0] = log_probs[0, extended[0]]
        alpha[1] = log_probs[0, extended[1]]
        for t in range(1, steps):
            step = torch.cat([neg_inf[:1], alpha[:-1]])
            jump = torch.where(skip, torch.cat([neg_inf[:2], alpha[:-2]]), neg_inf)
            alpha = torch.logsumexp(torch.stack([alpha, step, jump]), 0) + log_probs[t].index_select(0, extended)
        return torch.logsumexp(alpha[-2:], 0)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_ctc_forward_score(opset: int) -> None:
    model = torch.jit.script(CTCForwardScore())
    dynamic = dynamic_inputs(log_probs={0: "t"}, labels={0: "n"})
    others = [
        (torch.randn(12, 5).log_softmax(-1), torch.tensor([3, 3, 1, 4])),
        (torch.randn(3, 5).log_softmax(-1), torch.tensor([2])),
    ]
    assert_matches_torch(
        model, (torch.randn(7, 5).log_softmax(-1), torch.tensor([1, 2, 2])), opset=opset, other_inputs=others, **dynamic
    )


class TransducerGreedy(torch.nn.Module):
    """RNN-T greedy decoding: for each encoder frame, emit symbols from the joint network until
    it predicts blank (at most ``max_symbols`` per frame), advancing the prediction network
    (embedding + GRU cell) only on emitted symbols."""

    def __init__(self, vocab: int = 7, hidden: int = 8, blank: int = 0, max_symbols: int = 3) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.predictor = torch.nn.GRUCell(hidden, hidden)
        self.joint = torch.nn.Linear(hidden, vocab)
        self.blank = blank
        self.max_symbols = max_symbols

    def forward(self, encoded: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        state = torch.zeros(1, self.embed.embedding_dim)
        token = torch.tensor([self.blank])
        prediction = self.predictor(self.embed(token), state)
        emitted = torch.zeros(0, dtype=torch.long)
        frames = torch.zeros(0, dtype=torch.long)
        for t in range(encoded.size(0)):
            symbols = 0
            while symbols < self.max_symbols:
                logits = self.joint(torch.tanh(encoded[t : t + 1] + prediction)) + bias
                best = logits.argmax(-1)
                if int(best[0]) == self.blank:
                    break
                emitted = torch.cat([emitted, best])
                frames = torch.cat([frames, torch.tensor([t])])
                state = prediction
                prediction = self.predictor(self.embed(best), state)
                symbols += 1
        return emitted, frames


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_transducer_greedy(opset: int) -> None:
    model = torch.jit.script(TransducerGreedy().eval())
    dynamic = dynamic_inputs(encoded={0: "t"}, bias={})
    blank_bias = torch.zeros(7)
    blank_bias[0] = 1.5
    others = [(torch.randn(9, 8), torch.zeros(7)), (torch.randn(2, 8), blank_bias)]
    assert_matches_torch(model, (torch.randn(5, 8), torch.zeros(7)), opset=opset, other_inputs=others, **dynamic)


class TensorBeamSearch(torch.nn.Module):
    """Beam search with the hypotheses held in tensors: a [beam, length] token matrix and a
    score vector, the next beams chosen by topk over beam x vocab, parents gathered by integer
    division, finished beams frozen by masking their scores."""

    def __init__(self, vocab: int = 9, hidden: int = 6, beam: int = 3, eos: int = 1) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.cell = torch.nn.GRUCell(hidden, hidden)
        self.out = torch.nn.Linear(hidden, vocab)
        self.beam = beam
        self.eos = eos

    def forward(self, h0: torch.Tensor, steps: int) -> tuple[torch.Tensor, torch.Tensor]:
        vocab = self.out.out_features
        h = h0.expand(self.beam, -1).contiguous()
        tokens = torch.full((self.beam, 1), 2, dtype=torch.long)
        scores = torch.tensor([0.0] + [-1e9] * (self.beam - 1))
        finished = torch.zeros(self.beam, dtype=torch.bool)
        for _ in range(steps):
            h = self.cell(self.embed(tokens[:, -1]), h)
            log_probs = self.out(h).log_softmax(-1)
            stay = torch.full((vocab,), -1e9)
            stay[self.eos] = 0.0
            log_probs = torch.where(finished.unsqueeze(1), stay.unsqueeze(0), log_probs)
            total = (scores.unsqueeze(1) + log_probs).reshape(-1)
            scores, flat = total.topk(self.beam)
            parents = torch.div(flat, vocab, rounding_mode="floor")
            words = flat % vocab
            tokens = torch.cat([tokens[parents], words.unsqueeze(1)], 1)
            h = h[parents]
            finished = finished[parents] | (words == self.eos)
            if bool(finished.all()):
                break
        return tokens, scores


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_tensor_beam_search(opset: int) -> None:
    model = torch.jit.script(TensorBeamSearch().eval())
    others = [(torch.randn(1, 6), 1), (torch.randn(1, 6), 7)]
    assert_matches_torch(model, (torch.randn(1, 6), 4), opset=opset, other_inputs=others)


# --------------------------------------------------------------------------- audio frontends


def _mel_filterbank(bins: int, mels: int) -> torch.Tensor:
    """Triangular filters, evenly spaced: enough structure for a frontend test."""
    centers = torch.linspace(0, bins - 1, mels + 2)
    grid = torch.arange(bins, dtype=torch.float32)
    rising = (grid.unsqueeze(0) - centers[:-2].unsqueeze(1)) / (centers[1:-1] - centers[:-2]).unsqueeze(1)
    falling = (centers[2:].unsqueeze(1) - grid.unsqueeze(0)) / (centers[2:] - centers[1:-1]).unsqueeze(1)
    return torch.minimum(rising, falling).clamp(min=0.0).t().contiguous()


class LogMelFrontend(torch.nn.Module):
    """A speech frontend: pre-emphasis, framing with ``unfold``, a Hann window, the power
    spectrum as matmuls with cosine/sine tables, a mel filterbank matmul, log, and per-utterance
    CMVN (mean and variance over time)."""

    def __init__(self, frame: int = 16, hop: int = 8, mels: int = 5, preemphasis: float = 0.97) -> None:
        super().__init__()
        self.frame = frame
        self.hop = hop
        self.preemphasis = preemphasis
        bins = frame // 2 + 1
        angle = 2 * math.pi * torch.arange(frame).unsqueeze(1) * torch.arange(bins).unsqueeze(0) / frame
        self.register_buffer("cos", torch.cos(angle))
        self.register_buffer("sin", -torch.sin(angle))
        self.register_buffer("window", torch.hann_window(frame))
        self.register_buffer("mel", _mel_filterbank(bins, mels))

    def forward(self, wave: torch.Tensor) -> torch.Tensor:
        assert wave.dim() == 2, "expected [batch, samples]"
        emphasized = torch.cat([wave[:, :1], wave[:, 1:] - self.preemphasis * wave[:, :-1]], 1)
        frames = emphasized.unfold(1, self.frame, self.hop) * self.window
        power = (frames @ self.cos) ** 2 + (frames @ self.sin) ** 2
        features = torch.log(power @ self.mel + 1e-6)
        mean = features.mean(1, keepdim=True)
        std = features.std(1, keepdim=True).clamp(min=1e-5)
        return (features - mean) / std


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_log_mel_frontend(opset: int) -> None:
    model = torch.jit.script(LogMelFrontend())
    others = [(torch.randn(1, 64),), (torch.randn(3, 200),)]
    assert_matches_torch(
        model,
        (torch.randn(2, 100),),
        opset=opset,
        other_inputs=others,
        rtol=1e-3,
        atol=1e-4,
        **dynamic_inputs(wave={0: "b", 1: "n"}),
    )


class LengthCMVN(torch.nn.Module):
    """CMVN over the valid frames only: a [batch, time] mask from lengths, masked mean and
    variance, padded frames zeroed in the output."""

    def forward(self, features: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        mask = (torch.arange(features.size(1)).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(-1)
        count = lengths.to(features.dtype).clamp(min=1.0).view(-1, 1, 1)
        mean = (features * mask).sum(1, keepdim=True) / count
        var = (((features - mean) * mask) ** 2).sum(1, keepdim=True) / count
        return torch.where(mask, (features - mean) / torch.sqrt(var + 1e-5), torch.zeros_like(features))


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_cmvn_by_lengths(opset: int) -> None:
    model = torch.jit.script(LengthCMVN())
    dynamic = dynamic_inputs(features={0: "b", 1: "t"}, lengths={0: "b"})
    others = [(torch.randn(1, 3, 4), torch.tensor([2])), (torch.randn(4, 11, 4), torch.tensor([11, 1, 6, 9]))]
    assert_matches_torch(
        model, (torch.randn(2, 7, 4), torch.tensor([7, 4])), opset=opset, other_inputs=others, **dynamic
    )


class StreamingConv(torch.nn.Module):
    """A streaming causal convolution: the cached left context is prepended to each chunk and the
    new cache is the chunk's last ``kernel - 1`` frames (returned for the next call)."""

    def __init__(self, channels: int = 4, kernel: int = 3) -> None:
        super().__init__()
        self.conv = torch.nn.Conv1d(channels, channels, kernel)
        self.context = kernel - 1

    def forward(self, chunk: torch.Tensor, cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        extended = torch.cat([cache, chunk], 2)
        return self.conv(extended), extended[:, :, extended.size(2) - self.context :]


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_streaming_conv_cache(opset: int) -> None:
    model = torch.jit.script(StreamingConv().eval())
    dynamic = dynamic_inputs(chunk={0: "b", 2: "t"}, cache={0: "b"})
    others = [(torch.randn(1, 4, 1), torch.randn(1, 4, 2)), (torch.randn(3, 4, 12), torch.randn(3, 4, 2))]
    assert_matches_torch(
        model, (torch.randn(2, 4, 5), torch.randn(2, 4, 2)), opset=opset, other_inputs=others, **dynamic
    )


class SubsampledLengths(torch.nn.Module):
    """A Conformer-style 4x subsampling frontend: two stride-2 convolutions, the output lengths
    computed with integer floor division on the lengths tensor, and the mask they give."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Sequential(
            torch.nn.Conv2d(1, 2, 3, stride=2), torch.nn.ReLU(), torch.nn.Conv2d(2, 2, 3, stride=2)
        )

    def forward(self, features: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.conv(features.unsqueeze(1))
        b, c, t, f = x.size()
        x = x.transpose(1, 2).reshape(b, t, c * f)
        out_lengths = torch.div(torch.div(lengths - 3, 2, rounding_mode="floor") + 1 - 3, 2, rounding_mode="floor") + 1
        mask = torch.arange(t).unsqueeze(0) < out_lengths.unsqueeze(1)
        return x.masked_fill(~mask.unsqueeze(-1), 0.0), out_lengths


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_subsampled_lengths(opset: int) -> None:
    model = torch.jit.script(SubsampledLengths().eval())
    dynamic = dynamic_inputs(features={0: "b", 1: "t"}, lengths={0: "b"})
    others = [(torch.randn(1, 9, 9), torch.tensor([9])), (torch.randn(3, 31, 9), torch.tensor([31, 12, 20]))]
    assert_matches_torch(
        model, (torch.randn(2, 15, 9), torch.tensor([15, 10])), opset=opset, other_inputs=others, **dynamic
    )


# --------------------------------------------------------------------------- boxes and keypoints


class BoxCoder(torch.nn.Module):
    """torchvision's box coder written as users script it: weights as Python floats, deltas
    clamped by ``math.log(1000 / 16)``, encode of matched ground truth and decode of predicted
    deltas for every class at once (a view to [N, -1, 4])."""

    def __init__(self, weights: tuple[float, float, float, float] = (10.0, 10.0, 5.0, 5.0)) -> None:
        super().__init__()
        self.weights = weights
        self.clip = math.log(1000.0 / 16)

    def encode(self, reference: torch.Tensor, proposals: torch.Tensor) -> torch.Tensor:
        wx, wy, ww, wh = self.weights
        pw = proposals[:, 2] - proposals[:, 0]
        ph = proposals[:, 3] - proposals[:, 1]
        px = proposals[:, 0] + 0.5 * pw
        py = proposals[:, 1] + 0.5 * ph
        gw = reference[:, 2] - reference[:, 0]
        gh = reference[:, 3] - reference[:, 1]
        gx = reference[:, 0] + 0.5 * gw
        gy = reference[:, 1] + 0.5 * gh
        return torch.stack(
            [wx * (gx - px) / pw, wy * (gy - py) / ph, ww * torch.log(gw / pw), wh * torch.log(gh / ph)], 1
        )

    def forward(self, deltas: torch.Tensor, boxes: torch.Tensor, gt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        wx, wy, ww, wh = self.weights
        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights
        d = deltas.reshape(deltas.size(0), -1, 4)
        dx = d[:, :, 0] / wx
        dy = d[:, :, 1] / wy
        dw = (d[:, :, 2] / ww).clamp(max=self.clip)
        dh = (d[:, :, 3] / wh).clamp(max=self.clip)
        x = dx * widths[:, None] + ctr_x[:, None]
        y = dy * heights[:, None] + ctr_y[:, None]
        w = torch.exp(dw) * widths[:, None]
        h = torch.exp(dh) * heights[:, None]
        decoded = torch.stack([x - 0.5 * w, y - 0.5 * h, x + 0.5 * w, y + 0.5 * h], 2).flatten(1)
        return decoded, self.encode(gt, boxes)


def _boxes(n: int) -> torch.Tensor:
    corner = torch.rand(n, 2) * 20
    return torch.cat([corner, corner + torch.rand(n, 2) * 10 + 1], 1)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_box_coder(opset: int) -> None:
    model = torch.jit.script(BoxCoder())
    dynamic = dynamic_inputs(deltas={0: "n"}, boxes={0: "n"}, gt={0: "n"})
    others = [(torch.randn(1, 12), _boxes(1), _boxes(1)), (torch.randn(13, 12) * 3, _boxes(13), _boxes(13))]
    assert_matches_torch(model, (torch.randn(5, 12), _boxes(5), _boxes(5)), opset=opset, other_inputs=others, **dynamic)


class Matcher(torch.nn.Module):
    """The proposal matcher of two-stage detectors: an IoU matrix [gt, anchors], the best gt per
    anchor, below/between thresholds marked -1/-2, then low-quality matches restored (each gt's
    best anchors keep their match) through nonzero on an equality with the row maxima."""

    def __init__(self, high: float = 0.6, low: float = 0.3) -> None:
        super().__init__()
        self.high = high
        self.low = low

    def forward(self, gt: torch.Tensor, anchors: torch.Tensor) -> torch.Tensor:
        area_g = (gt[:, 2] - gt[:, 0]) * (gt[:, 3] - gt[:, 1])
        area_a = (anchors[:, 2] - anchors[:, 0]) * (anchors[:, 3] - anchors[:, 1])
        lt = torch.max(gt[:, None, :2], anchors[None, :, :2])
        rb = torch.min(gt[:, None, 2:], anchors[None, :, 2:])
        wh = (rb - lt).clamp(min=0)
        inter = wh[:, :, 0] * wh[:, :, 1]
        iou = inter / (area_g[:, None] + area_a[None, :] - inter)
        values, matches = iou.max(0)
        all_matches = matches.clone()
        matches[values < self.low] = -1
        matches[(values >= self.low) & (values < self.high)] = -2
        best_per_gt, _ = iou.max(1)
        pairs = torch.nonzero(iou == best_per_gt[:, None])
        update = pairs[:, 1]
        matches[update] = all_matches[update]
        return matches


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_proposal_matcher(opset: int) -> None:
    model = torch.jit.script(Matcher())
    dynamic = dynamic_inputs(gt={0: "g"}, anchors={0: "a"})
    others = [(_boxes(1), _boxes(4)), (_boxes(6), _boxes(40))]
    assert_matches_torch(model, (_boxes(3), _boxes(12)), opset=opset, other_inputs=others, **dynamic)


class KeypointDecoder(torch.nn.Module):
    """Heatmap keypoint decoding (CenterNet / pose heads): the argmax per keypoint map, its x and
    y by integer division and remainder on the flat index, a sub-pixel offset gathered at that
    index, rescaled to the input image by a float stride; scores by sigmoid of the maximum."""

    def __init__(self, stride: float = 4.0) -> None:
        super().__init__()
        self.stride = stride

    def forward(self, heatmaps: torch.Tensor, offsets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n, k, h, w = heatmaps.shape
        flat = heatmaps.reshape(n, k, h * w)
        scores, index = flat.max(-1)
        ys = torch.div(index, w, rounding_mode="floor")
        xs = index % w
        off = offsets.reshape(n, 2, h * w)
        dx = off[:, 0].gather(1, index)
        dy = off[:, 1].gather(1, index)
        points = torch.stack([(xs.to(torch.float32) + dx) * self.stride, (ys.to(torch.float32) + dy) * self.stride], -1)
        return points, torch.sigmoid(scores)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_keypoint_decoder(opset: int) -> None:
    model = torch.jit.script(KeypointDecoder())
    dynamic = dynamic_inputs(heatmaps={0: "n", 2: "h", 3: "w"}, offsets={0: "n", 2: "h", 3: "w"})
    others = [(torch.randn(1, 3, 2, 5), torch.rand(1, 2, 2, 5)), (torch.randn(3, 3, 9, 7), torch.rand(3, 2, 9, 7))]
    assert_matches_torch(
        model, (torch.randn(2, 3, 6, 6), torch.rand(2, 2, 6, 6)), opset=opset, other_inputs=others, **dynamic
    )


class TopKDetections(torch.nn.Module):
    """Anchor-free detection output: top-k over all (location, class) scores at once, the class
    and location recovered by ``//`` and ``%`` on the flat index, boxes gathered by location."""

    def __init__(self, k: int = 5) -> None:
        super().__init__()
        self.k = k

    def forward(self, scores: torch.Tensor, boxes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        classes = scores.size(1)
        k = min(self.k, scores.numel())
        top, flat = scores.flatten().topk(k)
        location = flat // classes
        label = flat % classes
        return boxes[location], top, label


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_top_k_detections(opset: int) -> None:
    model = torch.jit.script(TopKDetections())
    dynamic = dynamic_inputs(scores={0: "n"}, boxes={0: "n"})
    others = [(torch.rand(1, 3), _boxes(1)), (torch.rand(30, 3), _boxes(30))]
    assert_matches_torch(model, (torch.rand(8, 3), _boxes(8)), opset=opset, other_inputs=others, **dynamic)


# --------------------------------------------------------------------------- tokens, packing, pooling


class SpecialTokenCompaction(torch.nn.Module):
    """Tokenizer-like post-processing on ids: special tokens masked out, surviving tokens moved
    to the left by cumsum positions and scatter, position ids restarted per row, padding with a
    pad id, and the attention mask derived from it."""

    def __init__(self, pad: int = 0, specials: tuple[int, int] = (1, 2)) -> None:
        super().__init__()
        self.pad = pad
        self.specials = specials

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        keep = ids != self.pad
        for special in self.specials:
            keep = keep & (ids != special)
        target = keep.to(torch.long).cumsum(1) - 1
        target = torch.where(keep, target, torch.full_like(target, ids.size(1)))
        packed = torch.full((ids.size(0), ids.size(1) + 1), self.pad, dtype=ids.dtype)
        packed = packed.scatter(1, target, ids)[:, :-1]
        mask = packed != self.pad
        positions = (mask.to(torch.long).cumsum(1) - 1).clamp(min=0) * mask
        return packed, positions, mask


def _ids(batch: int, steps: int) -> torch.Tensor:
    return torch.randint(0, 9, (batch, steps))


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_special_token_compaction(opset: int) -> None:
    model = torch.jit.script(SpecialTokenCompaction())
    others = [(_ids(1, 3),), (_ids(5, 20),)]
    assert_matches_torch(model, (_ids(2, 8),), opset=opset, other_inputs=others, **dynamic_inputs(ids={0: "b", 1: "t"}))


class PackUnpack(torch.nn.Module):
    """Sequence packing by lengths without pack_padded_sequence: valid frames of a padded batch
    gathered into one [total, D] tensor (a mask and nonzero), processed, and scattered back into
    the padded layout with index_put on the same indices."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(3, 3)

    def forward(self, padded: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mask = torch.arange(padded.size(1)).unsqueeze(0) < lengths.unsqueeze(1)
        index = mask.nonzero()
        packed = padded[index[:, 0], index[:, 1]]
        processed = torch.relu(self.proj(packed))
        out = torch.zeros_like(padded)
        out[index[:, 0], index[:, 1]] = processed
        return packed, out


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_pack_unpack_by_lengths(opset: int) -> None:
    model = torch.jit.script(PackUnpack().eval())
    dynamic = dynamic_inputs(padded={0: "b", 1: "t"}, lengths={0: "b"})
    others = [(torch.randn(1, 2, 3), torch.tensor([1])), (torch.randn(4, 9, 3), torch.tensor([9, 2, 5, 1]))]
    assert_matches_torch(
        model, (torch.randn(2, 5, 3), torch.tensor([3, 5])), opset=opset, other_inputs=others, **dynamic
    )


class MaskedPooling(torch.nn.Module):
    """Masked mean and max pooling over time by lengths (padded frames -inf for max, excluded
    from the mean), concatenated as an utterance embedding."""

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        mask = torch.arange(x.size(1)).unsqueeze(0) < lengths.unsqueeze(1)
        mean = (x * mask.unsqueeze(-1)).sum(1) / lengths.unsqueeze(1).to(x.dtype)
        peak = x.masked_fill(~mask.unsqueeze(-1), float("-inf")).amax(1)
        return torch.cat([mean, peak], -1)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_masked_mean_max_pooling(opset: int) -> None:
    model = torch.jit.script(MaskedPooling())
    dynamic = dynamic_inputs(x={0: "b", 1: "t"}, lengths={0: "b"})
    others = [(torch.randn(1, 1, 4), torch.tensor([1])), (torch.randn(3, 12, 4), torch.tensor([12, 3, 7]))]
    assert_matches_torch(
        model, (torch.randn(2, 6, 4), torch.tensor([6, 2])), opset=opset, other_inputs=others, **dynamic
    )


class ChunkedEncoder(torch.nn.Module):
    """Long inputs processed in chunks by a ``while`` loop over a run-time length: each chunk
    (the last one shorter) through a layer with the previous chunk's summary as context, the
    outputs concatenated."""

    def __init__(self, dim: int = 4) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(2 * dim, dim)

    def forward(self, x: torch.Tensor, chunk: int) -> torch.Tensor:
        start = 0
        total = x.size(0)
        context = torch.zeros(1, x.size(1))
        outputs: list[torch.Tensor] = []
        while start < total:
            end = min(start + chunk, total)
            piece = x[start:end]
            y = torch.tanh(self.layer(torch.cat([piece, context.expand(piece.size(0), -1)], 1)))
            outputs.append(y)
            context = y.mean(0, keepdim=True)
            start = end
        return torch.cat(outputs, 0)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_chunked_long_input(opset: int) -> None:
    model = torch.jit.script(ChunkedEncoder().eval())
    others = [(torch.randn(3, 4), 5), (torch.randn(23, 4), 4)]
    assert_matches_torch(
        model, (torch.randn(10, 4), 3), opset=opset, other_inputs=others, **dynamic_inputs(x={0: "n"}, chunk={})
    )


class MessagePassing(torch.nn.Module):
    """Graph message passing without recursion: per round, messages from edge sources summed into
    destinations with ``index_add`` and their maximum taken with ``scatter_reduce``; degrees by
    ``bincount``-free counting (index_add of ones)."""

    def __init__(self, dim: int = 4, rounds: int = 2) -> None:
        super().__init__()
        self.message = torch.nn.Linear(dim, dim)
        self.update = torch.nn.Linear(3 * dim, dim)
        self.rounds = rounds

    def forward(self, nodes: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
        src, dst = edges[0], edges[1]
        degree = torch.zeros(nodes.size(0)).index_add(0, dst, torch.ones(dst.size(0)))
        h = nodes
        for _ in range(self.rounds):
            messages = self.message(h)[src]
            total = torch.zeros_like(h).index_add(0, dst, messages)
            index = dst.unsqueeze(1).expand(-1, h.size(1))
            peak = torch.zeros_like(h).scatter_reduce(0, index, messages, reduce="amax", include_self=False)
            mean = total / degree.clamp(min=1.0).unsqueeze(1)
            h = torch.relu(self.update(torch.cat([h, mean, peak], 1)))
        return h


def _graph(nodes: int, edges: int) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(nodes, 4), torch.randint(0, nodes, (2, edges))


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_message_passing(opset: int) -> None:
    model = torch.jit.script(MessagePassing().eval())
    dynamic = dynamic_inputs(nodes={0: "n"}, edges={1: "e"})
    others = [_graph(2, 1), _graph(15, 40)]
    assert_matches_torch(model, _graph(6, 10), opset=opset, other_inputs=others, **dynamic)


class TreeDepthAndSums(torch.nn.Module):
    """A tree given by parent pointers (the root its own parent): node depths by repeated gather
    ``depth = depth[parent] + 1`` for a run-time number of levels, subtree sums by pushing values
    up level by level with index_add (deepest first)."""

    def forward(self, parent: torch.Tensor, values: torch.Tensor, levels: int) -> tuple[torch.Tensor, torch.Tensor]:
        is_root = parent == torch.arange(parent.size(0))
        depth = torch.zeros_like(parent)
        for _ in range(levels):
            depth = torch.where(is_root, torch.zeros_like(depth), depth[parent] + 1)
        sums = values.clone()
        for level in range(levels, 0, -1):
            at_level = (depth == level).to(values.dtype)
            sums = sums.index_add(0, parent, sums * at_level)
        return depth, sums


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_tree_depth_and_subtree_sums(opset: int) -> None:
    model = torch.jit.script(TreeDepthAndSums())
    others = [(torch.tensor([0, 0]), torch.rand(2), 1), (torch.tensor([0, 0, 1, 1, 3, 4, 0, 6]), torch.rand(8), 4)]
    dynamic = dynamic_inputs(parent={0: "n"}, values={0: "n"}, levels={})
    assert_matches_torch(
        model, (torch.tensor([0, 0, 0, 1, 2]), torch.rand(5), 2), opset=opset, other_inputs=others, **dynamic
    )


# --------------------------------------------------------------------------- the TorchScript language


class OptionalArguments(torch.nn.Module):
    """Optional arguments with ``is None`` / ``is not None`` branches: an optional mask, an
    optional bias tensor refined by assignment, an optional float scale with a default from
    the module."""

    def __init__(self) -> None:
        super().__init__()
        self.default_scale = 0.5

    def forward(
        self, x: torch.Tensor, mask: Optional[torch.Tensor] = None, bias: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        scale: Optional[float] = None
        if x.size(-1) > 4:
            scale = 1.0 / math.sqrt(x.size(-1))
        if scale is None:
            scale = self.default_scale
        y = x * scale
        if mask is not None:
            y = y.masked_fill(~mask, 0.0)
        if bias is None:
            return y.sum(-1)
        return y.sum(-1) + bias


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize("given", ["none", "mask", "mask_and_bias"])
def test_optional_arguments(opset: int, given: str) -> None:
    model = torch.jit.script(OptionalArguments())

    def inputs(n: int, width: int) -> tuple:
        x = torch.randn(n, width)
        if given == "none":
            return (x,)
        mask = torch.rand(n, width) > 0.3
        return (x, mask) if given == "mask" else (x, mask, torch.randn(n))

    names = ["x", "mask", "bias"][: len(inputs(1, 1))]
    dynamic = {"input_names": names, "dynamic_axes": {name: {0: "n"} for name in names}}
    assert_matches_torch(model, inputs(3, 6), opset=opset, other_inputs=[inputs(1, 6), inputs(7, 6)], **dynamic)


class Tracked(NamedTuple):
    boxes: torch.Tensor
    scores: torch.Tensor
    extra: tuple[torch.Tensor, int]


class NamedTupleAndNested(torch.nn.Module):
    """A NamedTuple result holding a nested (tensor, int) tuple, built by a helper method, and
    a tuple of tuples unpacked again in forward."""

    def pair(self, x: torch.Tensor) -> tuple[tuple[torch.Tensor, torch.Tensor], int]:
        return (x.max(1)[0], x.min(1)[0]), x.size(1)

    def forward(self, x: torch.Tensor) -> Tracked:
        (high, low), width = self.pair(x)
        return Tracked(torch.stack([low, high], 1), (high - low) / width, (x.mean(1), width * 2))


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_named_tuple_with_nested_tuple(opset: int) -> None:
    model = torch.jit.script(NamedTupleAndNested())
    assert_matches_torch(
        model,
        (torch.randn(3, 5),),
        opset=opset,
        other_inputs=[(torch.randn(1, 5),), (torch.randn(8, 5),)],
        **dynamic_inputs(x={0: "n"}),
    )


class StringKeyedHeads(torch.nn.Module):
    """Multi-task heads over a ``Dict[str, Tensor]`` input: features looked up by key, an
    optional key tested with ``in``, heads in a ModuleDict iterated by ``items()``, and a
    ``Dict[str, Tensor]`` result."""

    def __init__(self) -> None:
        super().__init__()
        self.heads = torch.nn.ModuleDict({"cls": torch.nn.Linear(4, 3), "reg": torch.nn.Linear(4, 2)})

    def forward(self, features: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        x = features["image"]
        if "text" in features:
            x = x + features["text"]
        out = torch.jit.annotate(dict[str, torch.Tensor], {})
        for name, head in self.heads.items():
            out[name] = head(x)
        out["norm"] = torch.linalg.vector_norm(x, dim=1)
        return out


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_string_keyed_dict_input_and_output(opset: int) -> None:
    model = torch.jit.script(StringKeyedHeads().eval())
    # a trailing dict is keyword arguments in torch's convention: an empty one after the features
    args = ({"image": torch.randn(2, 4), "text": torch.randn(2, 4)}, {})
    others = [({"image": torch.randn(5, 4), "text": torch.randn(5, 4)}, {})]
    assert_matches_torch(
        model, args, opset=opset, other_inputs=others, **dynamic_inputs(features_image={0: "n"}, features_text={0: "n"})
    )


class ListOfTuples(torch.nn.Module):
    """A ``List[Tuple[Tensor, Tensor]]`` built in a loop over levels, indexed at export-time
    positions (first, last by -1), iterated with tuple unpacking and ``enumerate``."""

    def __init__(self, levels: int = 3) -> None:
        super().__init__()
        self.levels = levels

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        pyramid: list[tuple[torch.Tensor, torch.Tensor]] = []
        current = x
        for _ in range(self.levels):
            pyramid.append((current, current.mean(-1)))
            current = F.avg_pool1d(current, 2)
        first, _ = pyramid[0]
        last_features, last_summary = pyramid[-1]
        total = torch.zeros(x.size(0), x.size(1))
        for level, (features, summary) in enumerate(pyramid):
            total = total + summary * (level + 1) + features.amax(-1)
        return total + first.sum(-1), last_features * last_summary.unsqueeze(-1)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_list_of_tuples_built_in_a_loop(opset: int) -> None:
    model = torch.jit.script(ListOfTuples())
    others = [(torch.randn(1, 2, 8),), (torch.randn(4, 2, 32),)]
    assert_matches_torch(
        model, (torch.randn(2, 2, 16),), opset=opset, other_inputs=others, **dynamic_inputs(x={0: "b", 2: "t"})
    )


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


class ExportedAndUnused(torch.nn.Module):
    """``@torch.jit.export`` methods called from forward, an ``@torch.jit.unused`` debugging
    method behind ``torch.jit.is_scripting()``, and an ``@torch.jit.ignore``d Python helper
    that is never reached when scripted."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    @torch.jit.export
    def normalize(self, x: torch.Tensor, eps: float) -> torch.Tensor:
        return x / (torch.linalg.vector_norm(x, dim=-1, keepdim=True) + eps)

    @torch.jit.export
    def score(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (self.normalize(a, 1e-6) * self.normalize(b, 1e-3)).sum(-1)

    @torch.jit.unused
    def debug_dump(self, x: torch.Tensor) -> torch.Tensor:
        print(x.numpy())  # eager-only Python
        return x

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if not torch.jit.is_scripting():
            a = self.debug_dump(a)
        return self.score(self.proj(a), b)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_exported_and_unused_methods(opset: int) -> None:
    model = torch.jit.script(ExportedAndUnused().eval())
    dynamic = dynamic_inputs(a={0: "n"}, b={0: "n"})
    others = [(torch.randn(1, 4), torch.randn(1, 4)), (torch.randn(9, 4), torch.randn(9, 4))]
    assert_matches_torch(model, (torch.randn(3, 4), torch.randn(3, 4)), opset=opset, other_inputs=others, **dynamic)


class NumberArithmetic(torch.nn.Module):
    """Python int and float arithmetic mixed with tensors: sizes through ``//``, ``%``, ``**``,
    ``math.sqrt`` and ``float()``/``int()`` conversions, ``min``/``max`` of ints, a float read
    from a tensor with ``.item()`` and fed back into tensor math."""

    def forward(self, x: torch.Tensor, offset: int) -> tuple[torch.Tensor, float, int]:
        n = x.size(1)
        half = n // 2 + offset % 3
        scale = 1.0 / math.sqrt(float(n))
        power = int(2**offset)  # int ** int is a float in TorchScript
        keep = max(1, min(half, n))
        y = x[:, :keep] * scale + power
        peak = float(y.max().item())
        z = y / (abs(peak) + 1.0) - float(n % 4)
        return z, peak * 2.0 - keep, int(peak > 0.0) + keep * power


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_python_number_arithmetic(opset: int) -> None:
    model = torch.jit.script(NumberArithmetic())
    others = [(torch.randn(1, 3), 0), (torch.randn(4, 11), 5)]
    assert_matches_torch(
        model, (torch.randn(2, 6), 2), opset=opset, other_inputs=others, **dynamic_inputs(x={0: "b", 1: "n"}, offset={})
    )


class Annotated(torch.nn.Module):
    """``torch.jit.annotate`` on empty containers (a list of tensors, a list of ints, an
    Optional tensor) that are filled in a loop over a run-time count."""

    def forward(self, x: torch.Tensor, steps: int) -> tuple[torch.Tensor, torch.Tensor]:
        outputs = torch.jit.annotate(list[torch.Tensor], [])
        lengths = torch.jit.annotate(list[int], [])
        best = torch.jit.annotate(Optional[torch.Tensor], None)
        for i in range(steps):
            y = x * (i + 1)
            outputs.append(y.sum(0))
            lengths.append(i * 2)
            if best is None:
                best = y
            else:
                best = torch.maximum(best, y.flip(0))
        assert best is not None
        return torch.stack(outputs) + torch.tensor(lengths).unsqueeze(1), best


# onnxruntime 1.32 has no kernel for Optional-28 (onnx's reference evaluator cannot run the
# optional carried through a Loop either): the newest opset it runs here is 27
@pytest.mark.parametrize("opset", (11, 13, 16, 17, 27))
def test_jit_annotate_containers(opset: int) -> None:
    """The Optional ``best``, carried through the run-time loop from None, is an ONNX optional
    loop-carried value: Loop carries them from opset 16, and the export below it says so."""
    model = torch.jit.script(Annotated())
    others = [(torch.randn(1, 3), 1), (torch.randn(5, 3), 6)]
    assert_matches_torch_from(
        OPTIONAL_OPSET,
        model,
        (torch.randn(2, 3), 3),
        opset=opset,
        other_inputs=others,
        **dynamic_inputs(x={0: "n"}, steps={}),
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


# --------------------------------------------------------------------------- lists of tuples at run-time positions


class PerImageClip(torch.nn.Module):
    """The pattern of torchvision's scripted RPN (rpn.py ``filter_proposals``): image sizes
    collected as a ``List[Tuple[int, int]]``, proposals picked per image by advanced indexing
    with ``arange(num_images)`` (the number of images is then a run-time size), and a loop that
    zips the proposals with the list of tuples: each tuple is read at the loop's run-time
    position."""

    def forward(
        self, images: list[torch.Tensor], boxes: torch.Tensor, scores: torch.Tensor
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        sizes: list[tuple[int, int]] = []
        for image in images:
            sizes.append((image.shape[-2], image.shape[-1]))
        batch_index = torch.arange(boxes.size(0))[:, None]
        top = scores.topk(3, dim=1)[1]
        picked = boxes[batch_index, top]
        clipped: list[torch.Tensor] = []
        for image_boxes, size in zip(picked, sizes):
            height, width = size
            clipped.append(torch.stack([image_boxes[:, 0].clamp(0, width), image_boxes[:, 1].clamp(0, height)], 1))
        shifted: list[torch.Tensor] = []
        for i in range(picked.size(0)):
            height, width = sizes[i]
            shifted.append(picked[i, :, 2:] - torch.tensor([width, height]))
        return clipped, shifted


def _per_image(batch: int, anchors: int) -> tuple:
    images = [torch.randn(3, 10 + 3 * i, 12 + 5 * i) for i in range(batch)]
    return images, torch.rand(batch, anchors, 4) * 30, torch.rand(batch, anchors)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_list_of_tuples_at_a_run_time_position(opset: int) -> None:
    """The list's length is known at export time (the images are inputs); the loops' trip
    counts are not (the boxes' batch is dynamic): each field of the tuples is picked at the
    loop position, a Gather of the stacked numbers. The per-image results are lists built by
    loops with a run-time trip count: ONNX sequences, from opset 11."""
    model = torch.jit.script(PerImageClip())
    names = ["image0", "image1", "boxes", "scores"]
    dynamic = {"input_names": names, "dynamic_axes": {"boxes": {0: "b", 1: "n"}, "scores": {0: "b", 1: "n"}}}
    images, boxes, scores = _per_image(2, 6)
    other = (images, torch.rand(2, 9, 4) * 30, torch.rand(2, 9))
    assert_matches_torch_from(
        SEQUENCE_OPSET, model, (images, boxes, scores), opset=opset, other_inputs=[other], **dynamic
    )


class ProposalFilter(torch.nn.Module):
    """torchvision's RPN ``filter_proposals`` in small: per-level objectness maps of run-time
    sizes flattened and concatenated, split again by the run-time anchor counts, top-k per level
    with ``k = min(limit, count)``, then ``arange(num_images)`` with ``num_images =
    proposals.shape[0]`` (a static dim of a partly dynamic shape) for advanced indexing, and a
    loop zipping the picked rows with the image sizes. The number of images must stay known
    through all of it, so the loop unrolls as it does when traced."""

    def __init__(self, limit: int = 4) -> None:
        super().__init__()
        self.limit = limit

    def forward(
        self, images: list[torch.Tensor], maps: list[torch.Tensor], deltas: torch.Tensor
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        sizes: list[tuple[int, int]] = [(image.shape[-2], image.shape[-1]) for image in images]
        counts = [m.shape[-2] * m.shape[-1] for m in maps]
        objectness = torch.cat([m.flatten(1) for m in maps], 1)
        proposals = (deltas.reshape(len(images), -1, 2) * 10).view(len(images), -1, 2)
        num_images = proposals.shape[0]
        picks: list[torch.Tensor] = []
        offset = 0
        for level in objectness.split(counts, 1):
            k = min(self.limit, level.shape[1])
            picks.append(level.topk(k, dim=1)[1] + offset)
            offset += level.shape[1]
        top = torch.cat(picks, 1)
        batch_index = torch.arange(num_images)[:, None]
        scores = objectness[batch_index, top].sigmoid()
        picked = proposals[batch_index, top]
        boxes: list[torch.Tensor] = []
        kept: list[torch.Tensor] = []
        for image_boxes, image_scores, size in zip(picked, scores, sizes):
            height, width = size
            boxes.append(torch.stack([image_boxes[:, 0].clamp(0, width), image_boxes[:, 1].clamp(0, height)], 1))
            kept.append(image_scores[image_scores > 0.5])
        return boxes, kept


def _proposal_inputs(side: int) -> tuple:
    maps = [torch.randn(1, 1, side, side), torch.randn(1, 1, side // 2, side // 2 + 1)]
    anchors = sum(m.shape[-2] * m.shape[-1] for m in maps)
    return [torch.randn(3, 4 * side, 5 * side)], maps, torch.randn(1, anchors * 2)


@pytest.mark.parametrize("opset", (10, *SEQUENCE_OPSETS))
def test_rpn_proposal_filter_keeps_the_number_of_images(opset: int) -> None:
    model = torch.jit.script(ProposalFilter())
    names = ["image", "map0", "map1", "deltas"]
    axes = {"image": {1: "h", 2: "w"}, "map0": {2: "h0", 3: "w0"}, "map1": {2: "h1", 3: "w1"}, "deltas": {1: "n"}}
    onnx_model = assert_matches_torch(
        model,
        _proposal_inputs(6),
        opset=opset,
        other_inputs=[_proposal_inputs(4)],
        input_names=names,
        dynamic_axes=axes,
    )
    kinds = {node.op_type for node in onnx_model.graph}
    assert not kinds & {"Loop", "SequenceConstruct", "SequenceInsert", "SequenceAt"}, sorted(kinds)


# --------------------------------------------------------------------------- more decoding and sequence programs


class CTCPrefixBeam(torch.nn.Module):
    """A CTC prefix beam search over tensors: prefixes in a [beam, T] token matrix with their
    lengths, each candidate (beam, token) either keeps its prefix (blank, or a repeat of the
    prefix's last token) or extends it (written at the prefix's length with scatter); the best
    ``beam`` candidates by topk over beam x vocab, parents by integer division."""

    def __init__(self, beam: int = 3, blank: int = 0) -> None:
        super().__init__()
        self.beam = beam
        self.blank = blank

    def forward(self, log_probs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        steps, vocab = log_probs.size(0), log_probs.size(1)
        prefixes = torch.full((self.beam, steps), -1, dtype=torch.long)
        lengths = torch.zeros(self.beam, dtype=torch.long)
        last = torch.full((self.beam,), self.blank, dtype=torch.long)
        scores = torch.tensor([0.0] + [-1e9] * (self.beam - 1))
        for t in range(steps):
            total = (scores.unsqueeze(1) + log_probs[t].unsqueeze(0)).reshape(-1)
            scores, flat = total.topk(self.beam)
            parent = torch.div(flat, vocab, rounding_mode="floor")
            token = flat % vocab
            keep = (token == self.blank) | (token == last[parent])
            prefixes = prefixes[parent]
            lengths = lengths[parent]
            position = lengths.clamp(max=steps - 1).unsqueeze(1)
            written = prefixes.scatter(1, position, token.unsqueeze(1))
            prefixes = torch.where(keep.unsqueeze(1), prefixes, written)
            lengths = lengths + (~keep).to(torch.long)
            last = torch.where(token == self.blank, last[parent], token)
        return prefixes, lengths, scores


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_ctc_prefix_beam_search(opset: int) -> None:
    model = torch.jit.script(CTCPrefixBeam())
    others = [(torch.randn(2, 5).log_softmax(-1),), (torch.randn(11, 5).log_softmax(-1),)]
    assert_matches_torch(
        model,
        (torch.randn(6, 5).log_softmax(-1),),
        opset=opset,
        other_inputs=others,
        **dynamic_inputs(log_probs={0: "t"}),
    )


class BreadthFirstDistances(torch.nn.Module):
    """Breadth-first search on an adjacency matrix in a ``while`` loop whose condition is a
    tensor (the frontier is not empty): each round the frontier's neighbours not yet visited
    get the round number as their distance; unreachable nodes stay -1."""

    def forward(self, adjacency: torch.Tensor, source: int) -> torch.Tensor:
        n = adjacency.size(0)
        distance = torch.full((n,), -1, dtype=torch.long)
        frontier = torch.zeros(n, dtype=torch.bool)
        frontier[source] = True
        distance[source] = 0
        visited = frontier.clone()
        step = 0
        while bool(frontier.any()):
            step += 1
            reached = (adjacency[frontier].sum(0) > 0) & ~visited
            distance = torch.where(reached, torch.full_like(distance, step), distance)
            visited = visited | reached
            frontier = reached
        return distance


def _adjacency(n: int, p: float) -> torch.Tensor:
    return (torch.rand(n, n) < p).to(torch.float32)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_breadth_first_distances(opset: int) -> None:
    model = torch.jit.script(BreadthFirstDistances())
    others = [(_adjacency(3, 0.0), 1), (_adjacency(12, 0.15), 5), (torch.diag(torch.ones(7), 1)[:7, :7], 0)]
    assert_matches_torch(
        model,
        (_adjacency(6, 0.3), 0),
        opset=opset,
        other_inputs=others,
        **dynamic_inputs(adjacency={0: "n", 1: "n"}, source={}),
    )


class RepetitionPenaltyGreedy(torch.nn.Module):
    """Greedy generation with a repetition penalty (as in HF's generate): the scores of tokens
    generated so far are gathered, divided (or multiplied, when negative) by the penalty and
    scattered back; temperature from a float argument; stop on EOS."""

    def __init__(self, vocab: int = 10, hidden: int = 8, eos: int = 1, penalty: float = 1.5) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.cell = torch.nn.GRUCell(hidden, hidden)
        self.out = torch.nn.Linear(hidden, vocab)
        self.eos = eos
        self.penalty = penalty

    def forward(self, h: torch.Tensor, prompt: torch.Tensor, temperature: float, steps: int) -> torch.Tensor:
        generated = prompt
        for _ in range(steps):
            h = self.cell(self.embed(generated[:, -1]), h)
            logits = self.out(h) / temperature
            seen = logits.gather(1, generated)
            seen = torch.where(seen < 0, seen * self.penalty, seen / self.penalty)
            logits = logits.scatter(1, generated, seen)
            token = logits.argmax(-1, keepdim=True)
            generated = torch.cat([generated, token], 1)
            if bool((token == self.eos).all()):
                break
        return generated


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_repetition_penalty_greedy(opset: int) -> None:
    model = torch.jit.script(RepetitionPenaltyGreedy().eval())
    dynamic = dynamic_inputs(h={0: "b"}, prompt={0: "b", 1: "p"}, temperature={}, steps={})
    others = [
        (torch.randn(1, 8), torch.tensor([[2]]), 0.5, 3),
        (torch.randn(3, 8), torch.randint(2, 10, (3, 4)), 2.0, 8),
    ]
    assert_matches_torch(
        model, (torch.randn(2, 8), torch.randint(2, 10, (2, 2)), 1.0, 5), opset=opset, other_inputs=others, **dynamic
    )


class RotaryAttention(torch.nn.Module):
    """Rotary position embeddings from a cos/sin cache sliced at a run-time position offset (a
    KV-cache decoder's step), rotate-half written with ``chunk`` and ``cat``, and ALiBi-style
    linear biases whose slopes are ``2 ** (-8 * (h + 1) / heads)`` computed with Python floats."""

    def __init__(self, heads: int = 2, dim: int = 8, max_len: int = 64) -> None:
        super().__init__()
        self.heads = heads
        inverse = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        angles = torch.arange(max_len, dtype=torch.float32)[:, None] * inverse[None, :]
        self.register_buffer("cos", torch.cat([angles, angles], -1).cos())
        self.register_buffer("sin", torch.cat([angles, angles], -1).sin())

    def rotate(self, x: torch.Tensor, offset: int) -> torch.Tensor:
        length = x.size(-2)
        cos = self.cos[offset : offset + length]
        sin = self.sin[offset : offset + length]
        first, second = x.chunk(2, -1)
        return x * cos + torch.cat([-second, first], -1) * sin

    def forward(self, q: torch.Tensor, k: torch.Tensor, offset: int) -> torch.Tensor:
        q = self.rotate(q, offset)
        k = self.rotate(k, 0)
        slopes = torch.tensor([2 ** (-8.0 * (h + 1) / self.heads) for h in range(self.heads)])
        distance = torch.arange(k.size(-2))[None, :] - (torch.arange(q.size(-2))[:, None] + offset)
        bias = slopes[:, None, None] * distance.to(torch.float32).clamp(max=0)[None]
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1)) + bias
        return scores.softmax(-1)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_rotary_attention_with_alibi(opset: int) -> None:
    model = torch.jit.script(RotaryAttention())
    dynamic = dynamic_inputs(q={1: "s"}, k={1: "t"}, offset={})
    others = [(torch.randn(2, 1, 8), torch.randn(2, 9, 8), 8), (torch.randn(2, 6, 8), torch.randn(2, 6, 8), 0)]
    assert_matches_torch(
        model, (torch.randn(2, 3, 8), torch.randn(2, 7, 8), 4), opset=opset, other_inputs=others, **dynamic
    )


class ResizedPositions(torch.nn.Module):
    """ViT-style position embeddings resized to the run-time patch grid (bicubic
    ``F.interpolate`` to a size read from the input), with a ``torch.jit.is_tracing()``
    branch that scripting never takes."""

    def __init__(self, grid: int = 4, dim: int = 6) -> None:
        super().__init__()
        self.patch = torch.nn.Conv2d(3, dim, 4, stride=4)
        self.positions = torch.nn.Parameter(torch.randn(1, dim, grid, grid))

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        x = self.patch(image)
        if torch.jit.is_tracing():
            positions = self.positions
        else:
            positions = F.interpolate(self.positions, size=(x.size(2), x.size(3)), mode="bicubic", align_corners=False)
        return (x + positions).flatten(2).transpose(1, 2)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_resized_position_embeddings(opset: int) -> None:
    model = torch.jit.script(ResizedPositions().eval())
    others = [(torch.randn(1, 3, 8, 12),), (torch.randn(2, 3, 24, 20),)]
    assert_matches_torch(
        model,
        (torch.randn(1, 3, 16, 16),),
        opset=opset,
        other_inputs=others,
        **dynamic_inputs(image={0: "b", 2: "h", 3: "w"}),
    )
