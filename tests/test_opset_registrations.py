"""Opset changes are visible in the registry: where a lowering changes at opset N, the
symbolic is registered at N (in symbolic_opsetN.py, or by a decorator stacked on the same
function where only a helper's ONNX op changes), never hidden in a ``g.opset`` branch of a
symbolic. Only the signature helpers listed in ``symbolic_helper.SIGNATURE_HELPERS`` (and the
control-flow engine's checks on sequence/optional support) compare opsets.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib
import re
import textwrap

import pytest

import exporter  # noqa: F401 - registration
from exporter import symbolic_helper, symbolic_index
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
