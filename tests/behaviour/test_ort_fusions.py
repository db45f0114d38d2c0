"""Lowerings that onnxruntime's graph optimizer must fuse into one kernel.

onnxruntime matches fixed node shapes (GeluFusion wants Div by sqrt(2), LayerNormFusion and
SimplifiedLayerNormFusion want Pow(x, 2), ...). An equivalent lowering of another shape exports
correctly but runs as four to eight separate kernels where torch's exporter's output runs one.
These tests read the graph onnxruntime actually runs (``optimized_model_filepath``),
so a change of node form or order that breaks a fusion fails.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from pathlib import Path

import onnx
import onnxruntime as ort
import pytest
import torch
import torch.nn.functional as F
from conftest import Wrap, assert_matches_torch, export_to_bytes
from torch import nn


class Block(nn.Module):
    """Linear -> fn -> Linear: the fused node must not be a graph output (FastGeluFusion refuses
    one) and its input is a computed value, as in a transformer layer."""

    def __init__(self, fn: Callable[[Block, torch.Tensor], torch.Tensor], width: int = 8) -> None:
        super().__init__()
        self.fn = fn
        self.weight = nn.Parameter(torch.rand(width) + 0.5)
        self.inner = nn.Linear(width, width)
        self.outer = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.outer(self.fn(self, self.inner(x)))


def _t5_rms_norm(block: Block, x: torch.Tensor) -> torch.Tensor:
    """transformers' T5LayerNorm / LlamaRMSNorm."""
    variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
    return block.weight * (x * torch.rsqrt(variance + 1e-6))


# (name, block function, fused op that must appear, ops that must be gone, opsets)
FUSED = [
    ("gelu", lambda b, x: F.gelu(x), "Gelu", {"Erf"}, [9, 13, 18, 19]),
    ("gelu_tanh", lambda b, x: F.gelu(x, approximate="tanh"), "FastGelu", {"Tanh"}, [9, 13, 18, 19]),
    ("t5_rms_norm", _t5_rms_norm, "SimplifiedLayerNormalization", {"ReduceMean", "Sqrt"}, [9, 13, 18]),
    (
        "rms_norm",
        lambda b, x: F.rms_norm(x, [8], b.weight),
        "SimplifiedLayerNormalization",
        {"ReduceMean", "Sqrt"},
        [9, 13, 18, 22],
    ),
    (
        "layer_norm",
        lambda b, x: F.layer_norm(x, [8], b.weight, b.inner.bias),
        "LayerNormalization",
        {"ReduceMean", "Sqrt"},
        [9, 13, 16],
    ),
]


def optimized_op_types(data: bytes, tmp_path: Path) -> collections.Counter[str]:
    """Op types of the graph onnxruntime runs on CPU. The fusions are EXTENDED-level
    transformers; ALL only adds the machine-specific NCHWc layout on top."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    return collections.Counter(n.op_type for n in onnx.load(options.optimized_model_filepath).graph.node)


CASES = [(name, fn, fused, gone, opset) for name, fn, fused, gone, opsets in FUSED for opset in opsets]


@pytest.mark.parametrize(
    ("fn", "fused", "gone", "opset"), [c[1:] for c in CASES], ids=[f"{c[0]}-{c[4]}" for c in CASES]
)
def test_onnxruntime_fuses(fn, fused: str, gone: set[str], opset: int, tmp_path: Path) -> None:  # noqa: ANN001
    block = Block(fn).eval()
    args = (torch.randn(2, 5, 8),)
    assert_matches_torch(block, args, opset=opset)
    data, _ = export_to_bytes(block, args, opset_version=opset)
    ops = optimized_op_types(data, tmp_path)
    assert ops[fused] == 1, dict(ops)
    assert not gone & set(ops), dict(ops)


def _cpu_has_vnni() -> bool:
    """VNNI (AVX-512 VNNI or AVX-VNNI) lets onnxruntime's u8 x s8 kernels accumulate without
    the 16-bit saturation of the AVX2 path."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as cpuinfo:
            flags = next((line for line in cpuinfo if line.startswith("flags")), "").split()
    except OSError:
        return False
    return "avx512_vnni" in flags or "avx_vnni" in flags


_GENERATOR = torch.Generator().manual_seed(7)
_QNNPACK_WEIGHT = torch.quantize_per_tensor(torch.randn(16, 32, generator=_GENERATOR), 0.02, 0, torch.qint8)


def _qnnpack_linear(x: torch.Tensor) -> torch.Tensor:
    """A qnnpack-style quantized linear: 8-bit activations (no reduce_range) and int8 weights,
    the combination whose fused integer kernel saturates on CPUs without VNNI."""
    packed = torch.ops.quantized.linear_prepack(_QNNPACK_WEIGHT, None)
    q = torch.quantize_per_tensor(x, 0.03, 128, torch.quint8)
    return torch.ops.quantized.linear(q, packed, 0.05, 100).dequantize()


@pytest.mark.skipif(not _cpu_has_vnni(), reason="onnxruntime's fused u8 x s8 kernels saturate on CPUs without VNNI")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_onnxruntime_fused_integer_kernels_match_torch(tmp_path: Path) -> None:
    """onnxruntime fuses the QDQ pattern into integer kernels (MatMulIntegerToFloat, QGemm);
    with VNNI they agree with torch within one output step. The tests of what we export run
    unoptimized and do not depend on this."""
    torch.backends.quantized.engine = "qnnpack"
    x = torch.randn(8, 32) * 2
    data, _ = export_to_bytes(Wrap(_qnnpack_linear), (x,), opset_version=17)
    options = ort.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    fused = {n.op_type for n in onnx.load(options.optimized_model_filepath).graph.node}
    assert not {"QuantizeLinear", "DequantizeLinear"} >= fused, fused  # something was fused
    (got,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    with torch.no_grad():
        want = _qnnpack_linear(x).numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    assert abs(got - want).max() <= 0.05 * 1.001
