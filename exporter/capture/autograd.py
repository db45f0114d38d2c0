"""Custom autograd Functions in a trace: each call's own graph, made to say what it computes.

Tracing ``F.apply(...)`` records one ``prim::PythonOp`` node, and torch (2.13) attaches the ops
the forward ran as its graph attribute :data:`exporter.ts_graph.FUNCTION_BODY`: its inputs are
the node's tensor inputs in order (other arguments are constants inside). The emitter exports
a Function without a symbolic, or whose symbolic written for torch's exporter fails, from that
graph, which the passes prepare as they prepare the main graph: nothing is traced again and no
class is patched. As torch records it, the graph needs three repairs, made here:

- Its outputs are the distinct values the forward returned in the order the ops producing them
  ran, not the order forward returns them (torch's own exporter maps them by position, and so
  exports ``return b, a`` swapped). :func:`order_function_outputs` gives each body one output
  per output of its node, in order, matched by type: an output and the value the trace recorded
  for it are the same tensor, so their types (sizes, strides, dtype, device) are equal. Where
  several outputs share one type, the trace does not say which is which; they are taken in the
  order they were computed (as a forward computing ``q`` then ``k`` returns ``q, k``) and the node
  is marked with :data:`exporter.ts_graph.ASSUMED_ORDER`, so emission warns when it uses the body.
- Its nodes miss the tracer's normalization of op aliases (``aten::absolute`` stays where the
  main graph has ``aten::abs``): :func:`normalize_aliases`, with torch's table.
- A call whose results nothing reads still stands in the main graph (the tracer gives
  prim::PythonOp side effects); what the forward did to values outside it (in-place writes to
  its inputs, nested Functions) was recorded in the main graph as nodes of their own, right
  after the call, so the call itself can go: :func:`drop_unused_functions`.
"""

from __future__ import annotations

import torch

from exporter.ts_edit import replace_node
from exporter.ts_graph import ASSUMED_ORDER, FUNCTION_BODY, function_calls

__all__ = ["prepare_functions", "order_function_outputs", "normalize_aliases", "drop_unused_functions"]


def prepare_functions(graph: torch._C.Graph) -> None:
    """The repairs above, on ``graph`` and every Function body in it, nested ones included;
    each call gets a body of its own (torch shares one graph between a call and its copies)."""
    drop_unused_functions(graph)
    for call in function_calls(graph):
        body = call.g(FUNCTION_BODY).copy()
        normalize_aliases(body)
        order_function_outputs(call, body)
        prepare_functions(body)
        call.g_(FUNCTION_BODY, body)


def _outputs(call: torch._C.Node) -> tuple[list[torch._C.JitType], list[bool]]:
    """The types of a call's outputs, and whether anything reads each: a Function returning
    several tensors has one tuple output, unpacked right after it."""
    output = call.output()
    ts_type = output.type()
    if not isinstance(ts_type, torch._C.TupleType):
        return [ts_type], [True]
    elements = list(ts_type.elements())
    users = [use.user for use in output.uses()]
    if not users or any(user.kind() != "prim::TupleUnpack" for user in users):
        return elements, [True] * len(elements)
    read = [any(user.outputsAt(index).uses() for user in users) for index in range(len(elements))]
    return elements, read


def order_function_outputs(call: torch._C.Node, body: torch._C.Graph) -> None:
    """Make ``body``'s outputs those of ``call``, in order (see the module docstring)."""
    types, read = _outputs(call)
    recorded = list(body.outputs())
    if not recorded:
        raise ValueError(f"the trace of autograd Function {call.pyname()} recorded no result of its forward")
    chosen: list[torch._C.Value | None] = [None] * len(types)
    assumed = False
    for ts_type in _distinct(types):
        wanted = [index for index, other in enumerate(types) if other == ts_type and read[index]]
        found = [value for value in recorded if value.type() == ts_type]
        if len(wanted) > len(found):
            raise ValueError(
                f"the trace of autograd Function {call.pyname()} recorded {len(found)} result(s) of type "
                f"{ts_type} where its forward returns {len(wanted)}"
            )
        assumed = assumed or len(found) > 1 and bool(wanted)
        for index, value in zip(wanted, found):
            chosen[index] = value
    for index, value in enumerate(chosen):
        if value is None:  # nothing reads it: any recorded result of its type, else any
            chosen[index] = next((v for v in recorded if v.type() == types[index]), recorded[0])
    for index in reversed(range(len(recorded))):
        body.eraseOutput(index)
    for value in chosen:
        body.registerOutput(value)
    if assumed:
        call.i_(ASSUMED_ORDER, 1)


