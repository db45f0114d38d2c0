"""Command line: export a torch.jit.save archive to ONNX.

  python -m exporter model.pt --input x:1x3x224x224:float32 -o model.onnx --verify --report
  python -m exporter --support-matrix

Loading an archive compiles the TorchScript code stored in it, and exporting runs the
model's forward once on generated inputs: only export archives you trust. No pickled
Python objects outside TorchScript's restricted format are loaded.
Exit codes: 0 success, 1 export error (message; traceback with --debug), 2 usage error.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import zipfile
from collections.abc import Sequence

import torch

__all__ = ["main", "parse_input_spec"]

_DTYPES = {
    "float32": torch.float32,
    "float": torch.float32,
    "float16": torch.float16,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
    "float64": torch.float64,
    "double": torch.float64,
    "int64": torch.int64,
    "long": torch.int64,
    "int32": torch.int32,
    "int": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}


class UsageError(ValueError):
    """A malformed command line argument (exit code 2)."""


def parse_input_spec(spec: str) -> tuple[str, torch.Tensor]:
    """NAME:DIMS[:DTYPE[:LOW,HIGH]], e.g. x:1x3x224x224:float32 or ids:1x16:int64:0,30522."""
    parts = spec.split(":")
    if len(parts) < 2 or not parts[0]:
        raise UsageError(f"--input {spec!r}: expected NAME:DIMS[:DTYPE[:LOW,HIGH]], e.g. x:1x3x224x224:float32")
    name, dims_text = parts[0], parts[1]
    try:
        dims = [int(d) for d in dims_text.split("x")] if dims_text else []
    except ValueError:
        raise UsageError(f"--input {spec!r}: dims must look like 1x3x224x224") from None
    dtype_name = parts[2] if len(parts) > 2 and parts[2] else "float32"
    if dtype_name not in _DTYPES:
        raise UsageError(f"--input {spec!r}: unknown dtype {dtype_name!r}; one of {', '.join(sorted(_DTYPES))}")
    dtype = _DTYPES[dtype_name]
    low, high = 0, 10
    if len(parts) > 3:
        try:
            low, high = (int(v) for v in parts[3].split(","))
        except ValueError:
            raise UsageError(f"--input {spec!r}: range must look like 0,1000") from None
    if dtype == torch.bool:
        tensor = torch.rand(dims) > 0.5
    elif dtype.is_floating_point:
        tensor = torch.randn(dims).to(dtype)
    else:
        tensor = torch.randint(low, high, dims, dtype=dtype)
    return name, tensor


def parse_dynamic(spec: str) -> tuple[str, int, str]:
    """NAME:AXIS:DIM_NAME, e.g. x:0:batch."""
    parts = spec.split(":")
    if len(parts) != 3:
        raise UsageError(f"--dynamic {spec!r}: expected NAME:AXIS:DIM_NAME, e.g. x:0:batch")
    try:
        return parts[0], int(parts[1]), parts[2]
    except ValueError:
        raise UsageError(f"--dynamic {spec!r}: AXIS must be an integer") from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m exporter",
        description=__doc__.split("\n\n")[0],
        epilog=(
            "Safety: loading an archive compiles and later runs the TorchScript code it contains "
            "(exporting runs forward once on generated inputs). Only export archives you trust."
        ),
    )
    parser.add_argument("archive", nargs="?", help="a file written by torch.jit.save")
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME:DIMS[:DTYPE[:LOW,HIGH]]",
        help="an example input, in the order of forward's arguments (repeatable)",
    )
    parser.add_argument(
        "--dynamic",
        action="append",
        default=[],
        metavar="NAME:AXIS:DIM_NAME",
        help="mark an input or output axis dynamic (repeatable)",
    )
    parser.add_argument("--opset", type=int, default=None, help="target ONNX opset (default: 20)")
    parser.add_argument("-o", "--output", help="the .onnx file to write (default: the archive name with .onnx)")
    parser.add_argument("--verify", action="store_true", help="compare onnxruntime with torch before writing")
    parser.add_argument("--report", action="store_true", help="print time per phase and node counts")
    parser.add_argument("--seed", type=int, default=0, help="seed for the generated inputs")
    parser.add_argument("--support-matrix", action="store_true", help="print which ops are supported from which opset")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def _status(message: str) -> None:
    """Progress on a terminal; silent when stderr is redirected."""
    if sys.stderr.isatty():
        sys.stderr.write(f"\r\033[K{message}")
        sys.stderr.flush()


def _progress_bar(written: int, total: int) -> None:
    """A weights-written bar on a terminal; nothing when stderr is redirected."""
    if not sys.stderr.isatty() or total <= 0:
        return
    width = 30
    done = int(width * written / total)
    sys.stderr.write(
        f"\r\033[Kwriting weights [{'#' * done}{'.' * (width - done)}] {written / 1e6:.0f}/{total / 1e6:.0f} MB"
    )
    sys.stderr.flush()


def _load(path: str) -> torch.jit.ScriptModule:
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path} is not a TorchScript archive (torch.jit.save writes a zip file)")
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
    if not any(n.endswith("/code/__torch__.py") or "/code/" in n for n in names):
        raise ValueError(
            f"{path} is a zip file but not a TorchScript archive (no code/ entry); "
            "torch.save checkpoints are not models: load the nn.Module in Python and call exporter.export"
        )
    return torch.jit.load(path, map_location="cpu")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    options = parser.parse_args(argv)
    try:
        import exporter

        if options.support_matrix:
            from exporter.support_matrix import format_markdown

            print(format_markdown())
            return 0
        if not options.archive:
            parser.error("an archive is required (or --support-matrix)")
        torch.manual_seed(options.seed)
        specs = [parse_input_spec(s) for s in options.input]
        dynamic: dict[str, dict[int, str]] = {}
        for spec in options.dynamic:
            name, axis, dim_name = parse_dynamic(spec)
            dynamic.setdefault(name, {})[axis] = dim_name
    except UsageError as error:
        parser.error(str(error))
    output = options.output or os.path.splitext(options.archive)[0] + ".onnx"
    try:
        _status(f"loading {options.archive}")
        model = _load(options.archive)
        _status(f"exporting to {output}")
        result = exporter.export(
            model,
            tuple(t for _, t in specs),
            output,
            input_names=[n for n, _ in specs] or None,
            opset_version=options.opset,
            dynamic_axes=dynamic or None,
            verify=options.verify,
            report=True,
            progress=_progress_bar,
        )
        _status("")
    except Exception as error:  # noqa: BLE001 - reported as an export error (exit 1)
        _status("")
        if options.debug:
            raise
        print(f"error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    nodes = sum(result.node_counts.values())
    print(f"wrote {output}: opset {result.opset}, {nodes} nodes, {result.initializer_bytes / 1e6:.1f} MB of weights")
    if options.verify:
        print("verified: onnxruntime matches eager torch")
    if options.report:
        print(result)
    return 0


if __name__ == "__main__":
    status = main()
    # Everything is written and closed. Freezing the heap lets the interpreter's exit skip
    # its final garbage collections over torch's ~200k objects (about 0.2 s of CPU, more
    # than the export of a small model); the process's memory goes back to the OS anyway,
    # and atexit handlers and the flushing of stdout/stderr run as usual.
    gc.freeze()
    sys.exit(status)
