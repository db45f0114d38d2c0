"""Newer ONNX ops replace the base lowering exactly at the opset that introduced them, and
where that opset is a registration of the op, the registry says so."""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import onnx_ir as ir
import pytest
import torch
import torch.nn.functional as F
from conftest import NEWEST, Wrap, assert_matches_torch, assert_matches_torch_from
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from exporter import symbolic_helper
from exporter.registry import REGISTRY


def _ops(model) -> collections.Counter[str]:  # noqa: ANN001
    return collections.Counter(n.op_type for n in model.graph)


LAYER_NORM = torch.nn.LayerNorm(8).eval()
GROUP_NORM = torch.nn.GroupNorm(2, 4).eval()

# (name, module, inputs, ONNX op that appears from `first`, first)
STRUCTURAL = [
    ("layer_norm", LAYER_NORM, lambda: (torch.randn(2, 3, 8),), "LayerNormalization", 17),
    (
        "layer_norm_no_affine",
        Wrap(lambda x: F.layer_norm(x, (3, 8))),
        lambda: (torch.randn(2, 3, 8),),
        "LayerNormalization",
        17,
    ),
    ("gelu", Wrap(F.gelu), lambda: (torch.randn(4, 5),), "Gelu", 20),
    ("gelu_tanh", Wrap(lambda x: F.gelu(x, approximate="tanh")), lambda: (torch.randn(4, 5),), "Gelu", 20),
    ("mish", Wrap(F.mish), lambda: (torch.randn(4, 5),), "Mish", 18),
    (
        "col2im",
        Wrap(lambda a: F.fold(a, (5, 6), (2, 3), padding=1, stride=(2, 1))),
        lambda: (F.unfold(torch.randn(2, 3, 5, 6), (2, 3), padding=1, stride=(2, 1)),),
        "Col2Im",
        18,
    ),
    ("group_norm", GROUP_NORM, lambda: (torch.randn(2, 4, 5),), "GroupNormalization", 21),
    (
        "sdpa",
        Wrap(F.scaled_dot_product_attention),
        lambda: (torch.randn(2, 4, 5, 8), torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 8)),
        "Attention",
        23,
    ),
    (
        "sdpa_causal",
        Wrap(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.2)),
        lambda: (torch.randn(1, 2, 5, 8),) * 3,
        "Attention",
        23,
    ),
    (
        "sdpa_bool_mask",
        Wrap(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)),
        lambda: (torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.rand(4, 4) > 0.3),
        "Attention",
        23,
    ),
    (
        "sdpa_float_mask",
        Wrap(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)),
        lambda: (torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 1, 4, 4)),
        "Attention",
        23,
    ),
]


@pytest.mark.parametrize("case", STRUCTURAL, ids=[c[0] for c in STRUCTURAL])
def test_new_op_from_its_opset(case) -> None:  # noqa: ANN001
    name, module, inputs, op_type, first = case
    opsets = sorted({9, first - 1, first, NEWEST})
    for opset in opsets:
        model = assert_matches_torch(module, inputs(), opset=opset, atol=1e-5)
        assert (op_type in _ops(model)) == (opset >= first), (name, opset, _ops(model))


def test_layer_norm_half_matches_torch() -> None:
    module = torch.nn.LayerNorm(16).half().eval()
    assert_matches_torch(module, (torch.randn(2, 16).half(),), opset=17, atol=2e-3, rtol=2e-3)


# --- lowerings that change at an opset where the op is registered again --------------------


def _shows(model: ir.Model, op_type: str, attribute: str | None = None, value: object = None) -> bool:
    """Whether a node of ``op_type`` (with ``attribute``, equal to ``value`` unless None) is in
    the model, subgraphs included."""
    for node in ir.traversal.RecursiveGraphIterator(model.graph):
        if node.op_type != op_type:
            continue
        found = node.attributes.get(attribute) if attribute is not None else node
        if found is not None and (value is None or found.value == value):
            return True
    return False


