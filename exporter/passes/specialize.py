"""Partial evaluation: the graph specialized to what is fixed at export, before any symbolic.

Library code is written for every input it may meet: it asks a tensor's rank, dtype, device and
layout, checks shapes against lists of names, promotes dtypes, refines ``Union`` and
``Optional`` arguments with ``isinstance``, reads recipes cached in module attributes, and loops
until two ranks agree. At export all of that is fixed for the example inputs: each input's
dtype, device, layout, rank and requires_grad, every size not named in ``dynamic_axes``, the
strides no dynamic axis changes (strides.py), the module's attributes (export_facts.py). This pass walks the graph in order, evaluating every node
on those facts (evaluation.py), and:

- replaces each value it computes (a number, a string, a list, a dtype, a device, an object
  read from an attribute) by a constant, except values computed from a tensor's sizes, which
  it uses but leaves to the emitter to fold (so the inputs kept match torch's: input_parity);
- inlines the branch taken by each ``if`` whose condition it knows, so the other branch (a
  sparse path, a CUDA path, a raise) goes; after an ``if`` one branch of which raises, its
  condition is known to be the other branch's (the check passed);
- unrolls a ``while`` loop whose condition it knows on every iteration (the rank-matching
  ``while x.dim() < y.dim(): x = x[..., None]``, and a ``for`` loop whose ``return`` or ``break``
  makes its condition a carried flag: kornia's shape checks), and a ``for`` loop of known
  count that changes the rank of a value it carries, since an ONNX Loop carries values of one
  rank; such a loop whose count is known only at run time is refused
  (errors.RankChangingLoopError).

What depends on a run-time size or value stays in the graph as it was: only tensor computation
and genuinely run-time values reach the symbolics, and the emitter's own folding stays the
safety net for what is left.

A graph with no blocks and none of the nodes this pass evaluates specially (a trace) is left
as it is without a walk.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, MutableMapping, Sequence

import torch

from exporter.control_flow.loop import UNROLL_LIMIT
from exporter.errors import RankChangingLoopError
from exporter.passes.evaluation import MUTABLE_CONTAINERS, as_tensor, evaluate, holds_tensor, trackable
from exporter.passes.export_facts import ExportFacts
from exporter.passes.export_values import NEVER, UNKNOWN, Fact, Known, TensorFacts, merge
from exporter.ts_graph import all_nodes, has_blocks, is_script_object, locator

__all__ = ["specialize", "needs_specializing"]

Env = MutableMapping[int, Fact]

# Node kinds whose results this pass computes from facts the graph's types do not fold: a
# graph without any (and without blocks) is left alone.
_SPECIALIZED_KINDS = (
    "prim::If",
    "prim::Loop",
    "aten::dim",
    "aten::stride",
    "prim::dtype",
    "prim::device",
    "prim::layout",
    "prim::is_cuda",
    "prim::isinstance",
    "prim::unchecked_cast",
    "prim::requires_grad",
    "aten::promote_types",
    "aten::is_floating_point",
    "prim::GetAttr",
)
# Nodes reading a tensor's sizes (see _Walk.sized).
_SIZE_READS = frozenset({"aten::size", "aten::numel", "aten::sym_size", "aten::sym_numel"})
# What a trial of a loop finds when its condition holds for more than UNROLL_LIMIT iterations.
_TOO_LONG = object()
# Rounds of merging a loop's carried facts with what its body makes of them before giving up.
_FIXPOINT_ROUNDS = 4


def needs_specializing(graph: torch._C.Graph) -> bool:
    """Whether ``graph`` has blocks or a node whose result this pass may know: each kind is
    looked for in C++ (a traced transformer's thousands of nodes cost microseconds)."""
    return any(graph.findNode(kind, True) is not None for kind in _SPECIALIZED_KINDS)


def specialize(graph: torch._C.Graph, facts: ExportFacts | None = None) -> None:
    """Specialize ``graph`` to ``facts`` (by default none beyond its types: every size open)."""
    if not needs_specializing(graph):
        return
    facts = facts if facts is not None else ExportFacts.unknown()
    env: Env = collections.ChainMap()
    for index, value in enumerate(graph.inputs()):
        env[value.unique()] = _input_fact(value, facts, index)
    trusted = {value.unique() for node in graph.nodes() if not has_blocks(node) for value in node.outputs()}
    _Walk(graph, locator(graph), trusted, rewrite=True).run(list(graph.nodes()), env)
    torch._C._jit_pass_dce(graph)


def _input_fact(value: torch._C.Value, facts: ExportFacts, index: int) -> Fact:
    """A graph input's fact: the example's, where the input is a tensor (a ``Union`` or
    ``Optional`` one included); its type's rank and dtype alone otherwise."""
    ts_type = value.type()
    if not holds_tensor(ts_type):
        return UNKNOWN
    if facts.inputs is not None and index < len(facts.inputs):
        return facts.inputs[index]
    if isinstance(ts_type, torch._C.TensorType) and ts_type.dim() is not None:
        return TensorFacts(ts_type.dtype(), ts_type.device(), (None,) * ts_type.dim(), None)
    return UNKNOWN


class _Walk:
    """One walk over nodes, evaluating each on the facts of ``env``; with ``rewrite``, the
    graph is specialized as it goes, without it (the trial runs of a loop's body) only facts
    are computed."""

    def __init__(
        self, graph: torch._C.Graph, locate: Callable[[torch._C.Node], str], trusted: set[int], *, rewrite: bool
    ) -> None:
        self.graph = graph
        self.locate = locate
        # outputs of nodes outside blocks when the walk began: their complete types are the
        # example run's propagation, trusted where evaluation knows nothing
        self.trusted = trusted
        self.rewrite = rewrite
        # value -> the value that replaced it (a constant, a branch's result, an unrolled loop's),
        # by unique number: a replaced value may be gone with its node (an inlined If's result)
        self.replaced: dict[int, tuple[int, torch._C.Value]] = {}
        # outputs of the copies of unrolled loop bodies: typed here from their facts
        self.fresh: set[int] = set()
        # values computed from a tensor's sizes: known here, but left for the emitter to fold,
        # which keeps the inputs torch's exporter reads for them (exporter.input_parity)
        self.sized: set[int] = set()

    def trial(self) -> _Walk:
        """A walk computing facts only, sharing this one's view of the graph."""
        return _Walk(self.graph, self.locate, self.trusted, rewrite=False)

    def retype(self, output: torch._C.Value, fact: Fact) -> None:
        """Give a value of an unrolled copy the type its facts say (the body's types were
        guesses made for every iteration at once: a rank that changes had none)."""
        if not isinstance(fact, TensorFacts) or fact.dtype is None or fact.sizes is None:
            return
        ts_type = torch._C.TensorType.get().with_sizes(list(fact.sizes)).with_dtype(fact.dtype)
        output.setType(ts_type.with_device(fact.device) if fact.device is not None else ts_type)

    def current(self, value: torch._C.Value, unique: int | None = None) -> torch._C.Value:
        """What stands for ``value`` now; ``unique``, its number, where it may be gone."""
        key = value.unique() if unique is None else unique
        while key in self.replaced:
            key, value = self.replaced[key]
        return value

    def replace(self, old: torch._C.Value, new: torch._C.Value) -> None:
        old.replaceAllUsesWith(new)
        self.replaced[old.unique()] = (new.unique(), new)

    @staticmethod
    def fact(env: Env, value: torch._C.Value) -> Fact:
        return env.get(value.unique(), UNKNOWN)

    # -- nodes --------------------------------------------------------------------------------
    def run(self, nodes: Sequence[torch._C.Node], env: Env) -> bool:
        """Walk ``nodes``; whether they raise on every path (a raise, or an ``if`` raising on
        the branch taken or on both): what such a block gives is never read."""
        raises = False
        for node in nodes:
            kind = node.kind()
            if kind == "prim::If":
                raises = self.decide(node, env) or raises
            elif kind == "prim::Loop":
                self.loop(node, env)
            elif has_blocks(node):
                for block in node.blocks():
                    self.run(list(block.nodes()), env.new_child())  # type: ignore[attr-defined]
                for output in node.outputs():
                    env[output.unique()] = UNKNOWN
            else:
                raises = raises or kind == "prim::RaiseException"
                self.evaluate(node, env)
        return raises

    def evaluate(self, node: torch._C.Node, env: Env) -> None:
        results = evaluate(node, [self.fact(env, v) for v in node.inputs()])
        sized = _reads_sizes(node) or any(v.unique() in self.sized for v in node.inputs())
        for output, fact in zip(node.outputs(), results):
            if fact is UNKNOWN:
                fact = self.typed(output)
            env[output.unique()] = fact
            if sized:
                self.sized.add(output.unique())
            if self.rewrite and output.unique() in self.fresh:
                self.retype(output, fact)
            if self.rewrite and isinstance(fact, Known) and not sized and _foldable(node, output, fact.value):
                with self.graph.insert_point_guard(node):
                    try:
                        constant = _constant(self.graph, fact.value, output.type())
                    except TypeError:  # a value torch cannot hold as a constant: the graph keeps computing it
                        continue
                constant.node().copyMetadata(node)
                env[constant.unique()] = fact
                self.replace(output, constant)

    def typed(self, output: torch._C.Value) -> Fact:
        """What the example run's propagation recorded for a tensor nothing else says about
        (an op without a meta kernel): its dtype and rank, sizes left open."""
        ts_type = output.type()
        if output.unique() not in self.trusted or not isinstance(ts_type, torch._C.TensorType):
            return UNKNOWN
        sizes = ts_type.varyingSizes()
        if sizes is None or ts_type.strides() is None or ts_type.dtype() is None:
            return UNKNOWN
        return TensorFacts(ts_type.dtype(), ts_type.device(), (None,) * len(sizes), None)

    # -- if -----------------------------------------------------------------------------------
    def decide(self, node: torch._C.Node, env: Env) -> bool:
        """prim::If: the branch taken inlined where the condition is known, else both branches
        specialized on their own and the results merged (a branch that raises gives none);
        whether it raises on every path."""
        condition = self.fact(env, node.inputsAt(0))
        blocks = list(node.blocks())
        if isinstance(condition, Known) and isinstance(condition.value, bool):
            taken = blocks[0 if condition.value else 1]
            raises = self.run(list(taken.nodes()), env)
            results = [self.fact(env, v) for v in taken.outputs()]
            if self.rewrite:
                _inline(self, node, taken)
                return raises
            for output, fact in zip(node.outputs(), results):
                env[output.unique()] = fact
            return raises
        branch_results = []
        raising = []
        for block in blocks:
            inner = env.new_child()  # type: ignore[attr-defined]
            raises = self.run(list(block.nodes()), inner)
            raising.append(raises)
            branch_results.append([NEVER if raises else self.fact(inner, v) for v in block.outputs()])
        for output, then_fact, else_fact in zip(node.outputs(), *branch_results):
            env[output.unique()] = merge(then_fact, else_fact)
        if raising == [True, False] or raising == [False, True]:
            # what runs after a check that raises has passed it: its condition is the other
            # branch's from here on (the flag of a ``return False`` next to the raise, which
            # TorchScript sets from the condition itself, is then known)
            env[node.inputsAt(0).unique()] = Known(raising[1])
        return all(raising)

    # -- loops --------------------------------------------------------------------------------
    def loop(self, node: torch._C.Node, env: Env) -> None:
        """prim::Loop(trip_count, condition, *carried): unrolled where its count is known and it
        is a while loop or changes a carried value's rank; otherwise kept, its body specialized
        on what holds in every iteration. A for loop of known count that keeps its ranks is
        left to the emitter, which unrolls it itself and keeps the inputs torch's exporter
        reads through such a loop (exporter.input_parity)."""
        (body,) = list(node.blocks())
        inputs = [self.fact(env, v) for v in node.inputs()]
        trip, condition, initial = inputs[0], inputs[1], inputs[2:]
        too_long = False
        if _known_int(trip) is not None and _known_bool(condition) is not None:
            trial = self.trial().iterations(body, env, _known_int(trip), _known_bool(condition), initial)  # type: ignore[arg-type]
            too_long = trial is _TOO_LONG
            if isinstance(trial, tuple):
                count, final, rank_changes = trial
                if not _is_for_loop(body) or rank_changes:
                    self.unroll(node, env, count, final)
                    return
        carried, changed = self.invariant(body, env, initial)
        if changed is not None and self.rewrite:  # (a trial run knows less: it only learns less)
            raise _rank_error(self.locate(node), changed, too_long=too_long)
        inner = env.new_child()  # type: ignore[attr-defined]
        for param, fact in zip(body.inputs(), [UNKNOWN, *carried]):
            inner[param.unique()] = fact
        self.run(list(body.nodes()), inner)
        for output, fact in zip(node.outputs(), carried):
            env[output.unique()] = fact

    def iterations(
        self, body: torch._C.Block, env: Env, trip: int, condition: bool, initial: Sequence[Fact]
    ) -> tuple[int, list[Fact], bool] | object | None:
        """How many times the loop runs, the facts of what it carries out, and whether an
        iteration changes a carried tensor's rank: when its condition is known on every
        iteration and it stops within UNROLL_LIMIT iterations; :data:`_TOO_LONG` where it is
        known for more iterations than that, None where it is not."""
        state = list(initial)
        rank_changes = False
        iteration = 0
        while condition and iteration < trip:
            if iteration == UNROLL_LIMIT:
                return _TOO_LONG
            inner = env.new_child()  # type: ignore[attr-defined]
            for param, fact in zip(body.inputs(), [Known(iteration), *state]):
                inner[param.unique()] = fact
            self.run(list(body.nodes()), inner)
            results = [self.fact(inner, v) for v in body.outputs()]
            rank_changes = rank_changes or _rank_change(state, results[1:]) is not None
            state = results[1:]
            known = _known_bool(results[0])
            if known is None:
                return None
            condition = known
            iteration += 1
        return iteration, state, rank_changes

    def unroll(self, node: torch._C.Node, env: Env, count: int, final: Sequence[Fact]) -> None:
        """The loop's body inlined ``count`` times before it, each copy specialized in turn;
        without ``rewrite``, only the facts of its results."""
        if not self.rewrite:
            for output, fact in zip(node.outputs(), final):
                env[output.unique()] = fact
            return
        (body,) = list(node.blocks())
        state = [self.current(v) for v in list(node.inputs())[2:]]
        for iteration in range(count):
            with self.graph.insert_point_guard(node):
                counter = self.graph.insertConstant(iteration)
            env[counter.unique()] = Known(iteration)
            mapping = {param.unique(): value for param, value in zip(body.inputs(), [counter, *state])}
            copies = []
            for inner in body.nodes():
                copy = self.graph.createClone(inner, lambda v, m=mapping: m.get(v.unique(), v))  # type: ignore[misc]
                copy.insertBefore(node)
                for old, new in zip(inner.outputs(), copy.outputs()):
                    mapping[old.unique()] = new
                copies.append(copy)
                for made in [copy, *all_nodes(list(copy.blocks()))]:
                    for output in made.outputs():
                        _untrust(output)
                        self.fresh.add(output.unique())
            results = [mapping.get(v.unique(), v) for v in list(body.outputs())[1:]]
            numbers = [v.unique() for v in results]
            self.run(copies, env)
            state = [self.current(v, n) for v, n in zip(results, numbers)]
        for output, value in zip(list(node.outputs()), state):
            self.replace(output, value)
        node.destroy()

    def invariant(
        self, body: torch._C.Block, env: Env, initial: Sequence[Fact]
    ) -> tuple[list[Fact], tuple[int, int, int] | None]:
        """The facts of the carried values that hold on entry and after every iteration (merged
        with what trial runs of the body make of them until nothing changes), and the first
        carried tensor (position, rank before, rank after) whose rank an iteration changes."""
        carried = list(initial)
        changed = None
        walk = self.trial()
        for round_ in range(_FIXPOINT_ROUNDS):
            inner = env.new_child()  # type: ignore[attr-defined]
            for param, fact in zip(body.inputs(), [UNKNOWN, *carried]):
                inner[param.unique()] = fact
            walk.run(list(body.nodes()), inner)
            results = [walk.fact(inner, v) for v in list(body.outputs())[1:]]
            if round_ == 0:
                changed = _rank_change(carried, results)
            merged = [merge(a, b) for a, b in zip(carried, results)]
            if merged == carried:
                return carried, changed
            carried = merged
        return [UNKNOWN] * len(carried), changed


def _inline(walk: _Walk, node: torch._C.Node, taken: torch._C.Block) -> None:
    """Replace the If ``node`` by the nodes of its ``taken`` branch (already specialized). The
    types of what moves out keep saying they were guessed inside a block (no strides: see
    emitter._complete), as the emitter treated them when it inlined such branches itself."""
    for inner in list(taken.nodes()):
        inner.moveBefore(node)
        for output in inner.outputs():
            _untrust(output)
    for output, value in zip(list(node.outputs()), list(taken.outputs())):
        walk.replace(output, value)
    node.destroy()


def _untrust(value: torch._C.Value) -> None:
    ts_type = value.type()
    if not isinstance(ts_type, torch._C.TensorType) or ts_type.strides() is None:
        return
    retyped = torch._C.TensorType.get().with_sizes(ts_type.varyingSizes())
    if ts_type.dtype() is not None:
        retyped = retyped.with_dtype(ts_type.dtype())
    if ts_type.device() is not None:
        retyped = retyped.with_device(ts_type.device())
    value.setType(retyped)


def _reads_sizes(node: torch._C.Node) -> bool:
    if node.kind() == "aten::len":
        return isinstance(node.inputsAt(0).type(), torch._C.TensorType)
    return node.kind() in _SIZE_READS


def _is_for_loop(body: torch._C.Block) -> bool:
    condition = list(body.outputs())[0].node()
    return condition.kind() == "prim::Constant" and condition.output().toIValue() is True


def _known_int(fact: Fact) -> int | None:
    if isinstance(fact, Known) and isinstance(fact.value, int) and not isinstance(fact.value, bool):
        return fact.value
    return None


def _known_bool(fact: Fact) -> bool | None:
    if isinstance(fact, Known) and isinstance(fact.value, bool):
        return fact.value
    return None


def _rank_change(before: Sequence[Fact], after: Sequence[Fact]) -> tuple[int, int, int] | None:
    """The first carried tensor whose rank is known before and after an iteration and differs."""
    for position, (a, b) in enumerate(zip(before, after)):
        ta, tb = as_tensor(a), as_tensor(b)
        if ta is not None and tb is not None and ta.rank is not None and tb.rank is not None and ta.rank != tb.rank:
            return position, ta.rank, tb.rank
    return None


def _rank_error(where: str, changed: tuple[int, int, int], *, too_long: bool) -> RankChangingLoopError:
    position, before, after = changed
    count = (
        f"it runs more than {UNROLL_LIMIT} times (the most this exporter unrolls)"
        if too_long
        else "how many times it runs is known only at run time"
    )
    return RankChangingLoopError(
        f"the loop at {where} changes the rank of the value it carries in position {position} (from {before} "
        f"to {after} in one iteration), and {count}: an ONNX Loop carries values of one rank, and unrolling "
        "needs the count at export. Make the count fixed at export "
        "(a constant, or a size not named in dynamic_axes), or keep the rank inside the loop (reshape to a "
        "fixed rank, or build the result with unsqueeze/expand outside it)"
    )


# Known values a graph holds as plain constants; others (dicts, objects) go in an IValue attribute.
_PLAIN = (bool, int, float, str, torch.device)


def _foldable(node: torch._C.Node, output: torch._C.Value, value: object) -> bool:
    """Whether a node's known result becomes a constant: not for constants and containers
    made from known items (nothing to gain), nor for lists and dicts the graph changes."""
    if node.kind() in ("prim::Constant", "prim::ListConstruct", "prim::TupleConstruct", "prim::DictConstruct"):
        return False
    if isinstance(output.type(), MUTABLE_CONTAINERS) and not trackable(output):
        return False
    return _constant_kind(value) is not None


def _constant_kind(value: object) -> str | None:
    """ "plain" for what ``Graph.insertConstant`` holds, "ivalue" for dicts and TorchScript
    objects, None for anything else (a tensor: the emitter folds those)."""
    if value is None or isinstance(value, _PLAIN):
        return "plain"
    if isinstance(value, (list, tuple)):
        kinds = {_constant_kind(v) for v in value}
        if None in kinds:
            return None
        return "ivalue" if "ivalue" in kinds or not value else "plain"
    if isinstance(value, dict):
        # an empty dict has no item torch could infer its types from: it cannot be a constant
        if not value or any(isinstance(v, dict) and _constant_kind(v) is None for v in value.values()):
            return None
        return "ivalue"
    if is_script_object(value):
        return "ivalue"
    return None


def _constant(graph: torch._C.Graph, value: object, ts_type: torch._C.JitType) -> torch._C.Value:
    """A constant of ``value`` typed as the value it replaces (except where that type is wider,
    an ``Optional`` holding a value: then the constant's own)."""
    if _constant_kind(value) == "plain":
        constant = graph.insertConstant(value)
    else:
        node = graph.create("prim::Constant")
        node.ival_("value", value)
        graph.insertNode(node)
        constant = node.output()
    if not isinstance(ts_type, (torch._C.OptionalType, torch._C.UnionType, torch._C.AnyType, torch._C.NumberType)):
        constant.setType(ts_type)
    return constant
