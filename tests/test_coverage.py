"""Coverage against torch's TorchScript exporter, measured by tools/coverage.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_torch_registered_name_is_covered_at_every_opset() -> None:
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "coverage.py"), "--missing"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = result.stdout.splitlines()
    counts = {
        int(m.group(3)): (int(m.group(1)), int(m.group(2)))
        for m in (re.match(r"covered (\d+) of (\d+) .* at opset (\d+)", line) for line in lines)
        if m
    }
    assert sorted(counts) == list(range(9, 21)), result.stdout + result.stderr
    for opset, (covered, total) in counts.items():
        assert covered == total, f"opset {opset}:\n{result.stdout}"
    assert result.returncode == 0
