"""Op facts (op_facts.py): declared where an op is registered, held by the registry per op name.

The facts replaced tables of aten names that promotion.py, quantization.py, torch_run_time.py
(now input_parity.py), ts_graph.py, assemble.py and control_flow/outer_state.py applied to every node. The frozen copies below are those tables as they were;
every entry must be declared now, for every overload of the op it applied to.
"""

from __future__ import annotations

import onnx_ir as ir
import pytest
import torch
from conftest import NEWEST, Wrap, assert_matches_torch, run_in_fresh_interpreter

import exporter
from exporter.arguments import Kind
from exporter.graph_context import GraphContext
from exporter.op_facts import (
    QPARAMS_0_TO_1,
    QPARAMS_NEG1_TO_1,
    ComplexInputs,
    DictMutation,
    FixedQParams,
    OpFacts,
    Promotion,
    Quantized,
    Result,
    SequenceRead,
)
from exporter.registry import REGISTRY, Registry

# -- the tables as they were (frozen: do not edit) -----------------------------------------------

_ARITHMETIC = {
    "aten::add": ("self", "other"),
    "aten::sub": ("self", "other"),
    "aten::rsub": ("self", "other"),
    "aten::mul": ("self", "other"),
    "aten::div": ("self", "other"),
    "aten::true_divide": ("self", "other"),
    "aten::floor_divide": ("self", "other"),
    "aten::remainder": ("self", "other"),
    "aten::fmod": ("self", "other"),
    "aten::maximum": ("self", "other"),
    "aten::minimum": ("self", "other"),
    "aten::max": ("self", "other"),
    "aten::min": ("self", "other"),
    "aten::fmax": ("self", "other"),
    "aten::fmin": ("self", "other"),
    "aten::atan2": ("self", "other"),
    "aten::hypot": ("self", "other"),
    "aten::pow": ("self", "exponent"),
    "aten::where": ("self", "other"),
    "aten::lerp": ("self", "end", "weight"),
    "aten::addcmul": ("self", "tensor1", "tensor2"),
    "aten::addcdiv": ("self", "tensor1", "tensor2"),
    "aten::clamp": ("self", "min", "max"),
    "aten::clamp_min": ("self", "min"),
    "aten::clamp_max": ("self", "max"),
    "aten::clip": ("self", "min", "max"),
    "aten::masked_fill": ("value",),
    "aten::index_put": ("values",),
    "aten::fill": ("value",),
    "aten::logaddexp": ("self", "other"),
    "aten::copysign": ("self", "other"),
    "aten::xlogy": ("self", "other"),
    "aten::outer": ("self", "vec2"),
    "aten::ger": ("self", "vec2"),
    "aten::bitwise_and": ("self", "other"),
    "aten::bitwise_or": ("self", "other"),
    "aten::bitwise_xor": ("self", "other"),
    "aten::__and__": ("self", "other"),
    "aten::__or__": ("self", "other"),
    "aten::__xor__": ("self", "other"),
}
_COMPARISON = {
    "aten::eq": ("self", "other"),
    "aten::ne": ("self", "other"),
    "aten::lt": ("self", "other"),
    "aten::le": ("self", "other"),
    "aten::gt": ("self", "other"),
    "aten::ge": ("self", "other"),
    "aten::isclose": ("self", "other"),
}
_FOLLOWS_SELF = frozenset({"aten::masked_fill", "aten::index_put", "aten::fill"})
_TRUE_DIVISION = frozenset({"aten::div", "aten::true_divide"})
_FLOAT_RESULT = frozenset({"aten::atan2", "aten::xlogy", "aten::logaddexp", "aten::copysign"})
_INTEGER_SAFE = frozenset(
    {
        "aten::flatten",
        "aten::reshape",
        "aten::view",
        "aten::permute",
        "aten::transpose",
        "aten::t",
        "aten::squeeze",
        "aten::unsqueeze",
        "aten::slice",
        "aten::select",
        "aten::contiguous",
        "aten::size",
        "aten::numel",
        "aten::dim",
        "aten::chunk",
        "aten::split",
        "aten::unbind",
        "aten::expand",
        "aten::narrow",
        "aten::dequantize",
        "aten::detach",
        "aten::clone",
        "aten::dropout",
        "aten::feature_dropout",
        "aten::__getitem__",
    }
)
_FIXED_QPARAMS = {
    "aten::sigmoid": {ir.DataType.UINT8: (1.0 / 256, 0), ir.DataType.INT8: (1.0 / 256, -128)},
    "aten::hardsigmoid": {ir.DataType.UINT8: (1.0 / 256, 0), ir.DataType.INT8: (1.0 / 256, -128)},
    "aten::tanh": {ir.DataType.UINT8: (2.0 / 256, 128), ir.DataType.INT8: (2.0 / 256, 0)},
}
_LIST_MUTATIONS = frozenset(
    {
        "aten::append",
        "aten::insert",
        "aten::pop",
        "aten::_set_item",
        "aten::Delete",
        "aten::clear",
        "aten::extend",
        "aten::reverse",
    }
)
_RUN_TIME_LIST_MUTATIONS = _LIST_MUTATIONS | {"aten::add_"}
_SEQUENCE_READS = frozenset({"aten::__getitem__", "aten::len", "aten::pop"})
_UNTRACKED_BELOW = {"aten::_dim_arange": 11}
_INT_ARITHMETIC = frozenset({"prim::min", "prim::max", "aten::add", "aten::sub", "aten::mul", "aten::floordiv"})
_OPTIONAL_USES = frozenset({"aten::__is__", "aten::__isnot__", "prim::unchecked_cast"})
_FOLD_FALSE = frozenset({"aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::dict"})
_DICT_MUTATIONS = frozenset(
    {"aten::_set_item", "aten::setdefault", "aten::pop", "aten::Delete", "aten::clear", "aten::update"}
)
_DICT_KEY_WRITES = frozenset({"aten::_set_item", "aten::setdefault"})

