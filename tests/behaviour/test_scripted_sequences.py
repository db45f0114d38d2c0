"""Padded batches of sequences as production code scripts their processing, by lengths known
only at run time: token ids trimmed, truncated, compacted and bucketed, word pieces pooled,
frames repeated by predicted durations, packed and unpacked, pooled under masks, split by
lengths, windowed, normalised over valid frames; speech frontends (log-mel, CMVN, streaming
convolutions with a cache, subsampled lengths) and long inputs processed chunk by chunk.

Each program is scripted, exported with dynamic batch and length axes and compared with eager
torch in onnxruntime on inputs of other lengths.
"""

import math
from typing import Final, Optional

import pytest
import torch
import torch.nn.functional as F
from conftest import (
    CONTROL_FLOW_SEQUENCE_OPSETS,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    dynamic_inputs,
)


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
