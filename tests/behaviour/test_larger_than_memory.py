"""Models whose weights need not fit in memory: a module built on the meta device, its weights
memory-mapped from a checkpoint (``torch.load(..., mmap=True)`` or ``safetensors.torch.load_file``)
and assigned (``load_state_dict(..., assign=True)``), exports without copying them into memory:
the anonymous memory the export adds stays at a few MiB (the writer's staging buffers) for a
1 GiB model whose weights are written transposed, deduplicated and folded (Conv+BN).

The model, the checkpoint writers and the measuring worker are bench/larger_than_memory.py's,
which exports a model larger than the machine's RAM the same way.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from conftest import assert_file_matches_torch

import exporter

BENCH = pathlib.Path(__file__).resolve().parent.parent.parent / "bench"
sys.path.insert(0, str(BENCH))
import larger_than_memory as ltm  # noqa: E402 - bench/ is not a package

# 16 layers of 4096 x 4096 float32 (64 MiB each), their first one's twin, the stem and buffer:
# 1.07 GiB of weights
WIDTH, LAYERS = 4096, 16
# what the export may add to the process's anonymous memory: the writer's staging buffers are
# three 4 MiB blocks (measured: 12.8 MiB in all)
ANONYMOUS_BOUND_MIB = 32


def _checkpoint(path: pathlib.Path, width: int, layers: int) -> None:
    """A large one is written in a subprocess: the torch.save one builds the weights in memory."""
    if path.suffix == ".safetensors":
        pytest.importorskip("safetensors")
    write = ltm.write_safetensors if path.suffix == ".safetensors" else ltm.write_torch_checkpoint
    if width * width * layers * 4 < 2**26:
        write(path, width, layers)
        return
    code = (
        f"import sys, pathlib; sys.path.insert(0, {str(BENCH)!r}); import larger_than_memory as ltm\n"
        f"ltm.{write.__name__}(pathlib.Path({str(path)!r}), {width}, {layers})\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def _export_measured(checkpoint: pathlib.Path, out: pathlib.Path, width: int, layers: int, external: str) -> dict:
    """bench/larger_than_memory.py's worker in a fresh interpreter: a warm-up export, then the
    mapped model's, with its anonymous memory sampled every 2 ms."""
    command = [sys.executable, str(BENCH / "larger_than_memory.py"), "--worker", "ours"]
    command += [str(checkpoint), str(out), str(width), str(layers), external]
    # the worker imports the exporter these tests import, whatever the interpreter's install holds
    package_root = str(pathlib.Path(exporter.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise AssertionError(f"the export worker failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize(("name", "external"), [("model.pt", "auto"), ("model.safetensors", "true")])
def test_a_memory_mapped_model_of_1_gib_exports_within_a_few_mib_of_anonymous_memory(
    tmp_path: pathlib.Path, name: str, external: str
) -> None:
    """About 30 s here: the checkpoint is written first (checkpoint and output: 2.2 GB of disk)."""
    if shutil.disk_usage(tmp_path).free < 3 * 2**30:
        pytest.skip("needs 3 GiB of free disk: the checkpoint and the exported model")
    checkpoint, out = tmp_path / name, tmp_path / "model.onnx"
    try:
        _checkpoint(checkpoint, WIDTH, LAYERS)
        result = _export_measured(checkpoint, out, WIDTH, LAYERS, external)
        assert result["capture"] == "meta trace", result
        assert result["anon_peak_added_mib"] < ANONYMOUS_BOUND_MIB, result
        model = ltm.load_mapped(checkpoint, WIDTH, LAYERS)
        weights = sum(t.nbytes for t in model.state_dict().values())
        assert weights > 2**30
        # every weight written once, the twin deduplicated
        twin = sum(t.nbytes for key, t in model.state_dict().items() if key.startswith("twin."))
        assert weights - twin <= result["written_bytes"] < weights - twin + 2**20, result
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            [name, "model.onnx"] + (["model.onnx.data"] if external == "true" else [])
        )
        assert_file_matches_torch(out, model, [ltm.example_inputs(WIDTH)])
    finally:
        # pytest keeps the last runs' directories: 2.2 GB each, not to be left behind
        for path in tmp_path.iterdir():
            path.unlink()


@pytest.mark.parametrize(("name", "external"), [("model.pt", "auto"), ("model.safetensors", "true")])
def test_a_model_built_on_meta_with_mapped_weights_matches_torch(
    tmp_path: pathlib.Path, name: str, external: str
) -> None:
    """The same paths on a small model (3 MiB): meta construction, mapped weights, the folded,
    transposed and deduplicated weights written from the mapping."""
    checkpoint, out = tmp_path / name, tmp_path / "model.onnx"
    _checkpoint(checkpoint, 256, 3)
    result = _export_measured(checkpoint, out, 256, 3, external)
    assert result["capture"] == "meta trace", result
    model = ltm.load_mapped(checkpoint, 256, 3)
    assert_file_matches_torch(out, model, [ltm.example_inputs(256)])
