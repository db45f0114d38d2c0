"""The symbolic registry: op name x opset -> symbolic function.

The floor rule (the symbolic for target opset N is the one registered at the highest opset
<= N) is one pure function, :func:`pick`. Custom symbolics live in their own table and win
over built-ins at every target they cover, whatever opset the built-in was registered at:
torch's exporter lets a built-in registered at a higher opset shadow a user's symbolic,
which silently drops the user's intent.

What phases need to know of an op beyond its symbolic (op_facts.py) is declared with it and
asked through :meth:`Registry.facts`. Built-ins load lazily through the symbolic index; the
index only saves imports: any question it cannot answer loads every family and asks again.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import torch

from exporter import arguments, symbolic_index
from exporter.op_facts import (
    FACT_NAMES,
    ComplexInputs,
    DictMutation,
    FixedQParams,
    OpFacts,
    Promotion,
    Quantized,
    SequenceRead,
)
from exporter.opsets import MIN_OPSET
from exporter.ts_graph import overload_name

__all__ = [
    "MIN_OPSET",
    "SymbolicFunction",
    "Registry",
    "REGISTRY",
    "pick",
    "onnx_symbolic",
    "register_custom_op_symbolic",
    "unregister_custom_op_symbolic",
    "PYTHON_OP",
    "FunctionSymbolic",
    "autograd_function",
    "function_names",
]

_OP_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?$")

# Custom autograd Functions trace as prim::PythonOp. torch's exporter calls a symbolic registered
# for "prim::PythonOp" (all Functions; ``name=`` says which) when the Function has no ``symbolic``
# staticmethod; here "prim::PythonOp.<module>.<QualName>" (or ".<QualName>") targets one Function.
PYTHON_OP = "prim::PythonOp"
_FUNCTION_NAME = re.compile(r"^prim::PythonOp\.[A-Za-z_<][A-Za-z0-9_.<>]*$")


def pick(target: int, available: Sequence[int]) -> int | None:
    """The highest opset in ``available`` that is <= ``target``, or None."""
    best = None
    for opset in available:
        if opset <= target and (best is None or opset > best):
            best = opset
    return best


class SymbolicFunction:
    """A registered symbolic. Its argument spec and its beartype-checked wrapper are built on
    first use: reading the annotations of every built-in symbolic and wrapping each at import
    cost a second.

    ``module`` is the module whose code registered it (the symbolic index is built from it);
    ``facts`` the op facts this registration declared (OpFacts field -> value).
    """

    __slots__ = ("name", "opset", "raw", "custom", "module", "facts", "_function", "_params")

    def __init__(
        self,
        name: str,
        opset: int,
        raw: Callable[..., Any],
        custom: bool = False,
        module: str = "",
        facts: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.opset = opset
        self.raw = raw
        self.custom = custom
        self.module = module
        self.facts: Mapping[str, Any] = dict(facts or {})
        self._function: Callable[..., Any] | None = None
        self._params: tuple[arguments.ParamSpec, ...] | None = None

    @property
    def params(self) -> tuple[arguments.ParamSpec, ...]:
        if self._params is None:
            self._params = arguments.read_param_specs(self.raw)
        return self._params

    @property
    def function(self) -> Callable[..., Any]:
        """The symbolic wrapped by beartype: a wrong argument or return type fails here."""
        if self._function is None:
            # beartype (about 320 modules) is imported when the first symbolic runs, so
            # ``import exporter`` alone does not pay for it
            import beartype

            self._function = beartype.beartype(self.raw)
        return self._function

    @property
    def takes_raw_inputs(self) -> bool:
        """Schema-less ops (prim::*) get their inputs positionally, unconverted."""
        return any(p.variadic for p in self.params)

    def __repr__(self) -> str:
        return f"SymbolicFunction({self.name!r}, opset={self.opset}, custom={self.custom})"


def _check_name(name: str) -> None:
    if not _OP_NAME.match(name) and not _FUNCTION_NAME.match(name):
        raise ValueError(
            f"invalid op name {name!r}: expected 'namespace::name', 'namespace::name.overload' or, for a custom "
            "autograd Function, 'prim::PythonOp.<module>.<QualifiedName>'"
        )


def autograd_function(node: Any) -> type | None:
    """The torch.autograd.Function class a prim::PythonOp node calls (None for other Python ops)."""
    try:
        obj = node.pyobj()
    except (AttributeError, RuntimeError):
        return None
    cls = getattr(obj, "__self__", obj)  # tracing records the bound ``Function.apply``
    if isinstance(cls, type) and issubclass(cls, torch.autograd.Function):
        return cls
    return None


def function_names(cls: type) -> list[str]:
    """The names a custom symbolic of the Function ``cls`` may be registered under, most specific
    first: "prim::PythonOp.<module>.<QualName>", "prim::PythonOp.<QualName>", "prim::PythonOp"."""
    return [f"{PYTHON_OP}.{cls.__module__}.{cls.__qualname__}", f"{PYTHON_OP}.{cls.__qualname__}", PYTHON_OP]


class FunctionSymbolic(NamedTuple):
    """How a custom autograd Function exports: ``function(g, *inputs)``, plus torch's
    ``name=``/``inplace=``/``module=`` keywords when ``generic`` (registered for prim::PythonOp)."""

    function: Callable[..., Any]
    generic: bool


def _registering_module() -> str:
    """The module whose code is registering a symbolic: the first caller outside this one."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    return frame.f_globals.get("__name__", "") if frame is not None else ""


