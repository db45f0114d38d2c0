"""Read-only queries on TorchScript graphs, shared by capture, the passes, the emitter and the
control-flow symbolics.

They live in one module of their own so that no phase borrows another phase's helpers: the
emitter must not depend on a pass, nor a pass on the emitter's GraphContext. There is one
block walk (:func:`walk`): every consumer that needs the nodes of sub-blocks uses it, so
a fix to how blocks are entered (or how fast) reaches them all.
"""

from __future__ import annotations

import functools
import os
import re
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence

import torch

__all__ = [
    "walk",
    "all_nodes",
    "schema_of",
    "overload_name",
    "has_blocks",
    "source_location",
    "CALL_SITES",
    "library_line",
    "call_chain",
    "inside",
    "static_loop_iterations",
    "register_locator",
    "locator",
    "FUNCTION_BODY",
    "ASSUMED_ORDER",
    "function_calls",
    "function_bodies",
    "PACKAGE_DIR",
    "is_tensor_list_type",
    "module_call_scope",
    "module_calls",
    "is_script_object",
    "script_class_name",
]

# Node attribute (a string): the call sites through which an inlined node was reached, one
# "location<TAB>callee" per line, outermost first (written by exporter.capture.lowering.inline_calls).
CALL_SITES = "exporter_call_sites"

# Graph attribute of a traced custom autograd Function's prim::PythonOp: the ops its forward ran,
# taking the node's tensor inputs and (once capture has ordered them: exporter.capture.autograd)
# returning the node's outputs in order.
FUNCTION_BODY = "Subgraph"
# Int attribute capture sets on such a node when outputs of one type had to be matched to the
# recorded results in the order forward computed them (the trace does not say which is which).
ASSUMED_ORDER = "exporter_assumed_order"

# This package's own directory: its frames and source ranges are never the user's line.
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


@functools.lru_cache(maxsize=4096)
def _parse_schema(text: str) -> torch._C.FunctionSchema | None:
    if text == "(no schema)":
        return None
    return torch._C.parse_schema(text)


def schema_of(node: torch._C.Node) -> torch._C.FunctionSchema | None:
    """The parsed schema of an operator node, or None for schema-less prim nodes."""
    try:
        return _parse_schema(node.schema())
    except RuntimeError:
        return None


def overload_name(node: torch._C.Node) -> str:
    """The overload of an operator node's schema ("" for the default and schema-less nodes)."""
    schema = schema_of(node)
    return schema.overload_name if schema is not None else ""


_BLOCK_KINDS = frozenset({"prim::If", "prim::Loop", "prim::Closure", "prim::With"})


def has_blocks(node: torch._C.Node) -> bool:
    """Whether ``node`` has sub-blocks. Only control-flow nodes can; asking every node for its
    blocks costs a pybind round trip each (~30 us), which adds up on large graphs."""
    return node.kind() in _BLOCK_KINDS and bool(list(node.blocks()))


def all_nodes(blocks: Iterable[torch._C.Graph | torch._C.Block]) -> list[torch._C.Node]:
    """Every node of ``blocks``, depth first, including the nodes of nested sub-blocks.

    A list, taken before anyone sees a node, so callers may replace or destroy nodes while
    they go through it.
    """
    found: list[torch._C.Node] = []
    for block in blocks:
        for node in block.nodes():
            found.append(node)
            if has_blocks(node):
                found.extend(all_nodes(node.blocks()))
    return found


def function_calls(graph: torch._C.Graph | torch._C.Block) -> list[torch._C.Node]:
    """The calls of custom autograd Functions in ``graph`` (sub-blocks included, not the Function
    bodies themselves) whose forward the trace recorded (:data:`FUNCTION_BODY`)."""
    return [node for node in graph.findAllNodes("prim::PythonOp", True) if node.hasAttribute(FUNCTION_BODY)]


def function_bodies(graph: torch._C.Graph) -> list[torch._C.Graph]:
    """The :data:`FUNCTION_BODY` graphs of ``graph``'s Function calls, and of the calls in
    them, outermost first."""
    found = []
    for call in function_calls(graph):
        body = call.g(FUNCTION_BODY)
        found.append(body)
        found.extend(function_bodies(body))
    return found


