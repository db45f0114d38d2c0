"""Error classes raised by the exporter.

Every error that reaches a user names what failed (the op, the argument), where (the
source line in the user's model) and, where possible, what to do about it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

__all__ = [
    "ExporterError",
    "UnsupportedOperatorError",
    "SymbolicError",
    "UnsupportedOp",
    "ModelRaisedError",
]


class ExporterError(RuntimeError):
    """Base class of every error the exporter raises on purpose."""


class ModelRaisedError(ExporterError, ValueError):
    """The model itself raised on the example inputs (they do not fit it). A RuntimeError, as
    the error torch's exporter lets through from tracing, and a ValueError: the inputs are wrong."""


@dataclasses.dataclass(frozen=True)
class UnsupportedOp:
    """One operator that has no symbolic at the target opset."""

    name: str
    count: int
    locations: tuple[str, ...]
    supported_opsets: tuple[int, ...]
    reason: str | None = None


class UnsupportedOperatorError(ExporterError):
    """Raised once, before emission, listing every op the target opset cannot export."""

    def __init__(self, ops: Sequence[UnsupportedOp], opset: int) -> None:
        self.ops = tuple(ops)
        self.opset = opset
        super().__init__(self._message())

    def _message(self) -> str:
        lines = [f"{len(self.ops)} operator(s) cannot be exported at opset {self.opset}:"]
        for op in self.ops:
            where = "; ".join(op.locations[:3]) or "unknown location"
            if len(op.locations) > 3:
                where += f"; and {len(op.locations) - 3} more"
            lines.append(f"  {op.name} (x{op.count}) at {where}")
            if op.reason:
                lines.append(f"    why: {op.reason}")
            higher = [v for v in op.supported_opsets if v > self.opset]
            if higher:
                lines.append(f"    supported from opset {higher[0]}: pass opset_version={higher[0]} or higher")
            else:
                lines.append(
                    "    no symbolic is registered; add one with "
                    f'@exporter.onnx_symbolic("{op.name}", opset={self.opset}) or '
                    f'exporter.register_custom_op_symbolic("{op.name}", fn, {self.opset})'
                )
        return "\n".join(lines)


class SymbolicError(ExporterError):
    """A symbolic function failed; names the op, its arguments, the opset and source line."""

    def __init__(
        self,
        message: str,
        *,
        op: str,
        opset: int,
        location: str,
        arguments: str = "",
    ) -> None:
        self.op = op
        self.opset = opset
        self.location = location
        self.arguments = arguments
        text = f"{op} at opset {opset} ({location}): {message}"
        if arguments:
            text += f"\n  arguments: {arguments}"
        super().__init__(text)
