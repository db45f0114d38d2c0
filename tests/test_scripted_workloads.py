"""Scripted workloads as production code writes them (issue #16): decoding loops, beam search,
Viterbi, NMS and CTC collapse, plus a focused regression test for each construct they use.

Every model is scripted, exported and compared with eager torch in onnxruntime on at least two
input sets that take different branches or trip counts.
"""

from __future__ import annotations

import pytest
import torch
from conftest import (
    CONTROL_FLOW_SEQUENCE_OPSET,
    FEATURE_OPSETS,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    assert_matches_torch_from,
)

import exporter

# --------------------------------------------------------------------------- workloads


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


def _decoder_inputs(eos_bias: float) -> tuple[torch.Tensor, torch.Tensor]:
    bias = torch.zeros(12)
    bias[1] = eos_bias
    return torch.randn(1, 16), bias


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
    bias = torch.zeros(10)
    bias[2] = eos_bias
    return torch.randn(1, 8), bias


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


class GreedyNMS(torch.nn.Module):
    """Greedy non-maximum suppression: visit boxes by score, keep those not suppressed yet."""

    def __init__(self, iou_threshold: float = 0.5, score_threshold: float = 0.05) -> None:
        super().__init__()
        self.iou_threshold = iou_threshold
        self.score_threshold = score_threshold

    def forward(self, boxes: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        order = scores.argsort(descending=True)
        areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
        suppressed = torch.zeros(boxes.size(0), dtype=torch.bool)
        keep: list[int] = []
        for i in range(order.size(0)):
            idx = int(order[i])
            if float(scores[idx]) < self.score_threshold:
                break
            if bool(suppressed[idx]):
                continue
            keep.append(idx)
            top_left = torch.max(boxes[idx, :2], boxes[:, :2])
            bottom_right = torch.min(boxes[idx, 2:], boxes[:, 2:])
            wh = (bottom_right - top_left).clamp(min=0)
            inter = wh[:, 0] * wh[:, 1]
            iou = inter / (areas[idx] + areas - inter)
            suppressed = suppressed | (iou > self.iou_threshold)
        return torch.tensor(keep, dtype=torch.long)


def _boxes(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    corner = torch.rand(n, 2) * 4
    size = torch.rand(n, 2) * 3 + 0.5
    return torch.cat([corner, corner + size], 1), torch.rand(n)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_greedy_nms(opset: int) -> None:
    model = torch.jit.script(GreedyNMS())
    dynamic = {
        "input_names": ["boxes", "scores"],
        "dynamic_axes": {"boxes": {0: "n"}, "scores": {0: "n"}},
    }
    others = [_boxes(3), _boxes(20), (_boxes(4)[0], torch.zeros(4))]
    if opset < 10:  # argsort with a run-time k (the box count) is a TopK with a run-time k: opset 10
        with pytest.raises(exporter.ExporterError, match="opset 10"):
            assert_matches_torch(model, _boxes(8), opset=opset, other_inputs=others, **dynamic)
        return
    assert_matches_torch_from(
        CONTROL_FLOW_SEQUENCE_OPSET, model, _boxes(8), opset=opset, other_inputs=others, **dynamic
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


# --------------------------------------------------------------------------- focused regressions


class ScalarsFromTensors(torch.nn.Module):
    """Item 1: int()/float()/.item() read inside a loop, used as index, bound and arithmetic."""

    def forward(self, x: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        total = torch.zeros(x.size(1))
        acc = torch.zeros(1)
        for t in range(idx.size(0)):
            k = int(idx[t])
            w = float(x[k, 0])
            m = x[k, 1].item()
            total = total + x[k] * w
            acc = acc + m * 2.0 + k
            for _ in range(k):
                acc = acc - 0.5
        return total, acc


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_scalars_read_from_tensors_in_loops(opset: int) -> None:
    model = torch.jit.script(ScalarsFromTensors())
    dynamic = {"input_names": ["x", "idx"], "dynamic_axes": {"idx": {0: "n"}}}
    others = [(torch.randn(4, 3), torch.tensor([3, 3, 1])), (torch.randn(4, 3), torch.tensor([0]))]
    assert_matches_torch(model, (torch.randn(4, 3), torch.tensor([2, 0])), opset=opset, other_inputs=others, **dynamic)


class MixedNumbers(torch.nn.Module):
    """Item 2: a Python float chosen at run time times a float32 tensor stays float32."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.size(0)
        k = int(x.sum() > 0) + 1
        scale = 0.5 if n > 3 else 2.0
        y = x[:, :k] * scale
        bonus = 1.0 if bool(x.mean() > 0) else 2.5
        return y + bonus


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_python_float_times_float32_tensor(opset: int) -> None:
    model = torch.jit.script(MixedNumbers())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(2, 4) - 3,), (torch.randn(6, 4) + 3,)]
    assert_matches_torch(model, (torch.randn(5, 4),), opset=opset, other_inputs=others, **dynamic)


class MixedTupleBranches(torch.nn.Module):
    """Item 3: a tuple of mixed dtypes returned from if/else."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if bool(x.sum() > 0):
            result = (x * 2, x.argmax(), 1)
        else:
            result = (x - 1, x.argmin(), 0)
        return result[0], result[1] + result[2]


class ReturnInsideLoop(torch.nn.Module):
    """Item 3: ``return`` inside a loop (loop-carried flags, prim::Uninitialized)."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        for i in range(x.size(0)):
            if bool(x[i].sum() > 1.0):
                return x[i], torch.tensor(i)
        return torch.zeros_like(x[0]), torch.tensor(-1)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_mixed_dtype_tuple_from_branches(opset: int) -> None:
    model = torch.jit.script(MixedTupleBranches())
    assert_matches_torch(model, (torch.randn(3, 4) + 2,), opset=opset, other_inputs=[(torch.randn(3, 4) - 2,)])


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_return_inside_loop(opset: int) -> None:
    model = torch.jit.script(ReturnInsideLoop())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    found = torch.tensor([[0.0, 0.1], [2.0, 1.0], [5.0, 5.0]])
    others = [(torch.zeros(4, 2),), (found,)]
    assert_matches_torch(model, (torch.randn(5, 2),), opset=opset, other_inputs=others, **dynamic)


class RunTimeLists(torch.nn.Module):
    """Item 4: torch.tensor of run-time lists, reverse(), l[-1] while growing, branchy appends."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        ints: list[int] = [0]
        floats: list[float] = []
        rows: list[torch.Tensor] = []
        for i in range(x.size(0)):
            ints.append(ints[-1] + int(x[i, 0] > 0))
            floats.append(float(x[i].sum()))
            if bool(x[i, 1] > 0):
                rows.append(x[i] * 2)
            else:
                rows.append(torch.zeros(x.size(1)))
        ints.reverse()
        return torch.tensor(ints), torch.tensor(floats), torch.stack(rows), torch.tensor(ints[0])


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_run_time_lists(opset: int) -> None:
    model = torch.jit.script(RunTimeLists())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3),), (torch.randn(7, 3),)]
    assert_matches_torch_from(
        CONTROL_FLOW_SEQUENCE_OPSET, model, (torch.randn(4, 3),), opset=opset, other_inputs=others, **dynamic
    )


class DictOutputs(torch.nn.Module):
    """Item 5: Dict[str, Tensor] outputs and prim::dtype."""

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        counts = torch.zeros(x.size(0), dtype=x.dtype)
        if bool(x.sum() > 0):
            counts = counts + 1
        return {"scores": x * 2, "counts": counts, "index": x.argmax(1)}


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_dict_outputs_and_dtype_of_a_tensor(opset: int) -> None:
    model = torch.jit.script(DictOutputs())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    onnx_model = assert_matches_torch(
        model, (torch.randn(3, 4) + 2,), opset=opset, other_inputs=[(torch.randn(5, 4) - 2,)], **dynamic
    )
    assert [v.name for v in onnx_model.graph.outputs] == ["scores", "counts", "index"]


class UnbindDynamic(torch.nn.Module):
    """Item 6: unbind(0) and iteration over a tensor whose first dim is dynamic."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        total = torch.zeros(x.size(1))
        for row in x.unbind(0):
            total = total + row * 2
        biggest = torch.zeros(x.size(1))
        for row in x:
            biggest = torch.max(biggest, row)
        return total, biggest


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_unbind_and_iteration_over_a_dynamic_dim(opset: int) -> None:
    model = torch.jit.script(UnbindDynamic())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3),), (torch.randn(9, 3),)]
    assert_matches_torch(model, (torch.randn(4, 3),), opset=opset, other_inputs=others, **dynamic)


class FloatAccumulator(torch.nn.Module):
    """Item 7: a Python float accumulator initialised 0.0 and updated from tensors in a loop."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        acc = 0.0
        count = 0
        for i in range(x.size(0)):
            if float(x[i].max()) > 0.5:
                acc += float(x[i].sum())
                count += 1
        return x[0] * acc + count


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_float_accumulator_in_a_loop(opset: int) -> None:
    model = torch.jit.script(FloatAccumulator())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3) - 5,), (torch.randn(8, 3),)]
    assert_matches_torch(model, (torch.randn(4, 3),), opset=opset, other_inputs=others, **dynamic)


