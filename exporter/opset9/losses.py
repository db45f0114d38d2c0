"""Losses: mse, kl_div, L1, huber and smooth L1, binary_cross_entropy_with_logits, nll_loss (1-d,
2-d, N-d) and cross_entropy_loss (class indices or probabilities, label smoothing, ignore_index,
weights).

ONNX idioms: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss exist only from opset 12 and
lack some of torch's options, so the losses are computed with Gather/one-hot and reductions at
every opset; reduction 'mean' divides by the weight of the non-ignored targets as torch does.
"""

from __future__ import annotations

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import Promotion
from exporter.opset9 import reductions
from exporter.registry import onnx_symbolic

Value = ir.Value


def _reduction(g: GraphContext, loss: Value, reduction: int) -> Value:
    """torch's loss reduction enum: 0 none, 1 mean, 2 sum (over every element).

    The mean of no elements is NaN in torch, 0 from onnxruntime's ReduceMean: unless the count
    is known non-zero, the sum is divided by the count (0 / 0).
    """
    if reduction == 0:
        return loss
    if reduction == 1:
        count = reductions.reduced_count(g, loss, None)
        if isinstance(count, int) and count > 0:
            return h.reduce(g, "ReduceMean", loss, None, False)
        total = h.reduce(g, "ReduceSum", loss, None, False)
        divisor = h.scalar_like(g, count, total) if isinstance(count, int) else h.cast_like(g, count, total)
        return g.op("Div", total, divisor)
    if reduction == 2:
        return h.reduce(g, "ReduceSum", loss, None, False)
    raise ValueError(f"unknown loss reduction {reduction}")


@onnx_symbolic("aten::mse_loss")
def aten_mse_loss(g: GraphContext, self: Value, target: Value, reduction: int = 1) -> Value:
    """mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor"""
    diff = g.op("Sub", self, target)
    return _reduction(g, g.op("Mul", diff, diff), reduction)


@onnx_symbolic("aten::kl_div")
def aten_kl_div(g: GraphContext, self: Value, target: Value, reduction: int = 1, log_target: bool = False) -> Value:
    """kl_div(Tensor self, Tensor target, int reduction=Mean, *, bool log_target=False) -> Tensor

    target * (log(target) - input) with xlogy's convention: a zero target contributes 0,
    not NaN. 'batchmean' arrives as sum followed by a division in the graph.
    """
    if log_target:
        loss = g.op("Mul", g.op("Exp", target), g.op("Sub", target, self))
    else:
        zero = h.scalar_like(g, 0.0, target)
        xlogx = g.op("Where", h.equal(g, target, zero), zero, g.op("Mul", target, g.op("Log", target)))
        loss = g.op("Sub", xlogx, g.op("Mul", target, self))
    return _reduction(g, loss, reduction)


@onnx_symbolic("aten::l1_loss", promotion=Promotion(("self", "target")))
def aten_l1_loss(g: GraphContext, self: Value, target: Value, reduction: int = 1) -> Value:
    """l1_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor (also what
    F.smooth_l1_loss calls for beta=0)"""
    return _reduction(g, g.op("Abs", g.op("Sub", self, target)), reduction)


@onnx_symbolic("aten::huber_loss")
def aten_huber_loss(g: GraphContext, self: Value, target: Value, reduction: int = 1, delta: float = 1.0) -> Value:
    """huber_loss(Tensor self, Tensor target, int reduction=Mean, float delta=1.0) -> Tensor

    0.5 z^2 where z = |self - target| < delta, else delta (z - 0.5 delta): a NaN z takes the
    second branch and stays NaN, as in torch's kernel. The result has self's dtype (torch
    casts the target to it rather than promoting).
    """
    if delta <= 0:
        raise ValueError(f"huber_loss needs delta > 0, got {delta}")
    diff = g.op("Sub", self, h.cast_like(g, target, self))
    z = g.op("Abs", diff)
    quadratic = g.op("Mul", h.scalar_like(g, 0.5, z), g.op("Mul", z, z))
    linear = g.op("Mul", h.scalar_like(g, delta, z), g.op("Sub", z, h.scalar_like(g, 0.5 * delta, z)))
    loss = g.op("Where", g.op("Less", z, h.scalar_like(g, delta, z)), quadratic, linear)
    return _reduction(g, loss, reduction)


@onnx_symbolic("aten::smooth_l1_loss", promotion=Promotion(("self", "target")))
def aten_smooth_l1_loss(g: GraphContext, self: Value, target: Value, reduction: int = 1, beta: float = 1.0) -> Value:
    """smooth_l1_loss(Tensor self, Tensor target, int reduction=Mean, float beta=1.0) -> Tensor

    0.5 z^2 / beta where z = |self - target| < beta, else z - 0.5 beta; beta 0 is the L1
    loss (torch's own shortcut, which avoids 0/0).
    """
    if beta < 0:
        raise ValueError(f"smooth_l1_loss needs beta >= 0, got {beta}")
    z = g.op("Abs", g.op("Sub", self, target))
    if beta == 0:
        return _reduction(g, z, reduction)
    quadratic = g.op("Div", g.op("Mul", h.scalar_like(g, 0.5, z), g.op("Mul", z, z)), h.scalar_like(g, beta, z))
    linear = g.op("Sub", z, h.scalar_like(g, 0.5 * beta, z))
    loss = g.op("Where", g.op("Less", z, h.scalar_like(g, beta, z)), quadratic, linear)
    return _reduction(g, loss, reduction)


