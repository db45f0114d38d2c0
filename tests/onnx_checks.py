"""What every model the suite exports must be: valid ONNX, not just what onnxruntime loads.

The shared run helper (tests/conftest.py) wraps ``exporter.serialization.save``, the one place
every export writes its model, so each file a test exports passes onnx's full check and strict
shape inference, whether the test runs it or not; ``conftest.run_model`` checks a model it is
handed that no export wrote (a test's own graph).
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from typing import Any, BinaryIO

import onnx
import onnx_ir as ir

__all__ = ["check_valid", "check_saved", "check_unless_saved", "saving_with_checks"]

# digests of the serialized models an export wrote to memory and this module checked
_CHECKED: set[bytes] = set()


def check_valid(model: onnx.ModelProto | str) -> None:
    """onnx's full model check (which runs type-checked shape inference) and strict shape
    inference: a model either passes both or the test fails naming what ONNX refuses.
    A path is checked from the file, so weights saved as external data are checked too."""
    if isinstance(model, str):
        onnx.checker.check_model(model, full_check=True)
        with tempfile.TemporaryDirectory() as directory:
            inferred = os.path.join(directory, "inferred.onnx")
            onnx.shape_inference.infer_shapes_path(model, inferred, check_type=True, strict_mode=True)
        return
    onnx.checker.check_model(model, full_check=True)
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)


def check_saved(model: ir.Model, f: str | os.PathLike[str] | BinaryIO) -> None:
    """Check what an export wrote at ``f``: the file itself, or the bytes of an in-memory
    stream, or (for another stream, which may not be readable) the model serialized again."""
    if isinstance(f, (str, os.PathLike)):
        check_valid(os.fspath(f))
    elif isinstance(f, io.BytesIO):
        data = f.getvalue()
        check_valid(onnx.load_from_string(data))
        _CHECKED.add(hashlib.sha1(data).digest())
    else:
        check_valid(ir.to_proto(model))


def check_unless_saved(data: bytes) -> None:
    """Check a serialized model unless an export wrote exactly these bytes (checked then)."""
    if hashlib.sha1(data).digest() not in _CHECKED:
        check_valid(onnx.load_from_string(data))


def saving_with_checks(save: Any) -> Any:
    """``save`` followed by :func:`check_saved` on what it wrote."""

    def checked_save(model: ir.Model, f: Any, *args: Any, **kwargs: Any) -> None:
        save(model, f, *args, **kwargs)
        check_saved(model, f)

    return checked_save
