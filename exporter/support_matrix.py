"""The support matrix (op x opset), generated from the registry rather than written by hand."""

from __future__ import annotations

from exporter.registry import REGISTRY, Registry

__all__ = ["support_rows", "format_markdown"]


def support_rows(registry: Registry = REGISTRY) -> list[tuple[str, tuple[int, ...]]]:
    """(op name, opsets at which its lowering changes) for every built-in symbolic, sorted."""
    merged: dict[str, set[int]] = {}
    for name in registry.names():
        base = name.split(".", 1)[0] if name.count("::") == 1 else name
        merged.setdefault(base, set()).update(registry.builtin_opsets(name))
    return [(name, tuple(sorted(opsets))) for name, opsets in sorted(merged.items()) if opsets]


def format_markdown(registry: Registry = REGISTRY) -> str:
    rows = support_rows(registry)
    lines = [
        "| op | from opset | lowering changes at |",
        "|---|---|---|",
    ]
    for name, opsets in rows:
        changes = ", ".join(str(v) for v in opsets[1:]) or "-"
        lines.append(f"| `{name}` | {opsets[0]} | {changes} |")
    return "\n".join(lines)
