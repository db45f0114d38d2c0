"""The emitter knows no op by name: no aten name in its source, and what it must not do to an
op (fold dropout) is the op's registered fact."""

from __future__ import annotations

import io
import pathlib
import re

import torch

import exporter


def test_emitter_names_no_op() -> None:
    source = (pathlib.Path(exporter.__file__).parent / "emitter.py").read_text()
    assert re.findall(r'"aten::\w+', source) == []


def test_eval_dropout_of_a_constant_is_not_folded_away() -> None:
    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + torch.nn.functional.dropout(torch.ones(2), p=0.5, training=False)

    buffer = io.BytesIO()
    exporter.export(Model().eval(), (torch.ones(2),), buffer, opset_version=13)
    assert buffer.getvalue()
