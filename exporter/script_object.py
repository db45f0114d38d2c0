"""An object of a TorchScript class made in forward, held at export time.

ONNX has no object type, so such an object (a hypothesis of a beam search) is a Python object
while the graph is emitted, whose attributes hold graph values. The symbolics making, reading
and writing it live in opset9/script_dicts.py; the control-flow engine unrolls a loop that
carries one (its own module, so the engine needs no symbolic family).
"""

from __future__ import annotations

__all__ = ["ScriptObject"]


class ScriptObject:
    """An instance of a TorchScript class made in forward: its attributes, by name."""

    def __init__(self, class_name: str) -> None:
        self.class_name = class_name
        self.attributes: dict[str, object] = {}

    def __repr__(self) -> str:
        return f"ScriptObject({self.class_name})"