def _distinct(types: list[torch._C.JitType]) -> list[torch._C.JitType]:
    found: list[torch._C.JitType] = []
    for ts_type in types:
        if not any(ts_type == other for other in found):
            found.append(ts_type)
    return found


# torch's op aliases and the op the tracer (and the compiler) normalize each to, as torch 2.13
# lists them (torch/csrc/jit/passes/normalize_ops.cpp); the bodies of Functions are not normalized.
_ALIASES = {
    "absolute": "abs",
    "absolute_": "abs_",
    "clip": "clamp",
    "clip_": "clamp_",
    "det": "linalg_det",
    "matrix_power": "linalg_matrix_power",
    "matrix_exp": "linalg_matrix_exp",
    "ger": "outer",
    "arccos": "acos",
    "arccos_": "acos_",
    "arcsin": "asin",
    "arcsin_": "asin_",
    "arctan": "atan",
    "arctan_": "atan_",
    "arctan2": "atan2",
    "arctan2_": "atan2_",
    "arccosh": "acosh",
    "arccosh_": "acosh_",
    "arcsinh": "asinh",
    "arcsinh_": "asinh_",
    "arctanh": "atanh",
    "arctanh_": "atanh_",
    "fix": "trunc",
    "fix_": "trunc_",
    "negative": "neg",
    "negative_": "neg_",
    "subtract": "sub",
    "subtract_": "sub_",
    "greater_equal": "ge",
    "greater_equal_": "ge_",
    "greater": "gt",
    "greater_": "gt_",
    "less_equal": "le",
    "less_equal_": "le_",
    "less": "lt",
    "less_": "lt_",
    "not_equal": "ne",
    "not_equal_": "ne_",
    "divide": "div",
    "divide_": "div_",
    "multiply": "mul",
    "multiply_": "mul_",
    "linalg_matmul": "matmul",
    "inverse": "linalg_inv",
    "true_divide": "div",
    "true_divide_": "div_",
    "concat": "cat",
    "concatenate": "cat",
    "row_stack": "vstack",
    "swapdims": "transpose",
    "swapdims_": "transpose_",
    "swapaxes": "transpose",
    "swapaxes_": "transpose_",
    "moveaxis": "movedim",
    "special_erf": "erf",
    "special_erfc": "erfc",
    "special_erfinv": "erfinv",
    "special_expit": "sigmoid",
    "special_exp2": "exp2",
    "special_expm1": "expm1",
    "special_logit": "logit",
    "special_logsumexp": "logsumexp",
    "special_round": "round",
    "special_log1p": "log1p",
    "special_sinc": "sinc",
    "special_digamma": "digamma",
    "special_psi": "digamma",
    "special_i0": "i0",
    "special_xlogy": "xlogy",
    "special_log_softmax": "log_softmax",
    "orgqr": "linalg_householder_product",
    "adjoint": "mH",
    "special_multigammaln": "mvlgamma",
    "special_polygamma": "polygamma",
    "special_softmax": "softmax",
    "special_gammainc": "igamma",
    "special_gammaincc": "igammac",
    "special_gammaln": "lgamma",
}


def normalize_aliases(graph: torch._C.Graph) -> None:
    """Op aliases in ``graph`` (sub-blocks too) become the ops the tracer records for them, and
    ``rsub(x, y)`` of two tensors becomes ``sub(y, x)``, as the tracer's normalization does."""
    for node in graph.findAllNodes("aten::rsub", True):
        inputs = list(node.inputs())
        if len(inputs) == 3 and all(isinstance(v.type(), torch._C.TensorType) for v in inputs[:2]):
            replace_node(graph, node, "aten::sub", [inputs[1], inputs[0], inputs[2]])
    for alias, target in _ALIASES.items():
        for node in graph.findAllNodes(f"aten::{alias}", True):
            replace_node(graph, node, f"aten::{target}", list(node.inputs()))


def drop_unused_functions(graph: torch._C.Graph) -> None:
    """Calls of Functions (with a recorded body) whose results nothing reads, and their unpacking."""
    for call in reversed(function_calls(graph)):
        output = call.output()
        users = [use.user for use in output.uses()]
        if any(user.kind() != "prim::TupleUnpack" or any(o.uses() for o in user.outputs()) for user in users):
            continue
        for user in users:
            user.destroy()
        call.destroy()
