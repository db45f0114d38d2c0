"""The op table for embedding, embedding_bag and embedding_renorm (exporter.opset9.embedding).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from cases import Case, helper_params, lowering_opsets, op_params, run_case
from conftest import Wrap, assert_matches_torch


def _renorm(max_norm: float, norm_type: float) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    def fn(w: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
        w = w.clone()
        torch.embedding_renorm_(w, i, max_norm, norm_type)
        return F.embedding(i, w)

    return fn


CASES = [
    Case("embedding_fn", lambda w, i: F.embedding(i, w), lambda: (torch.randn(10, 4), torch.tensor([[1, 2], [9, 0]]))),
    # embedding bags
    Case(
        "embedding_bag_sum",
        lambda w, i, o: F.embedding_bag(i, w, o, mode="sum"),
        lambda: (torch.randn(10, 3), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4, 4])),
    ),
    Case(
        "embedding_bag_mean",
        lambda w, i, o: F.embedding_bag(i, w, o, mode="mean"),
        lambda: (torch.randn(10, 3), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 3, 3, 5])),
    ),
    Case(
        "embedding_bag_max",
        lambda w, i, o: F.embedding_bag(i, w, o, mode="max"),
        lambda: (torch.randn(10, 3), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 2, 2, 7])),
    ),
    Case(
        "embedding_bag_2d",
        lambda w, i: F.embedding_bag(i, w, mode="mean"),
        lambda: (torch.randn(10, 3), torch.tensor([[1, 2, 4], [5, 4, 3]])),
    ),
    Case(
        "embedding_bag_weights",
        lambda w, i, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
        lambda: (torch.randn(10, 3), torch.tensor([1, 2, 4, 5]), torch.tensor([0, 1]), torch.randn(4)),
    ),
    Case(
        "embedding_bag_last_offset_padding",
        lambda w, i, o: F.embedding_bag(i, w, o, mode="sum", include_last_offset=True, padding_idx=2),
        lambda: (torch.randn(10, 3), torch.tensor([1, 2, 4, 5, 2, 3]), torch.tensor([0, 2, 5, 6])),
    ),
    Case(
        "embedding_bag_half",
        lambda w, i, o: F.embedding_bag(i, w, o, mode="max"),
        lambda: (torch.randn(10, 3).half(), torch.tensor([1, 2, 4, 5]), torch.tensor([0, 1])),
        atol=1e-3,
    ),
    Case("embedding_renorm", _renorm(1.0, 2.0), lambda: (torch.randn(6, 4), torch.tensor([[0, 2], [2, 5]]))),
    Case("embedding_renorm_p1", _renorm(0.5, 1.0), lambda: (torch.randn(6, 4), torch.tensor([1, 3]))),
    Case(
        "embedding_renorm_p3_half",
        _renorm(0.7, 3.0),
        lambda: (torch.randn(6, 4).half(), torch.tensor([1, 3, 1])),
        atol=1e-3,
        rtol=1e-3,
    ),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["embedding_bag_mean"]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("opset", lowering_opsets("aten::embedding_renorm"))
def test_embedding_max_norm_through_detach(opset: int) -> None:
    """F.embedding(max_norm=...) renormalizes weight.detach() in place; the write must reach weight."""
    model = Wrap(lambda w, i: F.embedding(i, w.clone(), max_norm=1.0))
    assert_matches_torch(model, (torch.randn(6, 4) * 3, torch.tensor([[0, 2], [2, 5]])), opset=opset)


@pytest.mark.parametrize("opset", lowering_opsets("aten::embedding_bag"))
def test_embedding_bag_module(opset: int) -> None:
    """nn.EmbeddingBag: the weight is an initializer; per-sample weights and offsets are inputs."""
    model = torch.nn.EmbeddingBag(12, 4, mode="sum").eval()
    inputs = (torch.tensor([1, 5, 5, 11, 0, 3]), torch.tensor([0, 2, 2, 5]), torch.rand(6))
    others = [(torch.tensor([2, 2, 7]), torch.tensor([0, 1, 3]), torch.rand(3))]
    assert_matches_torch(
        model,
        inputs,
        opset=opset,
        other_inputs=others,
        input_names=["i", "o", "w"],
        dynamic_axes={"i": [0], "o": [0], "w": [0]},
    )
