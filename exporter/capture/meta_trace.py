"""Tracing on meta tensors: the graph of a forward pass without computing it.

Tracing records the ops a forward pass calls; it only needs each tensor's dtype, shape and
strides, not its values. Run on ``torch.device("meta")`` copies of the inputs, and on a
structural copy of the module whose parameters and buffers are meta twins
(:mod:`exporter.capture.module_copy`: the module the user holds is neither run nor changed),
the forward costs bookkeeping instead of FLOPs and keeps no activations alive. The graph (and
the graphs of the custom autograd Functions in it) is then made to read as the real trace
would have recorded it:

- value types say the real device (``with_device``), and ``Device`` constants the forward
  read from a tensor (``torch.zeros(n, device=x.device)``) name the real device;
- buffers outside the ``state_dict`` (``persistent=False``) are traced as extra inputs and
  then replaced by constants holding their real values, placed where the tracer would have
  baked them in (just before the first op that reads them, ahead of that op's later
  argument constants), so the graph's constants are real tensors the emitter can fold.

Anything that needs values raises on meta tensors (``.item()``, ``bool(t)``, ``nonzero``,
``tolist``, ops without a meta kernel, mixing a real tensor with a meta one) and raises
:class:`Unfit`, after which :mod:`exporter.capture.trace` traces for real. So do results the real
trace might not have produced: a tensor constant that is still meta, or a string constant
``"meta"`` (the forward read ``x.device.type``).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from exporter.capture.fast_meta import MetaKernels
from exporter.capture.function_modes import call_as_called
from exporter.capture.module_copy import structural_copy
from exporter.export_flag import carried_into_thread
from exporter.ts_graph import all_nodes, function_bodies

__all__ = ["META_MIN_BYTES", "MODE", "Unfit", "meta_trace", "why_not_meta"]

# "auto": meta when it pays (below); "meta" / "real": always try meta / never (tests force both;
# EXPORTER_META_TRACE=meta runs a whole test suite with every trace tried on meta first).
MODE = os.environ.get("EXPORTER_META_TRACE", "auto")

# The first meta op in a process imports torch's Python meta kernels (torch._refs, and through
# them torch._dynamo): about 1 s of CPU once. Below this many bytes of weights and inputs a
# forward pass costs less than that, so "auto" traces for real unless the kernels are loaded.
META_MIN_BYTES = 32 * 2**20


class Unfit(Exception):
    """The model needs real values, or its meta trace might differ from the real one."""


def why_not_meta(module: torch.nn.Module | None, tensors: Sequence[torch.Tensor]) -> str | None:
    """Why this trace runs on real tensors, or None when it may run on meta tensors."""
    if MODE == "real":
        return "real capture requested"
    if module is not None and any(m.training for m in module.modules()):
        return "training mode: the forward updates buffers (batch-norm statistics) the export writes"
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        return f"tensors on several devices ({', '.join(sorted(map(str, devices)))})"
    for t in tensors:
        if type(t) not in (torch.Tensor, torch.nn.Parameter) or t.layout != torch.strided or t.is_quantized:
            return f"a {type(t).__name__} with layout {t.layout} and dtype {t.dtype} has no meta twin here"
        if t.is_meta:
            return "the inputs are meta tensors already"
    if MODE == "auto":
        size = sum(t.nbytes for t in tensors)
        if size < META_MIN_BYTES and "torch._dynamo" not in sys.modules:
            return (
                f"small model ({size / 2**20:.1f} MiB of weights and inputs): its forward costs less "
                "than loading torch's meta kernels (about 1 s once per process)"
            )
    return None


def meta_trace(
    module: torch.nn.Module | None,
    model: Callable[..., Any],
    calling: Callable[[Callable[..., Any]], Callable[..., tuple[torch.Tensor, ...]]],
    inputs: Sequence[torch.Tensor],
    trace: Callable[[torch.nn.Module | None, Callable[..., Any], list[torch.Tensor]], torch._C.Graph],
) -> torch._C.Graph:
    """``trace(copy, calling(copy), meta twins of inputs)`` where ``copy`` is a structural copy of
    ``module`` whose parameters and buffers are meta twins (``model`` itself when it is not a
    module), rewritten to read as the real trace. ``inputs`` are the user's tensors then the
    weights. ``module`` is never run, nor changed. Raises :class:`Unfit`."""
    device = inputs[0].device if inputs else torch.device("cpu")
    twins: dict[int, torch.Tensor] = {}
    for t in inputs:
        twins.setdefault(id(t), _meta_twin(t))
    # buffers outside the state_dict: traced as extra inputs, real values put back as constants
    extra_real = [
        b for m in (module.modules() if module is not None else ()) for b in m._buffers.values() if b is not None
    ]
    extra_real = list({id(b): b for b in extra_real if id(b) not in twins}.values())
    for t in extra_real:
        if t.device != device or type(t) is not torch.Tensor or t.layout != torch.strided or t.is_quantized:
            raise Unfit(f"a buffer outside the state_dict ({t.dtype}, {t.layout}, on {t.device}) has no meta twin here")
        twins[id(t)] = _meta_twin(t)
    twin_of: Callable[[torch.Tensor], torch.Tensor] = lambda t: twins[id(t)]
    on_meta = structural_copy(module, twin_of, twin_of) if module is not None else None
    callee = on_meta if on_meta is not None else model
    tensors = [twins[id(t)] for t in list(inputs) + extra_real]
    # The forward's warnings are shown as it runs: they are the ones a real trace gives, and
    # the real trace after a failed one repeats them, which Python's default filter shows once.
    graph = _in_own_thread(lambda: _trace_once(trace, on_meta, calling(callee), tensors))
    _check_kernels(graph)
    _constants_for_extra_inputs(graph, len(inputs), extra_real)
    _on_real_device(graph, device)
    return graph


# Ops whose meta kernel gives other outputs than the CPU kernel, so the traced types (or the
# forward's results) would differ. Found by tests/capture/test_meta_trace.py, which exports every
# op-table case both ways and compares the bytes.
_DIVERGING_KERNELS = {
    "aten::native_layer_norm": "float32 mean and rstd for half inputs, where the CPU kernel gives half",
    "aten::_native_multi_head_attention": "an empty tensor for the weights it was told not to return",
    "aten::huber_loss": "the promoted dtype of self and target, where the CPU kernel keeps self's",
}


# Where torch's meta kernels written in Python live. A node recorded from there means a meta
# kernel ran while the tracer was recording: the op it implements has no tracer kernel of its
# own, so the graph holds the kernel's shape arithmetic instead of the op (aten::convolution
# was one: see fast_meta.MetaKernels.convolution).
_META_KERNEL_FILES = ("torch/_meta_registrations.py", "torch/_refs/", "torch/_prims", "torch/_decomp/")


def _trace_once(
    trace: Callable[[torch.nn.Module | None, Callable[..., Any], list[torch.Tensor]], torch._C.Graph],
    module: torch.nn.Module | None,
    fn: Callable[..., tuple[torch.Tensor, ...]],
    tensors: list[torch.Tensor],
) -> torch._C.Graph:
    with MetaKernels(), _NoOutArguments():
        try:
            return trace(module, fn, tensors)
        except Unfit:
            raise
        except Exception as error:  # noqa: BLE001 - whatever a forward on meta tensors raises, the real trace runs
            raise Unfit(_first_line(error)) from error


def _in_own_thread(run: Callable[[], torch._C.Graph]) -> torch._C.Graph:
    """``run()`` in a thread of its own, which ends with it.

    A trace that fails while the tracer converts an argument (a meta tensor given where the op
    wants a number: ``torch.arange(end)`` calls ``end.item()``) leaves the tracer's per-thread
    stash of traced arguments filled; the next trace in that thread reads the stale entry and
    crashes the process (torch 2.13). The stash dies with the thread, so the real trace that
    follows a failed meta trace starts clean.
    """
    result: list[torch._C.Graph] = []
    failure: list[BaseException] = []
    run = carried_into_thread(run)  # the forward asks exporter.is_in_onnx_export() there

    def target() -> None:
        try:
            result.append(run())
        except BaseException as error:  # noqa: BLE001 - anything, even KeyboardInterrupt: re-raised in the caller's thread
            failure.append(error)

    worker = threading.Thread(target=target, name="exporter-meta-trace")
    worker.start()
    worker.join()
    if failure:
        raise failure[0]
    return result[0]


# Ops that make quantized tensors: on meta they return plain float tensors (torch 2.13), so the
# traced types would say float where the real trace records quint8/qint8.
_QUANTIZING_PREFIXES = ("aten::quantize_per_", "aten::_make_per_", "quantized::")


def _check_kernels(graph: torch._C.Graph) -> None:
    for node in all_nodes([graph, *function_bodies(graph)]):
        why = _DIVERGING_KERNELS.get(node.kind())
        if why is None and node.kind().startswith(_QUANTIZING_PREFIXES):
            why = "quantized results are float tensors on meta"
        if why is not None:
            raise Unfit(f"{node.kind()}'s meta kernel differs from the CPU kernel ({why})")
        source = node.sourceRange()  # a traced node's whole Python stack: one scan first
        if "torch/_" in source and any(f in source for f in _META_KERNEL_FILES):
            where = source.split(" ", 1)[0] if source else ""
            raise Unfit(f"a meta kernel recorded its own ops ({node.kind()} at {where})")


class _NoOutArguments(TorchFunctionMode):
    """Refuse ``out=`` while tracing on meta: a forward writing into a tensor it made itself
    (``torch.arange(end, out=torch.tensor([1.0]))``) would mix that real tensor with meta
    ones inside a kernel, which crashed the process (torch 2.13) instead of raising."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if kwargs.get("out") is not None:
            raise Unfit(f"{getattr(func, '__name__', func)}(..., out=...) writes into a tensor the forward made")
        return call_as_called(func, args, kwargs)


