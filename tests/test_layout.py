"""The package's and the tests' layout rules, checked on the source (see ../shared/DESIGN.md).

- every opset-9 registration comes from a family module in exporter/opset9/;
- only symbolic_opsetN.py (the index) and the family modules themselves import
  exporter.opsetN (opset9/, opset10/);
- no module imports another module's _private names;
- family modules stay readable documents: a docstring saying what they cover;
- no module in exporter/ is over 800 lines, except the generated symbolic index;
- a test module mirrors an exporter module (tests/test_<module>.py, tests/<package>/test_<module>.py)
  or tests one named behaviour (tests/behaviour/, tests/control_flow/), and says what it covers;
- no test module writes its own opset list: an op's lowering takes its opsets from the registry
  (tests/cases.py), a behaviour one of the named lists of tests/conftest.py.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

from exporter.registry import REGISTRY

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "exporter"
MODULES = sorted(PACKAGE.rglob("*.py"))
FAMILIES = sorted(p for p in PACKAGE.glob("opset*/*.py") if p.name != "__init__.py")
MAX_LINES = 800
TESTS = pathlib.Path(__file__).resolve().parent
TEST_MODULES = sorted(TESTS.rglob("test_*.py"))
# top-level test modules that mirror no module of exporter/, and what each tests instead
MIRROR_ELSEWHERE = {
    "test_layout.py": "the layout rules of exporter/ and tests/",
    "test_cli.py": "exporter/__main__.py, the command line",
    "test_coverage.py": "tools/coverage.py",
    "test_reference_runs.py": "tests/reference_runs.py, the suite's second runtime",
}
# folders of tests/ whose modules test behaviours rather than one module each
BEHAVIOUR_FOLDERS = {"behaviour", "control_flow"}


def _module_name(path: pathlib.Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


def _imports(path: pathlib.Path) -> list[tuple[str, list[str]]]:
    """(module, imported names) for every import statement, at any depth."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((a.name, []) for a in node.names)
    return found


def test_every_opset9_registration_comes_from_a_family_module() -> None:
    origins = {
        name: REGISTRY._builtin[name][9].function.__module__
        for name in REGISTRY.names()
        if 9 in REGISTRY.builtin_opsets(name)
    }
    assert len(origins) > 300
    strays = {name: module for name, module in origins.items() if not module.startswith("exporter.opset9.")}
    assert not strays


@pytest.mark.parametrize("package", sorted({p.parent.name for p in FAMILIES}))
def test_only_the_index_imports_the_family_package(package: str) -> None:
    """exporter.opsetN is imported by symbolic_opsetN.py (its index) and its own families only."""
    importers = set()
    for path in MODULES:
        for module, names in _imports(path):
            if module == f"exporter.{package}" or module.startswith(f"exporter.{package}."):
                importers.add(_module_name(path))
            elif module == "exporter" and package in names:
                importers.add(_module_name(path))
    index = f"exporter.symbolic_{package}"
    outside = {m for m in importers if m != index and not m.startswith(f"exporter.{package}.")}
    assert not outside, f"import exporter.{package} through {index}: {sorted(outside)}"


def test_no_module_imports_private_names() -> None:
    offenders = [
        f"{_module_name(path)}: from {module} import {name}"
        for path in MODULES
        for module, names in _imports(path)
        if module.startswith("exporter")
        for name in names
        if name.startswith("_") and not name.startswith("__")
    ]
    assert not offenders


@pytest.mark.parametrize("path", FAMILIES, ids=[f"{p.parent.name}.{p.stem}" for p in FAMILIES])
def test_family_module_is_a_readable_document(path: pathlib.Path) -> None:
    tree = ast.parse(path.read_text())
    docstring = ast.get_docstring(tree)
    assert docstring and "ONNX" in docstring, "a docstring saying what the family covers and its ONNX idioms"
    assert any(
        isinstance(n, ast.FunctionDef) and any("onnx_symbolic" in ast.unparse(d) for d in n.decorator_list)
        for n in tree.body
    ), "a family module registers symbolics"


def test_no_module_is_over_800_lines() -> None:
    over = {
        str(path.relative_to(PACKAGE)): len(path.read_text().splitlines())
        for path in MODULES
        if path.name != "symbolic_index.py" and len(path.read_text().splitlines()) > MAX_LINES
    }
    assert not over, over


