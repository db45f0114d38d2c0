"""The symbolic index (exporter/symbolic_index.py): which module registers which op.

The registry imports a symbolic module when one of its ops is first asked about, so the index
must list exactly what the modules register: an op missing from it would be reported as
unsupported although a module registers it, and a module listed for an op it does not register
would be imported for nothing. Lookups through the index behave as when every module was
imported up front.
"""

from __future__ import annotations

import importlib
import importlib.util
import pathlib
import sys
from typing import NamedTuple

import onnx_ir as ir
import pytest
import torch
from conftest import run_in_fresh_interpreter

from exporter import symbolic_index
from exporter.graph_context import GraphContext
from exporter.registry import Registry

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _tool():  # noqa: ANN202 - the module object of tools/symbolic_index.py
    spec = importlib.util.spec_from_file_location("symbolic_index_tool", ROOT / "tools" / "symbolic_index.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_index_lists_what_the_symbolic_modules_register() -> None:
    tool = _tool()
    modules, op_modules = tool.build()
    assert len(op_modules) > 400
    assert tool.differences(symbolic_index.MODULES, symbolic_index.OP_MODULES, modules, op_modules) == []


def test_a_stale_index_is_reported() -> None:
    """The comparison the test above relies on names each kind of staleness."""
    tool = _tool()
    modules = ("exporter.opset9.activations", "exporter.symbolic_opset13")
    actual = {"aten::relu": ("exporter.opset9.activations",), "aten::gelu": ("exporter.opset9.activations",)}
    missing_op = {"aten::relu": ("exporter.opset9.activations",)}
    extra_op = {**actual, "aten::selu": ("exporter.opset9.activations",)}
    extra_module = {**actual, "aten::relu": ("exporter.opset9.activations", "exporter.symbolic_opset13")}
    assert tool.differences(modules, actual, modules, actual) == []
    assert tool.differences(modules, missing_op, modules, actual) == [
        "aten::gelu: the index lists [], registered by ['exporter.opset9.activations']"
    ]
    assert tool.differences(modules, extra_op, modules, actual) == [
        "aten::selu: the index lists ['exporter.opset9.activations'], registered by []"
    ]
    assert len(tool.differences(modules, extra_module, modules, actual)) == 1
    assert len(tool.differences(modules[:1], actual, modules, actual)) == 1  # a new module file


_LOADED = "[m for m in symbolic_index.MODULES if m in sys.modules]"


def test_import_loads_no_symbolic_module_and_a_lookup_only_its_own() -> None:
    found = run_in_fresh_interpreter(
        "import json, sys\n"
        "import exporter\n"
        "from exporter import symbolic_index\n"
        "from exporter.registry import REGISTRY\n"
        f"at_import = {_LOADED}\n"
        "relu = REGISTRY.lookup('aten::relu', 20)\n"
        f"after_relu = {_LOADED}\n"
        "print(json.dumps({'at_import': at_import, 'after_relu': after_relu,\n"
        "                  'relu': relu.raw.__module__, 'beartype': 'beartype' in sys.modules}))\n"
    )
    assert found["at_import"] == []
    assert found["after_relu"] == ["exporter.opset9.activations"]
    assert found["relu"] == "exporter.opset9.activations"
    assert not found["beartype"]  # imported when the first symbolic runs


def test_lazy_lookups_agree_with_loading_everything_first() -> None:
    """Each op looked up in a fresh registry that loads on demand gets the same symbolic and
    opsets as after importing every module, including opset deltas and overloads."""
    cases = [
        ("aten::relu", 20, ""),
        ("aten::max", 12, "dim"),
        ("aten::max", 10, "other"),
        ("aten::topk", 9, ""),
        ("aten::topk", 11, ""),
        ("aten::__interpolate", 10, ""),
        ("aten::__interpolate", 20, ""),
        ("aten::layer_norm", 17, ""),
        ("aten::no_such_op", 20, ""),
    ]
    code = (
        "import json\n"
        "from exporter.registry import REGISTRY\n"
        f"cases = {cases!r}\n"
        "def describe(name, opset, overload):\n"
        "    entry = REGISTRY.lookup(name, opset, overload)\n"
        "    found = None if entry is None else [entry.opset, entry.raw.__module__, entry.raw.__qualname__]\n"
        "    return [found, list(REGISTRY.opsets(name, overload)), REGISTRY.facts(name).fold]\n"
        "lazy = [describe(*case) for case in cases]\n"
        "REGISTRY.load_all()\n"
        "print(json.dumps({'lazy': lazy, 'eager': [describe(*case) for case in cases]}))\n"
    )
    found = run_in_fresh_interpreter(code)
    assert found["lazy"] == found["eager"]
    assert found["lazy"][0][0][1] == "exporter.opset9.activations"
    assert found["lazy"][-1][0] is None


def test_user_builtin_duplicating_an_unloaded_one_is_refused() -> None:
    """Registering a built-in the index knows loads the index's modules first, so a duplicate
    (name, opset) is refused as when every module was imported at ``import exporter``."""
    found = run_in_fresh_interpreter(
        "import json\n"
        "import exporter\n"
        "def relu(g, self): return self\n"
        "try:\n"
        "    exporter.onnx_symbolic('aten::relu', 9)(relu)\n"
        "    message = ''\n"
        "except ValueError as error:\n"
        "    message = str(error)\n"
        "print(json.dumps({'message': message}))\n"
    )
    assert "already registered at opset 9" in found["message"]


def _relu(g: GraphContext, self: ir.Value) -> ir.Value:
    return g.op("Relu", self)


def test_a_registry_without_index_loads_nothing() -> None:
    registry = Registry()
    assert registry.lookup("aten::relu", 20) is None
    assert registry.names() == []
    registry.register("aten::relu", 9, _relu)
    assert registry.builtin_modules() == {"aten::relu": (__name__,)}


class _Family(NamedTuple):
    """A symbolic module written for one test: registering ``ops`` into the test's registry."""

    module: str
    ops: tuple[str, ...]


def _families(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, registry: Registry, families: list[_Family]
) -> None:
    """Write the ``families`` as importable modules that register into ``registry`` (through a
    holder module, as the package's modules register into REGISTRY); each op declares
    ``fold=False``, so its facts tell whether its module was loaded."""
    holder = f"{tmp_path.name}_holder".replace("-", "_")
    (tmp_path / f"{holder}.py").write_text("REGISTRY = None\n")
    for family in families:
        lines = [f"import {holder}", "def symbolic(g, self):", "    return self"]
        lines += [f"{holder}.REGISTRY.register({op!r}, 9, symbolic, facts={{'fold': False}})" for op in family.ops]
        (tmp_path / f"{family.module}.py").write_text("\n".join(lines) + "\n")
        monkeypatch.delitem(sys.modules, family.module, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, holder, raising=False)
    importlib.import_module(holder).REGISTRY = registry


def test_an_index_module_is_imported_on_first_lookup(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A registry with its own index imports the module listed for an op when the op is first
    asked about, and only that one, once."""
    relu, gelu = _Family("probe_relu_family", ("aten::relu",)), _Family("probe_gelu_family", ("aten::gelu",))
    registry = Registry({"aten::relu": (relu.module,), "aten::gelu": (gelu.module,)}, (relu.module, gelu.module))
    _families(tmp_path, monkeypatch, registry, [relu, gelu])
    assert registry.lookup("aten::relu", 20) is not None
    assert relu.module in sys.modules
    assert gelu.module not in sys.modules
    del sys.modules[relu.module]
    registry.lookup("aten::relu", 20)
    assert relu.module not in sys.modules  # imported once per registry
    assert registry.lookup("aten::gelu", 20) is not None
    assert gelu.module in sys.modules


def test_a_miss_loads_every_family_before_answering(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    relu, gelu = _Family("probe_relu_family", ("aten::relu",)), _Family("probe_gelu_family", ("aten::gelu",))
    registry = Registry({"aten::relu": (relu.module,)}, (relu.module, gelu.module))
    _families(tmp_path, monkeypatch, registry, [relu, gelu])
    assert registry.lookup("aten::no_such_op", 20) is None
    assert gelu.module in sys.modules and relu.module in sys.modules


_QUESTIONS = {
    "lookup": lambda registry, name: registry.lookup(name, 20) is not None,
    "opsets": lambda registry, name: registry.opsets(name) == (9,),
    "builtin_opsets": lambda registry, name: registry.builtin_opsets(name) == (9,),
    "facts": lambda registry, name: not registry.facts(name).fold,
    "overload": lambda registry, name: registry.lookup(name, 20, "Tensor") is not None,
}


@pytest.mark.parametrize("first", [None, "aten::gelu", "aten::selu", "aten::relu"])
@pytest.mark.parametrize("question", sorted(_QUESTIONS))
def test_a_stale_index_changes_no_answer(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, question: str, first: str | None
) -> None:
    """An op registered by a module the index does not list for it (a stale index: the op moved
    to another family) is found, whichever families an earlier question loaded."""
    stale = _Family("probe_stale_family", ("aten::gelu",))  # the index says it registers relu too
    moved = _Family("probe_moved_family", ("aten::relu", "aten::selu"))  # listed for selu only
    index = {"aten::relu": (stale.module,), "aten::gelu": (stale.module,), "aten::selu": (moved.module,)}
    registry = Registry(index, (stale.module, moved.module))
    _families(tmp_path, monkeypatch, registry, [stale, moved])
    if first is not None:
        registry.lookup(first, 20)
    assert _QUESTIONS[question](registry, "aten::relu")


def test_a_stale_index_changes_no_answer_for_autograd_functions(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx: object, x: torch.Tensor) -> torch.Tensor:
            return x * 2

    name = f"prim::PythonOp.{Scale.__qualname__}"
    family = _Family("probe_function_family", (name,))
    registry = Registry({}, (family.module,))
    _families(tmp_path, monkeypatch, registry, [family])
    assert registry.function_exports(Scale)
    found = registry.lookup_function(Scale, 20)
    assert found is not None and not found.generic


@pytest.mark.parametrize("name", ["aten::relu", "aten::linear"])
def test_index_entries_name_modules_of_the_package(name: str) -> None:
    assert all(m in symbolic_index.MODULES for m in symbolic_index.OP_MODULES[name])
