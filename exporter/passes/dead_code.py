"""Dead code: nodes whose results nothing reads, and that change nothing others read, go.

Capture hands on graphs with dead nodes (what a trace recorded and then did not use, the parts
of a scripted function a call never reaches once inlined); the passes after this one and the
emitter need not look at them.
"""

from __future__ import annotations

import torch

__all__ = ["remove_dead_code"]


def remove_dead_code(graph: torch._C.Graph) -> None:
    """TorchScript's dead code elimination: it keeps nodes with side effects (in-place writes to
    values still read, prim::PythonOp) and walks sub-blocks."""
    torch._C._jit_pass_dce(graph)
