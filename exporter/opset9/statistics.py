"""Statistics and distances over whole tensors: dist, renorm, pdist, cov and corrcoef.

ONNX idioms: norms are reductions.vector_norm (ReduceL2/ReduceL1, ReduceMax/ReduceMin of |x|,
a count for p = 0, else a sum of powers); pdist picks the pairs i < j in torch's row-major order
with constant indices when the row count is known at export, and with Compress over the full
distance matrix (run-time sized, valid from opset 9) when it is not; cov is the centred, weighted
MatMul of torch's formula, whose result shape (0-d for one variable) needs the number of
variables at export.
"""

from __future__ import annotations

import math

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import Promotion
from exporter.opset9 import reductions
from exporter.registry import onnx_symbolic

Value = ir.Value


@onnx_symbolic("aten::dist", promotion=Promotion(("self", "other")))
def aten_dist(g: GraphContext, self: Value, other: Value, p: float = 2.0) -> Value:
    """dist(Tensor self, Tensor other, Scalar p=2) -> Tensor: the p-norm of the broadcast
    difference over every element (p = 0 counts the differing elements, +-inf is the largest or
    smallest |difference|)."""
    return reductions.vector_norm(g, g.op("Sub", self, other), p, None, False)


@onnx_symbolic("aten::renorm")
def aten_renorm(g: GraphContext, self: Value, p: float, dim: int, maxnorm: float) -> Value:
    """renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor

    Each slice along ``dim`` whose p-norm (over every other dim) exceeds maxnorm is scaled by
    maxnorm / (norm + 1e-7), torch's factor; a NaN norm compares false and leaves its slice as
    it is. Half inputs compute the factor in float32.
    """
    if p <= 0:
        raise ValueError(f"renorm needs p > 0, got {p}")
    if maxnorm < 0:
        raise ValueError(f"renorm needs maxnorm >= 0, got {maxnorm}")
    rank = h.known_rank(self, "renorm")
    if rank < 2:
        raise ValueError(f"renorm needs an input of at least 2 dimensions, got {rank}")
    dim = h.normalize_dim(dim, rank)
    norm = reductions.upcast_half(g, reductions.vector_norm(g, self, p, [d for d in range(rank) if d != dim], True))
    limit = h.scalar_like(g, maxnorm, norm)
    scale = g.op("Div", limit, g.op("Add", norm, h.scalar_like(g, 1e-7, norm)))
    factor = g.op("Where", g.op("Greater", norm, limit), scale, h.scalar_like(g, 1.0, norm))
    return g.op("Mul", self, h.cast(g, factor, self.dtype))


