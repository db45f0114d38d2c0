"""Opset changes are visible in the registry: where a lowering changes at opset N,
symbolic_opsetN.py registers the new version (not a ``g.opset`` branch in the base)."""

from __future__ import annotations

import pytest

import exporter  # noqa: F401 - registration
from exporter.registry import REGISTRY
from exporter.support_matrix import support_rows

# op -> opsets its built-in lowering is registered at (the change points, 9 the base)
EXPECTED = {
    "aten::topk": (9, 10, 11),
    "aten::sort": (9, 10, 11),
    "aten::argsort": (9, 10, 11),
    "aten::slice": (9, 10),
    "aten::flip": (9, 10),
    "aten::roll": (9, 10),
    "aten::round": (9, 11),
    "aten::gather": (9, 11),
    "aten::select": (9, 11),
    "aten::chunk": (9, 10),
    "aten::unsafe_chunk": (9, 10),
    "prim::ConstantChunk": (9, 10),
    # run-time bounds scatter at positions from h.iota at every opset (Range from 11 inside it)
    "aten::slice_scatter": (9,),
    "aten::select_scatter": (9,),
    "aten::scaled_dot_product_attention": (9, 11, 23),
    "aten::repeat_interleave": (9, 11),
    "aten::lstm.data": (9, 11),
    "aten::gru.data": (9, 11),
    "aten::rnn_tanh.data": (9, 11),
    "aten::rnn_relu.data": (9, 11),
    "aten::_pad_packed_sequence": (9, 11),
}


@pytest.mark.parametrize(("name", "opsets"), sorted(EXPECTED.items()))
def test_change_points_are_registered(name: str, opsets: tuple[int, ...]) -> None:
    assert REGISTRY.builtin_opsets(name) == opsets


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_support_matrix_shows_change_points(name: str) -> None:
    rows = dict(support_rows())  # overloads merge under the op name
    assert set(EXPECTED[name]) <= set(rows[name.split(".", 1)[0]])
