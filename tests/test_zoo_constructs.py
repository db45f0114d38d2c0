"""Autograd Functions whose own ``symbolic`` is written against torch's exporter internals
(``value.type().dtype()``, ``torch.onnx.symbolic_opset9`` helpers), as SEW-D's ``XSoftmax``: it
cannot run on this exporter's values, so its forward is traced instead, with a warning."""

from __future__ import annotations

import io

import pytest
import torch
from conftest import NEWEST, assert_matches_torch

import exporter
from exporter.errors import SymbolicError

# -- a Function's symbolic written against torch's exporter ------------------------------------


class TorchStyleMaskedSoftmax(torch.autograd.Function):
    """SEW-D's XSoftmax in small: the symbolic reads ``self.type().dtype()`` (torch._C.Value's
    API), which this exporter's values do not have."""

    @staticmethod
    def forward(ctx, x, mask, dim):  # noqa: ANN001, ANN205
        blocked = ~mask.bool()
        out = torch.softmax(x.masked_fill(blocked, torch.finfo(x.dtype).min), dim)
        return out.masked_fill(blocked, 0.0)

    @staticmethod
    def symbolic(g, x, mask, dim):  # noqa: ANN001, ANN205
        lowest = torch.tensor(torch.finfo(x.type().dtype()).min)  # torch._C.Value only
        return g.op("Softmax", g.op("Where", mask, x, lowest), axis_i=dim)


class MaskedAttention(torch.nn.Module):
    def forward(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return TorchStyleMaskedSoftmax.apply(scores, mask, -1) * 2


@pytest.mark.parametrize("opset", [9, 13, NEWEST])
def test_torch_style_function_symbolic_falls_back_to_its_forward(opset: int) -> None:
    scores = torch.randn(2, 3, 4, 4)
    mask = torch.ones(2, 1, 1, 4, dtype=torch.long)
    mask[1, ..., :2] = 0
    with pytest.warns(UserWarning, match=r"TorchStyleMaskedSoftmax .*symbolic staticmethod failed.*TypeError"):
        model = assert_matches_torch(MaskedAttention(), (scores, mask), opset=opset)
    assert "Softmax" in {node.op_type for node in model.graph}


class MisusedAttribute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # noqa: ANN001, ANN205
        return torch.relu(x)

    @staticmethod
    def symbolic(g, x):  # noqa: ANN001, ANN205
        return g.op("LeakyRelu", x, alpha=0.1)  # this exporter refuses it: no type suffix


def test_symbolic_refused_by_this_exporter_is_still_an_error() -> None:
    """Only failures inside the symbolic's own (or torch's) code fall back; a request this
    exporter refuses is the symbolic's bug and is reported."""

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return MisusedAttribute.apply(x)

    with pytest.raises(SymbolicError, match="invalid attribute specifier 'alpha'"):
        exporter.export(Model(), (torch.randn(3),), io.BytesIO(), opset_version=17)


# -- errors while tracing ------------------------------------------------------------------------


# -- the transformers models the sweep found ------------------------------------------------------


# -- a run-time value where a lowering needs a constant -------------------------------------------
