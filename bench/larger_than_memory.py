"""Export a model whose weights exceed the machine's RAM, from a memory-mapped checkpoint.

The model is built on the meta device (no memory), its weights come from a checkpoint opened
memory-mapped (``safetensors.torch.load_file`` on each of its 4 GiB shards, or
``torch.load(..., mmap=True)``) and are assigned in place (``load_state_dict(..., assign=True)``): parameters are views of the file,
paged in from disk as they are read and dropped by the kernel under pressure, not anonymous
memory. The export then has to materialise nothing of its own: a meta trace reads no weight,
and the writer streams each weight from the mapping to the output file (transposed weights
and folded Conv weights a few MiB at a time).

  python bench/larger_than_memory.py                 # RAM + 1.5 GiB of weights, or what the disk allows
  python bench/larger_than_memory.py --gib 4         # another size
  python bench/larger_than_memory.py --no-torch      # skip torch's exporter

Every export runs in a subprocess of its own, inside a memory limit: an address-space limit
(RLIMIT_AS) of the checkpoint's size (its mapping) plus ``--headroom-gib``, so an export that
materialises weights fails with a MemoryError in its own process instead of drawing the
kernel's OOM killer onto other processes of the machine (its oom_score_adj is also 1000: the
first candidate should the kernel have to choose). Reported per exporter: wall time, the peak
of anonymous memory (RssAnon, sampled every 2 ms) over what the process held before the
export, the file written; the write floor: the time to write as many bytes with plain
``open().write`` calls from one reused buffer; and the copy floor: the time to read the
checkpoint and write its bytes (an export of a model the page cache cannot hold reads every
weight from disk as it writes it). The disk needs the checkpoint plus the output
(twice the weights) plus a margin; the size shrinks to fit, and the results say so. Every big
file is deleted at the end, also after a failure.

The synthetic model (:class:`Synthetic`): Linear(width, width) layers applied to a 3-d input
(their weights are written transposed), a deep copy of the first (written once: deduplicated),
a Conv+BatchNorm stem (folded at write time) and a buffer. tests/behaviour/test_larger_than_memory.py
runs the worker below on a 1 GiB model and bounds the anonymous memory it adds.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import platform
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"

# The stem's shapes: a Conv weight of 5.3 MB, larger than the writer's 4 MiB chunks.
STEM_IN, STEM_OUT, STEM_KERNEL = 64, 256, 9
IMAGE_SIZE = 12
TOKENS = 4


class Synthetic(torch.nn.Module):
    """``layers`` Linear(width, width) on (1, TOKENS, width) tokens and the first layer's twin,
    a Conv+BatchNorm stem on a (1, 64, 12, 12) image, and a (64, width) buffer added to the
    tokens."""

    def __init__(self, width: int, layers: int) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(layers))
        self.twin = copy.deepcopy(self.layers[0])
        self.stem = torch.nn.Conv2d(STEM_IN, STEM_OUT, STEM_KERNEL)
        self.norm = torch.nn.BatchNorm2d(STEM_OUT)
        self.register_buffer("offsets", torch.randn(64, width) * 0.01)

    def forward(self, tokens: torch.Tensor, image: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = tokens + self.offsets[:1]
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.twin(x), self.norm(self.stem(image))


def example_inputs(width: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    tokens = torch.randn(1, TOKENS, width, generator=generator)
    return tokens, torch.randn(1, STEM_IN, IMAGE_SIZE, IMAGE_SIZE, generator=generator)


def layers_for(gib: float, width: int) -> int:
    """Linear layers for about ``gib`` GiB of float32 weights at ``width``."""
    return max(1, round(gib * 2**30 / (width * width * 4)))


def _values(name: str, shape: tuple[int, ...], generator: torch.Generator) -> torch.Tensor:
    """What a trained model could hold: weights at their initial scale, batch-norm statistics
    in their ranges (a variance must be positive)."""
    if name.endswith("num_batches_tracked"):
        return torch.zeros(shape, dtype=torch.int64)
    if name.endswith("running_var"):
        return torch.rand(shape, generator=generator) * 1.5 + 0.5
    fan_in = math.prod(shape[1:]) if len(shape) > 1 else max(1, math.prod(shape))
    return (torch.rand(shape, generator=generator) * 2 - 1) / fan_in**0.5


def _seed(name: str) -> int:
    """One seed per weight (a hash of its name: a sum of its characters gave layers 12 and 21
    one seed, equal weights that deduplication wrote once); the twin takes layer 0's, so it
    holds equal values."""
    return zlib.crc32(name.replace("twin.", "layers.0.").encode())


# Checkpoint files are written in shards of at most this size, as Hugging Face writes them (5 GB):
# under the kernel's default overcommit heuristic (vm.overcommit_memory=0) one private mapping
# larger than RAM + swap is refused ("unable to mmap ... Cannot allocate memory"), whatever is
# free, while any number of smaller ones map.
SHARD_BYTES = 4 * 2**30


def shard_paths(path: Path) -> list[Path]:
    """The checkpoint's files: ``path`` itself, or its shards ``<stem>-00001<suffix>``, ..."""
    return [path] if path.exists() else sorted(path.parent.glob(f"{path.stem}-[0-9]*{path.suffix}"))


