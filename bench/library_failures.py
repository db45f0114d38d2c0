"""Our failures in the library sweep, grouped by the construct behind them (FAILURES.md).

Each construct names what the library code does that ours cannot export yet, who is working on
it (the #26 helpers: ``specialize``, ``validity``, ``views``; ``ops`` where no helper owns it;
``not the exporter`` where torch.jit.trace or the opset is the limit and torch's exporter fails
alike), the pattern of the error it raises, and a reproduction: a few lines of Python defining
``model`` and ``args`` (and for dynamic cases ``dynamic`` and ``other``), most without the
library. ``python bench/library_sweep.py --repros`` runs every reproduction with ours in a
subprocess (the same export, checker and onnxruntime comparison as the sweep) and records
whether it still fails, so a fix shows in FAILURES.md without rerunning the sweep. A failing
run can match several constructs (a module with two unsupported ops): it is listed under each.

    python bench/library_failures.py --worker KEY    # one reproduction (used by --repros)
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sweep_runner

OPSET = 17


@dataclass(frozen=True)
class Construct:
    key: str
    title: str
    owner: str
    pattern: str  # a regular expression searched in our error message
    repro: str
    note: str = ""
    mode: str | None = None  # only runs of this mode match


CONSTRUCTS: list[Construct] = [
    Construct(
        "dict-of-class-objects",
        "Dict[int, ClassObject] module attribute (einops' scripted recipe table)",
        "specialize",
        r"Unknown type Dict\[int, __torch__\.",
        '''
from typing import Dict, List
import torch

class Recipe:
    def __init__(self, axes: List[int]) -> None:
        self.axes = axes

class ByRank(torch.nn.Module):
    """einops' layers keep Dict[int, TransformRecipe] and index it with the input's rank."""
    recipes: Dict[int, Recipe]

    def __init__(self) -> None:
        super().__init__()
        self.recipes = {3: Recipe([0, 2, 1])}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(self.recipes[x.dim()].axes)

model = torch.jit.script(ByRank())
args = (torch.rand(2, 3, 4),)
''',
        "Raised while lowering the scripted graph (capture), before any pass runs; every scripted "
        "einops layer and every monai network that uses one (UNETR, ViT).",
    ),
    Construct(
        "rank-while-loop",
        "while loop matching ranks never ends (`while factor.dim() != image.dim(): factor = factor[..., None]`)",
        "specialize",
        r"timeout after .* during onnxruntime run",
        '''
import torch

class Saturation(torch.nn.Module):
    """kornia's _make_factor_broadcastable: the trip count is fixed by the ranks at export."""
    def __init__(self) -> None:
        super().__init__()
        self.factor = 0.5

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        factor = torch.as_tensor(self.factor, dtype=image.dtype)
        while factor.dim() != image.dim():
            factor = factor[..., None]
        return image * factor

model = torch.jit.script(Saturation())
args = (torch.rand(1, 3, 4, 5),)
''',
        "The exported Loop's condition never turns false in onnxruntime (the rank in the condition "
        "does not follow the carried value): the run hangs until the sweep's timeout.",
    ),
    Construct(
        "list-str-runtime-index",
        "List[str] indexed at a run-time index (kornia's KORNIA_CHECK_SHAPE loop with an early return)",
        "specialize",
        r"indexing a list of mixed items \(str\) at an index computed at run time",
        '''
from typing import List
import torch

def check_shape(x: torch.Tensor, shape: List[str], raises: bool = True) -> bool:
    """kornia.core.check.KORNIA_CHECK_SHAPE, shortened; the raise/return in the loop makes its
    condition a carried flag, so the loop is not unrolled."""
    shape_to_check = shape[1:]
    offset = max(len(x.shape) - len(shape_to_check), 0)
    x_shape = x.shape[offset:]
    if len(x_shape) != len(shape_to_check):
        if raises:
            raise ValueError("wrong rank")
        return False
    for i in range(len(x_shape)):
        dim_: str = shape_to_check[i]
        if not dim_.isnumeric():
            continue
        dim = int(dim_)
        if x_shape[i] != dim:
            if raises:
                raise ValueError(f"Shape mismatch at dimension {i + offset}: expected {dim}")
            return False
    return True