# Entries for ops without a symbolic: nothing can declare them (a declaration is made where a
# symbolic is registered); they changed nothing an export could see. If one gets a symbolic,
# the test below fails: declare the fact with it.
_WITHOUT_SYMBOLIC = {
    "aten::clip": "TorchScript records torch.clip as aten::clamp (traced and scripted)",
    "aten::add_": "in-place: remove_inplace makes list += an aten::add.t before emission",
}


def _schemas(kind: str) -> list[torch._C.FunctionSchema]:
    return list(torch._C._jit_get_schemas_for_operator(kind))


def _promoted_overloads(kind: str, names: tuple[str, ...]) -> list[str]:
    """The overloads of ``kind`` the old table promoted operands of: those with every operand
    it names, and scalar overloads naming their operands a and b (promotion.operand_positions)."""
    found = []
    for schema in _schemas(kind):
        if schema.is_mutable:  # an out= variant (max.out): not exported, whatever the facts
            continue
        arg_names = [a.name for a in schema.arguments]
        if all(n in arg_names for n in names) or (
            not any(n in arg_names for n in names) and arg_names[:2] == ["a", "b"]
        ):
            found.append(schema.overload_name)
    return found


def _dict_overloads(kind: str) -> list[str]:
    """The overloads of ``kind`` taking a dict first: those the dict tables were about."""
    return [s.overload_name for s in _schemas(kind) if s.arguments and isinstance(s.arguments[0].type, torch.DictType)]


def _list_overloads(kind: str) -> list[str]:
    """The overloads of ``kind`` taking a list first: those the list tables were about."""
    return [s.overload_name for s in _schemas(kind) if s.arguments and isinstance(s.arguments[0].type, torch.ListType)]


def test_every_former_promotion_entry_is_declared() -> None:
    for table, default in ((_ARITHMETIC, Result.PROMOTED), (_COMPARISON, Result.BOOL)):
        for kind, names in table.items():
            if kind in _WITHOUT_SYMBOLIC:
                continue
            if kind in _FOLLOWS_SELF:
                result = Result.SELF
            elif kind in _TRUE_DIVISION or kind in _FLOAT_RESULT:
                result = Result.FLOAT
            else:
                result = default
            overloads = _promoted_overloads(kind, names)
            assert overloads, kind
            for overload in overloads:
                assert REGISTRY.facts(kind, overload).promotion == Promotion(names, result), (kind, overload)


def test_every_former_quantized_entry_is_declared() -> None:
    for kind in _INTEGER_SAFE:
        for overload in ["", *(s.overload_name for s in _schemas(kind))]:
            assert REGISTRY.facts(kind, overload).quantized is Quantized.INTEGERS, (kind, overload)
    for kind, by_storage in _FIXED_QPARAMS.items():
        fixed = REGISTRY.facts(kind).quantized
        assert isinstance(fixed, FixedQParams)
        assert {ir.DataType.UINT8: fixed.uint8, ir.DataType.INT8: fixed.int8} == by_storage
    assert QPARAMS_0_TO_1 == REGISTRY.facts("aten::sigmoid").quantized
    assert QPARAMS_NEG1_TO_1 == REGISTRY.facts("aten::tanh").quantized


