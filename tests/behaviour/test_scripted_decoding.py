"""Decoding loops as production code scripts them: greedy decoding with ``while`` and ``break``,
top-k and top-p filtering, repetition penalties, beam search (hypotheses in tensors, finished
lists), CRF Viterbi and its log partition, CTC (best path, greedy collapse, forward score,
prefix beam search) and RNN-T greedy decoding.

Each program is scripted, exported and compared with eager torch in onnxruntime on input sets
that take other branches and trip counts; a program whose lists grow in a loop with a run-time
trip count needs ONNX sequences in If and Loop (opset 13), and below it the export names the
opset.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import (
    CONTROL_FLOW_SEQUENCE_OPSET,
    FEATURE_OPSETS,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    assert_matches_torch_from,
    dynamic_inputs,
)


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


def _finalizing_beam_inputs(eos_bias: float) -> tuple[torch.Tensor, torch.Tensor]:
    bias = torch.zeros(9)
    bias[1] = eos_bias
    return torch.randn(1, 8), bias


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_finalizing_beam_search(opset: int) -> None:
    model = torch.jit.script(FinalizingBeamSearch().eval())
    others = [_finalizing_beam_inputs(3.0), _finalizing_beam_inputs(-50.0), _finalizing_beam_inputs(1.5)]
    assert_matches_torch_from(
        CONTROL_FLOW_SEQUENCE_OPSET, model, _finalizing_beam_inputs(0.0), opset=opset, other_inputs=others
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


class GreedyDecoder(torch.nn.Module):
    """Greedy GRU decoding: feed back the argmax token until EOS or a maximum length."""

    def __init__(self, vocab: int = 12, hidden: int = 16, eos: int = 1, max_len: int = 8) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.cell = torch.nn.GRUCell(hidden, hidden)
        self.out = torch.nn.Linear(hidden, vocab)
        self.eos = eos
        self.max_len = max_len

    def forward(self, h: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        token = torch.zeros(1, dtype=torch.long)
        tokens: list[int] = []
        score = 0.0
        for _ in range(self.max_len):
            h = self.cell(self.embed(token), h)
            logp = torch.log_softmax(self.out(h) + bias, -1)
            k = int(logp[0].argmax())
            score += float(logp[0, k])
            tokens.append(k)
            if k == self.eos:
                break
            token = torch.tensor([k])
        return torch.tensor(tokens), torch.tensor(score)


def _eos_biased(eos_bias: float, vocab: int, eos: int, hidden: int) -> tuple[torch.Tensor, torch.Tensor]:
    """An initial hidden state, and logit biases that make EOS likely, unlikely or neither."""
    bias = torch.zeros(vocab)
    bias[eos] = eos_bias
    return torch.randn(1, hidden), bias


def _decoder_inputs(eos_bias: float) -> tuple[torch.Tensor, torch.Tensor]:
    return _eos_biased(eos_bias, vocab=12, eos=1, hidden=16)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_greedy_gru_decoding(opset: int) -> None:
    model = torch.jit.script(GreedyDecoder().eval())
    others = [_decoder_inputs(50.0), _decoder_inputs(-50.0)]
    assert_matches_torch(model, _decoder_inputs(0.0), opset=opset, other_inputs=others)


class BeamSearch(torch.nn.Module):
    """Beam search: top-k over beam x vocab, reorder the beams, stop when all reached EOS."""

    def __init__(self, vocab: int = 10, hidden: int = 8, beam: int = 3, eos: int = 2, max_len: int = 6) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.cell = torch.nn.GRUCell(hidden, hidden)
        self.out = torch.nn.Linear(hidden, vocab)
        self.vocab = vocab
        self.beam = beam
        self.eos = eos
        self.max_len = max_len
        finished_row = torch.full((vocab,), -1e9)
        finished_row[eos] = 0.0
        self.register_buffer("finished_row", finished_row)

    def forward(self, h0: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = h0.expand(self.beam, h0.size(1)).contiguous()
        tokens = torch.zeros(self.beam, 1, dtype=torch.long)
        scores = torch.zeros(self.beam)
        scores[1:] = -1e9
        finished = torch.zeros(self.beam, dtype=torch.bool)
        for _ in range(self.max_len):
            h = self.cell(self.embed(tokens[:, -1]), h)
            logp = torch.log_softmax(self.out(h) + bias, -1)
            logp = torch.where(finished.unsqueeze(1), self.finished_row.unsqueeze(0), logp)
            candidates = (scores.unsqueeze(1) + logp).reshape(-1)
            top, index = candidates.topk(self.beam)
            origin = torch.div(index, self.vocab, rounding_mode="floor")
            token = index % self.vocab
            tokens = torch.cat([tokens[origin], token.unsqueeze(1)], 1)
            h = h[origin]
            finished = finished[origin] | (token == self.eos)
            scores = top
            if bool(finished.all()):
                break
        return tokens, scores


def _beam_inputs(eos_bias: float) -> tuple[torch.Tensor, torch.Tensor]:
    return _eos_biased(eos_bias, vocab=10, eos=2, hidden=8)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_beam_search(opset: int) -> None:
    model = torch.jit.script(BeamSearch().eval())
    others = [_beam_inputs(50.0), _beam_inputs(-50.0)]
    assert_matches_torch(model, _beam_inputs(0.0), opset=opset, other_inputs=others)


class Viterbi(torch.nn.Module):
    """CRF Viterbi decoding: a backpointer list, then a reversed walk from the best last tag."""

    def __init__(self, tags: int = 5) -> None:
        super().__init__()
        self.transitions = torch.nn.Parameter(torch.randn(tags, tags))
        self.start = torch.nn.Parameter(torch.randn(tags))
        self.end = torch.nn.Parameter(torch.randn(tags))

    def forward(self, emissions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        score = self.start + emissions[0]
        history: list[torch.Tensor] = []
        for i in range(1, emissions.size(0)):
            next_score = score.unsqueeze(1) + self.transitions + emissions[i].unsqueeze(0)
            score, index = next_score.max(0)
            history.append(index)
        score = score + self.end
        best_score, best_last = score.max(0)
        best = [int(best_last)]
        for j in range(len(history) - 1, -1, -1):
            best.append(int(history[j][best[-1]]))
        best.reverse()
        return torch.tensor(best), best_score


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_crf_viterbi(opset: int) -> None:
    model = torch.jit.script(Viterbi())
    dynamic = {"input_names": ["emissions"], "dynamic_axes": {"emissions": {0: "steps"}}}
    others = [(torch.randn(2, 5),), (torch.randn(9, 5),), (torch.randn(1, 5),)]
    assert_matches_torch_from(
        CONTROL_FLOW_SEQUENCE_OPSET, model, (torch.randn(6, 5),), opset=opset, other_inputs=others, **dynamic
    )


class CTCGreedy(torch.nn.Module):
    """CTC greedy decoding: argmax per step, collapse repeats, drop blanks."""

    def __init__(self, blank: int = 0) -> None:
        super().__init__()
        self.blank = blank

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        best = logits.argmax(-1)
        out: list[int] = []
        prev = self.blank
        for t in range(best.size(0)):
            k = int(best[t])
            if k != prev and k != self.blank:
                out.append(k)
            prev = k
        return torch.tensor(out, dtype=torch.long)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_ctc_greedy_collapse(opset: int) -> None:
    model = torch.jit.script(CTCGreedy())
    dynamic = {"input_names": ["logits"], "dynamic_axes": {"logits": {0: "steps"}}}
    repeats = torch.zeros(6, 4)
    repeats[:3, 2] = 5.0
    repeats[3:, 3] = 5.0
    blanks = torch.zeros(3, 4)
    blanks[:, 0] = 5.0
    others = [(repeats,), (blanks,)]
    assert_matches_torch_from(
        CONTROL_FLOW_SEQUENCE_OPSET, model, (torch.randn(10, 4),), opset=opset, other_inputs=others, **dynamic
    )
