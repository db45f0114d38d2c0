"""The export report: where the time went and what the model contains."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import time
from collections.abc import Iterator

import onnx_ir as ir

__all__ = ["ExportReport", "PhaseTimer"]


class PhaseTimer:
    """Wall time per named phase, in the order the phases ran."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start


@dataclasses.dataclass
class ExportReport:
    """What ``export(..., report=True)`` returns; ``model`` is the model that was written."""

    model: ir.Model
    opset: int
    phase_seconds: dict[str, float]
    node_counts: dict[str, int]
    initializer_count: int
    initializer_bytes: int
    # "meta trace" (the forward ran on meta tensors, computing nothing), "trace" (on the real
    # tensors), "script" (a TorchScript graph), "trace + script" (torch.jit.trace, then as script)
    capture: str = "trace"
    # why the capture was not a meta trace ("" when it was)
    capture_reason: str = ""

    @classmethod
    def build(
        cls, model: ir.Model, opset: int, timer: PhaseTimer, capture: str = "trace", capture_reason: str = ""
    ) -> ExportReport:
        counts: collections.Counter[str] = collections.Counter()
        for node in ir.traversal.RecursiveGraphIterator(model.graph):
            counts[node.op_type if not node.domain else f"{node.domain}::{node.op_type}"] += 1
        initializers = [v.const_value for v in model.graph.initializers.values() if v.const_value is not None]
        return cls(
            model=model,
            opset=opset,
            phase_seconds=dict(timer.seconds),
            node_counts=dict(counts.most_common()),
            initializer_count=len(initializers),
            initializer_bytes=sum(t.nbytes for t in initializers),
            capture=capture,
            capture_reason=capture_reason,
        )

    @property
    def total_seconds(self) -> float:
        return sum(self.phase_seconds.values())

    def __str__(self) -> str:
        total = self.total_seconds or 1e-9
        lines = [
            f"opset {self.opset}; {sum(self.node_counts.values())} nodes; "
            f"{self.initializer_count} initializers, {self.initializer_bytes / 1e6:.1f} MB"
        ]
        lines.append(f"capture: {self.capture}" + (f" ({self.capture_reason})" if self.capture_reason else ""))
        lines.append(f"time: {self.total_seconds:.3f} s")
        for name, seconds in self.phase_seconds.items():
            lines.append(f"  {name:<10} {seconds:8.3f} s  {100 * seconds / total:5.1f}%")
        lines.append("nodes by op type:")
        for op_type, count in self.node_counts.items():
            lines.append(f"  {op_type:<24} {count}")
        return "\n".join(lines)