class PackedTouched(torch.nn.Module):
    """pack -> an op on PackedSequence.data -> (an RNN) -> pad: the packed rows lose their padded
    source, so each step's rows are found from an exclusive cumulative sum of batch_sizes."""

    def __init__(self, layer: torch.nn.Module | None) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> object:
        packed = pack_padded_sequence(x, lengths)
        packed = PackedSequence(packed.data * 2, packed.batch_sizes)
        if self.layer is not None:
            packed, _ = self.layer(packed)
        return pad_packed_sequence(packed, padding_value=-1.0)


class SortedNumbers(torch.nn.Module):
    """``l.sort()`` of a list holding numbers known only at run time."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [float(x[0].max()), float(x[1].min()), float(x.mean())]
        values.sort()
        return torch.tensor(values)


class TensorAtRunTimeIndex(torch.nn.Module):
    """An export-time list of tensors of different shapes read at an index known at run time."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        parts = [x, x[:1] * 2, x.sum(0, keepdim=True) + 1]
        return parts[int(x.sum() > 0) + 1]


DUP_INDEX = torch.tensor([[0, 1, 1, 4], [2, 2, 2, 0], [4, 3, 4, 3]])  # repeated targets per row


def _scatter_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(3, 5), DUP_INDEX, torch.randn(3, 4)


def _packed_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(4, 3, 2), torch.tensor([4, 2, 1])


# (name, op, module, inputs, the node (op type, attribute, value) that appears from `first`, first)
REGISTERED_CHANGES: list[tuple[str, str, Any, Callable[[], tuple[Any, ...]], tuple[Any, ...], int]] = [
    (
        "scatter_add",
        "aten::scatter_add",
        Wrap(lambda x, i, s: x.scatter_add(1, i, s)),
        _scatter_inputs,
        ("ScatterElements", "reduction", "add"),
        16,
    ),
    (
        "scatter_multiply",
        "aten::scatter",
        Wrap(lambda x, i, s: x.scatter(1, i, s, reduce="multiply")),
        _scatter_inputs,
        ("ScatterElements", "reduction", "mul"),
        16,
    ),
    (
        "scatter_reduce_sum",
        "aten::scatter_reduce",
        Wrap(lambda x, i, s: x.scatter_reduce(1, i, s, "sum")),
        _scatter_inputs,
        ("ScatterElements", "reduction", "add"),
        16,
    ),
    (
        "scatter_reduce_prod",
        "aten::scatter_reduce",
        Wrap(lambda x, i, s: x.scatter_reduce(1, i, s, "prod")),
        _scatter_inputs,
        ("ScatterElements", "reduction", "mul"),
        16,
    ),
    (
        "scatter_reduce_amax",
        "aten::scatter_reduce",
        Wrap(lambda x, i, s: x.scatter_reduce(1, i, s, "amax")),
        _scatter_inputs,
        ("ScatterElements", "reduction", "max"),
        18,
    ),
    (
        "scatter_reduce_amin",
        "aten::scatter_reduce",
        Wrap(lambda x, i, s: x.scatter_reduce(1, i, s, "amin", include_self=False)),
        _scatter_inputs,
        ("ScatterElements", "reduction", "min"),
        18,
    ),
    (
        "index_add",
        "aten::index_add",
        Wrap(lambda x, s: x.index_add(0, torch.tensor([0, 2, 0]), s)),
        lambda: (torch.randn(4, 3), torch.randn(3, 3)),
        ("ScatterElements", "reduction", "add"),
        16,
    ),
    (
        "index_put_accumulate",
        "aten::index_put",
        Wrap(lambda x, v: x.index_put((torch.tensor([0, 2, 0]),), v, accumulate=True)),
        lambda: (torch.randn(4, 3), torch.randn(3, 3)),
        ("ScatterElements", "reduction", "add"),
        16,
    ),
    (
        "max_pool2d_ceil",
        "aten::max_pool2d",
        Wrap(lambda x: F.max_pool2d(x, 3, stride=2, ceil_mode=True)),
        lambda: (torch.randn(1, 2, 6, 6),),
        ("MaxPool", "ceil_mode", 1),
        10,
    ),
    (
        "avg_pool1d_ceil",
        "aten::avg_pool1d",
        Wrap(lambda x: F.avg_pool1d(x, 2, ceil_mode=True)),
        lambda: (torch.randn(1, 2, 5),),
        ("AveragePool", "ceil_mode", 1),
        10,
    ),
    ("pad_packed_sequence", "aten::_pad_packed_sequence", PackedTouched(None), _packed_inputs, ("CumSum",), 11),
    ("lstm_packed", "aten::lstm.data", PackedTouched(torch.nn.LSTM(2, 3)), _packed_inputs, ("CumSum",), 11),
    ("gru_packed", "aten::gru.data", PackedTouched(torch.nn.GRU(2, 3)), _packed_inputs, ("CumSum",), 11),
    (
        "list_sort",
        "aten::sort.float",
        torch.jit.script(SortedNumbers()),
        lambda: (torch.randn(3, 4),),
        ("TopK", "largest", 0),
        11,
    ),
    (
        "list_item_at_run_time_index",
        "aten::__getitem__",
        torch.jit.script(TensorAtRunTimeIndex()),
        lambda: (torch.randn(3, 4),),
        ("SequenceAt",),
        11,
    ),
]


