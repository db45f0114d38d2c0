"""Opset 26: what changes for the base symbolics.

ONNX changes at opset 26 that this module reacts to: none so far. Every symbolic used at
opset 26 is the one registered at the highest earlier opset (the floor rule), and the op
tables in tests/opset9/ run at the newest opset so a change that breaks one shows up there.
"""

from __future__ import annotations
