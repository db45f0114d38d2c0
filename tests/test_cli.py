"""The command line on a saved archive.

Most paths call ``exporter.__main__.main`` in this process (argument parsing, exit codes,
messages); one test starts ``python -m exporter`` for real, so the module entry point, stdout
and stderr of a fresh process are covered too. Each subprocess imports torch (2-3 s), which
is why the rest stay in-process.
"""

from __future__ import annotations

import os
import subprocess
import sys

import onnx
import pytest
import torch

from exporter.__main__ import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """main(args) in-process: (exit code, stdout, stderr); argparse's exits count as codes."""
    try:
        code = main(list(args))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


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
def archive(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("cli") / "net.pt")
    torch.jit.save(torch.jit.script(Net().eval()), path)
    return path


def test_subprocess_export_verify_report(archive: str, tmp_path) -> None:  # noqa: ANN001
    """The real entry point, in a fresh process: exit code, stdout, and a silent stderr."""
    out = str(tmp_path / "net.onnx")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "exporter",
            archive,
            "--input",
            "x:1x3x16x16:float32",
            "--dynamic",
            "x:0:batch",
            "--opset",
            "17",
            "-o",
            out,
            "--verify",
            "--report",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "wrote" in result.stdout and "verified" in result.stdout and "capture" in result.stdout
    model = onnx.load(out)
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert result.stderr == ""  # no progress output when not on a terminal


def test_dynamic_axis_and_opset(archive: str, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    out = str(tmp_path / "net.onnx")
    code, stdout, stderr = _run(
        capsys, archive, "--input", "x:2x3x8x8", "--dynamic", "x:0:batch", "--opset", "13", "-o", out
    )
    assert code == 0, stderr
    assert stdout.startswith(f"wrote {out}: opset 13")
    model = onnx.load(out)
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert [o.version for o in model.opset_import if o.domain == ""] == [13]


def test_default_output_name(archive: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = _run(capsys, archive, "--input", "x:1x3x8x8")
    assert code == 0, stderr
    assert os.path.exists(os.path.splitext(archive)[0] + ".onnx")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--input", "x:1xAx3"), "dims must look like"),
        (("--input", "x:1x3:complex7"), "unknown dtype 'complex7'"),
        (("--input", "x:1x3:int64:5"), "range must look like"),
        (("--input", ":1x3"), "expected NAME:DIMS"),
        (("--dynamic", "x:zero:batch"), "AXIS must be an integer"),
        (("--dynamic", "x:0"), "expected NAME:AXIS:DIM_NAME"),
        (("--opset", "seventeen"), "invalid int value"),
    ],
)
def test_usage_errors_exit_2(
    archive: str, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    code, stdout, stderr = _run(capsys, archive, *args)
    assert code == 2 and stdout == ""
    assert message in stderr and "usage:" in stderr


def test_no_archive_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = _run(capsys)
    assert code == 2 and "an archive is required" in stderr


def test_export_errors_exit_1_without_traceback(archive: str, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    code, _, stderr = _run(capsys, archive, "--input", "x:1x5x16x16", "-o", str(tmp_path / "bad.onnx"))
    assert code == 1
    assert "the model raised on the example inputs" in stderr
    assert stderr.startswith("error: ") and "Traceback" not in stderr
    assert not os.path.exists(tmp_path / "bad.onnx")


def test_debug_shows_the_exception(archive: str, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    with pytest.raises(Exception, match="the model raised on the example inputs"):
        main([archive, "--input", "x:1x5x16x16", "-o", str(tmp_path / "bad.onnx"), "--debug"])


def test_opset_out_of_range_exits_1(archive: str, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    code, _, stderr = _run(capsys, archive, "--input", "x:1x3x8x8", "--opset", "8", "-o", str(tmp_path / "o.onnx"))
    assert code == 1 and "opset" in stderr and "Traceback" not in stderr


def test_not_an_archive_is_refused_clearly(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    bogus = tmp_path / "weights.pt"
    torch.save({"w": torch.ones(2)}, bogus)
    code, _, stderr = _run(capsys, str(bogus), "--input", "x:2")
    assert code == 1
    assert "not a TorchScript archive" in stderr and "Traceback" not in stderr
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    code, _, stderr = _run(capsys, str(text), "--input", "x:2")
    assert code == 1 and "not a TorchScript archive" in stderr
    code, _, stderr = _run(capsys, str(tmp_path / "missing.pt"), "--input", "x:2")
    assert code == 1 and "no such file" in stderr


def test_help_says_what_loading_executes(capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, _ = _run(capsys, "--help")
    assert code == 0 and "Only export archives you trust" in " ".join(stdout.split())


def test_support_matrix(capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, _ = _run(capsys, "--support-matrix")
    assert code == 0
    assert "| `aten::add` | 9 |" in stdout