# Below opset 11, items of different static sizes make onnxruntime's If shape merge fail
# ("Can't merge shape info"): the list is read with a dynamic first dim.
_EXPORT_OPTIONS = {"list_item_at_run_time_index": {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}}


@pytest.mark.parametrize("case", REGISTERED_CHANGES, ids=[c[0] for c in REGISTERED_CHANGES])
def test_change_from_the_opset_it_is_registered_at(case) -> None:  # noqa: ANN001
    """The opset before the change, the change and the newest: the new form appears exactly at
    an opset the registry lists for the op (so the support matrix shows it)."""
    name, op, module, inputs, shown, first = case
    assert first in REGISTRY.builtin_opsets(op)
    for opset in sorted({first - 1, first, NEWEST}):
        model = assert_matches_torch(module, inputs(), opset=opset, **_EXPORT_OPTIONS.get(name, {}))
        assert _shows(model, *shown) == (opset >= first), (name, opset)


def test_scatter_reductions_change_where_scatter_reduce_is_registered() -> None:
    """symbolic_helper's table of ScatterElements reductions and the registry agree."""
    since = {opset for _, opset in symbolic_helper.SCATTER_REDUCTIONS.values()}
    assert since == set(REGISTRY.builtin_opsets("aten::scatter_reduce")) - {9}


class PadThree(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return torch.nn.utils.rnn.pad_sequence([a, b, c], batch_first=True, padding_value=-1.0)


class SearchWithSorter(torch.nn.Module):
    def forward(self, rows: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        return torch.searchsorted(rows, values, sorter=rows.argsort(-1))


# (name, op, module, inputs): exportable from the op's last registration, refused below naming it
EXPORTABLE_FROM = [
    (
        "pad_sequence",
        "aten::pad_sequence",
        torch.jit.script(PadThree()),
        lambda: (torch.randn(2, 3), torch.randn(4, 3), torch.randn(1, 3)),
    ),
    (
        "searchsorted_sorter",
        "aten::searchsorted",
        Wrap(SearchWithSorter()),
        lambda: (torch.randn(2, 5), torch.randn(2, 3)),
    ),
]


@pytest.mark.parametrize("case", EXPORTABLE_FROM, ids=[c[0] for c in EXPORTABLE_FROM])
def test_exportable_from_the_opset_it_is_registered_at(case) -> None:  # noqa: ANN001
    _, op, module, inputs = case
    first = REGISTRY.builtin_opsets(op)[-1]
    for opset in sorted({first - 1, first, NEWEST}):
        assert_matches_torch_from(first, module, inputs(), opset=opset)
