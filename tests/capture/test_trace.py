"""Tracing (exporter/capture/trace.py, and the meta trace of exporter/capture/meta_trace.py):
while a trace runs, torch function modes are active (exporter/capture/function_modes.py), so
every Python function of torch dispatches to them; one that hands on fewer arguments than it
took must still trace as eager torch computes, on real tensors and on meta ones."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import BASE_OPSETS, assert_matches_torch
from torch.overrides import handle_torch_function, has_torch_function_variadic

from exporter.capture import meta_trace


class WeightedL1(torch.nn.Module):
    def __init__(self, reduction: str) -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, x: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return F.l1_loss(x, y, reduction=self.reduction, weight=w)


@pytest.fixture(params=["real", "meta"])
def trace_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test traces on real tensors and on meta ones (meta_trace.MODE)."""
    monkeypatch.setattr(meta_trace, "MODE", request.param)
    return request.param


@pytest.mark.parametrize("opset", BASE_OPSETS)
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_l1_loss_keeps_the_weight_its_dispatch_drops(reduction: str, opset: int, trace_mode: str) -> None:
    """torch 2.13's F.l1_loss dispatches without ``weight``: traced as it passes its arguments
    on, the model would ignore the weight."""
    args = (torch.randn(3, 4), torch.randn(3, 4), torch.rand(3, 4))
    assert_matches_torch(WeightedL1(reduction), args, opset=opset)


def scaled(x: torch.Tensor, scale: float = 1.0, *, shift: torch.Tensor | None = None) -> torch.Tensor:
    """A library function written like torch's, whose dispatch forgets two of its arguments."""
    if has_torch_function_variadic(x, shift):
        return handle_torch_function(scaled, (x, shift), x)
    return x * scale + (shift if shift is not None else 0)


class Scaled(torch.nn.Module):
    def forward(self, x: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
        return scaled(x, 3.0, shift=shift)


def test_arguments_any_dispatching_function_drops_are_kept(trace_mode: str) -> None:
    assert_matches_torch(Scaled(), (torch.randn(2, 3), torch.randn(2, 3)), opset=BASE_OPSETS[0])


class Powers(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x**2 + 2**x


def test_operators_wrapping_builtins_trace(trace_mode: str) -> None:
    """Tensor.__pow__/__rpow__ are Python wrappers of builtins, with no signature to read."""
    assert_matches_torch(Powers(), (torch.rand(3),), opset=BASE_OPSETS[0])
