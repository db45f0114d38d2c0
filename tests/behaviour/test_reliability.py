"""Reliability: random op chains, failures that leave no trace, unchanged models, big files.

The property test runs a bounded number of examples in CI; for a long run:
    HYPOTHESIS_PROFILE=long bash scripts/test.sh tests/behaviour/test_reliability.py
"""

from __future__ import annotations

import io
import os

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest
import torch
from conftest import NEWEST, Wrap, run_model

import exporter

hypothesis.settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True)
hypothesis.settings.register_profile("long", max_examples=3000, deadline=None)
hypothesis.settings.register_profile("medium", max_examples=400, deadline=None)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

FLOATS = [torch.float32, torch.float64, torch.float16]  # plus int32/int64 and bool below
INTS = [torch.int32, torch.int64]

# Each step maps a tensor to a tensor; `kinds` says which dtypes it accepts.
STEPS = {
    "add_scalar": (lambda x: x + 2, "any"),
    "mul_self": (lambda x: x * x, "any"),
    "neg": (lambda x: -x, "signed"),
    "abs": (torch.abs, "signed"),
    "relu": (torch.relu, "float"),
    "sigmoid": (torch.sigmoid, "float"),
    "exp_clamped": (lambda x: torch.exp(x.clamp(-5, 5)), "float"),
    "sum_last": (lambda x: x.sum(-1, keepdim=True), "numeric"),
    "mean_first": (lambda x: x.mean(0, keepdim=True), "float"),
    "amax": (lambda x: x.amax(-1, keepdim=True), "numeric"),
    "transpose": (lambda x: x.transpose(0, -1), "any"),
    "flatten_view": (lambda x: x.reshape(-1).view(x.shape), "any"),
    "slice": (lambda x: x[..., : max(1, x.shape[-1] // 2)], "any"),
    "flip_cat": (lambda x: torch.cat([x, x.flip(-1)], -1), "any"),
    "gather_first": (lambda x: x.index_select(-1, torch.tensor([0])), "any"),
    "where_pos": (lambda x: torch.where(x > 0, x, torch.zeros_like(x)), "signed"),
    "matmul_t": (lambda x: x @ x.transpose(-1, -2) if x.dim() >= 2 else x * x, "float32"),
    "cumsum": (lambda x: x.cumsum(-1), "numeric"),
    "compare": (lambda x: (x > 1).to(x.dtype), "numeric"),
    "floordiv": (lambda x: x // 3, "int"),
    "softmax": (lambda x: torch.softmax(x, -1), "float"),
    "logical": (lambda x: (x & ~x.flip(-1)) | x, "bool"),
    "bool_sum": (lambda x: x.sum(-1), "bool"),
}


def _accepts(kind: str, dtype: torch.dtype) -> bool:
    if kind == "any":
        return True
    if kind == "float":
        return dtype.is_floating_point
    if kind == "float32":
        return dtype in (torch.float32, torch.float64)
    if kind == "int":
        return not dtype.is_floating_point and dtype != torch.bool
    if kind in ("numeric", "signed"):
        return dtype != torch.bool
    if kind == "bool":
        return dtype == torch.bool
    return False


@st.composite
def chains(draw):  # noqa: ANN001, ANN201
    dtype = draw(st.sampled_from(FLOATS + INTS + [torch.bool]))
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    names = [n for n, (_, kind) in STEPS.items() if _accepts(kind, dtype)]
    steps = draw(st.lists(st.sampled_from(names), min_size=1, max_size=4))
    opset = draw(st.sampled_from(list(range(9, NEWEST + 1))))
    return dtype, shape, steps, opset


def _input(dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(-5, 6, shape, dtype=dtype)


@hypothesis.given(chains())
def test_random_chains_match_torch_or_raise_documented_errors(chain) -> None:  # noqa: ANN001
    dtype, shape, steps, opset = chain
    functions = [STEPS[name][0] for name in steps]

    def fn(x: torch.Tensor) -> torch.Tensor:
        for f in functions:
            x = f(x)
        return x

    model = Wrap(fn)
    x = _input(dtype, shape)
    try:
        with torch.no_grad():
            expected = fn(x)
    except (RuntimeError, IndexError):
        hypothesis.reject()  # the chain is invalid in torch too (cat or slice of a 0-d tensor)
    buffer = io.BytesIO()
    try:
        exporter.export(model, (x,), buffer, opset_version=opset)
    except exporter.UnsupportedOperatorError as error:
        # The one refusal a chain of supported ops may meet: an op whose symbolic starts at a
        # later opset (the error names it). A SymbolicError is a symbolic failing on a model
        # torch runs, and fails the test like any other exception.
        assert all(op.supported_opsets for op in error.ops), str(error)
        hypothesis.event(f"refused: {', '.join(op.name for op in error.ops)}")
        return
    hypothesis.event("exported and compared")
    (got,) = run_model(buffer.getvalue(), [x])
    assert got.dtype == expected.numpy().dtype, (steps, opset)
    assert got.shape == tuple(expected.shape), (steps, opset)
    tolerance = 1e-2 if dtype == torch.float16 else 1e-4
    np.testing.assert_allclose(
        got.astype(np.float64), expected.double().numpy(), rtol=tolerance, atol=tolerance, err_msg=str((steps, opset))
    )


class Unsupported(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)
        self.calls = 0
        self.linear.register_forward_hook(self._hook)

    def _hook(self, module, args, output):  # noqa: ANN001, ANN202
        self.calls += 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.special.bessel_j0(self.linear(x))


def _snapshot(model: torch.nn.Module) -> tuple:  # type: ignore[type-arg]
    return (
        {k: v.clone() for k, v in model.state_dict().items()},
        {n: p.requires_grad for n, p in model.named_parameters()},
        [m.training for m in model.modules()],
        [len(m._forward_hooks) for m in model.modules()],
    )


def test_failed_export_leaves_model_and_file_object_untouched() -> None:
    model = Unsupported().train()
    model.linear.weight.requires_grad_(False)
    before = _snapshot(model)
    buffer = io.BytesIO(b"keep me")
    buffer.seek(0, io.SEEK_END)
    with pytest.raises(exporter.UnsupportedOperatorError):
        exporter.export(model, (torch.randn(2, 3),), buffer)
    assert not buffer.closed and buffer.getvalue() == b"keep me"
    after = _snapshot(model)
    assert before[1:] == after[1:]
    for key, value in before[0].items():
        assert torch.equal(value, after[0][key])


def test_unwritable_target_is_a_clear_error(tmp_path) -> None:
    missing_dir = tmp_path / "nope" / "m.onnx"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        exporter.export(torch.nn.ReLU(), (torch.randn(2),), missing_dir)
    with pytest.raises(IsADirectoryError):
        exporter.export(torch.nn.ReLU(), (torch.randn(2),), tmp_path)
    assert os.listdir(tmp_path) == []


def test_model_raising_in_forward_says_so() -> None:
    class Raises(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            raise RuntimeError("bad input shape")

    with pytest.raises(RuntimeError, match="bad input shape"):
        exporter.export(Raises(), (torch.randn(2),), io.BytesIO())


@pytest.mark.slow
def test_model_over_2gib_exports_with_external_data(tmp_path) -> None:
    """Writes ~2.1 GB (about 30 s here, so CI runs it); skipped where the disk is short."""
    import shutil

    if shutil.disk_usage(tmp_path).free < 8 * 1024**3:
        pytest.skip("needs 8 GB of free disk for the 2 GiB model and its copy")
    layers = [torch.nn.Linear(16384, 16384, bias=False) for _ in range(2)]  # 2 x 1 GiB
    model = torch.nn.Sequential(*layers, torch.nn.Linear(16384, 64)).eval()  # and a bit more
    path = tmp_path / "big.onnx"
    x = torch.randn(1, 16384)
    exporter.export(model, (x,), path)
    assert (tmp_path / "big.onnx.data").stat().st_size > 2 * 1024**3
    assert exporter.verify(model, (x,), str(path), rtol=1e-3, atol=1e-3).passed