def test_every_former_list_and_torch_entry_is_declared() -> None:
    for kind in _RUN_TIME_LIST_MUTATIONS - _WITHOUT_SYMBOLIC.keys():
        assert _list_overloads(kind), kind
        for overload in _list_overloads(kind):
            assert REGISTRY.facts(kind, overload).mutates_list, (kind, overload)
    assert REGISTRY.kinds_where(lambda facts: facts.mutates_list) == _LIST_MUTATIONS
    reads = {kind: REGISTRY.facts(kind, "t").torch_sequence_read for kind in _SEQUENCE_READS}
    assert reads == {
        "aten::__getitem__": SequenceRead.ITEM,
        "aten::len": SequenceRead.LENGTH,
        "aten::pop": SequenceRead.REMOVED_ITEM,
    }
    for kind, opset in _UNTRACKED_BELOW.items():
        assert REGISTRY.facts(kind).torch_shape_read_below == opset
    for kind in _INT_ARITHMETIC:
        for overload in ["", *(s.overload_name for s in _schemas(kind))]:
            assert REGISTRY.facts(kind, overload).torch_folds_constants, (kind, overload)
    for kind in _FOLD_FALSE:
        assert not REGISTRY.facts(kind).fold, kind
    for kind in _OPTIONAL_USES:
        for overload in ["", *(s.overload_name for s in _schemas(kind))]:
            assert REGISTRY.facts(kind, overload).checks_optional, (kind, overload)


def test_every_former_dict_entry_is_declared_for_the_dict_overloads_it_has_symbolics_for() -> None:
    """The old table applied to every overload of its kinds; a dict overload without a symbolic
    (a dict with float or bool keys, which script_dicts does not take) fails as unsupported
    before the engine could ask."""
    declared = 0
    for kind in _DICT_MUTATIONS:
        expected = DictMutation.WRITES_KEY if kind in _DICT_KEY_WRITES else DictMutation.CHANGES_KEYS
        for overload in _dict_overloads(kind):
            if REGISTRY.opsets(f"{kind}.{overload}"):
                assert REGISTRY.facts(kind, overload).mutates_dict is expected, (kind, overload)
                declared += 1
        for overload in _list_overloads(kind):
            assert REGISTRY.facts(kind, overload).mutates_dict is None, (kind, overload)
    assert declared == 14
    assert REGISTRY.kinds_where(lambda facts: facts.mutates_dict is not None) == _DICT_MUTATIONS


@pytest.mark.parametrize("kind", sorted(_WITHOUT_SYMBOLIC))
def test_former_entries_without_a_symbolic_still_have_none(kind: str) -> None:
    assert REGISTRY.opsets(kind) == ()
    assert not any(name.startswith(f"{kind}.") for name in REGISTRY.names())


def test_every_declaration_names_an_op_torch_has_with_a_symbolic() -> None:
    """Facts are declared with a symbolic, under its name: a declaration for a name no node
    has (a misspelled overload) would be dead, as would the symbolic."""
    REGISTRY.load_all()
    declared = REGISTRY.builtin_facts()
    assert len(declared) > 80
    for name in declared:
        kind, _, overload = name.partition(".")
        assert REGISTRY.builtin_opsets(name), name
        # a bare name stands for every overload of its op
        assert _schemas(kind) and (not overload or overload in {s.overload_name for s in _schemas(kind)}), name


# -- the registry's rules -------------------------------------------------------------------------


def _symbolic(g: GraphContext, self: ir.Value) -> ir.Value:
    return self


def test_facts_are_declared_at_registration_and_default_otherwise() -> None:
    registry = Registry()
    registry.register("aten::relu", 9, _symbolic, facts={"fold": False, "quantized": Quantized.INTEGERS})
    registry.register("aten::gelu", 9, _symbolic)
    assert registry.facts("aten::relu") == OpFacts(fold=False, quantized=Quantized.INTEGERS)
    assert registry.facts("aten::gelu") == OpFacts()
    assert registry.facts("aten::no_such_op") == OpFacts()


