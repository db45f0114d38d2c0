"""The command line, run as a subprocess on a saved archive."""

from __future__ import annotations

import os
import subprocess
import sys

import onnx
import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "exporter", *args], capture_output=True, text=True, env=env, timeout=300)


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv(x))
        if y.mean() > 0.1:
            y = y * 2
        return y.mean(dim=(2, 3))


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("cli") / "net.pt")
    torch.jit.save(torch.jit.script(Net().eval()), path)
    return path


def test_export_verify_report(archive: str, tmp_path) -> None:
    out = str(tmp_path / "net.onnx")
    result = _run(archive, "--input", "x:1x3x16x16:float32", "--dynamic", "x:0:batch", "--opset", "17",
                  "-o", out, "--verify", "--report")
    assert result.returncode == 0, result.stderr
    assert "wrote" in result.stdout and "verified" in result.stdout and "capture" in result.stdout
    model = onnx.load(out)
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert result.stderr == ""  # no progress output when not on a terminal


def test_default_output_name(archive: str) -> None:
    result = _run(archive, "--input", "x:1x3x8x8")
    assert result.returncode == 0, result.stderr
    assert os.path.exists(os.path.splitext(archive)[0] + ".onnx")


def test_usage_errors_exit_2(archive: str) -> None:
    assert _run(archive, "--input", "x:1xAx3").returncode == 2
    assert _run(archive, "--input", "x:1x3:complex7").returncode == 2
    assert _run(archive, "--dynamic", "x:zero:batch").returncode == 2
    assert _run().returncode == 2


def test_export_errors_exit_1_without_traceback(archive: str, tmp_path) -> None:
    result = _run(archive, "--input", "x:1x5x16x16", "-o", str(tmp_path / "bad.onnx"))
    assert result.returncode == 1
    assert "the model raised on the example inputs" in result.stderr
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert not os.path.exists(tmp_path / "bad.onnx")


def test_not_an_archive_is_refused_clearly(tmp_path) -> None:
    bogus = tmp_path / "weights.pt"
    torch.save({"w": torch.ones(2)}, bogus)
    result = _run(str(bogus), "--input", "x:2")
    assert result.returncode == 1
    assert "not a TorchScript archive" in result.stderr and "Traceback" not in result.stderr
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    result = _run(str(text), "--input", "x:2")
    assert result.returncode == 1 and "not a TorchScript archive" in result.stderr


def test_help_says_what_loading_executes() -> None:
    result = _run("--help")
    assert result.returncode == 0 and "Only export archives you trust" in " ".join(result.stdout.split())


def test_support_matrix() -> None:
    result = _run("--support-matrix")
    assert result.returncode == 0
    assert "| `aten::add` | 9 |" in result.stdout
