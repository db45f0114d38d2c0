"""Which ONNX opsets can be targeted: from 9 to the newest the installed onnxruntime runs.

The newest opset of a known onnxruntime release comes from a table, so the common case
needs neither onnxruntime's import nor a probe; an unknown release is probed once, and
only when the answer matters (an opset above what every release in the table runs).
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util

__all__ = ["MIN_OPSET", "DEFAULT_OPSET", "KNOWN_MAX_OPSETS", "max_opset", "probe_max_opset", "check_opset"]

MIN_OPSET = 9
DEFAULT_OPSET = 20
# Used when onnxruntime is not installed: the newest opset onnxruntime 1.31 runs.
_FALLBACK_MAX_OPSET = 26

# onnxruntime (major, minor) -> the newest opset it runs, as the probe below finds it
# (capped at the newest opset onnx defines, which the probe cannot go beyond: min() with
# the installed onnx's newest is taken on use). tests/test_opsets.py checks the entry
# of the installed release against the probe. Releases not listed are probed.
KNOWN_MAX_OPSETS: dict[tuple[int, int], int] = {
    (1, 31): 26,
    (1, 32): 28,  # probed with onnx 1.23 (whose newest opset is 28)
}
# Every release from the oldest in the table on runs at least this opset.
_TABLE_FLOOR = min(KNOWN_MAX_OPSETS.values())


@functools.cache
def _onnxruntime_version() -> tuple[int, int] | None:
    """(major, minor) of the installed onnxruntime from its metadata, without importing it;
    None when it is not installed, (0, 0) (unknown: probed) for a build distributed under
    another name (onnxruntime-gpu, ...)."""
    try:
        version = importlib.metadata.version("onnxruntime")
    except importlib.metadata.PackageNotFoundError:
        return None if importlib.util.find_spec("onnxruntime") is None else (0, 0)
    try:
        major, minor = (int(part) for part in version.split(".")[:2])
    except ValueError:
        return (0, 0)  # unparsable: treated as unknown, so probed
    return major, minor


def _onnx_max_opset() -> int:
    import onnx

    return onnx.defs.onnx_opset_version()


@functools.cache
def max_opset() -> int:
    """The newest opset both onnx and the installed onnxruntime support.

    From :data:`KNOWN_MAX_OPSETS` for a known onnxruntime release; otherwise probed by
    loading a one-node model per candidate opset, so a newer onnxruntime raises the
    ceiling without a code change.
    """
    onnx_max = _onnx_max_opset()
    version = _onnxruntime_version()
    if version is None:
        return min(onnx_max, _FALLBACK_MAX_OPSET)
    if version in KNOWN_MAX_OPSETS:
        return min(onnx_max, KNOWN_MAX_OPSETS[version])
    return probe_max_opset()


@functools.cache
def probe_max_opset() -> int:
    """The newest opset the installed onnxruntime loads a model of (at most onnx's newest)."""
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
        except Exception:  # noqa: BLE001 - onnxruntime's errors (Fail, InvalidGraph...) share no narrower base: any means no
            continue
        best = opset
        break
    return best


def check_opset(opset_version: int | None) -> int:
    if opset_version is None:
        return DEFAULT_OPSET
    if isinstance(opset_version, bool) or not isinstance(opset_version, int):
        raise ValueError(f"opset_version must be an int, got {opset_version!r}")
    if MIN_OPSET <= opset_version <= _TABLE_FLOOR and _runs_table_floor():
        if opset_version <= _onnx_max_opset():
            return opset_version
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


def _runs_table_floor() -> bool:
    """Whether the installed onnxruntime (if any) runs every opset up to the table's floor
    without asking it: absent (the fallback is above the floor) or not older than the
    oldest release in the table."""
    version = _onnxruntime_version()
    return version is None or version >= min(KNOWN_MAX_OPSETS)