def test_an_overload_has_its_ops_facts_but_those_it_declares() -> None:
    registry = Registry()
    registry.register("aten::pop", 9, _symbolic, facts={"fold": False, "mutates_list": False})
    registry.register("aten::pop.t", 9, _symbolic, facts={"mutates_list": True})
    assert registry.facts("aten::pop", "t") == OpFacts(fold=False, mutates_list=True)
    assert registry.facts("aten::pop", "Dict_str") == OpFacts(fold=False)
    assert registry.facts("aten::pop") == OpFacts(fold=False)
    assert registry.kinds_where(lambda facts: facts.mutates_list) == {"aten::pop"}


def test_facts_hold_at_every_opset() -> None:
    registry = Registry()
    registry.register("aten::relu", 9, _symbolic, facts={"fold": False})
    registry.register("aten::relu", 13, _symbolic)  # a later lowering need not repeat them
    registry.register("aten::relu", 14, _symbolic, facts={"fold": False})  # nor contradict them
    assert not registry.facts("aten::relu").fold
    with pytest.raises(ValueError, match="fold=True conflicts with fold=False declared at opset 9"):
        registry.register("aten::relu", 15, _symbolic, facts={"fold": True})
    assert registry.builtin_opsets("aten::relu") == (9, 13, 14)