def write_safetensors(path: Path, width: int, layers: int, shard_bytes: int = SHARD_BYTES) -> int:
    """Write the checkpoint in the safetensors format, in shards of at most ``shard_bytes`` (one
    file at ``path`` when it fits in one), a few MiB at a time: never the whole model in memory.
    Returns the bytes written."""
    with torch.device("meta"):
        shapes = {name: (tuple(t.shape), t.dtype) for name, t in Synthetic(width, layers).state_dict().items()}
    shards: list[dict[str, tuple[tuple[int, ...], torch.dtype]]] = [{}]
    size = 0
    for name, (shape, dtype) in shapes.items():
        nbytes = math.prod(shape) * dtype.itemsize
        if shards[-1] and size + nbytes > shard_bytes:
            shards.append({})
            size = 0
        shards[-1][name] = (shape, dtype)
        size += nbytes
    if len(shards) == 1:
        return _write_safetensors_file(path, shards[0])
    return sum(
        _write_safetensors_file(path.with_name(f"{path.stem}-{index:05d}{path.suffix}"), shard)
        for index, shard in enumerate(shards, 1)
    )


def _write_safetensors_file(path: Path, shapes: dict[str, tuple[tuple[int, ...], torch.dtype]]) -> int:
    """One safetensors file: a header of JSON, then each tensor's bytes."""
    codes = {torch.float32: "F32", torch.int64: "I64"}
    header: dict[str, Any] = {}
    offset = 0
    for name, (shape, dtype) in shapes.items():
        size = math.prod(shape) * dtype.itemsize
        header[name] = {"dtype": codes[dtype], "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as stream:
        stream.write(struct.pack("<Q", len(text)))
        stream.write(text)
        for name, (shape, _) in shapes.items():
            for chunk in _chunks(name, shape):
                stream.write(chunk.numpy().data)
    return path.stat().st_size


# Random values drawn once; each weight is an affine map of a window of them (its own scale,
# shift and window): tens of GiB are made at memory speed, and no two weights are equal (which
# would deduplicate them) except the twin, which takes layer 0's.
_BLOCK_ELEMENTS = 16 * 2**20
_BLOCK: list[torch.Tensor] = []


def _chunks(name: str, shape: tuple[int, ...]) -> Iterator[torch.Tensor]:
    """The values of one weight, rows at a time (64 MiB at most)."""
    generator = torch.Generator().manual_seed(_seed(name))
    if len(shape) < 2:
        yield _values(name, shape, generator)
        return
    if not _BLOCK:
        _BLOCK.append(torch.rand(_BLOCK_ELEMENTS, generator=torch.Generator().manual_seed(0)) * 2 - 1)
    scale, shift = (torch.rand(2, generator=generator) * torch.tensor([1.0, 0.01])).tolist()
    scale = (0.5 + scale) / math.prod(shape[1:]) ** 0.5
    row = math.prod(shape[1:])
    step = max(1, _BLOCK_ELEMENTS // row)
    for start in range(0, shape[0], step):
        count = min(step, shape[0] - start)
        window = int(torch.randint(0, _BLOCK_ELEMENTS - count * row + 1, (1,), generator=generator))
        yield (_BLOCK[0][window : window + count * row] * scale + shift).view(count, *shape[1:])


def write_torch_checkpoint(path: Path, width: int, layers: int) -> int:
    """The same weights with torch.save (built in memory: for sizes that fit in it)."""
    with torch.device("meta"):
        shapes = {name: tuple(t.shape) for name, t in Synthetic(width, layers).state_dict().items()}
    state = {}
    for name, shape in shapes.items():
        chunks = list(_chunks(name, shape))
        state[name] = chunks[0] if len(chunks) == 1 else torch.cat(chunks)
    torch.save(state, path)
    return path.stat().st_size


def load_mapped(path: Path, width: int, layers: int) -> Synthetic:
    """The model built on the meta device, its weights the checkpoint's memory-mapped tensors."""
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        state = {}
        for shard in shard_paths(path):
            state.update(load_file(str(shard)))
    else:
        state = torch.load(path, mmap=True, weights_only=True)
    with torch.device("meta"):
        model = Synthetic(width, layers)
    model.load_state_dict(state, assign=True)
    return model.eval()


def anonymous_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    raise RuntimeError("no RssAnon in /proc/self/status")


class AnonymousPeak:
    """The peak of this process's anonymous memory (RssAnon), sampled every 2 ms in a thread."""

    def __init__(self) -> None:
        self.start = self.peak = anonymous_kib()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, anonymous_kib())

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        end = anonymous_kib()
        self.peak = max(self.peak, end)
        return {"anon_before_mib": self.start / 1024, "anon_peak_added_mib": (self.peak - self.start) / 1024,
                "anon_after_added_mib": (end - self.start) / 1024}  # fmt: skip


def _warm_up(exporter_name: str, workdir: Path) -> None:
    """The same paths on a small model first, so that first-use imports and caches (torch's
    meta kernels, onnx_ir's passes) are not counted as the export's memory."""
    model = Synthetic(256, 2).eval()
    out = workdir / "warm-up.onnx"
    _export(exporter_name, model, example_inputs(256), out, external_data=True)
    for path in workdir.glob("warm-up.onnx*"):
        path.unlink()


def _export(name: str, model: torch.nn.Module, args: tuple[Any, ...], out: Path, external_data: bool | None) -> Any:
    if name == "ours":
        import exporter

        return exporter.export(model, args, out, opset_version=18, external_data=external_data, report=True)
    import warnings

    warnings.simplefilter("ignore")
    return torch.onnx.export(model, args, str(out), dynamo=False, opset_version=18)  # noqa: TID251


def worker(
    exporter_name: str, checkpoint: Path, out: Path, width: int, layers: int, external_data: bool | None
) -> dict:
    """In a subprocess: load the mapped model, export it, report time and anonymous memory."""
    _warm_up(exporter_name, out.parent)
    model = load_mapped(checkpoint, width, layers)
    args = example_inputs(width)
    peak = AnonymousPeak()
    start = time.perf_counter()
    result: dict[str, Any] = {"exporter": exporter_name}
    try:
        report = _export(exporter_name, model, args, out, external_data)
    except (MemoryError, RuntimeError) as error:  # what a limited process raises when it runs out
        result.update(error=f"{type(error).__name__}: {str(error).splitlines()[0][:300]}")
    else:
        if exporter_name == "ours":
            result.update(capture=report.capture, phases={k: round(v, 3) for k, v in report.phase_seconds.items()})
    result["seconds"] = time.perf_counter() - start
    result.update(peak.stop())
    result["written_bytes"] = sum(p.stat().st_size for p in out.parent.glob(out.name + "*"))
    return result


def _limit(address_space: int) -> None:
    """In the child before exec: the address-space limit, and first in line for the OOM killer."""
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    with open("/proc/self/oom_score_adj", "w") as score:
        score.write("1000")


def run_limited(arguments: list[str], address_space: int, timeout: float) -> dict:
    """Run this script's worker in a subprocess inside the memory limit; its JSON result."""
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", *arguments]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, preexec_fn=lambda: _limit(address_space)
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"error": f"exit {done.returncode} after {time.perf_counter() - started:.0f} s: {tail[:300]}"}
    return json.loads(lines[-1])


