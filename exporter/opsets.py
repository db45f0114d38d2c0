"""Which ONNX opsets can be targeted: from 9 to the newest the installed onnxruntime runs."""

from __future__ import annotations

import functools

__all__ = ["MIN_OPSET", "DEFAULT_OPSET", "max_opset", "check_opset"]

MIN_OPSET = 9
DEFAULT_OPSET = 20
# Used when onnxruntime is not installed: the newest opset onnxruntime 1.31 runs.
_FALLBACK_MAX_OPSET = 26


@functools.cache
def max_opset() -> int:
    """The newest opset both onnx and the installed onnxruntime support.

    Probed by loading a one-node model per candidate opset, so a newer onnxruntime raises
    the ceiling without a code change.
    """
    import onnx

    onnx_max = onnx.defs.onnx_opset_version()
    try:
        import onnxruntime
    except ImportError:
        return min(onnx_max, _FALLBACK_MAX_OPSET)
    from onnx import helper

    best = MIN_OPSET
    for opset in range(onnx_max, MIN_OPSET - 1, -1):  # newest first: usually 2-3 probes
        node = helper.make_node("Identity", ["x"], ["y"])
        value = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])
        out = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])
        model = helper.make_model(
            helper.make_graph([node], "probe", [value], [out]),
            opset_imports=[helper.make_opsetid("", opset)],
            ir_version=8,
        )
        try:
            options = onnxruntime.SessionOptions()
            options.log_severity_level = 4
            onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        except Exception:  # noqa: BLE001 - an unsupported opset is the answer we probe for
            continue
        best = opset
        break
    return best


def check_opset(opset_version: int | None) -> int:
    if opset_version is None:
        return DEFAULT_OPSET
    if isinstance(opset_version, bool) or not isinstance(opset_version, int):
        raise ValueError(f"opset_version must be an int, got {opset_version!r}")
    newest = max_opset()
    if opset_version < MIN_OPSET:
        raise ValueError(
            f"opset_version={opset_version} is not supported: the exporter targets opsets "
            f"{MIN_OPSET} to {newest}; opsets below 9 lack the operators modern models need"
        )
    if opset_version > newest:
        raise ValueError(
            f"opset_version={opset_version} is not supported: the newest opset the installed "
            f"onnxruntime runs is {newest} (supported: {MIN_OPSET} to {newest})"
        )
    return opset_version
