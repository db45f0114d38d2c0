"""Compare our registry with torch's TorchScript exporter registry, opset by opset.

This tool (not the package) imports torch.onnx, only to read torch's registry:

    python tools/coverage.py            # prints 'covered N of M torch-registered names at opset K'
    python tools/coverage.py --missing  # also lists what is missing
    python tools/coverage.py --beyond   # also lists the names covered here that torch lacks
    python tools/coverage.py --survey   # also lists which surveyed library ops are missing

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

# aten ops that library and model code calls (kornia, torch_geometric, torchvision, torchaudio,
# torchmetrics, torch.distributions: a survey from their APIs, the libraries not being
# installed here), which torch's exporter does not register and ONNX can express: what the
# whole suite should cover next. The trace of each call records the op under this name.
SURVEYED = (
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
    "aten::copysign",
    "aten::frac",
    "aten::signbit",
    "aten::heaviside",
    "aten::sinc",
    "aten::float_power",
    "aten::ldexp",
    "aten::quantile",
    "aten::nanquantile",
    "aten::kthvalue",
    "aten::mode",
    "aten::msort",
    "aten::cov",
    "aten::corrcoef",
    "aten::addr",
    "aten::addmv",
    "aten::vdot",
    "aten::inner",
    "aten::block_diag",
    "aten::cartesian_prod",
    "aten::combinations",
    "aten::tril_indices",
    "aten::triu_indices",
    "aten::diagflat",
    "aten::fft_fftshift",
    "aten::fft_ifftshift",
    "aten::huber_loss",
    "aten::smooth_l1_loss",
    "aten::linalg_inv",
    "aten::linalg_matrix_power",
    "aten::linalg_multi_dot",
    "aten::linalg_vander",
    "aten::pdist",
    "aten::dist",
    "aten::renorm",
    "aten::special_entr",
    "aten::isneginf",
    "aten::isposinf",
    "aten::isreal",
    "aten::column_stack",
    "aten::dstack",
    "aten::hsplit",
    "aten::channel_shuffle",
    "aten::unique_consecutive",
    "aten::cumulative_trapezoid",
)


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
    parser.add_argument("--beyond", action="store_true")
    parser.add_argument("--survey", action="store_true")
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
    ours = {n for n in REGISTRY.names() if n.startswith("aten::")}
    beyond = sorted({n.partition(".")[0] for n in ours} - {our_name(n) for n in theirs})
    print(f"beyond torch's registry: {len(beyond)} aten names (--beyond lists them)")
    if options.beyond:
        print("  " + " ".join(beyond))
    absent = [n for n in SURVEYED if not covered(n, LAST)]
    print(f"surveyed library ops: {len(SURVEYED) - len(absent)} of {len(SURVEYED)} covered (--survey lists the rest)")
    if options.survey:
        print("  missing: " + " ".join(absent))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