# -- the tests -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", TEST_MODULES, ids=lambda p: str(p.relative_to(TESTS)))
def test_a_test_module_mirrors_a_module_or_tests_a_named_behaviour(path: pathlib.Path) -> None:
    name = path.stem.removeprefix("test_")
    assert ast.get_docstring(ast.parse(path.read_text())), "a docstring saying what the module covers"
    folder = path.parent.relative_to(TESTS)
    if folder.parts and folder.parts[0] in BEHAVIOUR_FOLDERS:
        assert not name[-1].isdigit(), "a behaviour's name, not a batch number"
        assert not {"issue", "gaps", "suite"} & set(name.split("_")), (
            "a behaviour's name, not where its cases came from"
        )
        return
    if not folder.parts and path.name in MIRROR_ELSEWHERE:
        return
    mirrored = PACKAGE / folder / name
    assert mirrored.with_suffix(".py").exists() or mirrored.is_dir(), f"no exporter/{folder / name}(.py) to mirror"


def _is_display(node: ast.AST) -> bool:
    return isinstance(node, (ast.List, ast.Tuple, ast.Set))


def _holds_an_int(node: ast.AST) -> bool:
    """Whether a list, tuple or set display with an int literal in it is part of ``node``."""
    return any(
        _is_display(n) and any(isinstance(e, ast.Constant) and type(e.value) is int for e in n.elts)
        for n in ast.walk(node)
    )


def _parametrized_names(call: ast.Call) -> list[str]:
    names = call.args[0]
    if isinstance(names, ast.Constant) and isinstance(names.value, str):
        return [n.strip() for n in names.value.split(",")]
    if _is_display(names):
        return [e.value for e in names.elts if isinstance(e, ast.Constant)]
    return []


def hand_written_opset_lists(source: str) -> list[str]:
    """Where ``source`` writes its own opset list: a module-level name ending in OPSETS bound to a
    display (or to an expression holding one with an int literal), an ``opset`` parametrization
    over a display (or, with other names, a row whose opset is an int literal), or a loop of
    ``opset`` over a display with an int literal."""
    tree = ast.parse(source)
    found = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name) and t.id.endswith("OPSETS")]
            if names and (_is_display(node.value) or _holds_an_int(node.value)):
                found.append(f"line {node.lineno}: {names[0]} = {ast.unparse(node.value)}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parametrize":
            names = _parametrized_names(node) if len(node.args) >= 2 else []
            if "opset" not in names:
                continue
            values = node.args[1]
            if names == ["opset"] and (_is_display(values) or _holds_an_int(values)):
                found.append(f"line {node.lineno}: parametrize('opset', {ast.unparse(values)})")
            elif names != ["opset"] and _is_display(values):
                position = names.index("opset")
                for row in values.elts:
                    if isinstance(row, ast.Call) and getattr(row.func, "attr", "") == "param":
                        row = ast.Tuple(elts=row.args)
                    opset = row.elts[position] if _is_display(row) and position < len(row.elts) else None
                    if isinstance(opset, ast.Constant) and type(opset.value) is int:
                        found.append(f"line {node.lineno}: parametrize({names}) with the opset {opset.value}")
        elif isinstance(node, (ast.For, ast.comprehension)) and getattr(node.target, "id", "") == "opset":
            if _holds_an_int(node.iter):
                found.append(f"line {getattr(node, 'lineno', '?')}: for opset in {ast.unparse(node.iter)}")
    return found


def test_hand_written_opset_lists_are_found() -> None:
    """The check below finds each way a module could write its own list, and lets the named
    lists and the registry's through."""
    source = """
import pytest
OPSETS = [9, 13]
MORE_OPSETS = sorted({9, 11, NEWEST})
LAYER_OPSETS = lowering_opsets("quantized::linear", min_opset=10)
@pytest.mark.parametrize("opset", [11, NEWEST])
@pytest.mark.parametrize("opset", (MIN_OPSET, *SEQUENCE_OPSETS))
@pytest.mark.parametrize(("opset", "native"), [(9, False), (NEWEST, True)])
@pytest.mark.parametrize("opset", sorted({*lowering_opsets("aten::sort"), *FEATURE_OPSETS}))
@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test(opset):
    for opset in (9, 13):
        pass
    for opset in BASE_OPSETS:
        pass
"""
    found = sorted(int(line.split(":")[0].removeprefix("line ")) for line in hand_written_opset_lists(source))
    assert found == [3, 4, 6, 7, 8, 12]


@pytest.mark.parametrize("path", TEST_MODULES, ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_module_writes_its_own_opset_list(path: pathlib.Path) -> None:
    assert not hand_written_opset_lists(path.read_text())