@onnx_symbolic("aten::binary_cross_entropy_with_logits")
def aten_binary_cross_entropy_with_logits(
    g: GraphContext,
    self: Value,
    target: Value,
    weight: Value | None = None,
    pos_weight: Value | None = None,
    reduction: int = 1,
) -> Value:
    """binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=Mean) -> Tensor

    (1 - t) * x + (1 + (pos_weight - 1) * t) * softplus(-x), with softplus(-x) as
    relu(-x) + log1p(exp(-|x|)): no Log(Sigmoid) that underflows for large |x|, so it is
    exact at opset 9 (torch's exporter needs 12).
    """
    x = self
    # torch promotes an integer target, weight or pos_weight to the float input's dtype
    target = h.cast_like(g, target, x)
    weight = h.cast_like(g, weight, x) if weight is not None else None
    pos_weight = h.cast_like(g, pos_weight, x) if pos_weight is not None else None
    one = h.scalar_like(g, 1.0, x)
    softplus_neg = g.op("Add", g.op("Relu", g.op("Neg", x)), h.log1p(g, g.op("Exp", g.op("Neg", g.op("Abs", x)))))
    if pos_weight is not None:
        log_weight = g.op("Add", g.op("Mul", g.op("Sub", pos_weight, one), target), one)
        softplus_neg = g.op("Mul", log_weight, softplus_neg)
    loss = g.op("Add", g.op("Mul", g.op("Sub", one, target), x), softplus_neg)
    if weight is not None:
        loss = g.op("Mul", loss, weight)
    return _reduction(g, loss, reduction)


_REDUCTION_NONE, _REDUCTION_MEAN, _REDUCTION_SUM = 0, 1, 2


def _class_layout(x: Value) -> tuple[int, int, int]:
    """(rank, class axis, class count) of a loss input: [C] or [N, C, d1, ...]."""
    rank = h.rank_of(x)
    if rank is None:
        raise NeedsExportTimeValue("a classification loss needs the input rank")
    axis = 0 if rank == 1 else 1
    count = x.shape[axis] if x.shape is not None else None
    if not isinstance(count, int):
        raise NeedsExportTimeValue("a classification loss needs the number of classes at export time")
    return rank, axis, int(count)


def _class_shape(rank: int, axis: int, count: int) -> list[int]:
    return [count if i == axis else 1 for i in range(rank)]


def _nll_terms(
    g: GraphContext, log_probs: Value, target: Value, weight: Value | None, ignore_index: int
) -> tuple[Value, Value, Value]:
    """Per-element (loss, weight of the target class, ignored flag) of the NLL loss.

    The target's log-probability is selected by comparing the target with a constant
    0..C-1 along the class axis (Equal on int64 exists at opset 9, unlike the loss ops,
    which are opset 12) and a Where, so a -inf in another class cannot leak in as inf*0.
    Ignored targets (possibly out of range, like -100) weigh 0 and lose 0.
    """
    rank, axis, count = _class_layout(log_probs)
    labels = h.cast(g, target, ir.DataType.INT64)
    classes = g.constant(torch.arange(count).reshape(_class_shape(rank, axis, count)))
    hits = g.op("Equal", h.unsqueeze(g, labels, [axis]), classes)
    zero = h.scalar_like(g, 0.0, log_probs)
    picked = h.reduce(g, "ReduceSum", g.op("Where", hits, log_probs, zero), [axis], False)
    ignored = g.op("Equal", labels, g.constant(ignore_index))
    if weight is None:
        class_weight = h.reduce(g, "ReduceSum", h.cast(g, hits, log_probs.dtype), [axis], False)
    else:
        weights = g.op("Reshape", h.cast(g, weight, log_probs.dtype), g.constant(_class_shape(rank, axis, count)))
        class_weight = h.reduce(g, "ReduceSum", g.op("Where", hits, weights, zero), [axis], False)
    class_weight = g.op("Where", ignored, zero, class_weight)
    loss = g.op("Where", ignored, zero, g.op("Neg", g.op("Mul", picked, class_weight)))
    return loss, class_weight, ignored


def _reduce_loss(g: GraphContext, loss: Value, reduction: int, denominator: Value | None) -> Value:
    if reduction == _REDUCTION_NONE:
        return loss
    total = h.reduce(g, "ReduceSum", loss, None, False)
    if reduction == _REDUCTION_SUM:
        return total
    if reduction == _REDUCTION_MEAN:
        assert denominator is not None
        return g.op("Div", total, h.reduce(g, "ReduceSum", denominator, None, False))
    raise ValueError(f"unknown loss reduction {reduction}")