class Gray(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_shape(x, ["*", "3", "H", "W"])
        return x.mean(-3)

model = torch.jit.script(Gray())
args = (torch.rand(1, 3, 4, 5),)
dynamic = {0: {2: "h", 3: "w"}}
other = (torch.rand(1, 3, 6, 2),)
''',
    ),
    Construct(
        "is-cuda-branch",
        "branch on `is_cuda` kept (`prim::is_cuda` reaches the support check)",
        "specialize",
        r"prim::is_cuda \(x\d+\)",
        '''
import torch

class Scatter(torch.nn.Module):
    """torch_geometric.utils.scatter: a CUDA-only path chosen by src.is_cuda."""
    def forward(self, src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        if src.is_cuda and src.requires_grad:
            return torch.zeros(3, src.shape[1]).index_add(0, index, src.clone())
        return torch.zeros(3, src.shape[1]).index_add(0, index, src)

model = torch.jit.script(Scatter())
args = (torch.rand(6, 4), torch.tensor([0, 0, 1, 1, 2, 2]))
''',
    ),
    Construct(
        "sparse-layout-branch",
        "dead sparse-layout branches kept (torch_geometric's propagate: `to_sparse_csr`, `crow_indices`, "
        "`_sparse_mm`, `segment_reduce`)",
        "specialize",
        r"aten::(crow_indices|col_indices|_sparse_mm|to_sparse_csr|indices|values|segment_reduce) \(x\d+\)",
        """
import sys
import torch
from torch_geometric.nn import GraphConv

# needs torch_geometric: a hand-written layout branch (edge_index.layout == torch.sparse_csr)
# is folded by ours; torch_geometric's generated propagate() is not.
model = torch.jit.script(GraphConv(8, 16, aggr="max"))
args = (torch.rand(10, 8), torch.randint(0, 10, (2, 30)))
""",
        "The scripted propagate() of torch_geometric keeps `is_sparse(edge_index)` / "
        "`isinstance(edge_index, SparseTensor)` branches and their sparse kernels; with a dense "
        "edge_index every one of them is dead. Most cases also hit `prim::is_cuda`.",
    ),
    Construct(
        "dtype-queries",
        "dtype queries left to run time (`torch.promote_types`, `Tensor.is_complex`)",
        "specialize",
        r"aten::(promote_types|is_complex) \(x\d+\)",
        '''
import torch

class Psnr(torch.nn.Module):
    """kornia's psnr: dtype checks and promotion, all fixed at export."""
    def forward(self, image: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if not image.is_floating_point() and not image.is_complex():
            image = image.to(torch.float32)
        dtype = torch.promote_types(image.dtype, target.dtype)
        image, target = image.to(dtype), target.to(dtype)
        return 10.0 * torch.log10(1.0 / ((image - target) ** 2).mean())

model = torch.jit.script(Psnr())
args = (torch.rand(2, 3), torch.rand(2, 3))
''',
    ),
    Construct(
        "stride-query",
        "`Tensor.stride(dim)` read in scripted code (julius' unfold through as_strided)",
        "specialize",
        r"aten::stride \(x\d+\)",
        '''
import torch

class Frames(torch.nn.Module):
    """julius.core.unfold: strides are layout facts fixed at export."""
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        strides = [x.stride(0), x.stride(1)]
        return x.as_strided([x.shape[0], 7, 8], [strides[0], 4 * strides[1], strides[1]])

model = torch.jit.script(Frames())
args = (torch.randn(2, 32),)
''',
    ),
    Construct(
        "export-time-values-unsupported",
        "ops on export-time values reported unsupported before they fold (`math.radians`, "
        "`float(tensor)` as FloatImplicit, `Enum.value`, `linalg.lstsq` on constant matrices)",
        "specialize",
        r"(aten::radians|aten::FloatImplicit|prim::EnumValue|aten::linalg_lstsq) \(x\d+\)",
        '''
import math
import torch

def coefficient(cutoff: float) -> float:
    return float(math.radians(cutoff))

class Lowpass(torch.nn.Module):
    """torchaudio's lowpass_biquad / torchvision's rotate: coefficients computed from constants."""
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w0 = torch.as_tensor(2 * math.pi * 1000.0 / 16000, dtype=x.dtype)
        b0 = (1 - torch.cos(w0)) / 2
        return x * float(b0) + coefficient(30.0)

model = torch.jit.script(Lowpass())
args = (torch.rand(2, 8),)
''',
        "Every input of these nodes is known at export (constants, attributes, enum members), so "
        "emission could fold them, but the up-front support check lists them first. torchvision's "
        "perspective solves its 8x8 system from constant corner lists.",
    ),
    Construct(
        "stft-complex",
        "`torch.stft(..., return_complex=True)` followed by `abs()`/`pow()` (complex intermediate)",
        "ops",
        r"stft with return_complex=True makes a complex tensor",
        '''
import torch

class Power(torch.nn.Module):
    """torchaudio.functional.spectrogram: |STFT|^2 through a complex tensor."""
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spec = torch.stft(x, 64, hop_length=16, window=torch.hann_window(64), return_complex=True)
        return spec.abs().pow(2.0)

model = torch.jit.script(Power())
args = (torch.randn(1, 400),)
''',
        "Every torchaudio spectrogram transform (Spectrogram, MelSpectrogram, MFCC, SpectralCentroid), "
        "traced and scripted. A complex value that is only consumed by abs/pow/real/imag/angle can "
        "be carried as ONNX STFT's real (..., 2) output.",
    ),
    Construct(
        "complex-views",
        "`torch.view_as_real` / `torch.view_as_complex` around `torch.fft.rfft`/`irfft` (julius' FFT convolution)",
        "ops",
        r"aten::view_as_(real|complex) \(x\d+\)",
        """
import torch

class Rfft(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spec = torch.view_as_real(torch.fft.rfft(x, dim=-1)) * 2.0
        return torch.fft.irfft(torch.view_as_complex(spec), n=x.shape[-1], dim=-1)

model = torch.jit.script(Rfft())
args = (torch.randn(1, 64),)
""",
    ),
    Construct(
        "istft",
        "`torch.istft` (GriffinLim)",
        "ops",
        r"aten::istft \(x\d+\)",
        """
import torch

class Inverse(torch.nn.Module):
    def forward(self, real: torch.Tensor, imag: torch.Tensor) -> torch.Tensor:
        return torch.istft(torch.complex(real, imag), 64, hop_length=16, window=torch.hann_window(64))

model = torch.jit.script(Inverse())
spec = torch.stft(torch.randn(1, 400), 64, hop_length=16, window=torch.hann_window(64), return_complex=True)
args = (spec.real.contiguous(), spec.imag.contiguous())
""",
    ),
    Construct(
        "repeat-more-dims",
        "`repeat` with a run-time count and more repeats than the input has dims",
        "ops",
        r"repeat with run-time repeats needs as many repeats as input dims",
        '''
import torch

class Deltas(torch.nn.Module):
    """torchaudio.functional.compute_deltas: a 1-D kernel repeated to (channels, 1, 5)."""
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.reshape(1, -1, x.shape[-1])
        kernel = torch.arange(-2, 3, 1, dtype=x.dtype).repeat(x.shape[1], 1, 1)
        return torch.nn.functional.conv1d(x, kernel, groups=x.shape[1])

model = torch.jit.script(Deltas())
args = (torch.rand(2, 4, 10),)
dynamic = {0: {0: "batch"}}
other = (torch.rand(3, 4, 10),)
''',
    ),
    Construct(
        "copy-into-constant-view",
        "traced write into a slice of a constant buffer (`out[:, :, i] = o0`, torchaudio's lfilter loop): "
        "aten::copy fails on the constant's strided view",
        "views",
        r"aten::copy at opset \d+ .*view Float as Byte",
        '''
import torch

class Recursive(torch.nn.Module):
    """y[t] = x[t] - 0.5 y[t-1], written sample by sample into a zero buffer (traced)."""
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(1, 1, x.shape[-1] + 1)
        a = torch.tensor([[0.5, 0.0]])
        for i, o0 in enumerate(x.permute(2, 0, 1)):
            window = out[:, :, i : i + 2]
            o0 = o0 - (window.transpose(0, 1) @ a.unsqueeze(2))[..., 0].t()
            out[:, :, i + 1] = o0
        return out

model = Recursive()
args = (torch.randn(1, 1, 8),)
''',
        "The error is torch's: the constant `self` is a (1, 1) view with stride 9 of the zero "
        "buffer, and the symbolic's handling of it reinterprets its bytes.",
    ),
    Construct(
        "trapz",
        "`torch.trapz` (torchmetrics' AUROC)",
        "views",
        r"aten::trapz \(x\d+\)",
        """
import torch

class Auc(torch.nn.Module):
    def forward(self, fpr: torch.Tensor, tpr: torch.Tensor) -> torch.Tensor:
        return torch.trapz(tpr, fpr)

model = Auc()
args = (torch.linspace(0, 1, 9), torch.rand(9).sort().values)
""",
    ),
    Construct(
        "diag",
        "`torch.diag` of a matrix (torchmetrics' multiclass stat scores)",
        "views",
        r"aten::diag \(x\d+\)",
        """
import torch

class Correct(torch.nn.Module):
    def forward(self, confusion: torch.Tensor) -> torch.Tensor:
        return torch.diag(confusion)

model = Correct()
args = (torch.rand(4, 4),)
""",
    ),
    Construct(
        "checker-topological-order",
        "checker: nodes not topologically sorted (scripted GeneralizedRCNNTransform: resize + batch_images)",
        "validity",
        r"Nodes in a graph must be topologically sorted",
        """
import sys
import torch

sys.path.insert(0, "tests")  # run from the repository root
import torchvision_shim

torchvision_shim.import_torchvision()
from torchvision.models.detection.transform import GeneralizedRCNNTransform

class Transform(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.transform = GeneralizedRCNNTransform(32, 48, [0.5, 0.4, 0.3], [0.2, 0.3, 0.25])

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return self.transform([a, b])[0].tensors

model = torch.jit.script(Transform().eval())
args = (torch.rand(3, 32, 40), torch.rand(3, 28, 36))
""",
        "Needs torchvision: batch_images alone (max_by_axis, rounding to 32, copy_ into a zero "
        "batch) exports valid; the resize before it is part of it. '/Gather_4' reads "
        "'/ScatterElements_output_0' before the node that writes it.",
    ),
    Construct(
        "antialias-below-18",
        "antialiased resize with sizes known only at run time below opset 18",
        "not the exporter (opset)",
        r"interpolate\(antialias=True\) with spatial sizes known only at run time needs opset 18",
        """
import torch

class Resize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.interpolate(x, size=[24, 30], mode="bilinear", antialias=True)

model = Resize()
args = (torch.rand(1, 3, 32, 40),)
dynamic = {0: {2: "h", 3: "w"}}
other = (torch.rand(1, 3, 24, 48),)
""",
        "By design: Resize-18's antialias is needed when the input size is dynamic (the sweep "
        "exports at 17); with static sizes ours writes the resampling matrices. Torch's exporter has "
        "no antialiased resize at all.",
    ),
    Construct(
        "trace-bakes-values",
        "trace records a number computed from a tensor as a constant (`x.numel()`, `int(lengths.max())`)",
        "not the exporter (torch.jit.trace)",
        r"other input size: max \|diff\||cannot be reshaped to the requested shape",
        '''
import torch

class Mean(torch.nn.Module):
    """torchmetrics' tweedie deviance divides by preds.numel(): traced, the count is a constant."""
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum() / float(x.numel())

model = Mean()
args = (torch.rand(16),)
dynamic = {0: {0: "n"}}
other = (torch.rand(24),)
''',
        "torch's exporter fails the same way (tweedie_deviance mismatches on another length; "
        "Conformer's padding mask from `lengths.max()` reshapes wrongly). Scripted, both pass.",
        mode="trace",
    ),
    Construct(
        "trace-fails",
        "torch.jit.trace cannot run the library's code (`round()` of a traced size)",
        "not the exporter (torch.jit.trace)",
        r"TracingError: tracing the model failed",
        '''
import torch

class CenterCrop(torch.nn.Module):
    """torchvision's center_crop rounds (height - 20) / 2: under trace the size is a tensor."""
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        top = int(round((x.shape[-2] - 20) / 2.0))
        return x[..., top : top + 20, :]

model = CenterCrop()
args = (torch.rand(1, 3, 32, 40),)
''',
        "torch.jit.trace raises the same TypeError; the scripted transform passes.",
    ),
]
BY_KEY = {c.key: c for c in CONSTRUCTS}


# ------------------------------------------------------------------ grouping


def error_line(result: dict[str, Any]) -> str:
    """The error as one line: for unsupported operators, their names; for a symbolic's error, the op
    and what went wrong (the source location dropped); else the first line."""
    message = result.get("message") or result.get("error", "")
    lines = [line for line in message.splitlines() if line.strip()]
    if not lines:
        return result.get("status", "")
    if "UnsupportedOperatorError" in lines[0]:
        ops = re.findall(r"^\s+(\S+::\S+) \(x\d+\)", message, re.M)
        return f"UnsupportedOperatorError: {', '.join(ops)}"
    symbolic = re.match(r"(?:\S*\.)?SymbolicError: (\S+) at opset \d+ \(.*?\)\): (.*)", lines[0])
    if symbolic:
        return f"SymbolicError: {symbolic.group(1)}: {symbolic.group(2)}"
    line = re.sub(r"^(?:\w+\.)+(\w+(?:Error|Exception))", r"\1", lines[0])
    if line.rstrip().endswith(":") and len(lines) > 1:
        line += " " + lines[1].strip()
    return line[:400]


def classify(mode: str, result: dict[str, Any]) -> list[str]:
    """The keys of the constructs a failing run of ours matches (empty: unclassified)."""
    message = (result.get("message") or "") + "\n" + (result.get("error") or "")
    return [c.key for c in CONSTRUCTS if c.mode in (None, mode) and re.search(c.pattern, message)]


def failures(data: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(case, mode, result) of every failing run of ours that counts (builds excluded)."""
    rows = []
    for name, row in sorted(data.get("results", {}).items()):
        for key, result in sorted(row.items()):
            mode, exporter = key.split("/")
            if exporter == "ours" and result.get("status") not in ("pass", "build", None):
                rows.append((name, mode, result))
    return rows


def _cell(text: str) -> str:
    return sweep_runner.ANSI.sub("", text).replace("|", "\\|").replace("\n", " ")


def _runs_table(rows: list[tuple[str, str, dict[str, Any]]]) -> list[str]:
    lines = ["| case | mode | status | first error (ours) |", "|---|---|---|---|"]
    for name, mode, result in rows:
        lines.append(f"| {name} | {mode} | {result['status']} | {_cell(error_line(result))[:300]} |")
    return lines if rows else lines + ["| (none in the last run) | | | |"]


def report(data: dict[str, Any], cases: dict[str, Any]) -> str:
    """FAILURES.md: a table of the constructs, then each group with its failing runs and its reproduction."""
    rows = failures(data)
    groups: dict[str, list[tuple[str, str, dict[str, Any]]]] = {c.key: [] for c in CONSTRUCTS}
    unclassified = []
    for name, mode, result in rows:
        keys = classify(mode, result)
        for key in keys:
            groups[key].append((name, mode, result))
        if not keys:
            unclassified.append((name, mode, result))
    commits = sorted({r.get("commit", "?") for _, _, r in rows})
    repros = data.get("repros", {})
    lines = [
        "# Library sweep: our failures by construct",
        "",
        "Generated by `python bench/library_sweep.py` from `results.json` (do not edit). "
        f"{len(rows)} failing runs of ours (case x mode; ours measured at {', '.join(commits) or '-'}), "
        "grouped by the construct behind them; a run matching several constructs is listed under each. "
        "Owners: the #26 helpers (`specialize`, `validity`, `views`), `ops` where none owns it, "
        "`not the exporter` where torch's exporter fails alike. Each group has a reproduction; "
        "`python bench/library_sweep.py --repros` reruns them with ours "
        f"(last run: {repros.get('_meta', {}).get('date', 'never')}, commit {repros.get('_meta', {}).get('commit', '-')}).",
        "",
        "| construct | owner | failing runs | reproduction with ours |",
        "|---|---|---|---|",
    ]
    for c in CONSTRUCTS:
        repro = repros.get(c.key, {})
        state = f"{repro['status']}" if repro else "not run"
        lines.append(f"| [{_cell(c.title)}](#{c.key}) | {c.owner} | {len(groups[c.key])} | {state} |")
    if unclassified:
        lines.append(f"| [unclassified](#unclassified) | - | {len(unclassified)} | - |")
    for c in CONSTRUCTS:
        repro = repros.get(c.key, {})
        lines += ["", f'<a id="{c.key}"></a>', f"## {c.title}", "", f"Owner: **{c.owner}**."]
        if c.note:
            lines += ["", c.note]
        lines += [""] + _runs_table(groups[c.key])
        lines += ["", "Reproduction:", "", "```python", c.repro.strip(), "```", ""]
        if repro:
            lines.append(f"With ours: **{repro['status']}**: {_cell(error_line(repro))[:400]}")
        else:
            lines.append("With ours: not run yet (`--repros`).")
    if unclassified:
        lines += ["", '<a id="unclassified"></a>', "## Unclassified", ""] + _runs_table(unclassified)
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ reproductions


def run_repros(timeout: float) -> dict[str, Any]:
    """Every reproduction with ours, each in its own subprocess: {key: result} plus ``_meta``."""
    import datetime

    results: dict[str, Any] = {
        "_meta": {
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": sweep_runner.commit(),
        }
    }
    for c in CONSTRUCTS:
        res = sweep_runner.run_worker(__file__, [c.key], timeout)
        res.pop("traceback", None)
        results[c.key] = res
        print(f"{c.key:34s} {res['status']:8s} {error_line(res)[:120]}", flush=True)
    return results


def worker(key: str) -> dict[str, Any]:
    """Load one reproduction as a module (TorchScript needs its source in a file) and export it
    with ours as the sweep does."""
    import warnings

    import torch

    warnings.filterwarnings("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"repro_{key.replace('-', '_')}.py"
        path.write_text(BY_KEY[key].repro)
        try:
            sweep_runner.phase("build")
            spec = importlib.util.spec_from_file_location(path.stem, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
            model, args = module.model, module.args
            other = getattr(module, "other", None)
            dynamic = getattr(module, "dynamic", None)
            with torch.no_grad():
                ref = sweep_runner.flat_tensors(model(*args))
                ref_other = sweep_runner.flat_tensors(model(*other)) if other is not None else []
        except Exception as exc:  # noqa: BLE001 - reported
            return {"status": "build", "error": sweep_runner.first_line(exc)}
        options: dict[str, Any] = {"opset_version": OPSET, "input_names": [f"in{k}" for k in range(len(args))]}
        if dynamic:
            options["dynamic_axes"] = {f"in{k}": axes for k, axes in dynamic.items()}
        runs = [("example", args, ref)] + ([("other input size", other, ref_other)] if other is not None else [])
        return sweep_runner.export_and_compare("ours", model, args, runs, options)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        print(sweep_runner.MARK + json.dumps(worker(sys.argv[2])), flush=True)
    else:
        sys.exit(__doc__)