class DynamicIndexing(torch.nn.Module):
    """Negative and run-time indices, bounds and steps on a dynamic dim: Gather-1 takes no
    negative index and Slice-1 neither run-time bounds nor steps, so below opsets 11/10 they
    become a Gather of ``size + i`` or of the computed positions."""

    def forward(
        self, x: torch.Tensor, k: torch.Tensor
    ) -> tuple[
        torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor
    ]:
        i = int(k[0])
        lo = int(k[1])
        step = int(k[2])
        return (
            x[-1],
            x[:, -2],
            x[i],
            x[lo:],
            x[lo:-1],
            x[:lo],
            x[1::step],
            x[lo::2],
        )


@pytest.mark.parametrize("opset", (9, 10, *SEQUENCE_OPSETS))
def test_negative_and_run_time_indices_on_a_dynamic_dim(opset: int) -> None:
    model = torch.jit.script(DynamicIndexing())
    dynamic = {"input_names": ["x", "k"], "dynamic_axes": {"x": {0: "n"}}}
    others = [
        (torch.randn(2, 3), torch.tensor([1, -5, 3])),
        (torch.randn(9, 3), torch.tensor([-9, 20, 1])),
        (torch.randn(4, 3), torch.tensor([0, -2, 5])),
    ]
    assert_matches_torch(
        model, (torch.randn(6, 3), torch.tensor([-2, 2, 2])), opset=opset, other_inputs=others, **dynamic
    )


