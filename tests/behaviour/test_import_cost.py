"""What keeps the first export in a fresh process cheap, checked without timing anything.

bench/first_export.py measures the cost; these tests pin down the causes: importing the
package neither imports onnxruntime nor executes sympy (which onnx_ir imports for symbolic
dimensions), and an export at an opset every known onnxruntime runs does not load onnxruntime
(tests/test_opsets.py checks the table that replaces the onnxruntime probe).
"""

from __future__ import annotations

import json
import subprocess
import sys

_HEAVY = ("onnxruntime", "sympy.core", "onnx_ir._symbolic_shapes", "onnx.reference")


def _loaded_after(code: str) -> dict[str, bool]:
    """In a fresh interpreter run ``code``; which of _HEAVY were really imported (a stand-in
    for a deferred module in sys.modules does not count)."""
    probe = (
        f"{code}\n"
        "import json, sys, types\n"
        f"names = {list(_HEAVY)!r}\n"
        "print(json.dumps({n: type(sys.modules.get(n)) is types.ModuleType for n in names}))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_import_does_not_load_onnxruntime_or_sympy():
    loaded = _loaded_after("import exporter")
    assert not any(loaded.values()), loaded


def test_first_export_does_not_load_onnxruntime_or_sympy():
    code = (
        "import torch, exporter, tempfile, os\n"
        "model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).eval()\n"
        "with tempfile.TemporaryDirectory() as d:\n"
        "    exporter.export(model, (torch.randn(1, 4),), os.path.join(d, 'm.onnx'), opset_version=17)\n"
    )
    loaded = _loaded_after(code)
    assert not any(loaded.values()), loaded


def test_symbolic_dimensions_still_work_after_deferring_sympy():
    code = "import exporter, onnx_ir as ir\ndim = ir.SymbolicDim('N + 1')\nassert str(dim + 1) == 'N + 2', dim + 1\n"
    loaded = _loaded_after(code)
    assert loaded["sympy.core"]  # imported on first use, not at import
