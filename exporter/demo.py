"""The main job: export a bundled example model, run it in onnxruntime, compare with torch.

Run with ``python -m exporter.demo [output.onnx] [--opset N]``.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch

import exporter


class ExampleModel(torch.nn.Module):
    """A small vision-plus-attention model: conv, batch norm, pooling, a transformer layer."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1),
            torch.nn.BatchNorm2d(16),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
        )
        self.encoder = torch.nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, batch_first=True)
        self.head = torch.nn.Linear(16, 10)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        features = self.stem(images)  # [N, 16, H/2, W/2]
        tokens = features.flatten(2).transpose(1, 2)  # [N, HW/4, 16]
        encoded = self.encoder(tokens)
        return torch.softmax(self.head(encoded.mean(dim=1)), dim=-1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("output", nargs="?", default="example.onnx")
    parser.add_argument("--opset", type=int, default=exporter.DEFAULT_OPSET)
    options = parser.parse_args(argv)
    torch.manual_seed(0)
    model = ExampleModel().eval()
    images = torch.randn(2, 3, 32, 32)
    onnx_model = exporter.export(model, (images,), options.output, opset_version=options.opset)
    report = exporter.verify(model, (images,), options.output, rtol=1e-4, atol=1e-4)
    size = os.path.getsize(options.output)
    print(
        f"wrote {options.output}: opset {options.opset}, {len(onnx_model.graph)} nodes, "
        f"{len(onnx_model.graph.initializers)} initializers, {size} bytes"
    )
    print(f"onnxruntime vs eager torch: largest absolute difference {report.max_abs_diff:.3g}")
    print(report)
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
