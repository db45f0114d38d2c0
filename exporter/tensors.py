"""Dtype tables between TorchScript, torch and ONNX, and zero-copy initializer tensors.

TorchScript graphs carry dtypes as ``ScalarType`` integers (``aten::to(x, 6)`` is float32),
so the integer table is the one the argument conversion needs most.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import onnx_ir as ir
import torch
from onnx_ir.tensor_adapters import TorchTensor, from_torch_dtype, to_torch_dtype

__all__ = [
    "TorchTensor",
    "DeferredTorchTensor",
    "SCALAR_TYPE_TO_DTYPE",
    "DTYPE_TO_SCALAR_TYPE",
    "from_torch_dtype",
    "to_torch_dtype",
    "scalar_type_to_dtype",
    "is_floating_dtype",
    "complex_part_dtype",
    "FLOATING_IR_TYPES",
    "INTEGER_IR_TYPES",
    "QUANTIZED_STORAGE",
    "quantized_input_parts",
    "quantized_output_parts",
]

# c10::ScalarType enumeration order; the integers are what TorchScript constants hold.
SCALAR_TYPE_TO_DTYPE: dict[int, torch.dtype] = {
    0: torch.uint8,
    1: torch.int8,
    2: torch.int16,
    3: torch.int32,
    4: torch.int64,
    5: torch.float16,
    6: torch.float32,
    7: torch.float64,
    8: torch.complex32,
    9: torch.complex64,
    10: torch.complex128,
    11: torch.bool,
    12: torch.qint8,
    13: torch.quint8,
    14: torch.qint32,
    15: torch.bfloat16,
}
DTYPE_TO_SCALAR_TYPE: dict[torch.dtype, int] = {v: k for k, v in SCALAR_TYPE_TO_DTYPE.items()}

FLOATING_IR_TYPES = frozenset({ir.DataType.FLOAT, ir.DataType.FLOAT16, ir.DataType.DOUBLE, ir.DataType.BFLOAT16})
INTEGER_IR_TYPES = frozenset(
    {
        ir.DataType.INT8,
        ir.DataType.INT16,
        ir.DataType.INT32,
        ir.DataType.INT64,
        ir.DataType.UINT8,
        ir.DataType.UINT16,
        ir.DataType.UINT32,
        ir.DataType.UINT64,
    }
)


# Quantized dtypes and the integer dtype that stores their values.
QUANTIZED_STORAGE: dict[torch.dtype, torch.dtype] = {
    torch.quint8: torch.uint8,
    torch.qint8: torch.int8,
    torch.qint32: torch.int32,
}


def _per_tensor(tensor: torch.Tensor, role: str) -> None:
    if tensor.qscheme() not in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        raise ValueError(
            f"a quantized {role} must be quantized per tensor (got {tensor.qscheme()}): a per-channel "
            "tensor has no single scale and zero point to pass beside it; pass the float tensor and "
            "quantize it inside the model"
        )


def quantized_input_parts(tensor: torch.Tensor) -> list[torch.Tensor]:
    """What an exported model takes for a quantized input tensor: its integer values, its scale
    as a float64 0-d tensor and its zero point as an int64 0-d tensor (as torch's exporter
    takes it, the widths of Python numbers), three graph inputs. Other tensors pass as
    themselves."""
    if not tensor.is_quantized:
        return [tensor]
    _per_tensor(tensor, "input")
    return [
        tensor.int_repr(),
        torch.tensor(tensor.q_scale(), dtype=torch.float64),
        torch.tensor(tensor.q_zero_point(), dtype=torch.int64),
    ]


def quantized_output_parts(tensor: torch.Tensor) -> list[torch.Tensor]:
    """What an exported model returns for a quantized output tensor: its integer values, its
    scale (float32, 0-d) and its zero point (0-d, of the integer dtype), three graph outputs
    (the scale and zero point in the types DequantizeLinear takes)."""
    if not tensor.is_quantized:
        return [tensor]
    _per_tensor(tensor, "output")
    return [
        tensor.int_repr(),
        torch.tensor(tensor.q_scale(), dtype=torch.float32),
        torch.tensor(tensor.q_zero_point(), dtype=QUANTIZED_STORAGE[tensor.dtype]),
    ]


def scalar_type_to_dtype(scalar_type: int) -> torch.dtype:
    try:
        return SCALAR_TYPE_TO_DTYPE[scalar_type]
    except KeyError:
        raise ValueError(f"unknown TorchScript ScalarType {scalar_type}") from None


def is_floating_dtype(dtype: ir.DataType | None) -> bool:
    return dtype in FLOATING_IR_TYPES


def complex_part_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype of a complex dtype's real and imaginary parts (float32 for complex64), in which
    an export computes with them (exporter/complex_values.py); any other dtype is its own."""
    return {torch.complex32: torch.float16, torch.complex64: torch.float32, torch.complex128: torch.float64}.get(
        dtype, dtype
    )


class DeferredTorchTensor(TorchTensor):
    """An initializer whose values are computed each time they are read, and not kept.

    Weights the exporter derives (Conv weights with a BatchNorm folded in) would otherwise
    all exist at once from folding until the file is written: for a ResNet-50 as many bytes
    as the model's weights. Computed while being written, one exists at a time. The
    computation reads the model's own tensors, so the values are those at export time only
    as long as the model is not changed in between.

    ``compute_rows(start, stop, out)``, where given, computes rows ``start:stop`` (dim 0) alone
    into ``out``: the file is then written a few MiB at a time through reused buffers, so not
    even one whole derived weight is in memory (a memory-mapped model's weights are read from
    its file as they are written).
    """

    def __init__(
        self,
        compute: Callable[[], torch.Tensor],
        shape: torch.Size,
        dtype: torch.dtype,
        name: str | None = None,
        compute_rows: Callable[[int, int, torch.Tensor], object] | None = None,
    ) -> None:
        super().__init__(torch.empty(shape, dtype=dtype, device="meta"), name=name)
        self._compute = compute
        self._compute_rows = compute_rows

    @property
    def raw(self) -> torch.Tensor:  # type: ignore[override]
        return self._compute()

    @property
    def computes_rows(self) -> bool:
        return self._compute_rows is not None

    def rows(self, start: int, stop: int, out: torch.Tensor) -> torch.Tensor:
        """Rows ``start:stop`` of the values written into ``out`` (contiguous, of their shape and
        dtype); all of them are computed where rows are not computed alone."""
        if self._compute_rows is None:
            out.copy_(self._compute()[start:stop])
        else:
            self._compute_rows(start, stop, out)
        return out

    def __dlpack__(self, *, stream: Any = None) -> Any:
        return self.raw.__dlpack__(stream=stream)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.raw.__dlpack_device__()
