"""Python numbers in scripted code: int and float arithmetic mixed with tensors and sizes
(``//``, ``%``, ``**``, integer tricks), numbers read from tensors with int()/float()/.item()
inside loops, float accumulators, a Python float times a float32 tensor (float32 stays), and
``pow`` of numbers.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from cases import lowering_opsets
from conftest import (
    FEATURE_OPSETS,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    dynamic_inputs,
)


class SizeMath(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        n = x.size(0)
        d = x.size(1)
        half = math.ceil(n / 2)
        low = math.floor(n / 3)
        scale = 1.0 / math.sqrt(d)
        keep = max(1, min(int(n * 0.75), n - 1))
        pad = (4 - n % 4) % 4
        y = F.pad(x, [0, 0, 0, pad]) * scale
        y = y.view(-1, 4, d).sum(1)
        return y, x[:half] + x[low : low + half].mean(), torch.tensor([half, low, keep, abs(n - 5)])


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_size_math(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n", 1: "d"}}}
    others = [(torch.randn(2, 3),), (torch.randn(9, 5),)]
    assert_matches_torch(
        torch.jit.script(SizeMath()), (torch.randn(6, 4),), opset=opset, other_inputs=others, **dynamic
    )


class IntegerTricks(torch.nn.Module):
    def forward(self, ids: torch.Tensor, shift: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        buckets = torch.div(ids, 4, rounding_mode="floor") % 3
        hashed = (ids * 31 + 7) & 1023
        rolled = torch.roll(ids, shifts=shift, dims=0)
        flags = torch.cumsum(ids > 2, 0)
        clipped = torch.clamp(ids - 2, min=0, max=5).flip(0)
        return buckets + hashed, rolled, flags, clipped


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_integer_tricks(opset: int) -> None:
    model = torch.jit.script(IntegerTricks())
    dynamic = {"input_names": ["ids", "shift"], "dynamic_axes": {"ids": {0: "n"}}}
    others = [(torch.randint(0, 50, (3,)), 5), (torch.randint(0, 50, (11,)), -2)]
    assert_matches_torch(model, (torch.randint(0, 50, (6,)), 1), opset=opset, other_inputs=others, **dynamic)


class NumberArithmetic(torch.nn.Module):
    """Python int and float arithmetic mixed with tensors: sizes through ``//``, ``%``, ``**``,
    ``math.sqrt`` and ``float()``/``int()`` conversions, ``min``/``max`` of ints, a float read
    from a tensor with ``.item()`` and fed back into tensor math."""

    def forward(self, x: torch.Tensor, offset: int) -> tuple[torch.Tensor, float, int]:
        n = x.size(1)
        half = n // 2 + offset % 3
        scale = 1.0 / math.sqrt(float(n))
        power = int(2**offset)  # int ** int is a float in TorchScript
        keep = max(1, min(half, n))
        y = x[:, :keep] * scale + power
        peak = float(y.max().item())
        z = y / (abs(peak) + 1.0) - float(n % 4)
        return z, peak * 2.0 - keep, int(peak > 0.0) + keep * power


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_python_number_arithmetic(opset: int) -> None:
    model = torch.jit.script(NumberArithmetic())
    others = [(torch.randn(1, 3), 0), (torch.randn(4, 11), 5)]
    assert_matches_torch(
        model, (torch.randn(2, 6), 2), opset=opset, other_inputs=others, **dynamic_inputs(x={0: "b", 1: "n"}, offset={})
    )


class ScalarsFromTensors(torch.nn.Module):
    """int()/float()/.item() read inside a loop, used as index, bound and arithmetic."""

    def forward(self, x: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        total = torch.zeros(x.size(1))
        acc = torch.zeros(1)
        for t in range(idx.size(0)):
            k = int(idx[t])
            w = float(x[k, 0])
            m = x[k, 1].item()
            total = total + x[k] * w
            acc = acc + m * 2.0 + k
            for _ in range(k):
                acc = acc - 0.5
        return total, acc


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_scalars_read_from_tensors_in_loops(opset: int) -> None:
    model = torch.jit.script(ScalarsFromTensors())
    dynamic = {"input_names": ["x", "idx"], "dynamic_axes": {"idx": {0: "n"}}}
    others = [(torch.randn(4, 3), torch.tensor([3, 3, 1])), (torch.randn(4, 3), torch.tensor([0]))]
    assert_matches_torch(model, (torch.randn(4, 3), torch.tensor([2, 0])), opset=opset, other_inputs=others, **dynamic)


class MixedNumbers(torch.nn.Module):
    """a Python float chosen at run time times a float32 tensor stays float32."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.size(0)
        k = int(x.sum() > 0) + 1
        scale = 0.5 if n > 3 else 2.0
        y = x[:, :k] * scale
        bonus = 1.0 if bool(x.mean() > 0) else 2.5
        return y + bonus


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_python_float_times_float32_tensor(opset: int) -> None:
    model = torch.jit.script(MixedNumbers())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(2, 4) - 3,), (torch.randn(6, 4) + 3,)]
    assert_matches_torch(model, (torch.randn(5, 4),), opset=opset, other_inputs=others, **dynamic)


class FloatAccumulator(torch.nn.Module):
    """a Python float accumulator initialised 0.0 and updated from tensors in a loop."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        acc = 0.0
        count = 0
        for i in range(x.size(0)):
            if float(x[i].max()) > 0.5:
                acc += float(x[i].sum())
                count += 1
        return x[0] * acc + count


@pytest.mark.parametrize("opset", FEATURE_OPSETS)
def test_float_accumulator_in_a_loop(opset: int) -> None:
    model = torch.jit.script(FloatAccumulator())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    others = [(torch.randn(1, 3) - 5,), (torch.randn(8, 3),)]
    assert_matches_torch(model, (torch.randn(4, 3),), opset=opset, other_inputs=others, **dynamic)


class NumberPowers(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int, f: float) -> tuple[torch.Tensor, float, float]:
        size = x.size(0)
        return x * (2**n) + size**0.5, f**n, f**f


@pytest.mark.parametrize("opset", lowering_opsets("aten::pow", helpers=True))
def test_pow_of_numbers(opset: int) -> None:
    """pow.int / pow.int_float / pow.float_int / pow.float bind ``a`` and ``b`` (not the tensor
    overload's ``self``/``exponent``) and give a double, as TorchScript's float."""
    model = torch.jit.script(NumberPowers())
    assert_matches_torch(
        model,
        (torch.randn(4, 2), 3, 1.5),
        opset=opset,
        other_inputs=[(torch.randn(4, 2), 0, 0.5)],
    )