def walk(block: torch._C.Graph | torch._C.Block) -> Iterator[torch._C.Node]:
    """Every node of one graph or block, depth first, sub-blocks included (see :func:`all_nodes`)."""
    yield from all_nodes([block])


_SCRIPTED_FRAME = re.compile(r'File "(?P<path>.+)", line (?P<line>\d+)')
# TorchScript's marks under the code a node comes from
_UNDERLINE = re.compile(r"~+")


def source_location(node: torch._C.Node | None) -> str:
    """The user's file:line for a TorchScript node, skipping frames inside torch itself.

    Traced nodes carry a Python stack ("file.py(12): fn" per frame); scripted nodes carry
    the compiled source with the expression marked ('File "file.py", line 12' ... "<--- HERE").
    A scripted node of torch's own code inlined into the user's (``F.pad``'s body) is named
    by the user's call sites, then torch's line (:data:`CALL_SITES`).
    Error messages of every phase name the node this way, so it lives with the graph queries.
    """
    if node is None:
        return "unknown location"
    own = _own_location(node)
    if own:
        return own
    # nodes TorchScript makes for a builtin (prim::tolist of ``t.tolist()``) may carry no
    # range: the statement that uses the result is the user's line
    for output in node.outputs():
        for use in output.uses():
            used_at = _own_location(use.user)
            if used_at:
                return used_at
    return "unknown location"


def _own_location(node: torch._C.Node) -> str:
    """:func:`source_location` of ``node``'s own source range ("" when it has none)."""
    try:
        text = node.sourceRange()
    except RuntimeError:  # some nodes have no range (torch's C++ error)
        return ""
    frames = [line.rstrip() for line in text.splitlines() if line.strip()]
    if not frames:
        return ""
    scripted = _SCRIPTED_FRAME.search(frames[0])
    if scripted:
        path, line_number = scripted.group("path"), scripted.group("line")
        if _inside_torch(path) and node.hasAttribute(CALL_SITES):
            return call_chain(node, node.s(CALL_SITES))
        # the code is the first line TorchScript underlines ("~~~"), the line the number names
        # (a loop's range spans its body: its last underlined line is the body's)
        code = ""
        for index, line in enumerate(frames):
            if index > 1 and _UNDERLINE.fullmatch(line.replace("<--- HERE", "").strip() or "x"):
                code = frames[index - 1].strip()
                break
        location = f"{path}:{line_number}"
        return f"{location} ({code})" if code else location
    parsed = []
    for frame in frames:
        frame = frame.strip()
        # traced frames read "file.py(12): fn"
        if "): " in frame and "(" in frame:
            path, _, rest = frame.partition("(")
            line, _, fn = rest.partition("): ")
            parsed.append((path, line, fn))
        else:
            parsed.append((frame, "", ""))

    user = [p for p in parsed if p[1] and not _inside_torch(p[0])]
    path, line, fn = user[0] if user else parsed[0]
    if not line:
        return path
    return f"{path}:{line} (in {fn})" if fn else f"{path}:{line}"


# Per captured graph: how to name a node's place in the user's code (capture.call_sites.CallSites.locate,
# which knows the call sites lowering inlined). Keyed weakly by the graph, and the locator holds
# no reference to it (it takes the graph as an argument), so a graph and its entry go together.
_LOCATORS: weakref.WeakKeyDictionary[torch._C.Graph, Callable[[torch._C.Node, torch._C.Graph], str]] = (
    weakref.WeakKeyDictionary()
)


def register_locator(graph: torch._C.Graph, locate: Callable[[torch._C.Node, torch._C.Graph], str]) -> None:
    """Make :func:`locator` of ``graph`` name nodes with ``locate(node, graph)``: capture
    registers the call sites of a lowered ScriptModule, so the passes (which receive only the
    graph) name the user's call chain in their errors the way emission does."""
    _LOCATORS[graph] = locate


def locator(graph: torch._C.Graph) -> Callable[[torch._C.Node], str]:
    """How errors about the nodes of ``graph`` name their place: the locator capture registered
    for it (the user's call sites of inlined torch code), else :func:`source_location`."""
    locate = _LOCATORS.get(graph)
    if locate is None:
        return source_location
    return functools.partial(_located, locate, graph)