def _nll_loss(
    g: GraphContext, self: Value, target: Value, weight: Value | None, reduction: int, ignore_index: int
) -> Value:
    x = reductions.upcast_half(g, self)
    loss, class_weight, _ = _nll_terms(g, x, target, weight, ignore_index)
    return h.cast(g, _reduce_loss(g, loss, reduction, class_weight), self.dtype)


@onnx_symbolic("aten::nll_loss")
def aten_nll_loss(
    g: GraphContext,
    self: Value,
    target: Value,
    weight: Value | None = None,
    reduction: int = 1,
    ignore_index: int = -100,
) -> Value:
    """nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) -> Tensor

    Built from Equal/Where/ReduceSum, so it works from opset 9 (NegativeLogLikelihoodLoss is
    opset 12). The mean divides by the summed weights of the targets that are not ignored,
    as torch does (NaN when every target is ignored).
    """
    return _nll_loss(g, self, target, weight, reduction, ignore_index)


@onnx_symbolic("aten::nll_loss2d")
def aten_nll_loss2d(
    g: GraphContext,
    self: Value,
    target: Value,
    weight: Value | None = None,
    reduction: int = 1,
    ignore_index: int = -100,
) -> Value:
    """nll_loss2d(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) -> Tensor"""
    return _nll_loss(g, self, target, weight, reduction, ignore_index)


@onnx_symbolic("aten::nll_loss_nd")
def aten_nll_loss_nd(
    g: GraphContext,
    self: Value,
    target: Value,
    weight: Value | None = None,
    reduction: int = 1,
    ignore_index: int = -100,
) -> Value:
    """nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) -> Tensor

    What F.nll_loss traces to, for [C], [N, C] and [N, C, d1, ...] inputs alike.
    """
    return _nll_loss(g, self, target, weight, reduction, ignore_index)


@onnx_symbolic("aten::cross_entropy_loss")
def aten_cross_entropy_loss(
    g: GraphContext,
    self: Value,
    target: Value,
    weight: Value | None = None,
    reduction: int = 1,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Value:
    """cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100, float label_smoothing=0.) -> Tensor

    LogSoftmax over the class axis, then torch's two forms: class-index targets take the NLL
    loss mixed with the smoothing term -sum(w * logp)/C (zero where ignored; its mean shares
    the NLL denominator); probability targets (floating) take -sum(w * target' * logp) with
    target' = target * (1 - ls) + ls / C, and their mean divides by the element count N*d1*...
    Works from opset 9 (SoftmaxCrossEntropyLoss is opset 12).
    """
    x = reductions.upcast_half(g, self)
    rank, axis, count = _class_layout(x)
    log_probs = h.softmax(g, x, axis, log=True, rank=rank)
    weights = None
    if weight is not None:
        weights = g.op("Reshape", h.cast(g, weight, x.dtype), g.constant(_class_shape(rank, axis, count)))
    if h.is_floating(target):
        probs = h.cast(g, target, x.dtype)
        if label_smoothing > 0:
            probs = g.op(
                "Add",
                g.op("Mul", probs, h.scalar_like(g, 1.0 - label_smoothing, x)),
                h.scalar_like(g, label_smoothing / count, x),
            )
        terms = g.op("Mul", log_probs, probs)
        if weights is not None:
            terms = g.op("Mul", terms, weights)
        loss = g.op("Neg", h.reduce(g, "ReduceSum", terms, [axis], False))
        if reduction == _REDUCTION_MEAN:
            elements = reductions.reduced_count(g, x, None)
            total = h.reduce(g, "ReduceSum", loss, None, False)
            if isinstance(elements, int):
                out = g.op("Div", total, h.scalar_like(g, elements / count, x))
            else:
                out = g.op("Div", g.op("Mul", total, h.scalar_like(g, count, x)), h.cast(g, elements, x.dtype))
        else:
            out = _reduce_loss(g, loss, reduction, None)
        return h.cast(g, out, self.dtype)
    nll, class_weight, ignored = _nll_terms(g, log_probs, target, weight, ignore_index)
    out = _reduce_loss(g, nll, reduction, class_weight)
    if label_smoothing > 0:
        terms = log_probs if weights is None else g.op("Mul", log_probs, weights)
        smooth = g.op("Neg", h.reduce(g, "ReduceSum", terms, [axis], False))
        smooth = g.op("Where", ignored, h.scalar_like(g, 0.0, x), smooth)
        smooth = _reduce_loss(g, smooth, reduction, class_weight)
        out = g.op(
            "Add",
            g.op("Mul", out, h.scalar_like(g, 1.0 - label_smoothing, x)),
            g.op("Mul", smooth, h.scalar_like(g, label_smoothing / count, x)),
        )
    return h.cast(g, out, self.dtype)
