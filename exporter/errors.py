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
    "TracingError",
    "UnsupportedOp",
    "ModelRaisedError",
    "NeedsExportTimeValue",
    "UseBeforeDefinitionError",
    "EndlessLoopError",
    "RankChangingLoopError",
    "ComplexOutputError",
]


class ExporterError(RuntimeError):
    """Base class of every error the exporter raises on purpose."""


class ModelRaisedError(ExporterError, ValueError):
    """The model itself raised on the example inputs (they do not fit it). A RuntimeError, as
    the error torch's exporter lets through from tracing, and a ValueError: the inputs are wrong."""


class NeedsExportTimeValue(ValueError):
    """A lowering refused a value it needs at export time (a rank, a size, a list's length, an
    index, a count) because the graph only knows it at run time.

    Not an ExporterError: a symbolic raises it, and the emitter wraps it in a SymbolicError
    naming the op like any failure. It is the one failure the control-flow engine answers by
    unrolling a loop whose trip count is known (each iteration then sees export-time values:
    the iteration number, carried numbers, static shapes); any other error from a loop body is
    a bug and surfaces. A ValueError, so callers catching a symbolic's ValueError still do.
    """


class EndlessLoopError(ExporterError):
    """A loop whose condition cannot change inside its body and whose trip count is unbounded
    (a ``while`` on values computed before it): the model would never return for inputs that
    enter it, so no file is written. The message names the loop's source line."""


class RankChangingLoopError(ExporterError):
    """A loop changes the rank of a value it carries (``x = x[..., None]``) and how many times
    it runs is known only at run time: an ONNX Loop carries values of one rank, and unrolling
    needs the count at export. The message names the loop's source line."""


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


class TracingError(ExporterError):
    """The model's forward raised while it was being traced (before any op was exported).

    torch's message alone names a tensor size or a type, not where; this names the model's
    source line that raised and says whether the forward runs eagerly, since code paths that
    differ under tracing (``torch.jit.is_tracing()``, sizes read as tensors) are the usual cause.
    """

    def __init__(self, error: BaseException, *, location: str, runs_eagerly: bool) -> None:
        self.location = location
        self.runs_eagerly = runs_eagerly
        text = f"tracing the model failed at {location}: {type(error).__name__}: {error}"
        if runs_eagerly:
            text += (
                "\n  the same inputs run eagerly: the model takes another code path while traced "
                "(torch.jit.is_tracing() checks, sizes read as tensors, Python values computed from "
                "tensors); torch.jit.trace(model, args) shows the same error. Make that path trace, or "
                "export a torch.jit.script'ed model"
            )
        else:
            text += "\n  the model raises the same way when run eagerly on these inputs: check the inputs"
        super().__init__(text)


class ComplexOutputError(ExporterError):
    """The model returns a complex tensor, which ONNX cannot hold (exporter/complex_values.py)."""


class UseBeforeDefinitionError(ExporterError):
    """The exported graph reads a value before (or without) defining it: onnx would reject the
    file, so none is written. Always a defect of the exporter (a value of one subgraph leaked
    into its enclosing graph, a node appended out of order), never of the model."""

    def __init__(self, *, node: str, value: str, graph: str, location: str) -> None:
        self.node = node
        self.value = value
        self.location = location
        super().__init__(
            f"exporter defect: node {node!r} in graph {graph!r} reads {value!r}, which is not defined before it in "
            f"that graph or an enclosing one ({location}). No file was written; please report this with the model"
        )