def _pair_indices(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows (i, j) of every pair i < j, in torch's pdist order."""
    first, second = torch.triu_indices(n, n, offset=1)
    return first, second


def _distances(g: GraphContext, diff: Value, p: float, axis: int) -> Value:
    """p-norms of ``diff`` along ``axis``. The inf norm is computed here: with no coordinates
    every distance is 0, where a ReduceMax of nothing is -inf (and its NaN check misfires)."""
    if p != math.inf:
        return reductions.vector_norm(g, diff, p, [axis], False)
    size = g.op("Abs", diff)
    largest = h.reduce(g, "ReduceMax", size, [axis], False)
    zero = h.scalar_like(g, 0.0, largest)
    largest = g.op("Where", g.op("Less", largest, zero), zero, largest)
    nans = h.reduce(g, "ReduceSum", h.cast(g, g.op("IsNaN", size), size.dtype), [axis], False)
    return g.op("Where", g.op("Greater", nans, zero), h.scalar_like(g, math.nan, largest), largest)


@onnx_symbolic("aten::pdist")
@onnx_symbolic("aten::_pdist_forward")
def aten_pdist(g: GraphContext, self: Value, p: float = 2.0) -> Value:
    """pdist(Tensor self, float p=2) -> Tensor (and _pdist_forward): the p-norm distance of
    every pair of rows i < j of a 2-D input, as a vector of n (n - 1) / 2.

    A static row count gathers the pairs' rows by constant indices; a run-time one computes the
    full n x n distance matrix and keeps its upper triangle with Compress.
    """
    if p < 0:
        raise ValueError(f"pdist needs p >= 0, got {p}")
    if h.known_rank(self, "pdist") != 2:
        raise ValueError(f"pdist needs a 2-D input, got {h.rank_of(self)}-D")
    if not h.is_floating(self):
        raise ValueError(f"pdist needs a floating point input, got {self.dtype}")
    rows = h.dim_size(g, self, 0)
    if isinstance(rows, int):
        first, second = torch.triu_indices(rows, rows, offset=1)
        diff = g.op(
            "Sub", g.op("Gather", self, g.constant(first), axis=0), g.op("Gather", self, g.constant(second), axis=0)
        )
        return _distances(g, diff, p, 1)
    diff = g.op("Sub", h.unsqueeze(g, self, [1]), h.unsqueeze(g, self, [0]))
    distances = g.op("Reshape", _distances(g, diff, p, 2), g.constant([-1]))
    index = h.iota(g, rows)
    upper = g.op("Less", h.unsqueeze(g, index, [1]), h.unsqueeze(g, index, [0]))
    return g.op("Compress", distances, g.op("Reshape", upper, g.constant([-1])), axis=0)


def _observation_weights(
    g: GraphContext, fweights: Value | None, aweights: Value | None, dtype: ir.DataType
) -> Value | None:
    """torch's w: frequency weights times analytic weights, either alone, or None."""
    weights = [h.cast(g, w, dtype) for w in (fweights, aweights) if w is not None]
    if not weights:
        return None
    return weights[0] if len(weights) == 1 else g.op("Mul", weights[0], weights[1])


def _cov_dtype(self: Value, aweights: Value | None) -> ir.DataType:
    """The dtype torch computes cov in: the input's float dtype (integers: the default float)
    promoted with the analytic weights' (frequency weights are integers and never widen it)."""
    dtype = self.dtype if h.is_floating(self) else tensors.from_torch_dtype(torch.get_default_dtype())
    if aweights is None:
        return dtype
    if not h.is_floating(self):
        return aweights.dtype
    return h.ir_dtype(torch.promote_types(tensors.to_torch_dtype(dtype), tensors.to_torch_dtype(aweights.dtype)))


def _covariance(
    g: GraphContext, self: Value, correction: int, fweights: Value | None, aweights: Value | None
) -> tuple[Value, int]:
    """torch's cov before its final squeeze: the [variables, variables] matrix, and the number
    of variables (which decides the result's rank, so it must be known at export)."""
    rank = h.known_rank(self, "cov")
    if rank > 2:
        raise ValueError(f"cov needs an input of at most 2 dimensions, got {rank}")
    if self.dtype == ir.DataType.BOOL:
        raise ValueError("cov does not take bool inputs (torch refuses them)")
    dtype = _cov_dtype(self, aweights)
    x = h.cast(g, self, dtype)
    if rank < 2:
        x = g.op("Reshape", x, g.constant([1, -1]))
    variables = h.dim_size(g, x, 0) if rank == 2 else 1
    if not isinstance(variables, int):
        raise NeedsExportTimeValue(
            "cov needs the number of variables (the input's dim 0) known at export time: its result is "
            "0-d for one variable and a matrix otherwise; keep that dim out of dynamic_axes"
        )
    weights = _observation_weights(g, fweights, aweights, dtype)
    if weights is None:
        observations = h.dim_size(g, x, 1)
        total = h.scalar_like(g, observations, x) if isinstance(observations, int) else h.cast(g, observations, dtype)
        weighted = x
    else:
        total = h.reduce(g, "ReduceSum", weights, None, False)
        weighted = g.op("Mul", x, weights)
    mean = g.op("Div", h.reduce(g, "ReduceSum", weighted, [1], True), total)
    if weights is not None and correction != 0 and aweights is not None:
        analytic = g.op("Mul", weights, h.cast(g, aweights, dtype))
        bias = g.op("Div", h.reduce(g, "ReduceSum", analytic, None, False), total)
        norm_factor = g.op("Sub", total, g.op("Mul", h.scalar_like(g, float(correction), x), bias))
    else:
        norm_factor = g.op("Sub", total, h.scalar_like(g, float(correction), x))
    zero = h.scalar_like(g, 0.0, x)
    # torch warns and divides by 0 when the degrees of freedom are not positive
    norm_factor = g.op("Where", h.less_or_equal(g, norm_factor, zero), zero, norm_factor)
    centred = g.op("Sub", x, mean)
    right = centred if weights is None else g.op("Mul", centred, weights)
    products = g.op("MatMul", centred, g.op("Transpose", right, perm=[1, 0]))
    return g.op("Div", products, norm_factor), variables


@onnx_symbolic("aten::cov")
def aten_cov(
    g: GraphContext,
    self: Value,
    correction: int = 1,
    fweights: Value | None = None,
    aweights: Value | None = None,
) -> Value:
    """cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor

    Rows are variables, columns observations (a 1-D input is one variable); the matrix is
    squeezed as torch squeezes it: one variable gives a 0-d result.
    """
    matrix, variables = _covariance(g, self, correction, fweights, aweights)
    return h.squeeze(g, matrix, [0, 1]) if variables == 1 else matrix


@onnx_symbolic("aten::corrcoef")
def aten_corrcoef(g: GraphContext, self: Value) -> Value:
    """corrcoef(Tensor self) -> Tensor

    cov divided by the outer product of the standard deviations (its diagonal's roots), then
    clamped to [-1, 1] keeping NaN (a constant variable gives NaN, as in torch); one variable
    is c / c, 1 or NaN.
    """
    matrix, variables = _covariance(g, self, 1, None, None)
    if variables == 1:
        single = h.squeeze(g, matrix, [0, 1])
        return g.op("Div", single, single)
    flat = g.op("Reshape", matrix, g.constant([-1]))
    diagonal = g.op("Gather", flat, g.constant(torch.arange(variables) * (variables + 1)), axis=0)
    deviation = g.op("Sqrt", diagonal)
    scaled = g.op("Div", g.op("Div", matrix, h.unsqueeze(g, deviation, [1])), h.unsqueeze(g, deviation, [0]))
    one = h.scalar_like(g, 1.0, scaled)
    clamped_high = g.op("Where", g.op("Greater", scaled, one), one, scaled)
    return g.op("Where", g.op("Less", clamped_high, g.op("Neg", one)), g.op("Neg", one), clamped_high)
