"""Regenerate README's coverage table and support matrix from the registry (never by hand), and copy
the benchmark and library-sweep tables from their results."""

from __future__ import annotations

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _replace(text: str, marker: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- {marker}:start -->\n).*?(<!-- {marker}:end -->)", re.S)
    return pattern.sub(lambda m: m.group(1) + body.rstrip() + "\n" + m.group(2), text)


def _bench_summary() -> str:
    """The headline ratios table of bench/results/results.md, with its date/machine/versions."""
    path = os.path.join(ROOT, "bench", "results", "results.md")
    if not os.path.exists(path):
        return "No benchmark results yet: run `python bench/run.py`."
    lines = open(path).read().splitlines()
    header = [line for line in lines if line.startswith("- ")][:4]
    start = next(i for i, line in enumerate(lines) if line.startswith("## Ratios"))
    table = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        table.append(line)
    return "\n".join(header + [""] + [line for line in table]).strip() + "\n"


def _library_sweep_table() -> str:
    """The pass-count table of bench/results/library_sweep/results.md (rendered by library_sweep.py)."""
    path = os.path.join(ROOT, "bench", "results", "library_sweep", "results.md")
    if not os.path.exists(path):
        return "No library sweep results yet: run `python bench/library_sweep.py`."
    lines = open(path).read().splitlines()
    start = lines.index("## Pass counts")
    rest = lines[start + 1 :]
    end = next((i for i, line in enumerate(rest) if line.startswith("## ")), len(rest))
    table = [line for line in rest[:end] if line.startswith("|")]
    return "\n".join(table) + "\n"


def main() -> int:
    sys.path.insert(0, ROOT)
    from exporter.support_matrix import format_markdown

    coverage = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "coverage.py"), "--missing"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=ROOT),
    ).stdout
    lines = ["| opset | covered of torch-registered names |", "|---|---|"]
    for line in coverage.splitlines():
        match = re.match(r"covered (\d+) of (\d+) torch-registered names at opset (\d+)", line)
        if match:
            lines.append(f"| {match.group(3)} | {match.group(1)} of {match.group(2)} |")
    missing = sorted(
        {
            name
            for line in coverage.splitlines()
            if line.strip().startswith("missing:")
            for name in line.split(":", 1)[1].split()
        }
    )
    rest = coverage[coverage.find("not applicable:") :]
    table = "\n".join(lines) + "\n"
    if missing:
        table += (
            "\nNot yet covered (at the opsets where torch has them): " + ", ".join(f"`{m}`" for m in missing) + "\n"
        )
    table += "\n```\n" + rest.strip() + "\n```\n"
    path = os.path.join(ROOT, "README.md")
    text = open(path).read()
    text = _replace(text, "coverage", table)
    text = _replace(text, "matrix", format_markdown())
    text = _replace(text, "bench", _bench_summary())
    text = _replace(text, "libsweep", _library_sweep_table())
    open(path, "w").write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
