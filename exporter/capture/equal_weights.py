"""Which of a model's weights hold equal values, found beside the capture.

Cleanup writes equal weights once (exporter.cleanup.deduplicate), as torch's exporter does in
eval mode: deep-copied layers and norms still at their initial ones and zeros hold equal
tensors under different ``state_dict`` keys. Comparing them reads every byte, with the GIL
released; capture starts :class:`EqualWeights` on the model's weights in a background thread,
so the comparisons run while the graph is traced and emitted, and hands it to cleanup in
:class:`exporter.capture.captured.Captured`. :func:`fingerprint` sorts weights into buckets
for both.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import torch

__all__ = ["EqualWeights", "module_weights", "fingerprint"]


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


def fingerprint(raw: torch.Tensor) -> tuple[Any, ...]:
    """dtype, shape and a strided sample of the elements, sampled in logical order by index
    (a transposed view is not copied whole)."""
    positions = torch.arange(0, raw.numel(), max(1, raw.numel() // _FINGERPRINT_ELEMENTS))[:_FINGERPRINT_ELEMENTS]
    sample = raw[_unravel(positions, raw.shape)] if raw.dim() else raw.reshape(1)
    return (raw.dtype, tuple(raw.shape), sample.contiguous().view(torch.uint8).numpy().tobytes())


def module_weights(module: torch.nn.Module) -> list[torch.Tensor]:
    """``module``'s parameters and buffers: the tensors whose equal twins EqualWeights finds
    before the graph that reads them is captured."""
    return [*module.parameters(), *(b for b in module.buffers() if b is not None)]


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
        self._thread.start()

    def _compare(self, weights: list[Any]) -> None:
        try:
            self._classes = _equal_storages(weights, self._cancelled)
        except Exception:  # noqa: BLE001 - no answers: deduplication compares as before
            self._classes = None

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
        bucket = buckets.setdefault(fingerprint(raw), [])
        twin = next((kept for kept, kept_raw in bucket if torch.equal(kept_raw, raw)), None)
        if twin is None:
            bucket.append((address, raw))
            twin = address
        classes[address] = (twin, raw.dtype, raw.numel())
    return classes