def _meta_twin(t: torch.Tensor) -> torch.Tensor:
    twin = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")
    if isinstance(t, torch.nn.Parameter):
        return torch.nn.Parameter(twin, requires_grad=t.requires_grad)
    return twin.requires_grad_(t.requires_grad)


def _constants_for_extra_inputs(graph: torch._C.Graph, first: int, values: Sequence[torch.Tensor]) -> None:
    """Graph inputs ``first...`` become constants of ``values``, where the tracer bakes an
    untraced tensor in: at the first op reading it, before the constants of that op's later
    arguments (the tracer records an op's arguments in order)."""
    for offset in reversed(range(len(values))):
        index = first + offset
        graph_input = list(graph.inputs())[index]
        uses = graph_input.uses()
        if uses:
            user = min(uses, key=lambda use: _position(graph, use.user)).user
            position = next(i for i, v in enumerate(user.inputs()) if v.unique() == graph_input.unique())
            anchor = user
            previous = user.prev()
            later = {v.unique() for v in list(user.inputs())[position + 1 :]}
            while previous.kind() in ("prim::Constant", "prim::ListConstruct") and any(
                o.unique() in later for o in previous.outputs()
            ):
                anchor = previous
                later |= {v.unique() for v in previous.inputs()}
                previous = previous.prev()
            with graph.insert_point_guard(anchor):
                constant = graph.insertConstant(values[offset])
            constant.node().copyMetadata(user)
            graph_input.replaceAllUsesWith(constant)
        graph.eraseInput(index)


