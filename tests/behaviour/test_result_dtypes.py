"""Result dtypes as torch computes them: arithmetic whose dtype TorchScript's shape propagation
records wrongly in scripted graphs (``int_tensor / 3`` recorded as int64), in-place arithmetic
that torch computes in the promoted dtype and rounds once into the target
(``half.add_(float32)``), and ops whose ONNX counterpart takes or returns other dtypes than
torch's (relu of integers, reciprocal of integers, outer and binary_cross_entropy_with_logits
of mixed dtypes, log_softmax's dtype=, prelu's single weight)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from cases import lowering_opsets
from conftest import BASE_OPSETS, Wrap, assert_matches_torch, export_to_bytes, run_model, run_reference

OPSETS = lowering_opsets("aten::fmod", "aten::remainder", helpers=True)  # fmod lowers to Mod from 10


class _IntByNumbers(torch.nn.Module):
    """Integer tensors with Python numbers, constants and an int argument: all float results."""

    def __init__(self, scalar: float) -> None:
        super().__init__()
        self.scalar = scalar

    def forward(
        self, x: torch.Tensor, y: torch.Tensor, n: int
    ) -> tuple[
        torch.Tensor,
        torch.Tensor,
        torch.Tensor,
        torch.Tensor,
        torch.Tensor,
        torch.Tensor,
        torch.Tensor,
        torch.Tensor,
        torch.Tensor,
        torch.Tensor,
        torch.Tensor,
    ]:
        q = x / 3
        return (
            q,
            q + 1,  # a later node reads the corrected dtype
            torch.remainder(x, self.scalar),
            torch.fmod(x, self.scalar),
            x / y,
            torch.true_divide(x.transpose(0, 1), y.transpose(0, 1)),
            x / n,
            x % n,  # stays int64
            x**0.5,
            torch.atan2(x, y),
            x.div(y, rounding_mode="floor"),  # stays int64
        )


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("mode", ["trace", "script"])
def test_integer_arithmetic_with_float_results(mode: str, opset: int) -> None:
    module = _IntByNumbers(2.55)
    model = torch.jit.script(module) if mode == "script" else module
    x = torch.tensor([[7, 6, -7], [-6, 9, 1]])
    y = torch.tensor([[2, -4, 3], [5, 1, -2]])
    assert_matches_torch(model, (x, y, 4), opset=opset, other_inputs=[(x * 3, y, 5)])


class _InPlace(torch.nn.Module):
    def forward(
        self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        a = x.clone()
        a.add_(y)
        b = x.clone()
        b.mul_(y)
        c = x.clone()
        c.sub_(z, alpha=3)
        d = x.clone()
        d.div_(z)
        return a, b, c, d, x.add_(y)  # the last writes the input itself


@pytest.mark.parametrize("opset", BASE_OPSETS)
@pytest.mark.parametrize("mode", ["trace", "script"])
@torch.no_grad()
def test_half_in_place_arithmetic_rounds_once(mode: str, opset: int) -> None:
    """half.add_(float32): the result is half (scripted graphs record float32), computed in
    float32 and rounded once, bit for bit as torch; rounding y to half first differs in the
    last bit for about a third of these values. onnxruntime's CPU computes float16 ops in
    float32 and drops a Cast to float16 feeding one, which hides the double rounding, so the
    reference evaluator checks the graph too."""
    model = torch.jit.script(_InPlace()) if mode == "script" else _InPlace()
    x = torch.randn(64, dtype=torch.half)
    y = torch.randn(64) * 1.001
    z = torch.rand(64) + 0.5
    data, _ = export_to_bytes(model, (x.clone(), y, z), opset_version=opset)
    expected = model(x.clone(), y, z)
    for run in (run_model, run_reference):
        for got, want in zip(run(data, [x.clone(), y, z]), expected):
            assert got.dtype == want.numpy().dtype
            assert (got == want.numpy()).all(), f"{run.__name__}: {(got != want.numpy()).sum()} of 64 differ"


class _PropagationGuesses(torch.nn.Module):
    """Ops whose result dtype TorchScript's shape propagation records wrongly when scripted."""

    def forward(
        self, c: torch.Tensor, h: torch.Tensor, f: torch.Tensor, i: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        return (
            torch.cat([h, f]),  # recorded half
            h.sum(dtype=torch.float),  # recorded half
            torch.where(c, h, f),  # recorded half
            torch.reciprocal(i),  # recorded int64
            torch.log2(i + 1),  # recorded int64
            torch.cat([h, f]) * 2,  # a later node promotes from the corrected dtype
        )


@pytest.mark.parametrize("opset", BASE_OPSETS)
@pytest.mark.parametrize("mode", ["trace", "script"])
def test_dtypes_shape_propagation_guesses_wrongly(mode: str, opset: int) -> None:
    model = torch.jit.script(_PropagationGuesses()) if mode == "script" else _PropagationGuesses()
    args = (
        torch.tensor([True, False, True, False]),
        torch.randn(4, dtype=torch.half),
        torch.randn(4),
        torch.tensor([1, 2, 4, 8]),
    )
    assert_matches_torch(model, args, opset=opset, rtol=1e-3, atol=1e-3)


def test_dtype_corrections_leave_the_walked_graph_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """The emitter keeps the dtypes it corrects in its own table: the TorchScript graph it
    walks reads the same after emission as before (DESIGN: the emitter never mutates it)."""
    import exporter.assemble

    seen: list[tuple[str, str]] = []
    emit = exporter.assemble.emit_graph

    def recording(ts_graph: torch._C.Graph, *args: object, **kwargs: object) -> object:
        before = str(ts_graph)
        result = emit(ts_graph, *args, **kwargs)
        seen.append((before, str(ts_graph)))
        return result

    monkeypatch.setattr(exporter.assemble, "emit_graph", recording)
    args = (
        torch.tensor([True, False, True, False]),
        torch.randn(4, dtype=torch.half),
        torch.randn(4),
        torch.tensor([1, 2, 4, 8]),
    )
    assert_matches_torch(torch.jit.script(_PropagationGuesses()), args, opset=17, rtol=1e-3, atol=1e-3)
    assert seen and "Half" in seen[0][0]
    assert all(before == after for before, after in seen)


class _NumberArithmetic(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: float, n: int) -> torch.Tensor:
        x = x * (y * 3)  # a Python float: double, not the default float dtype
        x = x / (y * 4 - n)
        return x + (n * 2 + 1)  # a Python int: int64


@pytest.mark.parametrize("opset", BASE_OPSETS)
def test_scripted_arithmetic_on_python_numbers(opset: int) -> None:
    model = torch.jit.script(_NumberArithmetic())
    assert_matches_torch(model, (torch.randn(2, 3), 2.5, 3), opset=opset, other_inputs=[(torch.randn(2, 3), 0.1, 7)])


@pytest.mark.parametrize("opset", lowering_opsets("aten::relu", helpers=True))
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8])
def test_relu_keeps_integer_dtype(opset: int, dtype: torch.dtype) -> None:
    x = torch.tensor([-3, 0, 5], dtype=torch.int64).clamp(min=0 if dtype == torch.uint8 else -3).to(dtype)
    assert_matches_torch(Wrap(torch.relu), (x,), opset=opset)