def _located(locate: Callable[[torch._C.Node, torch._C.Graph], str], graph: torch._C.Graph, node: torch._C.Node) -> str:
    try:
        return locate(node, graph)
    except Exception:  # noqa: BLE001 - naming a place must not hide the error being reported
        return source_location(node)


def _inside_torch(path: str) -> bool:
    """Code of torch itself (or of this package): never the line a user wants named."""
    normalized = path.replace("\\", "/")
    return "/torch/" in normalized or normalized.startswith(("<", PACKAGE_DIR.replace("\\", "/")))


def library_line(node: torch._C.Node) -> tuple[str, str] | None:
    """(path, line) of a scripted node whose source is torch's own code (``F.pad``'s body
    inlined into the user's forward), else None."""
    try:
        text = node.sourceRange()
    except RuntimeError:  # some nodes have no range (torch's C++ error)
        return None
    scripted = _SCRIPTED_FRAME.search(text)
    if scripted is None or not _inside_torch(scripted.group("path")):
        return None
    return scripted.group("path"), scripted.group("line")


def call_chain(node: torch._C.Node, sites: str) -> str:
    """A node of torch's own code inlined into the user's, reached through ``sites`` (see
    :data:`CALL_SITES`): the user's call sites, outermost first, then torch's line named by the
    torch function the user called, e.g.
    ``model.py:12 (y = F.pad(x, p, mode="reflect")) -> torch/nn/functional.py:5823 (in pad)``.
    Call sites inside torch (``nn.Sequential`` calling a module) or without a location are left out."""
    found = library_line(node)
    if found is None:
        return source_location(node)
    path, line = found
    frames = [site.split("\t") for site in sites.splitlines()]
    user = [frame for frame in frames if len(frame) == 2 and _user_frame(frame[0])]
    if not user:
        return f"{path}:{line}"
    normalized = path.replace("\\", "/")
    short = "torch/" + normalized.rsplit("/torch/", 1)[1] if "/torch/" in normalized else normalized
    return " -> ".join([frame[0] for frame in user] + [f"{short}:{line} (in {user[-1][1]})"])


def _user_frame(location: str) -> bool:
    path = location.split(" (", 1)[0].rsplit(":", 1)[0]
    return location != "unknown location" and not _inside_torch(path)


def inside(block: torch._C.Block, node: torch._C.Node) -> bool:
    """Whether ``node`` lies in ``block`` or a block nested in it."""
    owner: torch._C.Block | None = node.owningBlock()
    while owner is not None:
        if owner == block:
            return True
        parent = owner.owningNode()
        owner = parent.owningBlock() if parent is not None else None
    return False


class _NotStatic(Exception):
    """A loop condition that cannot be computed at export time."""


