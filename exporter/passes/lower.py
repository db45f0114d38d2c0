"""Lowering: inline calls and drop dead code so later passes see one flat graph."""

from __future__ import annotations

import torch

__all__ = ["lower"]


def lower(graph: torch._C.Graph) -> None:
    torch._C._jit_pass_inline(graph)
    torch._C._jit_pass_dce(graph)
