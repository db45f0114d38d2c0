"""Saving: atomic writes, weights streamed to disk, external data above 2 GiB or on request.

Nothing appears at the target path until the whole model is written: the bytes go to a
temporary file in the same directory, which then replaces the target in one rename. A
failed export therefore leaves an existing file untouched and no temporary file behind.

Weights are never copied into protobuf messages: the graph is serialized without them, and
each initializer is appended as a TensorProto whose raw_data is written straight from the
torch storage (protobuf allows a repeated field's entries after the message's other fields,
so the file is an ordinary ModelProto). Memory stays at the size of the graph itself.

External data (``<f>.data`` beside the model, the name and layout of torch's dynamo exporter
and ``onnx_ir.save``: initializers over 256 bytes packed densely in graph order, smaller ones
inline) is written the same way: the initializer entries carry location, offset and length, and
the bytes stream into the data file through the same staging (a transposed weight is copied a
few MiB at a time, a computed one made while the previous one is written), so memory stays
flat whatever the weights' size, memory-mapped weights included.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import dataclasses
import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from typing import BinaryIO

import numpy as np
import onnx
import onnx_ir as ir
import torch

from exporter import tensors
from exporter.tensors import TorchTensor

__all__ = [
    "save",
    "write_model",
    "check_destination",
    "ExternalData",
    "EXTERNAL_DATA_THRESHOLD",
    "INLINE_MAX_BYTES",
]

# protobuf refuses messages of 2 GiB and more; leave room for the graph itself.
EXTERNAL_DATA_THRESHOLD = 2 * 1024**3 - 64 * 1024**2
# With external data, initializers of at most this many bytes stay in the model file
# (onnx_ir.save's default, which torch's dynamo exporter uses).
INLINE_MAX_BYTES = 256


def _initializer_bytes(model: ir.Model) -> int:
    total = 0
    for value in model.graph.initializers.values():
        tensor = value.const_value
        if tensor is not None:
            total += tensor.nbytes
    return total


Progress = Callable[[int, int], None]  # (bytes of weights written, total bytes)


@dataclasses.dataclass
class ExternalData:
    """Where :func:`write_model` puts the bytes of initializers over INLINE_MAX_BYTES: an open
    data file, and its name relative to the model file (what the model records)."""

    stream: BinaryIO
    location: str


def check_destination(f: object, external_data: bool | None) -> None:
    """Refuse, before any work, an ``external_data`` that is not True, False or None, and
    external data asked for with a file object (there is no place beside it for the data)."""
    if external_data is not None and not isinstance(external_data, bool):
        raise TypeError(f"external_data must be True, False or None, got {external_data!r}")
    if external_data and not isinstance(f, (str, os.PathLike)):
        raise TypeError(
            "external_data=True needs f to be a file path: the weights go to '<f>.data' beside the "
            f"model, and a {type(f).__name__} has no place beside it"
        )


def save(
    model: ir.Model,
    f: str | os.PathLike[str] | BinaryIO,
    progress: Progress | None = None,
    external_data: bool | None = None,
) -> None:
    """Write ``model`` to a path (atomically) or to a binary file object.

    ``external_data``: None puts the weights in the file up to 2 GiB and in ``<f>.data`` beside
    it above; True always beside it (an empty data file when no initializer is over 256 bytes,
    as torch's dynamo exporter leaves it); False always in it, and a model over 2 GiB is refused
    before anything is written. ``progress`` is called after each initializer with the weight
    bytes written so far.
    """
    check_destination(f, external_data)
    weights = _initializer_bytes(model)
    large = weights >= EXTERNAL_DATA_THRESHOLD
    if large and external_data is False:
        raise ValueError(
            f"external_data=False, but the model's weights ({weights / 2**30:.2f} GiB) exceed 2 GiB, "
            "which a single protobuf cannot hold; pass external_data=True (or leave it None) to write "
            "them to '<f>.data' beside the model"
        )
    if isinstance(f, (str, os.PathLike)):
        _save_to_path(model, os.fspath(f), large if external_data is None else external_data, progress)
        return
    if not hasattr(f, "write"):
        raise TypeError(f"f must be a path or a binary file object, got {type(f).__name__}")
    if large:
        raise ValueError(
            "the model's weights exceed 2 GiB, which a single protobuf cannot hold; "
            "pass a file path so that weights can be written as external data beside it"
        )
    # Write to a temporary file first: a failure must not leave half a model in the caller's
    # stream. The copy goes in chunks, so memory stays flat.
    with tempfile.TemporaryFile() as spool:
        write_model(model, spool, progress)
        spool.seek(0)
        shutil.copyfileobj(spool, f, 16 * 1024 * 1024)


def _save_to_path(model: ir.Model, path: str, external: bool, progress: Progress | None) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot write {path!r}: directory {directory!r} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot write {path!r}: it is a directory")
    data_name = os.path.basename(path) + ".data"
    data_path = os.path.join(directory, data_name)
    data_existed = os.path.exists(data_path)
    temporaries: list[str] = []
    replaced = False
    try:
        # Written through mkstemp's descriptors: reopening a file with "wb" truncates it, and on
        # ext4 closing a file truncated to zero and rewritten forces its blocks to be allocated
        # (auto_da_alloc), which made close() take 0.15-0.2 s per 400 MB.
        handle, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
        temporaries.append(temporary)
        with os.fdopen(handle, "wb") as stream:
            if external:
                data_handle, data_temporary = tempfile.mkstemp(prefix=f".{data_name}.", suffix=".tmp", dir=directory)
                temporaries.append(data_temporary)
                with os.fdopen(data_handle, "wb") as data_stream:
                    write_model(model, stream, progress, ExternalData(data_stream, data_name))
            else:
                write_model(model, stream, progress)
        _copy_mode(path, temporary)
        if external:
            _copy_mode(data_path, data_temporary)
            os.replace(data_temporary, data_path)
        os.replace(temporary, path)
        replaced = True
    finally:
        if not replaced:  # whatever stopped the write (KeyboardInterrupt too): nothing left behind
            for leftover in temporaries:
                if os.path.exists(leftover):
                    os.remove(leftover)
            if external and not data_existed and os.path.exists(data_path):
                os.remove(data_path)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


# Field tags (field number << 3 | wire type 2) of the messages written by hand.
_MODEL_GRAPH = b"\x3a"  # ModelProto.graph = 7
_GRAPH_INITIALIZER = b"\x2a"  # GraphProto.initializer = 5
_TENSOR_RAW_DATA = b"\x4a"  # TensorProto.raw_data = 9


def _streamable(tensor: object) -> bool:
    return (
        (isinstance(tensor, ir.Tensor) or isinstance(tensor, ir.TensorProtocol))
        and not isinstance(tensor, ir.StringTensor)
        and tensor.dtype != ir.DataType.STRING
        and not isinstance(tensor, ir.ExternalTensor)
    )


def write_model(
    model: ir.Model, stream: BinaryIO, progress: Progress | None = None, external: ExternalData | None = None
) -> None:
    """Serialize ``model`` to ``stream`` with initializer bytes written straight from their
    tensors (see the module docstring); with ``external``, those of initializers over
    INLINE_MAX_BYTES go to its data file instead, packed densely in graph order."""
    initializers = list(model.graph.initializers.items())
    streamed = [(name, value) for name, value in initializers if _streamable(value.const_value)]
    for name, _ in streamed:
        del model.graph.initializers[name]
    try:
        proto = ir.to_proto(model)
    finally:
        model.graph.initializers.clear()
        for _, value in initializers:
            model.graph.register_initializer(value)
    graph_bytes = proto.graph.SerializeToString()
    proto.ClearField("graph")
    model_bytes = proto.SerializeToString()
    entries = []
    graph_length = len(graph_bytes)
    offset = 0
    location = external.location if external is not None else ""
    for name, value in streamed:
        tensor = value.const_value
        size = tensor.nbytes
        header = onnx.TensorProto(name=name, dims=list(tensor.shape), data_type=int(tensor.dtype))
        target = external.stream if external is not None and size > INLINE_MAX_BYTES else stream
        if target is stream:
            header_bytes = header.SerializeToString()
            tensor_length = len(header_bytes) + 1 + len(_varint(size)) + size
            prefix = _GRAPH_INITIALIZER + _varint(tensor_length) + header_bytes + _TENSOR_RAW_DATA + _varint(size)
            graph_length += len(prefix) + size
        else:
            header.data_location = onnx.TensorProto.EXTERNAL
            for key, text in (("location", location), ("offset", offset), ("length", size)):
                header.external_data.add(key=key, value=str(text))
            offset += size
            header_bytes = header.SerializeToString()
            prefix = _GRAPH_INITIALIZER + _varint(len(header_bytes)) + header_bytes
            graph_length += len(prefix)
        entries.append((prefix, tensor, target))
    stream.write(model_bytes)
    stream.write(_MODEL_GRAPH + _varint(graph_length))
    stream.write(graph_bytes)
    total = sum(tensor.nbytes for _, tensor, _ in entries)
    written = 0
    staging = _Staging([tensor for _, tensor, _ in entries])
    pieces = [
        (prefix if position == 0 else b"", prepare, tensor, target, position == len(parts) - 1)
        for prefix, tensor, target in entries
        for parts in [staging.parts(tensor)]
        for position, prepare in enumerate(parts)
    ]
    # The next piece's bytes are made ready (a chunk of a transposed weight copied into a
    # staging buffer, a folded weight computed) while the current one is written: torch, numpy
    # and file writes release the GIL, so the copies hide behind the I/O.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(pieces[0][1]) if pieces else None
        for index, (prefix, _, tensor, target, last) in enumerate(pieces):
            ready = pending.result() if pending is not None else None
            pending = pool.submit(pieces[index + 1][1]) if index + 1 < len(pieces) else None
            if prefix:  # the initializer's entry, in graph order; its bytes follow it or go to the data file
                stream.write(prefix)
            if ready is not None:
                target.write(_bytes_of(ready))
            elif hasattr(tensor, "tofile"):
                tensor.tofile(target)
            else:
                target.write(tensor.tobytes())
            del ready
            if last:
                written += tensor.nbytes
                if progress is not None:
                    progress(written, total)


# Bytes of a staging buffer: a transposed weight larger than this is copied in chunks of rows.
_CHUNK_BYTES = 4 * 1024 * 1024
# Integer dtypes by element size: transposing moves elements without reading them.
_SAME_SIZE_INTEGERS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


class _Staging:
    """Two buffers, reused for every piece of a weight that needs a copy before it is written.

    A weight used transposed (``x @ W.t()``) is written as a contiguous copy of the transposed
    view. A fresh tensor per weight would touch new memory for every copy (page faults and
    zeroing cost as much as the copy itself) and hold two whole weights while one is written
    and the next prepared. A transposed weight is therefore copied in chunks of rows, each at
    most _CHUNK_BYTES, into two buffers taken in turn: taken in turn suffices because a buffer
    is filled again only once the piece prepared in it two copies earlier is written (see
    write_model). Other views needing a copy (rare: permuted weights) are copied whole. A weight
    computed at write time whose rows are computed alone (a folded Conv weight) is computed
    into the same buffers, a chunk of rows at a time.
    """

    def __init__(self, weights: list[object]) -> None:
        copied = [weight for weight in weights if _copied_into_buffer(weight) or _computed_in_rows(weight)]
        sizes = [_piece_bytes(weight) for weight in copied]
        # two buffers as soon as two pieces go through them, be they of one weight or of two:
        # with one, the next chunk of a lone transposed weight was copied over the chunk
        # being written
        pieces = sum(-(-weight.nbytes // _piece_bytes(weight)) for weight in copied)
        self._buffers = [torch.empty(max(sizes), dtype=torch.uint8) for _ in range(min(2, pieces))]
        chunks = [
            _piece_bytes(weight) for weight in weights if _chunked(weight) and _piece_bytes(weight) < weight.nbytes
        ]
        # the first step of a chunk (rows of W gathered) lands here; used by one thread only
        self._gathered = torch.empty(max(chunks, default=0), dtype=torch.uint8)
        self._turn = 0

    def parts(self, tensor: object) -> list[Callable[[], torch.Tensor | None]]:
        """Callables preparing ``tensor``'s bytes in file order, each a contiguous CPU tensor
        (None: write the tensor itself)."""
        if _computed_in_rows(tensor):  # a folded Conv weight: a few MiB of output channels at a time
            rows = int(tensor.shape[0])  # type: ignore[attr-defined]
            step = _piece_bytes(tensor) // _row_bytes(tensor)
            return [
                functools.partial(self._computed_rows, tensor, start, min(step, rows - start))
                for start in range(0, rows, step)
            ]
        if not _chunked(tensor):
            return [functools.partial(self.prepare, tensor)]
        raw = tensor.raw.detach()
        rows, columns = raw.shape
        step = max(1, _CHUNK_BYTES // (columns * raw.element_size()))
        if step >= rows:
            return [functools.partial(self.prepare, tensor)]
        # raw is W.t() for a contiguous W: rows r0:r1 of raw are W[:, r0:r1] transposed
        weight = raw.t().view(_SAME_SIZE_INTEGERS[raw.element_size()]).numpy()
        return [functools.partial(self._rows, weight, start, min(step, rows - start)) for start in range(0, rows, step)]

    def _buffer(self) -> torch.Tensor:
        buffer = self._buffers[self._turn % len(self._buffers)]
        self._turn += 1
        return buffer

    def _computed_rows(self, tensor: tensors.DeferredTorchTensor, start: int, count: int) -> torch.Tensor:
        """Rows ``start:start+count`` of a weight computed at write time, computed into a buffer."""
        dtype = tensors.to_torch_dtype(tensor.dtype)
        shape = (count, *(int(d) for d in tensor.shape[1:]))
        return tensor.rows(start, start + count, self._buffer()[: count * _row_bytes(tensor)].view(dtype).view(shape))

    def _rows(self, weight: np.ndarray, start: int, count: int) -> torch.Tensor:
        """Rows ``start:start+count`` of ``weight.T``, contiguous: the columns gathered into a
        contiguous block first (numpy copies row segments, single-threaded), whose transpose
        torch then copies with its blocked 2-D transpose (a strided copy of the same rows
        would go element by element)."""
        columns = weight.shape[0]
        size = columns * count * weight.itemsize
        gathered = self._gathered[:size].view(_SAME_SIZE_INTEGERS[weight.itemsize]).view(columns, count)
        np.copyto(gathered.numpy(), weight[:, start : start + count])
        staged = self._buffer()[:size].view(gathered.dtype).view(count, columns)
        staged.copy_(gathered.t())
        return staged

    def prepare(self, tensor: object) -> torch.Tensor | None:
        """A torch-backed initializer's data as a contiguous CPU tensor (None for other tensors)."""
        if not isinstance(tensor, TorchTensor):
            return None
        raw = tensor.raw.detach().cpu()
        if raw.is_contiguous() or not _copied_into_buffer(tensor):
            return raw.contiguous()
        staged = self._buffer()[: raw.nbytes].view(raw.dtype).view(raw.shape)
        staged.copy_(raw)
        return staged


def _copied_into_buffer(tensor: object) -> bool:
    """Whether a weight is a plain CPU tensor view that needs a copy to be written (not a
    computed one: DeferredTorchTensor makes a fresh contiguous tensor each time)."""
    if not isinstance(tensor, TorchTensor) or isinstance(tensor, tensors.DeferredTorchTensor):
        return False
    raw = tensor.raw
    return (
        raw.device.type == "cpu"
        and raw.layout == torch.strided
        and not raw.is_quantized
        and not raw.is_contiguous()
        and raw.numel() > 0
    )


def _chunked(tensor: object) -> bool:
    """Whether a weight is the transpose of a contiguous 2-D tensor, copied in chunks."""
    if not _copied_into_buffer(tensor):
        return False
    raw = tensor.raw  # type: ignore[attr-defined]
    return (
        raw.dim() == 2
        and raw.stride() == (1, raw.shape[0])
        and raw.element_size() in _SAME_SIZE_INTEGERS
        and not raw.is_conj()
        and not raw.is_neg()
    )


def _computed_in_rows(tensor: object) -> bool:
    """Whether a weight is computed at write time a few rows at a time (larger than a chunk, and
    its rows computed alone)."""
    return (
        isinstance(tensor, tensors.DeferredTorchTensor)
        and tensor.computes_rows
        and tensor.nbytes > _CHUNK_BYTES
        and int(tensor.shape[0]) > 1
    )


def _row_bytes(tensor: tensors.DeferredTorchTensor) -> int:
    return tensor.nbytes // int(tensor.shape[0])


def _piece_bytes(tensor: object) -> int:
    """The most bytes one piece of ``tensor`` takes in a staging buffer."""
    if _computed_in_rows(tensor):
        row = _row_bytes(tensor)  # type: ignore[arg-type]
        return min(tensor.nbytes, max(1, _CHUNK_BYTES // row) * row)  # type: ignore[attr-defined]
    raw = tensor.raw  # type: ignore[attr-defined]
    if _chunked(tensor):
        row = raw.shape[1] * raw.element_size()
        return min(raw.nbytes, max(1, _CHUNK_BYTES // row) * row)
    return raw.nbytes


def _bytes_of(tensor: torch.Tensor) -> memoryview:
    """The bytes of a contiguous CPU tensor, without a copy (any dtype, bfloat16 included)."""
    if tensor.numel() == 0:
        return memoryview(b"")
    array = (ctypes.c_ubyte * (tensor.element_size() * tensor.numel())).from_address(tensor.data_ptr())
    return memoryview(array)


def _copy_mode(existing: str, temporary: str) -> None:
    """Keep the permissions of a file being replaced; new files get the usual umask mode."""
    try:
        mode = os.stat(existing).st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(temporary, mode)
