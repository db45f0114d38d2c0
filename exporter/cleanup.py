"""Graph cleanup after emission: Conv+BatchNormalization folding and dead code removal."""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import Any

import onnx_ir as ir
import torch

from exporter import tensors
from exporter.assemble import FLAT_INPUTS_META
from exporter.input_parity import KEPT_INPUTS, READS_INPUTS

__all__ = [
    "cleanup",
    "deduplicate_equal_initializers",
    "EqualWeights",
    "module_weights",
    "fuse_conv_batchnorm",
    "remove_unused_inputs",
    "INPUT_POSITIONS_KEY",
]

# metadata_props key, set when unused inputs were dropped: the positions, among the flattened
# model inputs (exporter.capture.flatten_inputs), of the graph inputs that remain, e.g. "0,2"
# (torch's remained_onnx_input_idx). Absent when every flattened input stays a graph input.
INPUT_POSITIONS_KEY = "exporter.input_positions"


def _initializer_tensor(value: ir.Value | None) -> torch.Tensor | None:
    if value is None or not value.is_initializer() or value.const_value is None:
        return None
    tensor = value.const_value
    if isinstance(tensor, tensors.TorchTensor):
        return tensor.raw.detach()
    return torch.from_numpy(tensor.numpy().copy())


def _folded_weight(weight: torch.Tensor, factor: torch.Tensor, name: str) -> tensors.DeferredTorchTensor:
    """W * factor per output channel, computed when written (one folded weight in memory
    at a time, not all of them)."""
    per_channel = factor.to(weight.dtype).reshape(-1, *([1] * (weight.dim() - 1)))

    def compute() -> torch.Tensor:
        return weight * per_channel

    return tensors.DeferredTorchTensor(compute, weight.shape, weight.dtype, name=name)


def fuse_conv_batchnorm(model: ir.Model) -> int:
    """Fold an inference BatchNormalization into the Conv before it (eval-mode models).

    W' = W * g / sqrt(v + eps) per output channel, b' = (b - m) * g / sqrt(v + eps) + beta.
    The fused weight keeps the conv weight's state_dict name when nothing else reads the
    original, so initializer names stay meaningful. Returns the number of folds.
    """
    graph = model.graph
    folded = 0
    for bn in list(graph):
        if bn.op_type != "BatchNormalization" or bn.domain or len(bn.outputs) != 1:
            continue
        conv_out = bn.inputs[0]
        conv = conv_out.producer() if conv_out is not None else None
        if conv is None or conv.op_type != "Conv" or conv.graph is not graph or len(conv_out.uses()) != 1:
            continue
        if conv_out in graph.outputs:
            continue
        weight = _initializer_tensor(conv.inputs[1])
        bias = _initializer_tensor(conv.inputs[2]) if len(conv.inputs) > 2 else None
        scale, shift, mean, var = (_initializer_tensor(v) for v in bn.inputs[1:5])
        if weight is None or scale is None or shift is None or mean is None or var is None:
            continue
        if len(conv.inputs) > 2 and conv.inputs[2] is not None and bias is None:
            continue
        eps = bn.attributes["epsilon"].as_float() if "epsilon" in bn.attributes else 1e-5
        # per-channel statistics in double (cheap); the weight scaled in its own dtype, as
        # torch's fuse_conv_bn_eval does, so folding a large model stays fast
        factor = scale.double() / torch.sqrt(var.double() + eps)
        base_bias = bias.double() if bias is not None else torch.zeros_like(mean, dtype=torch.float64)
        new_bias = ((base_bias - mean.double()) * factor + shift.double()).to(weight.dtype)
        weight_value = conv.inputs[1]
        only_user = len(weight_value.uses()) == 1
        weight_name = weight_value.name if only_user else f"{weight_value.name}.bn_folded"
        bias_source = conv.inputs[2] if len(conv.inputs) > 2 and conv.inputs[2] is not None else bn.inputs[2]
        bias_name = (
            bias_source.name if bias_source is not None and len(bias_source.uses()) == 1 else f"{weight_name}.bias"
        )
        new_w = ir.Value(
            name=weight_name,
            shape=ir.Shape(weight.shape),
            type=ir.TensorType(tensors.from_torch_dtype(weight.dtype)),
            const_value=_folded_weight(weight, factor, weight_name),
        )
        new_b = ir.Value(
            name=bias_name,
            shape=ir.Shape(new_bias.shape),
            type=ir.TensorType(tensors.from_torch_dtype(new_bias.dtype)),
            const_value=tensors.TorchTensor(new_bias, name=bias_name),
        )
        # drop the initializers being replaced under the same names before registering
        for old in {weight_value, bias_source}:
            if old is not None and old.name in (weight_name, bias_name):
                graph.initializers.pop(old.name, None)
        graph.register_initializer(new_w)
        graph.register_initializer(new_b)
        conv.replace_input_with(1, new_w)
        if len(conv.inputs) > 2:
            conv.replace_input_with(2, new_b)
        else:
            conv.resize_inputs(3)
            conv.replace_input_with(2, new_b)
        bn_out = bn.outputs[0]
        conv_out.shape, conv_out.dtype = bn_out.shape, bn_out.dtype
        output_name = bn_out.name if bn_out.is_graph_output() else None
        bn_out.replace_all_uses_with(conv_out, replace_graph_outputs=True)
        graph.remove(bn, safe=True)
        if output_name is not None:
            conv_out.name = output_name
        folded += 1
    return folded