def static_loop_iterations(
    body: torch._C.Block, carried: Sequence[object], lookup: Callable[[torch._C.Value], object], limit: int
) -> int | None:
    """How many times a loop body runs when its condition is known at export time on every
    iteration (None otherwise, or beyond ``limit``): the condition may depend only on
    constants, the iteration number, numbers from enclosing code (``lookup`` gives what a
    value of enclosing code was emitted as) and carried numbers that themselves depend only
    on those, and is computed here in Python, iteration by iteration, running aten's scalar
    ops in torch.

    A for loop with ``continue`` or ``break`` decided at export time is such a loop in
    TorchScript (``while i < n`` with ``i`` carried); unrolling it keeps Python state (the
    lists the body appends to) at export time, as a plain for loop with a known trip count does.
    """
    params = list(body.inputs())
    outputs = list(body.outputs())

    def evaluate(value: torch._C.Value, env: dict[int, object], cache: dict[int, object]) -> object:
        key = value.unique()
        if key in env:
            return env[key]
        if key in cache:
            return cache[key]
        node = value.node()
        if value in params:  # a carried value not known at export time
            raise _NotStatic
        if not inside(body, node):
            result = lookup(value)
            if not (result is None or isinstance(result, (bool, int, float, str))):
                raise _NotStatic
        elif node.kind() == "prim::Constant":
            result = node.output().toIValue()
        elif node.kind() == "prim::Uninitialized":
            result = None
        elif node.kind() == "prim::If":  # the flags `break` and `continue` leave
            taken = list(node.blocks())[0 if evaluate(node.inputsAt(0), env, cache) else 1]
            result = evaluate(list(taken.outputs())[value.offset()], env, cache)
        elif node.kind().startswith("aten::") and not list(node.blocks()) and node.outputsSize() == 1:
            schema = schema_of(node)
            if schema is None:
                raise _NotStatic
            packet = getattr(torch.ops.aten, node.kind().split("::", 1)[1])
            args = [evaluate(v, env, cache) for v in node.inputs()]
            if any(not (a is None or isinstance(a, (bool, int, float, str))) for a in args):
                raise _NotStatic
            try:
                result = getattr(packet, schema.overload_name or "default")(*args)
            except (RuntimeError, TypeError, ValueError, ArithmeticError, IndexError) as error:  # the loop stays a Loop
                raise _NotStatic from error
            if not isinstance(result, (bool, int, float)):
                raise _NotStatic
        else:
            raise _NotStatic
        cache[key] = result
        return result

    # the carried numbers the condition may use: those computed from known values alone
    known = [i for i, c in enumerate(carried) if isinstance(c, (bool, int, float))]
    state = {params[i + 1].unique(): carried[i] for i in known}
    for iteration in range(limit):
        env = {params[0].unique(): iteration, **state}
        cache: dict[int, object] = {}
        try:
            condition = evaluate(outputs[0], env, cache)
        except _NotStatic:
            return None
        following = {}
        for i in known:
            try:
                following[params[i + 1].unique()] = evaluate(outputs[i + 1], env, cache)
            except _NotStatic:
                continue  # a carried value the condition must then not read (it raises if it does)
        if not condition:
            return iteration + 1
        state = following
    return None


def is_tensor_list_type(ts_type: torch._C.JitType) -> bool:
    """Whether a TorchScript type is ``List[Tensor]``."""
    return isinstance(ts_type, torch._C.ListType) and isinstance(ts_type.getElementType(), torch._C.TensorType)


# Between a module's path and its call number in a trace scope name: a path never holds ".."
# (module names are non-empty and hold no "."), so the two read back unambiguously.
_CALL_SEPARATOR = ".."


def module_call_scope(path: str, call: int) -> str:
    """The trace scope name of the ``call``-th call (from 0) of the module at ``path``: the
    path for the first call (what torch's tracer names every call), the path and the call
    number for later ones, so that each call of a module called twice is a scope of its own."""
    return path if call == 0 else f"{path}{_CALL_SEPARATOR}{call}"


def module_calls(scope_name: str) -> tuple[tuple[str, int], ...]:
    """The module calls a trace scope name (``node.scopeName()``) lies in, outermost first, as
    (module path, call number): ``"b..1/b.act..2"`` is the third call of ``b.act`` inside the
    second call of ``b``. torch.jit.trace's own scope names (``__module.b/__module.b.act``)
    read as first calls."""
    calls = []
    for component in scope_name.split("/"):
        name = component.replace("__module.", "").replace("__module", "")
        if not name:
            continue
        path, separator, number = name.rpartition(_CALL_SEPARATOR)
        if separator and number.isdigit():
            calls.append((path, int(number)))
        else:
            calls.append((name, 0))
    return tuple(calls)


def is_script_object(value: object) -> bool:
    """Whether ``value`` is an object of a TorchScript class as torch hands it to Python: a
    ScriptObject, or an instance of the Python class ``torch.jit.script`` compiled (what a
    module attribute holding one reads as)."""
    return isinstance(value, torch._C.ScriptObject) or torch.jit._state._get_script_class(type(value)) is not None


def script_class_name(value: object) -> str | None:
    """The qualified TorchScript class name of an object :func:`is_script_object` accepts."""
    if isinstance(value, torch._C.ScriptObject):
        return value._type().qualified_name()
    if torch.jit._state._get_script_class(type(value)) is not None:
        return torch._jit_internal._qualified_name(type(value))
    return None