@pytest.mark.parametrize(
    ("facts", "message"),
    [
        ({"folds": False}, "unknown op fact 'folds'"),
        ({"fold": 0}, "fold= takes bool"),
        ({"torch_shape_read_below": True}, "takes int"),
        ({"promotion": ("self", "other")}, "takes Promotion"),
        ({"quantized": "integers"}, "takes Quantized or FixedQParams"),
        ({"mutates_dict": True}, "mutates_dict= takes DictMutation"),
        ({"complex_inputs": "parts"}, "complex_inputs= takes ComplexInputs"),
    ],
)
def test_a_misspelled_or_mistyped_fact_is_refused(facts: dict, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        Registry().register("aten::relu", 9, _symbolic, facts=facts)


def test_a_custom_symbolics_facts_replace_the_builtins_while_it_is_registered() -> None:
    registry = Registry()
    registry.register("aten::relu", 9, _symbolic, facts={"quantized": Quantized.INTEGERS, "mutates_list": True})
    with registry.scoped_custom("aten::relu", 13, _symbolic):
        assert registry.facts("aten::relu").quantized is Quantized.INTEGERS  # declared nothing
    registry.register_custom("aten::relu", 13, _symbolic, facts={"quantized": Quantized.DEQUANTIZE})
    assert registry.facts("aten::relu") == OpFacts(quantized=Quantized.DEQUANTIZE, mutates_list=True)
    with pytest.raises(ValueError, match="declared at opset 13"):
        registry.register_custom("aten::relu", 15, _symbolic, facts={"quantized": Quantized.INTEGERS})
    registry.unregister_custom("aten::relu", 13)
    assert registry.facts("aten::relu").quantized is Quantized.INTEGERS


def test_facts_load_only_the_ops_family() -> None:
    code = (
        "import json, sys\n"
        "from exporter import symbolic_index\n"
        "from exporter.op_facts import Quantized\n"
        "from exporter.registry import REGISTRY\n"
        "facts = REGISTRY.facts('aten::flatten')\n"
        "loaded = [m for m in symbolic_index.MODULES if m in sys.modules]\n"
        "print(json.dumps({'integers': facts.quantized is Quantized.INTEGERS, 'loaded': loaded}))\n"
    )
    found = run_in_fresh_interpreter(code)
    assert found == {"integers": True, "loaded": ["exporter.opset9.shape"]}


def test_nodes_of_the_graphs_structure_are_asked_about_without_loading() -> None:
    """A phase walking every node (the scalar-type pass) asks about constants and the return
    too: they have no symbolic, and must not count as an unknown op (which loads every family)."""
    code = (
        "import json, sys, torch\n"
        "from exporter import symbolic_index\n"
        "from exporter.op_facts import OpFacts\n"
        "from exporter.registry import REGISTRY\n"
        "def loaded():\n"
        "    return [m for m in symbolic_index.MODULES if m in sys.modules]\n"
        "unit = torch.jit.CompilationUnit('def f(x: torch.Tensor):\\n    return x + 1\\n')\n"
        "graph = unit.f.graph\n"
        "add = next(n for n in graph.nodes() if n.kind() == 'aten::add')\n"
        "promotes = REGISTRY.node_facts(add).promotion is not None\n"
        "after_add = loaded()\n"
        "nodes = [n for n in graph.nodes() if n.kind() == 'prim::Constant'] + [graph.return_node()]\n"
        "defaults = len(nodes) > 1 and all(REGISTRY.node_facts(n) == OpFacts() for n in nodes)\n"
        "print(json.dumps({'defaults': defaults, 'promotes': promotes, 'after_add': after_add,\n"
        "                  'after_all': loaded(), 'modules': len(symbolic_index.MODULES)}))\n"
    )
    found = run_in_fresh_interpreter(code)
    assert found["defaults"] and found["promotes"]
    assert found["after_all"] == found["after_add"]
    assert len(found["after_all"]) < found["modules"]


# -- declared by users ----------------------------------------------------------------------------


def _copysign(g: GraphContext, self: ir.Value, other: ir.Value) -> ir.Value:
    """copysign for inputs without zeros: |self| * sign(other), in the promoted dtype."""
    return g.op("Mul", g.op("Abs", self), g.op("Sign", other))


def test_a_custom_symbolic_declares_how_torch_promotes_its_operands() -> None:
    """A custom symbolic's declarations replace the built-in's (exporter.opset9.special_functions):
    declared, copysign's int and float operands arrive as floats."""
    model = Wrap(lambda x, y: torch.copysign(x, y))
    args = (torch.tensor([3, -2, 5], dtype=torch.int32), torch.tensor([-1.5, 2.0, -0.5]))
    exporter.register_custom_op_symbolic(
        "aten::copysign", _copysign, 9, promotion=Promotion(("self", "other"), Result.FLOAT)
    )
    try:
        assert_matches_torch(model, args, opset=NEWEST)
    finally:
        exporter.unregister_custom_op_symbolic("aten::copysign", 9)


def test_a_custom_symbolic_declares_fold_false() -> None:
    seen: list[bool] = []

    def add(g: GraphContext, self: ir.Value, other: ir.Value, alpha: float = 1) -> ir.Value:
        seen.append(True)
        return g.op("Add", self, other)

    model = Wrap(lambda x: x * (torch.ones(2) + torch.ones(2)))
    with REGISTRY.scoped_custom("aten::add", 9, add):
        assert_matches_torch(model, (torch.randn(2),), opset=NEWEST)
    assert seen == []  # folded in torch: the symbolic never ran
    exporter.register_custom_op_symbolic("aten::add", add, 9, fold=False)
    try:
        assert_matches_torch(model, (torch.randn(2),), opset=NEWEST)
    finally:
        exporter.unregister_custom_op_symbolic("aten::add", 9)
    assert seen == [True]


@pytest.mark.parametrize("name", ["aten::dropout", "aten::feature_dropout", "aten::alpha_dropout"])
def test_dropout_is_registered_as_never_folded(name: str) -> None:
    assert not REGISTRY.facts(name).fold


def test_ordinary_ops_are_foldable() -> None:
    assert REGISTRY.facts("aten::add").fold


def test_an_op_taking_complex_tensors_itself_has_a_symbolic_that_accepts_one() -> None:
    """complex_inputs=OWN hands the symbolic the ComplexValue itself: its newest registration
    must take one (a ``ComplexValue`` or untyped ``object`` parameter), or the export would fail
    on a type error instead of a lowering."""
    own = REGISTRY.kinds_where(lambda facts: facts.complex_inputs is ComplexInputs.OWN)
    assert {"aten::abs", "aten::mul", "aten::istft", "aten::fft_irfft", "aten::view_as_real"} <= own
    refusing = [
        kind
        for kind in sorted(own)
        if not {k for spec in REGISTRY.lookup(kind, NEWEST).params for k in spec.kinds} & {Kind.COMPLEX, Kind.RAW}
    ]
    assert not refusing


def test_ops_on_parts_and_refusing_ops() -> None:
    """Structural ops and R-linear arithmetic run on the parts; an op declaring nothing refuses."""
    assert REGISTRY.facts("aten::slice").complex_inputs is ComplexInputs.PARTS
    assert REGISTRY.facts("aten::cumsum").complex_inputs is ComplexInputs.PARTS
    assert REGISTRY.facts("aten::add").complex_inputs is ComplexInputs.LINEAR
    assert REGISTRY.facts("aten::size").complex_inputs is ComplexInputs.SHAPE
    assert REGISTRY.facts("aten::exp").complex_inputs is None