def _position(graph: torch._C.Graph, node: torch._C.Node) -> int:
    for i, candidate in enumerate(graph.nodes()):
        if candidate == node:
            return i
    return sys.maxsize  # inside a block: later than any top-level user


def _on_real_device(graph: torch._C.Graph, device: torch.device) -> None:
    """Types and Device constants name ``device`` instead of meta; a constant that is still
    meta (a tensor the trace did not record), or the string "meta", is :class:`Unfit`. The
    graphs of the Functions called are retyped too (the emitter may export from them)."""
    graphs = [graph, *function_bodies(graph)]
    for value in (value for target in graphs for value in target.inputs()):
        _retype(value, device)
    for node in all_nodes(graphs):
        if node.kind() == "prim::Constant" and node.hasAttribute("value"):
            kind = node.kindOf("value")
            output_type = node.output().type()
            if kind == "t" and node.t("value").is_meta:
                raise Unfit("a tensor the forward made outside the trace is on meta")
            if kind == "s" and node.s("value") == "meta":
                if isinstance(output_type, torch._C.DeviceObjType):
                    node.s_("value", str(device))
                else:
                    raise Unfit('the forward read the string "meta" from a tensor\'s device')
            if kind == "ival" and "meta" in str(node.output().toIValue()):
                raise Unfit("a constant names the meta device")
        for output in node.outputs():
            _retype(output, device)


def _retype(value: torch._C.Value, device: torch.device) -> None:
    """``value``'s type on ``device`` where it says meta (set only where it changes: this runs
    for every value of the graph)."""
    ts_type = value.type()
    retyped = _retyped(ts_type, device)
    if retyped is not ts_type:
        value.setType(retyped)


def _retyped(ts_type: torch._C.JitType, device: torch.device) -> torch._C.JitType:
    if isinstance(ts_type, torch._C.TensorType):
        found = ts_type.device()
        return ts_type.with_device(device) if found is not None and found.type == "meta" else ts_type
    if isinstance(ts_type, torch._C.TupleType):
        elements = ts_type.elements()
        retyped = [_retyped(t, device) for t in elements]
        if any(a is not b for a, b in zip(retyped, elements)):
            return torch._C.TupleType(retyped)
    if isinstance(ts_type, torch._C.ListType):
        element = ts_type.getElementType()
        retyped_element = _retyped(element, device)
        if retyped_element is not element:
            return torch._C.ListType(retyped_element)
    return ts_type


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:300]