def _check_opset(opset: int) -> None:
    if not isinstance(opset, int) or opset < MIN_OPSET:
        raise ValueError(f"symbolics are registered at opset {MIN_OPSET} or higher, got {opset!r}")


_FACT_TYPES: dict[str, tuple[type, ...]] = {
    "fold": (bool,),
    "promotion": (Promotion,),
    "quantized": (Quantized, FixedQParams),
    "mutates_list": (bool,),
    "mutates_dict": (DictMutation,),
    "checks_optional": (bool,),
    "torch_sequence_read": (SequenceRead,),
    "torch_shape_read_below": (int,),
    "torch_folds_constants": (bool,),
    "complex_inputs": (ComplexInputs,),
}
assert set(_FACT_TYPES) == set(FACT_NAMES)


def _declared_facts(facts: Mapping[str, Any]) -> dict[str, Any]:
    """The facts a registration declares: its fact keywords that are not None, type-checked
    (a misspelled or mistyped fact fails at import, not as a silently ignored keyword)."""
    declared = {}
    for name, value in facts.items():
        if name not in _FACT_TYPES:
            raise TypeError(f"unknown op fact {name!r}; the facts are {', '.join(FACT_NAMES)}")
        if value is None:
            continue
        types = _FACT_TYPES[name]
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            expected = " or ".join(t.__name__ for t in types)
            raise TypeError(f"op fact {name}= takes {expected}, got {value!r}")
        declared[name] = value
    return declared


def _conflicts(name: str, declared: Mapping[str, Any], others: Sequence[SymbolicFunction]) -> None:
    """Facts hold at every opset: a fact declared differently at another opset is an error."""
    for other in others:
        for fact, value in declared.items():
            if fact in other.facts and other.facts[fact] != value:
                raise ValueError(
                    f"{name}: {fact}={value!r} conflicts with {fact}={other.facts[fact]!r} declared at opset "
                    f"{other.opset}; an op's facts hold at every opset"
                )


