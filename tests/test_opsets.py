"""exporter/opsets.py: the opsets an export may target, from 9 to the newest the installed onnx
defines and onnxruntime runs. The newest is read from a table of known onnxruntime versions
(probing onnxruntime would load it at the first export); the table must agree with the probe.
"""

from __future__ import annotations

import pytest

from exporter import opsets


def test_known_opset_table_agrees_with_probe():
    version = opsets._onnxruntime_version()
    if version not in opsets.KNOWN_MAX_OPSETS:
        pytest.skip(f"onnxruntime {version} is not in the table (it is probed)")
    import onnx

    expected = min(onnx.defs.onnx_opset_version(), opsets.KNOWN_MAX_OPSETS[version])
    assert opsets.probe_max_opset() == expected
    assert opsets.max_opset() == expected


def test_check_opset_matches_max_opset():
    newest = opsets.max_opset()
    for opset in range(opsets.MIN_OPSET, newest + 1):
        assert opsets.check_opset(opset) == opset
    for out_of_range in (opsets.MIN_OPSET - 1, newest + 1):
        with pytest.raises(ValueError, match="is not supported"):
            opsets.check_opset(out_of_range)
