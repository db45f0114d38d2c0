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


def test_the_surveyed_library_ops_implemented_so_far_stay_covered() -> None:
    """tools/coverage.py --survey lists the surveyed library ops still missing; the ones this
    package implements never reappear there."""
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "coverage.py"), "--survey"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    found = re.search(r"surveyed library ops: (\d+) of (\d+) covered.*\n  missing: (.*)", result.stdout)
    assert found, result.stdout + result.stderr
    missing = set(found.group(3).split())
    implemented = {
        "aten::logaddexp",
        "aten::logaddexp2",
        "aten::xlogy",
        "aten::special_xlog1py",
        "aten::expm1",
        "aten::exp2",
        "aten::deg2rad",
        "aten::rad2deg",
        "aten::nansum",
        "aten::nanmean",
        "aten::count_nonzero",
        "aten::cummax",
        "aten::cummin",
        "aten::logcumsumexp",
        "aten::isin",
        "aten::rot90",
        "aten::trace",
        "aten::take_along_dim",
        "aten::frac",
        "aten::signbit",
        "aten::isposinf",
        "aten::isneginf",
        "aten::tril_indices",
        "aten::triu_indices",
    }
    assert not implemented & missing
    assert int(found.group(1)) == int(found.group(2)) - len(missing)