class ReassignedLists(torch.nn.Module):
    """Lists re-assigned (not appended to) in a loop with a run-time trip count: each item of
    the fixed-length list is one loop-carried value, at every opset."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        counts: list[int] = [0, 0]
        state: list[torch.Tensor] = [x[0], x[0] * 0]
        for i in range(x.size(0)):
            counts = [counts[0] + int(x[i, 0] > 0), counts[1] + 1]
            state = [state[0] * 0.5 + x[i], state[1] + x[i]]
        return torch.tensor(counts), state[0], state[1]


class GrowingList(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        items: list[int] = [0]
        for i in range(x.size(0)):
            items = items + [i]
        return torch.tensor(items)


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_lists_re_assigned_in_a_run_time_loop(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3),), (torch.randn(7, 3),)]
    assert_matches_torch(
        torch.jit.script(ReassignedLists()), (torch.randn(4, 3),), opset=opset, other_inputs=others, **dynamic
    )


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_a_list_growing_by_re_assignment_in_a_run_time_loop(opset: int) -> None:
    """A re-assigned list whose length changes is carried as an ONNX sequence (opset 13)."""
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3),), (torch.randn(6, 3),)]
    assert_matches_torch_from(
        CONTROL_FLOW_SEQUENCE_OPSET,
        torch.jit.script(GrowingList()),
        (torch.randn(4, 3),),
        opset=opset,
        other_inputs=others,
        **dynamic,
    )
