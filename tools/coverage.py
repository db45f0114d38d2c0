"""Compare our registry with torch's TorchScript exporter registry, opset by opset.

This tool (not the package) imports torch.onnx, only to read torch's registry:

    python tools/coverage.py            # prints 'covered N of M torch-registered names at opset K'
    python tools/coverage.py --missing  # also lists what is missing

Exit code 1 when a name torch supports at some opset is missing here, unless it is listed in
NOT_APPLICABLE with the reason.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import exporter  # noqa: F401 - registers every symbolic
from exporter.registry import REGISTRY

FIRST, LAST = 9, 20

# Names in torch's registry that never appear in a graph this exporter sees, with why.
NOT_APPLICABLE = {
    "onnx::Placeholder": "an internal node of torch's exporter, created by its own passes",
    "aten::_floor_divide": "no TorchScript operator of this name exists in torch 2.13; floor_divide covers it",
    "aten::tanhshrink": "no TorchScript operator exists; F.tanhshrink traces to tanh and sub",
    "aten::scan": "no TorchScript operator of this name exists in torch 2.13",
    "aten::get_pool_ceil_padding": "a helper inside torch's exporter, not an operator; ceil_mode pooling is covered",
    "prim::Constant": "handled by the emitter itself: constants stay Python values until a symbolic needs them",
}
# Names ONNX cannot express at the opsets below their first registration here, with why.
LATER_BY_DESIGN = {
    "aten::_unique": (11, "ONNX has no Unique before opset 11"),
    "aten::_unique2": (11, "ONNX has no Unique before opset 11"),
}


def torch_registry() -> dict[str, set[int]]:
    """torch's registered names with the opsets at which a symbolic exists."""
    import torch.onnx  # noqa: F401 - tool only: populates torch's registry

    for version in range(7, LAST + 1):
        try:
            importlib.import_module(f"torch.onnx._internal.torchscript_exporter.symbolic_opset{version}")
        except ImportError:
            pass
    from torch.onnx._internal.torchscript_exporter.registration import registry

    result = {}
    for name in registry.all_functions():
        group = registry.get_function_group(name)
        result[name] = {v for v in range(FIRST, LAST + 1) if group is not None and group.get(v) is not None}
    return result


def our_name(torch_name: str) -> str:
    """torch strips one trailing underscore when registering: aten::__and_ is aten::__and__."""
    namespace, _, op = torch_name.partition("::")
    if op.startswith("__") and op.endswith("_") and not op.endswith("__"):
        return f"{namespace}::{op}_"
    return torch_name


def covered(name: str, opset: int) -> bool:
    if REGISTRY.lookup(name, opset) is not None:
        return True
    prefix = name + "."
    if any(key.startswith(prefix) and REGISTRY.lookup(key, opset) for key in REGISTRY.names()):
        return True
    op = name.partition("::")[2]
    if op.endswith("_") and not op.endswith("__"):  # in-place form: functionalized by a pass
        return covered(name[:-1], opset)
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--missing", action="store_true")
    options = parser.parse_args(argv)
    theirs = torch_registry()
    failed = False
    for opset in range(FIRST, LAST + 1):
        names = sorted(n for n, opsets in theirs.items() if opset in opsets)
        applicable = [
            n
            for n in names
            if our_name(n) not in NOT_APPLICABLE
            and n not in NOT_APPLICABLE
            and not (n in LATER_BY_DESIGN and opset < LATER_BY_DESIGN[n][0])
        ]
        missing = [n for n in applicable if not covered(our_name(n), opset)]
        print(
            f"covered {len(applicable) - len(missing)} of {len(applicable)} torch-registered names at opset {opset}"
            f" ({len(names) - len(applicable)} not applicable)"
        )
        if missing:
            failed = True
            if options.missing:
                print("  missing: " + " ".join(missing))
    print("not applicable:")
    for name, reason in NOT_APPLICABLE.items():
        print(f"  {name}: {reason}")
    print("supported only from a later opset than torch's exporter:")
    for name, (first, reason) in LATER_BY_DESIGN.items():
        print(f"  {name} from {first}: {reason}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
