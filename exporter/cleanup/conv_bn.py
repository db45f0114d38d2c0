"""Conv+BatchNormalization folding: an inference BatchNormalization after a Conv becomes the
Conv's weight and bias, as torch's exporter folds it in eval mode with constant folding."""

from __future__ import annotations

import onnx_ir as ir
import torch

from exporter import tensors

__all__ = ["fuse_conv_batchnorm", "initializer_tensor"]


def initializer_tensor(value: ir.Value | None) -> torch.Tensor | None:
    if value is None or not value.is_initializer() or value.const_value is None:
        return None
    tensor = value.const_value
    if isinstance(tensor, tensors.TorchTensor):
        return tensor.raw.detach()
    return torch.from_numpy(tensor.numpy().copy())


def _folded_weight(weight: torch.Tensor, factor: torch.Tensor, name: str) -> tensors.DeferredTorchTensor:
    """W * factor per output channel, computed when written, a few output channels at a time
    (not even one folded weight in memory: a memory-mapped model's Conv weights are read from
    its file as they are written)."""
    per_channel = factor.to(weight.dtype).reshape(-1, *([1] * (weight.dim() - 1)))

    def compute() -> torch.Tensor:
        return weight * per_channel

    def compute_rows(start: int, stop: int, out: torch.Tensor) -> torch.Tensor:
        return torch.mul(weight[start:stop], per_channel[start:stop], out=out)

    return tensors.DeferredTorchTensor(compute, weight.shape, weight.dtype, name=name, compute_rows=compute_rows)


def fuse_conv_batchnorm(model: ir.Model) -> int:
    """Fold an inference BatchNormalization into the Conv before it (eval-mode models).

    W' = W * g / sqrt(v + eps) per output channel, b' = (b - m) * g / sqrt(v + eps) + beta.
    The fused weight keeps the conv weight's state_dict name when nothing else reads the
    original, so initializer names stay meaningful. Returns the number of folds.
    """
    graph = model.graph
    folded = 0
    for bn in list(graph):
        if bn.op_type != "BatchNormalization" or bn.domain or len(bn.outputs) != 1:
            continue
        conv_out = bn.inputs[0]
        conv = conv_out.producer() if conv_out is not None else None
        if conv is None or conv.op_type != "Conv" or conv.graph is not graph or len(conv_out.uses()) != 1:
            continue
        if conv_out in graph.outputs:
            continue
        weight = initializer_tensor(conv.inputs[1])
        bias = initializer_tensor(conv.inputs[2]) if len(conv.inputs) > 2 else None
        scale, shift, mean, var = (initializer_tensor(v) for v in bn.inputs[1:5])
        if weight is None or scale is None or shift is None or mean is None or var is None:
            continue
        if len(conv.inputs) > 2 and conv.inputs[2] is not None and bias is None:
            continue
        eps = bn.attributes["epsilon"].as_float() if "epsilon" in bn.attributes else 1e-5
        # per-channel statistics in double (cheap); the weight scaled in its own dtype, as
        # torch's fuse_conv_bn_eval does, so folding a large model stays fast
        factor = scale.double() / torch.sqrt(var.double() + eps)
        base_bias = bias.double() if bias is not None else torch.zeros_like(mean, dtype=torch.float64)
        new_bias = ((base_bias - mean.double()) * factor + shift.double()).to(weight.dtype)
        weight_value = conv.inputs[1]
        only_user = len(weight_value.uses()) == 1
        weight_name = weight_value.name if only_user else f"{weight_value.name}.bn_folded"
        bias_source = conv.inputs[2] if len(conv.inputs) > 2 and conv.inputs[2] is not None else bn.inputs[2]
        bias_name = (
            bias_source.name if bias_source is not None and len(bias_source.uses()) == 1 else f"{weight_name}.bias"
        )
        new_w = ir.Value(
            name=weight_name,
            shape=ir.Shape(weight.shape),
            type=ir.TensorType(tensors.from_torch_dtype(weight.dtype)),
            const_value=_folded_weight(weight, factor, weight_name),
        )
        new_b = ir.Value(
            name=bias_name,
            shape=ir.Shape(new_bias.shape),
            type=ir.TensorType(tensors.from_torch_dtype(new_bias.dtype)),
            const_value=tensors.TorchTensor(new_bias, name=bias_name),
        )
        # drop the initializers being replaced under the same names before registering
        for old in {weight_value, bias_source}:
            if old is not None and old.name in (weight_name, bias_name):
                graph.initializers.pop(old.name, None)
        graph.register_initializer(new_w)
        graph.register_initializer(new_b)
        conv.replace_input_with(1, new_w)
        if len(conv.inputs) > 2:
            conv.replace_input_with(2, new_b)
        else:
            conv.resize_inputs(3)
            conv.replace_input_with(2, new_b)
        bn_out = bn.outputs[0]
        conv_out.shape, conv_out.dtype = bn_out.shape, bn_out.dtype
        output_name = bn_out.name if bn_out.is_graph_output() else None
        bn_out.replace_all_uses_with(conv_out, replace_graph_outputs=True)
        graph.remove(bn, safe=True)
        if output_name is not None:
            conv_out.name = output_name
        folded += 1
    return folded