def cleanup(model: ir.Model, *, fold_constants: bool = True, equal_weights: EqualWeights | None = None) -> None:
    """Fold what inference makes constant (Conv+BatchNorm), then remove what is unused."""
    import onnx_ir.passes.common as common_passes  # its ~15 pass modules load on first export only

    if fold_constants:
        fuse_conv_batchnorm(model)
    common_passes.RemoveUnusedNodesPass()(model)
    remove_unused_inputs(model)
    if fold_constants:
        deduplicate_equal_initializers(model, equal_weights)


def _unravel(positions: torch.Tensor, shape: torch.Size) -> tuple[torch.Tensor, ...]:
    """Row-major indices of flat ``positions`` (torch.unravel_index imports sympy: not on the
    path of a first export)."""
    indices = []
    for size in reversed(shape):
        indices.append(positions % size)
        positions = positions // size
    return tuple(reversed(indices))


# Elements read from each weight to sort weights into buckets before comparing them whole.
_FINGERPRINT_ELEMENTS = 64


def _fingerprint(raw: torch.Tensor) -> tuple[Any, ...]:
    """dtype, shape and a strided sample of the elements, sampled in logical order by index
    (a transposed view is not copied whole)."""
    positions = torch.arange(0, raw.numel(), max(1, raw.numel() // _FINGERPRINT_ELEMENTS))[:_FINGERPRINT_ELEMENTS]
    sample = raw[_unravel(positions, raw.shape)] if raw.dim() else raw.reshape(1)
    return (raw.dtype, tuple(raw.shape), sample.contiguous().view(torch.uint8).numpy().tobytes())


def module_weights(module: torch.nn.Module) -> list[torch.Tensor]:
    """``module``'s parameters and buffers: the tensors whose equal twins EqualWeights finds
    before the graph that reads them is captured."""
    return [*module.parameters(), *(b for b in module.buffers() if b is not None)]


# GIL switch interval while EqualWeights compares (seconds; Python's default is 5 ms). Each
# comparison needs the GIL twice (to call torch.equal, and to return from it after computing
# with the GIL released) while the other thread runs Python (the trace, emission): at the
# default interval, each handover waited up to 5 ms, and about 300 of them made the
# comparisons of a 12-layer encoder finish 0.1 s after emission instead of beside it.
_PROMPT_SWITCH_INTERVAL = 1e-4
_switch_lock = threading.Lock()
_switch_users = [0, 0.0]  # [threads comparing, the interval to restore]


def _prompt_switches(on: bool) -> None:
    with _switch_lock:
        if on:
            if _switch_users[0] == 0:
                _switch_users[1] = sys.getswitchinterval()
                sys.setswitchinterval(min(_switch_users[1], _PROMPT_SWITCH_INTERVAL))
            _switch_users[0] += 1
        else:
            _switch_users[0] -= 1
            if _switch_users[0] == 0:
                sys.setswitchinterval(_switch_users[1])


class EqualWeights:
    """Which of the model's weights hold equal values, found in a background thread while the
    graph is emitted, so that deduplication (after emission) need not compare them.

    Comparing deep-copied layers reads every byte of them (0.08 s for the 340 MB of a 12-layer
    encoder) with the GIL released, while emission is Python work: run side by side, the
    comparisons mostly vanish from the export's time. Only weights that own their whole
    storage are compared (their storage then stands for them, whatever view of it an
    initializer holds: a transposed weight is such a view); the answers are what
    deduplicate_equal_initializers would have computed with torch.equal.
    """

    def __init__(self, weights: Sequence[Any]) -> None:
        self._classes: dict[int, tuple[int, torch.dtype, int]] | None = None
        self._cancelled = threading.Event()
        self._thread = threading.Thread(
            target=self._compare, args=(list(weights),), name="exporter-equal-weights", daemon=True
        )
        _prompt_switches(True)
        try:
            self._thread.start()
        except BaseException:
            _prompt_switches(False)
            raise

    def _compare(self, weights: list[Any]) -> None:
        try:
            self._classes = _equal_storages(weights, self._cancelled)
        except Exception:  # noqa: BLE001 - no answers: deduplication compares as before
            self._classes = None
        finally:
            _prompt_switches(False)

    def cancel(self) -> None:
        """Stop comparing and answer nothing: the weights may have changed since (a forward
        that really ran can write its buffers in place), so the answers could be stale."""
        self._cancelled.set()

    def equal(self, a: torch.Tensor, b: torch.Tensor) -> bool | None:
        """Whether views ``a`` and ``b`` (same dtype and shape) are equal, or None when the
        comparisons made do not say: both must be the same view (offset, strides) of whole
        weights' storages, and for an answer "not equal", views of every element."""
        self._thread.join()
        if self._classes is None or self._cancelled.is_set():
            return None
        found_a = self._classes.get(a.untyped_storage().data_ptr())
        found_b = self._classes.get(b.untyped_storage().data_ptr())
        if found_a is None or found_b is None:
            return None
        (class_a, dtype_a, numel_a), (class_b, dtype_b, _) = found_a, found_b
        if (
            a.dtype != dtype_a
            or b.dtype != dtype_b
            or (a.storage_offset(), a.stride()) != (b.storage_offset(), b.stride())
        ):
            return None
        if class_a == class_b:
            return True
        return False if a.numel() == numel_a else None


def _equal_storages(
    weights: list[Any], cancelled: threading.Event | None = None
) -> dict[int, tuple[int, torch.dtype, int]] | None:
    """For each weight owning its whole storage (contiguous, from its start to its end): its
    storage address -> (the address of the first equal weight's storage, dtype, elements);
    None once ``cancelled`` is set."""
    buckets: dict[tuple[Any, ...], list[tuple[int, torch.Tensor]]] = {}
    classes: dict[int, tuple[int, torch.dtype, int]] = {}
    for weight in weights:
        if cancelled is not None and cancelled.is_set():
            return None
        if not isinstance(weight, torch.Tensor):
            continue
        raw = weight.detach()
        if (
            type(raw) is not torch.Tensor  # a subclass may dispatch anywhere: not from this thread
            or raw.numel() == 0
            or raw.is_quantized
            or raw.layout != torch.strided
            or raw.device.type != "cpu"
            or not raw.is_contiguous()
            or raw.storage_offset() != 0
            or raw.untyped_storage().nbytes() != raw.nbytes
        ):
            continue
        address = raw.untyped_storage().data_ptr()
        if address in classes:
            continue
        bucket = buckets.setdefault(_fingerprint(raw), [])
        twin = next((kept for kept, kept_raw in bucket if torch.equal(kept_raw, raw)), None)
        if twin is None:
            bucket.append((address, raw))
            twin = address
        classes[address] = (twin, raw.dtype, raw.numel())
    return classes


def deduplicate_equal_initializers(model: ir.Model, equal_weights: EqualWeights | None = None) -> int:
    """Make initializers holding equal values one initializer, as torch's exporter does in eval
    mode, and return how many were removed.

    Deep-copied layers (``nn.TransformerEncoder`` clones its layer) or norms still at their
    initial ones and zeros hold equal tensors under different ``state_dict`` keys; writing each
    would make the file up to N times larger than torch's. The first key in the graph's order
    names the one kept. Weights are sorted into buckets by dtype, shape and a strided sample of
    their elements, so only weights that agree on the sample are compared whole: distinct
    trained weights cost a few reads each; ``equal_weights`` answers for the model's own
    weights without reading them again. Initializers that are graph inputs
    (``keep_initializers_as_inputs``) keep their interface; weights computed at write time
    (folded Conv+BN) are left alone: comparing them would compute them.
    """
    graph = model.graph
    inputs = set(graph.inputs)
    buckets: dict[tuple, list[tuple[ir.Value, torch.Tensor]]] = {}
    removed = 0

    def equal(a: torch.Tensor, b: torch.Tensor) -> bool:
        known = equal_weights.equal(a, b) if equal_weights is not None else None
        return torch.equal(a, b) if known is None else known

    for value in list(graph.initializers.values()):
        tensor = value.const_value
        if (
            value in inputs
            or not isinstance(tensor, tensors.TorchTensor)
            or isinstance(tensor, tensors.DeferredTorchTensor)
        ):
            continue
        raw = tensor.raw.detach()
        if raw.numel() == 0 or raw.is_quantized or raw.layout != torch.strided:
            continue
        bucket = buckets.setdefault(_fingerprint(raw), [])
        twin = next((kept for kept, kept_raw in bucket if equal(kept_raw, raw)), None)
        if twin is None:
            bucket.append((value, raw))
            continue
        ir.convenience.replace_all_uses_with(value, twin)
        graph.initializers.pop(value.name)
        removed += 1
    return removed


def _inputs_read_by_live_values(graph: ir.Graph) -> set[ir.Value]:
    """Graph inputs that a TorchScript node read to compute a value still in the graph, though
    no ONNX node reads them (their shape folded away: ``x.view_as(y)``); torch's exporter keeps
    these, except where the value is computed from constants alone (``zeros_like(y)``), which
    torch folds too, unless ``y`` is 0-d. A kept input may itself name others (``x.view_as(y)``
    returning ``x`` unchanged)."""
    live: set[ir.Value] = set(graph.outputs)
    for node in ir.traversal.RecursiveGraphIterator(graph):
        live.update(v for v in node.inputs if v is not None)
        live.update(node.outputs)
    inputs = set(graph.inputs)
    kept: set[ir.Value] = set(graph.meta.get(KEPT_INPUTS, ())) & inputs
    known: dict[ir.Value, bool] = {}
    pending = [v for v in live if READS_INPUTS in v.meta]
    followed: set[ir.Value] = set()
    while pending:
        value = pending.pop()
        folds = _known_at_export(value, known)
        reads = list(value.meta.get(READS_INPUTS, ()))
        if value in followed and value.producer() is not None:  # a dead value reads its node's inputs
            reads.extend(v for v in value.producer().inputs if v is not None and not v.is_initializer())
        for read in reads:
            # torch never folds the shape of a 0-d tensor (Shape gives []), so what it computes
            # from one (zeros_like of a 0-d input) keeps that input
            if folds and not (read.shape is not None and len(read.shape) == 0):
                continue
            if read in inputs:
                if read not in kept:
                    kept.add(read)
                    pending.append(read)
            elif read not in live and read not in followed:
                # an argument our lowering left unread (the implied last split size): torch's
                # lowering reads it, so what it was computed from counts, unless torch folds it
                followed.add(read)
                pending.append(read)
    return kept


# Ops whose outputs differ from run to run although their inputs are constants.
_RANDOM_OPS = frozenset(
    {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"}
)


def _known_at_export(value: ir.Value, known: dict[ir.Value, bool]) -> bool:
    """Whether ``value`` is computed from constants alone (``ConstantOfShape`` of a folded
    shape: ``zeros_like(y)`` with static shapes), so torch's exporter would have folded it.
    Walks the producers with an explicit stack: a chain of thousands of nodes (a 300M-parameter
    mobile net) would overflow Python's recursion limit."""
    stack = [value]
    while stack:
        current = stack[-1]
        if current in known:
            stack.pop()
            continue
        node = current.producer()
        if current.const_value is not None or current.is_initializer():
            known[current] = True
        elif (
            node is None
            or node.graph is None  # removed as dead, its inputs cleared: what it read is unknown
            or node.op_type in _RANDOM_OPS
            or node.domain
            or any(node.attributes[a].type == ir.AttributeType.GRAPH for a in node.attributes)
        ):
            known[current] = False
        else:
            inputs = [v for v in node.inputs if v is not None]
            if any(known.get(v) is False for v in inputs):
                known[current] = False
            else:
                missing = [v for v in inputs if v not in known]
                if not missing:
                    known[current] = True
                else:
                    stack.extend(missing)
                    continue
        stack.pop()
    return known[value]


def remove_unused_inputs(model: ir.Model) -> list[int]:
    """Drop the graph inputs that no node (in any subgraph too) and no graph output uses, as
    torch's exporter does (weights fed as inputs too), and return the positions of the
    flattened model inputs that remain graph inputs. When some were dropped, the positions
    are also written to the model's metadata_props under INPUT_POSITIONS_KEY, so a runner
    given the file can pick the tensors to feed (exporter.verify does)."""
    graph = model.graph
    outputs = frozenset(graph.outputs)
    kept = _inputs_read_by_live_values(graph)
    for value in [v for v in graph.inputs if not v.uses() and v not in outputs and v not in kept]:
        graph.inputs.remove(value)
        if value.is_initializer() and value.name is not None:  # keep_initializers_as_inputs
            graph.initializers.pop(value.name, None)
    flat = model.meta.get(FLAT_INPUTS_META, ())
    remaining = {id(v) for v in graph.inputs}
    positions = [i for i, value in enumerate(flat) if id(value) in remaining]
    if len(positions) != len(flat):
        model.metadata_props[INPUT_POSITIONS_KEY] = ",".join(map(str, positions))
    return positions
