"""Opset changes: newer ONNX ops replace the base lowering exactly at the opset that introduced
them, and where that opset is a registration of the op, the registry says so.

Exports show the new ONNX op from its opset on (and not before); each registered change runs
before, at and after its opset. The registry and the support matrix list every change point:
where a lowering changes at opset N, the symbolic is registered at N (in symbolic_opsetN.py, or
by a decorator stacked on the same function where only a helper's ONNX op changes), never hidden
in a ``g.opset`` branch of a symbolic; only the signature helpers listed in
``symbolic_helper.SIGNATURE_HELPERS`` (and the control-flow engine's checks on sequence/optional
support) compare opsets, which the tests below check by reading every symbolic's source.
"""

from __future__ import annotations

import ast
import collections
import importlib
import inspect
import pathlib
import re
import textwrap
from collections.abc import Callable
from typing import Any

import onnx_ir as ir
import pytest
import torch
import torch.nn.functional as F
from conftest import NEWEST, Wrap, assert_matches_torch, assert_matches_torch_from
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

import exporter  # noqa: F401 - registration
from exporter import symbolic_helper, symbolic_index
from exporter.registry import REGISTRY
from exporter.support_matrix import support_rows


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


# -- change points in the registry and in the source -----------------------------------------------

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
    # ScatterElements combines repeated indices: add/mul from 16, max/min from 18
    "aten::scatter": (9, 16),
    "aten::scatter_add": (9, 16),
    "aten::scatter_reduce": (9, 16, 18),
    "aten::index_add": (9, 16),
    "aten::index_put": (9, 16),
    # Pad takes amounts computed at run time from 11; nothing below can pad to the longest
    "aten::pad_sequence": (11,),
    # TopK finds the smallest (largest=0) from 11
    "aten::sort.int": (9, 11),
    "aten::sort.float": (9, 11),
    "aten::sort.bool": (9, 11),
    # sequences: SequenceAt instead of a chain of Ifs
    "aten::__getitem__": (9, 11),
    # GatherElements reorders by the sorter
    "aten::searchsorted": (9, 11),
    # ceil_mode is an attribute from 10 (the tail is padded before)
    "aten::max_pool1d": (9, 10),
    "aten::max_pool2d": (9, 10),
    "aten::max_pool3d": (9, 10),
    "aten::avg_pool1d": (9, 10),
    "aten::avg_pool2d": (9, 10),
    "aten::avg_pool3d": (9, 10),
    # weights: folded floats before Round (11), per-channel ones before DequantizeLinear's axis (13)
    "quantized::linear": (10, 11, 13),
    "quantized::linear_relu": (10, 11, 13),
    "quantized::conv1d": (10, 11, 13),
    "quantized::conv2d.new": (10, 11, 13),
    "quantized::conv3d_relu.new": (10, 11, 13),
    "quantized::conv_transpose2d": (10, 11, 13),
}


@pytest.mark.parametrize(("name", "opsets"), sorted(EXPECTED.items()))
def test_change_points_are_registered(name: str, opsets: tuple[int, ...]) -> None:
    assert REGISTRY.builtin_opsets(name) == opsets


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_support_matrix_shows_change_points(name: str) -> None:
    rows = dict(support_rows())  # overloads merge under the op name
    assert set(EXPECTED[name]) <= set(rows[name.split(".", 1)[0]])


# Checks of the control-flow engine on sequence and optional support (how lists and optionals are
# carried through If/Loop, not an op's lowering): functions under these qualified names may
# compare opsets.
ENGINE_CHECKS = (
    "exporter.control_flow.",  # the If/Loop engine's package
    "exporter.opset9.control_flow.",  # the If/Loop engine where it lived before its package
    "exporter.runtime_list.",  # run-time lists: scan outputs or sequences (11), carried by Loop/If (13)
    "exporter.opset9.optionals.optional_where_set_to_none",  # optionals carried by Loop (16)
)


def opset_reads(source: str) -> list[int]:
    """Lines of ``source`` that read an ``.opset`` other than in an f-string: a message may name
    the opset, no computation may depend on it (a comparison, a lookup, an argument)."""
    tree = ast.parse(textwrap.dedent(source))
    quoted = {id(n) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for n in ast.walk(node)}
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "opset" and id(node) not in quoted
    )


def _engine_check(qualified_name: str) -> bool:
    return qualified_name.startswith(ENGINE_CHECKS)


def test_opset_reads_finds_comparisons_and_skips_messages() -> None:
    source = """
def symbolic(g, x):
    raise ValueError(f"needs opset 11 (exporting at opset {g.opset})")

def branching(g, x):
    if g.opset >= 11:
        return x
    table = {9: x}
    return table[g.opset]
"""
    assert opset_reads(source) == [6, 9]


def test_no_registered_symbolic_compares_opsets() -> None:
    """Every built-in symbolic in the registry: an opset-dependent lowering is a registration."""
    REGISTRY.load_all()
    offenders = []
    for name, versions in sorted(REGISTRY._builtin.items()):
        assert versions
        for opset, entry in sorted(versions.items()):
            fn = entry.raw
            qualified = f"{fn.__module__}.{fn.__qualname__}"
            if not _engine_check(qualified) and opset_reads(inspect.getsource(fn)):
                offenders.append(f"{name} at {opset}: {qualified}")
    assert not offenders


def _functions(module: str) -> list[tuple[str, int, str]]:
    """(qualified name, first line, source) of every function a module defines, methods and
    nested functions included."""
    text = pathlib.Path(importlib.import_module(module).__file__).read_text()
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}"
                if isinstance(child, ast.FunctionDef):
                    found.append((name, child.lineno, ast.get_source_segment(text, child, padded=True)))
                visit(child, name)

    visit(ast.parse(text), module)
    return found


@pytest.mark.parametrize("module", symbolic_index.MODULES)
def test_no_helper_of_a_symbolic_module_compares_opsets(module: str) -> None:
    """Private helpers too: a branch on the opset either is an ONNX signature difference (a
    listed helper of symbolic_helper) or a registration at the opset where the lowering changes."""
    offenders = [
        f"{name}: line {first + line - 1}"
        for name, first, source in _functions(module)
        if not _engine_check(name)
        for line in opset_reads(source)
    ]
    assert not offenders


def test_signature_helpers_are_the_helpers_that_compare_opsets() -> None:
    comparing = {
        name.rsplit(".", 1)[1] for name, _, source in _functions("exporter.symbolic_helper") if opset_reads(source)
    }
    assert comparing == set(symbolic_helper.SIGNATURE_HELPERS)
    assert all(not name.startswith("_") for name in comparing)


@pytest.mark.parametrize("name", sorted(symbolic_helper.SIGNATURE_HELPERS))
def test_signature_helper_line_names_the_opsets_it_compares(name: str) -> None:
    """Each line of SIGNATURE_HELPERS says which ONNX change the helper follows, with its opsets."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(getattr(symbolic_helper, name))))
    compared = {
        operand.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        and any(isinstance(o, ast.Attribute) and o.attr == "opset" for o in [node.left, *node.comparators])
        for operand in [node.left, *node.comparators]
        if isinstance(operand, ast.Constant) and isinstance(operand.value, int)
    }
    described = {int(n) for n in re.findall(r"\b\d+\b", symbolic_helper.SIGNATURE_HELPERS[name])}
    assert compared <= described