class Registry:
    """Thread-safe tables of built-in and custom symbolics.

    Writers take a lock and publish new dictionaries; readers never lock, so a concurrent
    export sees either the old or the new table, never a half-written one.
    """

    def __init__(self, index: Mapping[str, Sequence[str]] | None = None, modules: Sequence[str] = ()) -> None:
        """``index``: op name -> the modules that register its built-ins, imported when the op
        is first asked about; ``modules``: every such module, imported by :meth:`load_all`.
        Without them the registry holds what was registered into it, nothing more."""
        self._lock = threading.Lock()
        self._builtin: dict[str, dict[int, SymbolicFunction]] = {}
        self._custom: dict[str, dict[int, SymbolicFunction]] = {}
        # op name -> the facts its built-ins declared (at whichever opsets: facts hold at all)
        self._builtin_facts: dict[str, dict[str, Any]] = {}
        # (name, overload) -> its merged facts (asked for every node); replaced, after the
        # tables, by every write
        self._facts_cache: dict[tuple[str, str], OpFacts] = {}
        self._modules = tuple(modules)
        self._module_set = frozenset(modules)
        # op name -> modules still to import before its built-ins are all registered
        self._unloaded: dict[str, tuple[str, ...]] = {name: tuple(mods) for name, mods in (index or {}).items()}
        self._all_loaded = not self._modules

    # -- loading -------------------------------------------------------------------------
    def _load(self, *names: str) -> None:
        """Import the modules that register built-ins of ``names``, once.

        The entry is dropped only after its modules are imported: another thread asking
        meanwhile imports them too, and Python's import lock makes it wait for the first.
        """
        unloaded = self._unloaded
        for name in names:
            modules = unloaded.get(name)
            if modules is not None:
                for module in modules:
                    importlib.import_module(module)
                unloaded.pop(name, None)

    def _known(self, names: Sequence[str]) -> bool:
        """Whether a symbolic is registered under one of ``names`` (at some opset)."""
        return any(name in table for table in (self._custom, self._builtin) for name in names)

    def load_all(self) -> None:
        """Import every symbolic module of the index (listing ops, coverage, support matrix,
        and any question the index could not answer: an op it does not list may still be
        registered by one of them, say when the index is stale)."""
        if not self._all_loaded:
            for module in self._modules:
                importlib.import_module(module)
            self._unloaded.clear()
            self._all_loaded = True

    def builtin_modules(self) -> dict[str, tuple[str, ...]]:
        """For every built-in op registered so far, the modules that registered it (in the
        order they did): the content of the symbolic index when every module is loaded."""
        found: dict[str, tuple[str, ...]] = {}
        for name, versions in sorted(self._builtin.items()):
            modules = dict.fromkeys(versions[opset].module for opset in sorted(versions))
            found[name] = tuple(modules)
        return found

    # -- writing -------------------------------------------------------------------------
    def _make(
        self, name: str, opset: int, fn: Callable[..., Any], custom: bool, facts: Mapping[str, Any]
    ) -> SymbolicFunction:
        _check_name(name)
        _check_opset(opset)
        if not callable(fn):
            raise TypeError(f"symbolic for {name} must be callable, got {fn!r}")
        entry = SymbolicFunction(name, opset, fn, custom, _registering_module(), _declared_facts(facts))
        # a user's symbolic: annotation problems surface when it is registered (one for an autograd
        # Function is written for torch's exporter: positional inputs, no annotations)
        if custom and not name.startswith(PYTHON_OP):
            entry.params  # noqa: B018 - evaluated for its checks
        return entry

    def register(
        self, name: str, opset: int, fn: Callable[..., Any], *, facts: Mapping[str, Any] | None = None
    ) -> SymbolicFunction:
        """Register a built-in; registering the same (name, opset) twice is an error.

        ``facts``: the op facts (op_facts.OpFacts fields; None values are not declared) this
        registration declares. They hold at every opset, so declaring a fact differently at
        two opsets is an error; a registration may leave out what another declared.
        """
        entry = self._make(name, opset, fn, custom=False, facts=facts or {})
        if entry.module not in self._module_set:
            # registered from outside the index (a user's built-in): the index's own symbolics
            # for this name come first, so a duplicate is refused here as when all were eager
            self._load(name)
        with self._lock:
            versions = dict(self._builtin.get(name, {}))
            if opset in versions:
                other = versions[opset].function
                raise ValueError(
                    f"{name} is already registered at opset {opset} "
                    f"(by {getattr(other, '__module__', '?')}.{getattr(other, '__qualname__', '?')})"
                )
            _conflicts(name, entry.facts, list(versions.values()))
            versions[opset] = entry
            table = dict(self._builtin)
            table[name] = versions
            if entry.facts:
                all_facts = dict(self._builtin_facts)
                all_facts[name] = {**all_facts.get(name, {}), **entry.facts}
                self._builtin_facts = all_facts
            self._builtin = table
            self._facts_cache = {}
        return entry

    def register_custom(
        self, name: str, opset: int, fn: Callable[..., Any], *, facts: Mapping[str, Any] | None = None
    ) -> None:
        """Register (or replace) a user's symbolic; it wins over built-ins from ``opset`` up.

        ``facts`` it declares replace the built-in's facts of ``name`` while it is registered
        (at every opset: facts are the op's, see :meth:`register`).
        """
        entry = self._make(name, opset, fn, custom=True, facts=facts or {})
        with self._lock:
            table = dict(self._custom)
            versions = dict(table.get(name, {}))
            _conflicts(name, entry.facts, [v for o, v in versions.items() if o != opset])
            versions[opset] = entry
            table[name] = versions
            self._custom = table
            self._facts_cache = {}

    def unregister_custom(self, name: str, opset: int) -> None:
        with self._lock:
            versions = dict(self._custom.get(name, {}))
            if opset not in versions:
                raise KeyError(f"no custom symbolic for {name} at opset {opset}")
            del versions[opset]
            table = dict(self._custom)
            if versions:
                table[name] = versions
            else:
                del table[name]
            self._custom = table
            self._facts_cache = {}

    @contextlib.contextmanager
    def scoped_custom(self, name: str, opset: int, fn: Callable[..., Any]) -> Iterator[None]:
        """Register a custom symbolic for the duration of a ``with`` block (tests)."""
        previous = self._custom.get(name, {}).get(opset)
        self.register_custom(name, opset, fn)
        try:
            yield
        finally:
            if previous is None:
                self.unregister_custom(name, opset)
            else:
                with self._lock:
                    table = dict(self._custom)
                    versions = dict(table.get(name, {}))
                    versions[opset] = previous
                    table[name] = versions
                    self._custom = table
                    self._facts_cache = {}

    # -- reading -------------------------------------------------------------------------
    # Each question first loads the modules the index lists for the names it asks about. An
    # answer of "none" (no symbolic, no opset, no registration) then loads every family and
    # asks again: the index saves imports, it never changes an answer.
    def lookup(self, name: str, opset: int, overload: str = "") -> SymbolicFunction | None:
        """The symbolic for ``name`` (trying ``name.overload`` first) at target ``opset``."""
        candidates = _candidates(name, overload)
        self._load(*candidates)
        found = self._lookup(candidates, opset)
        if found is None and not self._all_loaded:
            self.load_all()
            found = self._lookup(candidates, opset)
        return found

    def _lookup(self, candidates: Sequence[str], opset: int) -> SymbolicFunction | None:
        for table in (self._custom, self._builtin):
            for candidate in candidates:
                versions = table.get(candidate)
                if versions:
                    chosen = pick(opset, versions.keys())
                    if chosen is not None:
                        return versions[chosen]
        return None

    def opsets(self, name: str, overload: str = "") -> tuple[int, ...]:
        """Every opset at which ``name`` (or ``name.overload``) has a symbolic."""
        candidates = _candidates(name, overload)
        self._load(*candidates)
        if not self._known(candidates):
            self.load_all()
        found: set[int] = set()
        for table in (self._custom, self._builtin):
            for candidate in candidates:
                found.update(table.get(candidate, {}).keys())
        return tuple(sorted(found))

    def lookup_function(self, cls: type, opset: int) -> FunctionSymbolic | None:
        """The symbolic of the autograd Function ``cls`` at target ``opset``: one registered for it
        by name, else its ``symbolic`` staticmethod, else one registered for every prim::PythonOp
        (torch's order for the last two); None when the Function is to be inlined."""
        specific, generic = function_names(cls)[:2], PYTHON_OP
        self._load(*specific)
        if not self._known(specific):
            self.load_all()
        for table in (self._custom, self._builtin):
            for name in specific:
                versions = table.get(name)
                chosen = pick(opset, versions.keys()) if versions else None
                if chosen is not None:
                    return FunctionSymbolic(versions[chosen].raw, generic=False)
        symbolic = getattr(cls, "symbolic", None)
        if callable(symbolic):
            return FunctionSymbolic(symbolic, generic=False)
        versions = self._custom.get(generic)
        chosen = pick(opset, versions.keys()) if versions else None
        if chosen is not None:
            return FunctionSymbolic(versions[chosen].raw, generic=True)
        return None

    def function_exports(self, cls: type) -> bool:
        """Whether the Function ``cls`` has a symbolic at some opset (else tracing inlines it)."""
        if callable(getattr(cls, "symbolic", None)):
            return True
        names = function_names(cls)
        self._load(*names)
        if not self._known(names):
            self.load_all()
        return self._known(names)

    def facts(self, name: str, overload: str = "") -> OpFacts:
        """What is declared of ``name`` (see op_facts.py). An overload has the facts of its op,
        except those its own registration declares; a custom symbolic's declarations replace
        the built-ins'. An op nothing declares anything of has the defaults."""
        cache = self._facts_cache
        found = cache.get((name, overload))
        if found is not None:
            return found
        candidates = _candidates(name, overload)
        self._load(*candidates)
        if not self._known(candidates):
            self.load_all()
        declared: dict[str, Any] = {}
        for candidate in reversed(candidates):  # the op first, then its overload
            declared.update(self._builtin_facts.get(candidate, {}))
            for entry in self._custom.get(candidate, {}).values():
                declared.update(entry.facts)
        found = OpFacts(**declared) if declared else _NO_FACTS
        if self._known(candidates):  # (an unknown name's answer may change as families load)
            cache[(name, overload)] = found
        return found

    def node_facts(self, node: torch._C.Node) -> OpFacts:
        """The facts of ``node``'s op, for phases walking every node (the scalar-type pass). A
        node of the graph's structure (a constant, a block's parameters or return) or an
        autograd Function call has no symbolic: it has the defaults, without a question that
        would load every family."""
        kind = node.kind()
        if kind in _NOT_OPS:
            return _NO_FACTS
        return self.facts(kind, overload_name(node))

    def kinds_where(self, predicate: Callable[[OpFacts], bool]) -> frozenset[str]:
        """The node kinds (op names without overload) with an op or overload whose facts satisfy
        ``predicate`` (a graph search by kind: ``block.findAllNodes``). Loads every family."""
        self.load_all()
        names = set(self._builtin) | set(self._custom)
        if not predicate(_NO_FACTS):
            names = {
                n for n in names if n in self._builtin_facts or any(e.facts for e in self._custom.get(n, {}).values())
            }
        found = set()
        for name in names:
            kind, _, overload = name.partition(".")
            if predicate(self.facts(kind, overload)):
                found.add(kind)
        return frozenset(found)

    def names(self) -> list[str]:
        self.load_all()
        return sorted(set(self._builtin) | set(self._custom))

    def builtin_opsets(self, name: str) -> tuple[int, ...]:
        self._load(name)
        if name not in self._builtin:
            self.load_all()
        return tuple(sorted(self._builtin.get(name, {})))

    def builtin_facts(self) -> dict[str, dict[str, Any]]:
        """For every built-in op registered so far that declares facts, what it declares."""
        return {name: dict(facts) for name, facts in sorted(self._builtin_facts.items())}


