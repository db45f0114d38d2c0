"""Staging batch: reductions symbolics (merged into symbolic_opset9.py and later opset modules)."""

from __future__ import annotations
