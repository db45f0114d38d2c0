"""Staging batch: quantized symbolics (merged into symbolic_opset10.py and later modules)."""

from __future__ import annotations