def write_floor(directory: Path, size: int) -> float:
    """Seconds to write ``size`` bytes with open().write from one reused 64 MiB buffer (the
    bytes cannot all be in memory), into a fresh file, deleted after."""
    block = torch.randint(0, 256, (64 * 2**20,), dtype=torch.uint8).numpy().tobytes()
    path = directory / "floor.bin"
    start = time.perf_counter()
    with open(path, "wb") as stream:
        left = size
        while left > 0:
            stream.write(block[: min(left, len(block))])
            left -= len(block)
    seconds = time.perf_counter() - start
    path.unlink()
    return seconds


def copy_floor(files: list[Path], directory: Path) -> float:
    """Seconds to read ``files`` and write their bytes into one fresh file (deleted after) in
    64 MiB reads: the floor of an export from a checkpoint the page cache cannot hold, which
    reads every weight from disk as it writes it."""
    path = directory / "copy.bin"
    start = time.perf_counter()
    with open(path, "wb") as target:
        for file in files:
            with open(file, "rb") as source:
                shutil.copyfileobj(source, target, 64 * 2**20)
    seconds = time.perf_counter() - start
    path.unlink()
    return seconds


def _meminfo(key: str) -> int:
    with open("/proc/meminfo") as info:
        for line in info:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {key} in /proc/meminfo")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gib", type=float, default=None, help="weights in GiB (default: RAM + 1.5)")
    parser.add_argument("--width", type=int, default=8192)
    parser.add_argument("--dir", type=Path, default=None, help="where the big files go (default: a temp dir)")
    parser.add_argument("--headroom-gib", type=float, default=6.0, help="address space beyond the mapping")
    parser.add_argument("--disk-margin-gib", type=float, default=10.0, help="disk left free for others")
    parser.add_argument("--no-torch", action="store_true", help="skip torch's exporter")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--out", type=Path, default=RESULTS / "larger_than_memory.json")
    parser.add_argument("--worker", nargs=6, metavar=("EXPORTER", "CKPT", "OUT", "WIDTH", "LAYERS", "EXTERNAL"))
    options = parser.parse_args()
    if options.worker:
        name, checkpoint, out, width, layers, external = options.worker
        data = {"auto": None, "true": True, "false": False}[external]
        print(json.dumps(worker(name, Path(checkpoint), Path(out), int(width), int(layers), data)))
        return

    ram = _meminfo("MemTotal")
    wanted = options.gib if options.gib is not None else ram / 2**30 + 1.5
    workdir = Path(tempfile.mkdtemp(prefix="larger-than-memory-", dir=options.dir))
    free = shutil.disk_usage(workdir).free
    fits = (free - options.disk_margin_gib * 2**30) / 2 / 2**30
    gib = min(wanted, fits)
    note = "" if gib >= wanted else f"shrunk from {wanted:.1f} GiB to what the disk holds ({free / 2**30:.0f} GiB free)"
    layers = layers_for(gib, options.width)
    print(f"{layers} layers of {options.width}x{options.width} float32: {gib:.1f} GiB; RAM {ram / 2**30:.1f} GiB")
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": {"ram_bytes": ram, "nproc": os.cpu_count(), "platform": platform.platform()},
        "torch_version": torch.__version__,
        "width": options.width,
        "layers": layers,
        "note": note,
    }
    try:
        checkpoint = workdir / "model.safetensors"
        start = time.perf_counter()
        results["checkpoint_bytes"] = size = write_safetensors(checkpoint, options.width, layers)
        results["checkpoint_seconds"] = time.perf_counter() - start
        results["checkpoint_files"] = len(shard_paths(checkpoint))
        print(
            f"checkpoint {size / 2**30:.2f} GiB in {results['checkpoint_files']} files, {results['checkpoint_seconds']:.0f} s"
        )
        address_space = size + int(options.headroom_gib * 2**30)
        results["address_space_limit_bytes"] = address_space
        common = [str(checkpoint), str(workdir / "model.onnx"), str(options.width), str(layers), "auto"]
        results["ours"] = run_limited(["ours", *common], address_space, options.timeout)
        print("ours", results["ours"])
        for path in workdir.glob("model.onnx*"):
            path.unlink()
        results["floor_seconds"] = write_floor(workdir, results["ours"].get("written_bytes") or size)
        results["copy_floor_seconds"] = copy_floor(shard_paths(checkpoint), workdir)
        print(f"floor {results['floor_seconds']:.1f} s, copy floor {results['copy_floor_seconds']:.1f} s")
        if not options.no_torch:
            results["torch"] = run_limited(["torch", *common], address_space, options.timeout)
            print("torch", results["torch"])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {options.out}")


if __name__ == "__main__":
    main()
