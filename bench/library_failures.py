"""Our failures in the library sweep, grouped by the construct behind them (FAILURES.md)."""

from __future__ import annotations

from typing import Any


def report(data: dict[str, Any], cases: dict[str, Any]) -> str:
    return "# Library sweep: our failures\n\n(not written yet)\n"


def run_repros(timeout: float) -> dict[str, Any]:
    return {}
