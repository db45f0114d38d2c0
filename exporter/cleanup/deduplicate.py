"""Equal-weight deduplication: initializers holding equal values are written once, as torch's
exporter writes them in eval mode."""

from __future__ import annotations

import onnx_ir as ir
import torch

from exporter import tensors
from exporter.capture.equal_weights import EqualWeights, fingerprint

__all__ = ["deduplicate_equal_initializers"]


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
        bucket = buckets.setdefault(fingerprint(raw), [])
        twin = next((kept for kept, kept_raw in bucket if equal(kept_raw, raw)), None)
        if twin is None:
            bucket.append((value, raw))
            continue
        ir.convenience.replace_all_uses_with(value, twin)
        graph.initializers.pop(value.name)
        removed += 1
    return removed