def _candidates(name: str, overload: str) -> list[str]:
    """The registered names a node of ``name.overload`` may use, most specific first."""
    return [f"{name}.{overload}", name] if overload else [name]


_NO_FACTS = OpFacts()
# Node kinds that are no op with a symbolic: the graph's structure, and autograd Function calls
# (the emitter handles them itself).
_NOT_OPS = frozenset({"prim::Constant", "prim::Param", "prim::Return", PYTHON_OP})


REGISTRY = Registry(symbolic_index.OP_MODULES, symbolic_index.MODULES)


def onnx_symbolic(
    name: str,
    opset: int = MIN_OPSET,
    *,
    fold: bool | None = None,
    promotion: Promotion | None = None,
    quantized: Quantized | FixedQParams | None = None,
    mutates_list: bool | None = None,
    mutates_dict: DictMutation | None = None,
    checks_optional: bool | None = None,
    torch_sequence_read: SequenceRead | None = None,
    torch_shape_read_below: int | None = None,
    torch_folds_constants: bool | None = None,
    complex_inputs: ComplexInputs | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the built-in symbolic of ``name`` from ``opset`` on.

    The keywords declare facts of the op (op_facts.OpFacts documents each; None: not declared
    here), which hold at every opset: ``fold=False`` never folds ``name`` by running it in torch.
    """
    facts = {
        "fold": fold,
        "promotion": promotion,
        "quantized": quantized,
        "mutates_list": mutates_list,
        "mutates_dict": mutates_dict,
        "checks_optional": checks_optional,
        "torch_sequence_read": torch_sequence_read,
        "torch_shape_read_below": torch_shape_read_below,
        "torch_folds_constants": torch_folds_constants,
        "complex_inputs": complex_inputs,
    }

    def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
        REGISTRY.register(name, opset, fn, facts=facts)
        return fn

    return decorator


def register_custom_op_symbolic(
    name: str,
    fn: Callable[..., Any],
    opset: int,
    *,
    fold: bool | None = None,
    promotion: Promotion | None = None,
    quantized: Quantized | FixedQParams | None = None,
) -> None:
    """Register ``fn`` for ``name`` at every target opset >= ``opset``, ahead of built-ins.

    The keywords declare what a user's symbolic may need to (None: as the built-in declares),
    for as long as it is registered: ``fold=False`` never folds the op by running it in torch,
    ``quantized=Quantized.INTEGERS`` hands it quantized tensors as they are, ``promotion=``
    has its operands promoted as torch does (op_facts.py).
    """
    REGISTRY.register_custom(name, opset, fn, facts={"fold": fold, "promotion": promotion, "quantized": quantized})


def unregister_custom_op_symbolic(name: str, opset: int) -> None:
    REGISTRY.unregister_custom(name, opset)