@pytest.mark.parametrize("opset", lowering_opsets("aten::reciprocal", helpers=True))
@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8])
def test_reciprocal_of_integers_is_float(opset: int, dtype: torch.dtype) -> None:
    assert_matches_torch(Wrap(torch.reciprocal), (torch.tensor([2, 4, 0], dtype=dtype),), opset=opset)


@pytest.mark.parametrize("opset", lowering_opsets("aten::outer", helpers=True))
def test_outer_float_and_int64(opset: int) -> None:
    a, b = torch.randn(3), torch.arange(4)
    assert_matches_torch(Wrap(torch.outer), (a, b), opset=opset)
    assert_matches_torch(Wrap(torch.outer), (b, a), opset=opset)


@pytest.mark.parametrize("opset", lowering_opsets("aten::binary_cross_entropy_with_logits", helpers=True))
def test_bce_with_logits_int64_weights(opset: int) -> None:
    def loss(x: torch.Tensor, t: torch.Tensor, w: torch.Tensor, pw: torch.Tensor) -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw)

    args = (torch.randn(3), torch.rand(3), torch.tensor([1, 2, 3]), torch.tensor([2, 1, 1]))
    assert_matches_torch(Wrap(loss), args, opset=opset)


@pytest.mark.parametrize("opset", lowering_opsets("aten::log_softmax", helpers=True))
@pytest.mark.parametrize("dtype", [torch.float16, torch.float64])
def test_log_softmax_dtype(opset: int, dtype: torch.dtype) -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        return F.log_softmax(x, 1, dtype=dtype)

    assert_matches_torch(Wrap(fn), (torch.randn(2, 5),), opset=opset, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("opset", lowering_opsets("aten::prelu", helpers=True))
@pytest.mark.parametrize("weight", [torch.tensor(0.25), torch.tensor([0.25])])
def test_prelu_single_weight(opset: int, weight: torch.Tensor) -> None:
    for x in (torch.randn(3), torch.randn(2, 3, 4, 5)):
        assert_matches_torch(Wrap(F.prelu), (x, weight), opset=opset)
