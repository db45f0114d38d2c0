"""Saving: atomic writes, and external data for models that protobuf cannot hold.

Nothing appears at the target path until the whole model is written: the bytes go to a
temporary file in the same directory, which then replaces the target in one rename. A
failed export therefore leaves an existing file untouched and no temporary file behind.
"""

from __future__ import annotations

import os
import tempfile
from typing import BinaryIO

import onnx_ir as ir

__all__ = ["save", "EXTERNAL_DATA_THRESHOLD"]

# protobuf refuses messages of 2 GiB and more; leave room for the graph itself.
EXTERNAL_DATA_THRESHOLD = 2 * 1024**3 - 64 * 1024**2


def _initializer_bytes(model: ir.Model) -> int:
    total = 0
    for value in model.graph.initializers.values():
        tensor = value.const_value
        if tensor is not None:
            total += tensor.nbytes
    return total


def save(model: ir.Model, f: str | os.PathLike[str] | BinaryIO) -> None:
    """Write ``model`` to a path (atomically) or to a binary file object."""
    large = _initializer_bytes(model) >= EXTERNAL_DATA_THRESHOLD
    if isinstance(f, (str, os.PathLike)):
        _save_to_path(model, os.fspath(f), large)
        return
    if not hasattr(f, "write"):
        raise TypeError(f"f must be a path or a binary file object, got {type(f).__name__}")
    if large:
        raise ValueError(
            "the model's weights exceed 2 GiB, which a single protobuf cannot hold; "
            "pass a file path so that weights can be written as external data beside it"
        )
    data = ir.to_proto(model).SerializeToString()
    f.write(data)


def _save_to_path(model: ir.Model, path: str, large: bool) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot write {path!r}: directory {directory!r} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot write {path!r}: it is a directory")
    handle, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    os.close(handle)
    data_name = os.path.basename(path) + ".data"
    data_path = os.path.join(directory, data_name)
    data_existed = os.path.exists(data_path)
    try:
        if large:
            ir.save(model, temporary, external_data=data_name)
        else:
            with open(temporary, "wb") as stream:
                stream.write(ir.to_proto(model).SerializeToString())
        _copy_mode(path, temporary)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        if large and not data_existed and os.path.exists(data_path):
            os.remove(data_path)
        raise


def _copy_mode(existing: str, temporary: str) -> None:
    """Keep the permissions of a file being replaced; new files get the usual umask mode."""
    try:
        mode = os.stat(existing).st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(temporary, mode)

