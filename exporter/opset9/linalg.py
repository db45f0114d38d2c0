"""Linear algebra: matmul and friends (mm, bmm, addmm, baddbmm, addmv, addr, linear, _grouped_mm), diagonals
(diagonal and its scatter, diag, diagflat, diag_embed, trace) and triangles, vector products (dot, vdot, mv,
inner, outer, cross, tensordot, einsum, kron) and distances (cdist, pairwise, cosine similarity).

ONNX idioms: linear keeps initializer weights transposed at export time (no Transpose node);
einsum is lowered to MatMul/ReduceSum below opset 12, where Einsum appears; tril/triu are a
mask built from two aranges until Trilu-14.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import Promotion
from exporter.opset9 import arithmetic, reductions
from exporter.registry import onnx_symbolic

Value = ir.Value


def _transposed_weight(g: GraphContext, weight: Value) -> Value:
    """W^T for a 2-D weight. An initializer is transposed at export time (a lazy view over
    the same storage, no copy until written), so the graph has no Transpose node."""
    tensor = weight.const_value
    if isinstance(tensor, tensors.TorchTensor) and weight.is_initializer():
        return g.transposed_initializer(weight)
    return g.op("Transpose", weight, perm=[1, 0])


@onnx_symbolic("aten::matmul")
def aten_matmul(g: GraphContext, self: Value, other: Value) -> Value:
    """matmul(Tensor self, Tensor other) -> Tensor"""
    return g.op("MatMul", self, other)


@onnx_symbolic("aten::mm")
def aten_mm(g: GraphContext, self: Value, mat2: Value) -> Value:
    """mm(Tensor self, Tensor mat2) -> Tensor"""
    return g.op("MatMul", self, mat2)


@onnx_symbolic("aten::bmm")
def aten_bmm(g: GraphContext, self: Value, mat2: Value) -> Value:
    """bmm(Tensor self, Tensor mat2) -> Tensor"""
    return g.op("MatMul", self, mat2)


def _group_mask(g: GraphContext, offs: Value, positions: int | Value) -> Value:
    """[G, n] bool: position i belongs to group j when offs[j-1] <= i < offs[j] (offs[-1] = 0)."""
    ends = h.unsqueeze(g, h.cast(g, offs, ir.DataType.INT64), [1])
    starts = g.op("Concat", g.constant([[0]]), h.slice_static(g, ends, [0], [0], [-1]), axis=0)
    index = h.unsqueeze(g, h.iota(g, positions), [0])
    return g.op("And", g.op("Not", g.op("Less", index, starts)), g.op("Less", index, ends))


@onnx_symbolic("aten::_grouped_mm")
def aten__grouped_mm(g: GraphContext, self: Value, mat2: Value, offs: Value | None = None) -> Value:
    """_grouped_mm(Tensor self, Tensor mat2, Tensor? offs=None, Tensor? bias=None, ScalarType? out_dtype=None) -> Tensor

    Mixture-of-experts matmuls. offs holds cumulative group ends: 2-d x 3-d groups the rows of
    self (expert g multiplies rows offs[g-1]:offs[g]), 3-d x 2-d the columns of mat2, 2-d x 2-d
    the shared K dim (one [M, N] result per group); 3-d x 3-d is a batched matmul. Computed
    as every group's product masked to its own rows/columns (Where, so no 0 * inf) and summed
    over groups: no data-dependent shapes. Rows past offs[-1], garbage in torch, are 0 here.
    """
    ranks = (h.known_rank(self, "_grouped_mm"), h.known_rank(mat2, "_grouped_mm"))
    if ranks == (3, 3):
        return g.op("MatMul", self, mat2)
    if offs is None or ranks not in ((2, 3), (3, 2), (2, 2)):
        raise ValueError(f"_grouped_mm of {ranks[0]}-d and {ranks[1]}-d inputs needs offs (2-d or 3-d inputs)")
    zero = h.scalar_like(g, 0, self)
    if ranks == (2, 2):  # groups split K: self's columns masked per group, [G, M, K] @ [K, N]
        mask = h.unsqueeze(g, _group_mask(g, offs, h.dim_size(g, self, 1)), [1])
        return g.op("MatMul", g.op("Where", mask, h.unsqueeze(g, self, [0]), zero), mat2)
    products = g.op("MatMul", self, mat2)  # [G, M, N]
    if ranks == (2, 3):
        mask = h.unsqueeze(g, _group_mask(g, offs, h.dim_size(g, self, 0)), [2])
    else:
        mask = h.unsqueeze(g, _group_mask(g, offs, h.dim_size(g, mat2, 1)), [1])
    return h.reduce(g, "ReduceSum", g.op("Where", mask, products, zero), [0], False)


@onnx_symbolic("aten::addmm")
def aten_addmm(g: GraphContext, self: Value, mat1: Value, mat2: Value, beta: float = 1, alpha: float = 1) -> Value:
    """addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    if h.is_floating(mat1):
        return g.op("Gemm", mat1, mat2, self, alpha=float(alpha), beta=float(beta))
    product = arithmetic.scaled(g, g.op("MatMul", mat1, mat2), alpha)
    return g.op("Add", product, arithmetic.scaled(g, self, beta))


@onnx_symbolic("aten::baddbmm")
def aten_baddbmm(
    g: GraphContext, self: Value, batch1: Value, batch2: Value, beta: float | Value = 1, alpha: float | Value = 1
) -> Value:
    """baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor

    beta and alpha computed at run time (any opset) are cast to the product's dtype and
    multiplied in; a run-time beta of 0 still multiplies (torch ignores self then, even NaNs).
    """
    return _plus_scaled_input(g, g.op("MatMul", batch1, batch2), self, beta, alpha)


def _times(g: GraphContext, x: Value, factor: Value) -> Value:
    """x * factor, a scalar computed at run time, in x's dtype."""
    return g.op("Mul", x, h.cast(g, factor, x.dtype) if x.dtype is not None else g.op("CastLike", factor, x))


def _plus_scaled_input(
    g: GraphContext, product: Value, self: Value, beta: float | Value, alpha: float | Value
) -> Value:
    """beta * self + alpha * product, torch's addmm family. A beta of 0 drops self (its NaNs
    and infs too, as torch does); bool tensors compute (beta and self) or (alpha and product)."""
    if product.dtype == ir.DataType.BOOL:
        if isinstance(beta, Value) or isinstance(alpha, Value):
            raise NeedsExportTimeValue("beta and alpha of bool tensors must be known at export time")
        kept = product if alpha else g.op("And", product, g.constant(False))
        return g.op("Or", self, kept) if beta else kept
    scaled = _times(g, product, alpha) if isinstance(alpha, Value) else arithmetic.scaled(g, product, alpha)
    if isinstance(beta, Value):
        return g.op("Add", scaled, _times(g, self, beta))
    if beta == 0:  # self only broadcasts to the product's shape, so that shape is the result's
        return scaled
    return g.op("Add", scaled, arithmetic.scaled(g, self, beta))


@onnx_symbolic("aten::linear")
def aten_linear(g: GraphContext, input: Value, weight: Value, bias: Value | None = None) -> Value:  # noqa: A002
    """linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor

    2-D inputs with a bias take one Gemm (transB folds the transpose); other ranks take a
    MatMul against the weight transposed at export time.
    """
    if h.rank_of(input) == 2 and bias is not None and h.is_floating(input):
        return g.op("Gemm", input, weight, bias, transB=1)
    out = g.op("MatMul", input, _transposed_weight(g, weight))
    if bias is not None:
        out = g.op("Add", out, bias)
    return out


@onnx_symbolic("aten::diagonal")
def aten_diagonal(g: GraphContext, self: Value, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Value:
    """diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)

    The two dims move last and merge; the diagonal is a Gather of positions in the merged
    dim (constant for static sizes, computed otherwise), so every opset works. The diagonal
    comes last, as in torch.
    """
    merged = _merged_diagonal_dims(g, self, offset, dim1, dim2)
    return g.op("Gather", merged.flat, merged.positions, axis=merged.axis)


@onnx_symbolic("aten::linalg_diagonal")
def aten_linalg_diagonal(g: GraphContext, A: Value, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Value:  # noqa: N803 - schema name
    """linalg_diagonal(Tensor(a) A, *, int offset=0, int dim1=-2, int dim2=-1) -> Tensor(a):
    aten::diagonal with the last two dims by default"""
    return aten_diagonal(g, A, offset, dim1, dim2)


@onnx_symbolic("aten::diagonal_scatter")
def aten_diagonal_scatter(
    g: GraphContext, self: Value, src: Value, offset: int = 0, dim1: int = 0, dim2: int = 1
) -> Value:
    """diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor

    The functional form of a write into a diagonal (``x.diagonal().fill_(0)``): the positions
    aten::diagonal gathers from the merged dims receive ``src`` (a Scatter, ScatterElements
    from opset 11), then the dims split and move back.
    """
    merged = _merged_diagonal_dims(g, self, offset, dim1, dim2)
    src = h.cast(g, src, self.dtype) if self.dtype is not None else src
    indices = g.op("Expand", merged.positions, h.shape_of(g, src))
    written = h.scatter_elements(g, merged.flat, indices, src, merged.axis)
    moved = g.op("Reshape", written, h.sizes_to_shape(g, merged.moved_sizes))
    if merged.perm == list(range(len(merged.perm))):
        return moved
    inverse = sorted(range(len(merged.perm)), key=lambda i: merged.perm[i])
    return g.op("Transpose", moved, perm=inverse)


@dataclasses.dataclass(frozen=True)
class _MergedDiagonal:
    """``self`` with the two diagonal dims moved last (``perm``) and merged into one
    (``flat``, at ``axis``), and the ``positions`` of the diagonal in the merged dim."""

    flat: Value
    axis: int
    positions: Value
    perm: list[int]
    moved_sizes: list[int | Value]


def _merged_diagonal_dims(g: GraphContext, self: Value, offset: int, dim1: int, dim2: int) -> _MergedDiagonal:
    rank = h.known_rank(self, "diagonal")
    d1, d2 = h.normalize_dim(dim1, rank), h.normalize_dim(dim2, rank)
    rows, cols = h.dim_size(g, self, d1), h.dim_size(g, self, d2)
    rest = [a for a in range(rank) if a not in (d1, d2)]
    perm = rest + [d1, d2]
    x = self if perm == list(range(rank)) else g.op("Transpose", self, perm=perm)
    batch = [h.dim_size(g, self, a) for a in rest]
    x = g.op("Reshape", x, h.sizes_to_shape(g, [*batch, h.mul_sizes(g, rows, cols)]))
    first_row, first_col = max(0, -offset), max(0, offset)
    if isinstance(rows, int) and isinstance(cols, int):
        length = max(0, min(rows - first_row, cols - first_col))
        positions = g.constant(
            torch.tensor([(first_row + i) * cols + first_col + i for i in range(length)], dtype=torch.int64)
        )
    else:
        # the same arithmetic at run time; Max/Min lack int64 kernels before opset 12
        def as_value(size: int | Value) -> Value:
            return g.constant(size) if isinstance(size, int) else h.cast(g, size, ir.DataType.INT64)

        rows_left = g.op("Sub", as_value(rows), g.constant(first_row))
        cols_left = g.op("Sub", as_value(cols), g.constant(first_col))
        shorter = g.op("Where", g.op("Less", rows_left, cols_left), rows_left, cols_left)
        zero = g.constant(0)
        length_v = g.op("Where", g.op("Less", shorter, zero), zero, shorter)
        steps = h.iota(g, length_v)
        row_start = g.op("Mul", g.op("Add", steps, g.constant(first_row)), as_value(cols))
        positions = g.op("Add", row_start, g.op("Add", steps, g.constant(first_col)))
    return _MergedDiagonal(x, len(rest), positions, perm, [*batch, rows, cols])


@onnx_symbolic("aten::diag_embed")
def aten_diag_embed(g: GraphContext, self: Value, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Value:
    """diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor

    The last dim (n) becomes diagonal ``offset`` of new (n + |offset|)-square dims at dim1 (rows)
    and dim2 (columns): the vector, padded with |offset| zeros, is broadcast along rows (offset
    >= 0: row i holds element i) or columns, and a diagonal mask (constant for static sizes)
    keeps it; the two new dims then move to dim1 and dim2.
    """
    rank = h.known_rank(self, "diag_embed") + 1
    d1, d2 = h.normalize_dim(dim1, rank), h.normalize_dim(dim2, rank)
    if d1 == d2:
        raise ValueError("diag_embed needs two different dims")
    zero = h.scalar_like(g, False if self.dtype == ir.DataType.BOOL else 0, self)
    padded = self
    if offset:
        tail = g.op("Expand", zero, h.sizes_to_shape(g, [*_leading_sizes(g, self), abs(offset)]))
        padded = g.op("Concat", self, tail, axis=rank - 2)
    size = h.dim_size(g, padded, rank - 2)
    mask = _diagonal_mask(g, size, offset)
    spread = h.unsqueeze(g, padded, [rank - 1 if offset >= 0 else rank - 2])
    square = h.where(g, mask, spread, zero)
    batch = [p for p in range(rank) if p not in (d1, d2)]
    perm = [0] * rank
    for i, p in enumerate(batch):
        perm[p] = i
    perm[d1], perm[d2] = rank - 2, rank - 1
    return square if perm == list(range(rank)) else g.op("Transpose", square, perm=perm)


def _leading_sizes(g: GraphContext, x: Value) -> list[int | Value]:
    return [h.dim_size(g, x, a) for a in range(h.known_rank(x, "diag_embed") - 1)]


def _diagonal_mask(g: GraphContext, size: int | Value, offset: int) -> Value:
    """A bool (size, size) mask of diagonal ``offset``: column - row == offset."""
    if isinstance(size, int):
        return g.constant(torch.ones(size, size, dtype=torch.bool).triu(offset).tril(offset))
    steps = h.iota(g, size)
    columns_minus_rows = g.op("Sub", h.unsqueeze(g, steps, [0]), h.unsqueeze(g, steps, [1]))
    return g.op("Equal", columns_minus_rows, g.constant(offset))


@onnx_symbolic("aten::diag")
def aten_diag(g: GraphContext, self: Value, diagonal: int = 0) -> Value:
    """diag(Tensor self, int diagonal=0) -> Tensor

    A vector becomes a square matrix with it on diagonal ``diagonal`` (diag_embed); a matrix
    gives that diagonal as a vector (aten::diagonal).
    """
    rank = h.known_rank(self, "diag")
    if rank == 1:
        return aten_diag_embed(g, self, diagonal, 0, 1)
    if rank == 2:
        return aten_diagonal(g, self, diagonal, 0, 1)
    raise ValueError(f"diag takes a 1-d or 2-d tensor, not {rank}-d")


@onnx_symbolic("aten::trace")
def aten_trace(g: GraphContext, self: Value) -> Value:
    """trace(Tensor self) -> Tensor: the sum of a matrix's main diagonal (integers sum in
    int64, as torch)"""
    if h.known_rank(self, "trace") != 2:
        raise ValueError("trace takes a 2-d tensor")
    return reductions.aten_sum(g, aten_diagonal(g, self, 0, 0, 1))


@onnx_symbolic("aten::kron", promotion=Promotion(("self", "other")))
def aten_kron(g: GraphContext, self: Value, other: Value) -> Value:
    """kron(Tensor self, Tensor other) -> Tensor

    The Kronecker product: both operands take the larger rank (leading ones), interleave
    with unit dims (a: a0, 1, a1, 1, ...; b: 1, b0, 1, b1, ...), multiply by broadcasting and
    merge each pair of dims (a0 * b0, a1 * b1, ...).
    """
    rank = max(h.known_rank(self, "kron"), h.known_rank(other, "kron"))
    a, b = _unsqueeze_to_rank(g, self, rank), _unsqueeze_to_rank(g, other, rank)
    if rank == 0:
        return arithmetic.aten_mul(g, a, b)
    merged = [h.mul_sizes(g, h.dim_size(g, a, i), h.dim_size(g, b, i)) for i in range(rank)]
    a = h.unsqueeze(g, a, [2 * i + 1 for i in range(rank)])
    b = h.unsqueeze(g, b, [2 * i for i in range(rank)])
    return g.op("Reshape", arithmetic.aten_mul(g, a, b), h.sizes_to_shape(g, merged))


def _triangle_mask(g: GraphContext, self: Value, diagonal: int | Value, upper: bool) -> Value:
    """Bool mask of the kept triangle over the last two dims: col - row <= k (lower) or >= k
    (upper). A constant when the sizes and k are static."""
    rows, cols = h.dim_size(g, self, -2), h.dim_size(g, self, -1)
    if isinstance(rows, int) and isinstance(cols, int) and isinstance(diagonal, int):
        ones = torch.ones(rows, cols, dtype=torch.bool)
        return g.constant(ones.triu(diagonal) if upper else ones.tril(diagonal))
    offset = g.op("Sub", h.unsqueeze(g, h.iota(g, cols), [0]), h.unsqueeze(g, h.iota(g, rows), [1]))
    k = g.list_to_value([diagonal])
    return g.op("Not", g.op("Less" if upper else "Greater", offset, k))


def _triangle(g: GraphContext, self: Value, diagonal: int | Value, upper: bool) -> Value:
    if h.known_rank(self, "tril/triu") < 2:
        raise ValueError("tril/triu need at least 2 dims")
    zero = h.scalar_like(g, False if self.dtype == ir.DataType.BOOL else 0, self)
    return h.where(g, _triangle_mask(g, self, diagonal, upper), self, zero)


@onnx_symbolic("aten::tril")
def aten_tril(g: GraphContext, self: Value, diagonal: int | Value = 0) -> Value:
    """tril(Tensor self, SymInt diagonal=0) -> Tensor

    Trilu arrives at opset 14; before it a mask (constant for static sizes) selects.
    """
    return _triangle(g, self, diagonal, upper=False)


@onnx_symbolic("aten::triu")
def aten_triu(g: GraphContext, self: Value, diagonal: int | Value = 0) -> Value:
    """triu(Tensor self, SymInt diagonal=0) -> Tensor (a mask before Trilu-14, see tril)"""
    return _triangle(g, self, diagonal, upper=True)


def _axis_sizes(g: GraphContext, x: Value, axes: Sequence[int]) -> list[int] | Value:
    """Sizes of ``axes`` of x: a list of ints when static, else a 1-D int64 value."""
    if x.shape is not None and all(isinstance(x.shape[a], int) for a in axes):
        return [int(x.shape[a]) for a in axes]
    return g.op("Gather", g.op("Shape", x), g.constant(list(axes)), axis=0)


def _shape_input(g: GraphContext, parts: Sequence[list[int] | Value]) -> Value:
    """A 1-D int64 shape from pieces that are int lists or 1-D values."""
    if all(isinstance(p, list) for p in parts):
        return g.constant([d for p in parts for d in p])  # type: ignore[union-attr]
    values = [g.constant(p) if isinstance(p, list) else p for p in parts if not (isinstance(p, list) and not p)]
    return values[0] if len(values) == 1 else g.op("Concat", *values, axis=0)


def _broadcast_rank(x1: Value, x2: Value) -> int | None:
    ranks = [h.rank_of(x1), h.rank_of(x2)]
    return None if None in ranks else max(ranks)  # type: ignore[type-var]


def _unsqueeze_to_rank(g: GraphContext, x: Value, rank: int) -> Value:
    own = h.rank_of(x)
    if own is None:
        raise NeedsExportTimeValue("broadcasting needs the input rank")
    return x if own == rank else h.unsqueeze(g, x, list(range(rank - own)))


@onnx_symbolic("aten::cosine_similarity")
def aten_cosine_similarity(g: GraphContext, x1: Value, x2: Value, dim: int = 1, eps: float = 1e-8) -> Value:
    """cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor

    torch's current formula: sum((x1 / max(|x1|, eps)) * (x2 / max(|x2|, eps))) over dim, each
    norm clamped separately (not the product of norms, as older versions did).
    """
    rank = _broadcast_rank(x1, x2)
    if rank is None:
        raise NeedsExportTimeValue("cosine_similarity needs the input ranks")
    a, b = _unsqueeze_to_rank(g, x1, rank), _unsqueeze_to_rank(g, x2, rank)
    axis = h.normalize_dim(dim, rank)

    def unit(v: Value) -> Value:
        length = h.reduce(g, "ReduceL2", v, [axis], True)
        return g.op("Div", v, h.clip(g, length, eps, None))

    return h.reduce(g, "ReduceSum", g.op("Mul", unit(a), unit(b)), [axis], False)


@onnx_symbolic("aten::pairwise_distance")
def aten_pairwise_distance(
    g: GraphContext, x1: Value, x2: Value, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Value:
    """pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=1e-06, bool keepdim=False) -> Tensor

    ||x1 - x2 + eps||_p over the last dim of the broadcast shape (eps is added, not clamped).
    """
    rank = _broadcast_rank(x1, x2)
    if rank is None:
        raise NeedsExportTimeValue("pairwise_distance needs the input ranks")
    diff = g.op("Add", g.op("Sub", x1, x2), h.scalar_like(g, eps, x1))
    if rank == 0:
        return reductions.vector_norm(g, diff, p, None, keepdim)
    return reductions.vector_norm(g, diff, p, [rank - 1], keepdim)


def _cdist(g: GraphContext, x1: Value, x2: Value, p: float) -> Value:
    """||x1[..., i, :] - x2[..., j, :]||_p for every pair, from the broadcast difference
    [..., P, 1, M] - [..., 1, R, M] (exact; torch's matmul shortcut for p=2 is an
    approximation of it)."""
    r1, r2 = h.rank_of(x1), h.rank_of(x2)
    if r1 is None or r2 is None:
        raise NeedsExportTimeValue("cdist needs the input ranks")
    diff = g.op("Sub", h.unsqueeze(g, x1, [r1 - 1]), h.unsqueeze(g, x2, [r2 - 2]))
    return reductions.vector_norm(g, diff, p, [max(r1, r2)], False)


@onnx_symbolic("aten::cdist")
def aten_cdist(g: GraphContext, x1: Value, x2: Value, p: float = 2.0, compute_mode: int | None = None) -> Value:
    """cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor

    compute_mode only picks torch's algorithm; the exact difference form is used always.
    """
    del compute_mode
    return _cdist(g, x1, x2, p)


@onnx_symbolic("aten::_cdist_forward")
def aten__cdist_forward(g: GraphContext, x1: Value, x2: Value, p: float, compute_mode: int | None) -> Value:
    """_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor"""
    del compute_mode
    return _cdist(g, x1, x2, p)


@onnx_symbolic("aten::dot")
def aten_dot(g: GraphContext, self: Value, tensor: Value) -> Value:
    """dot(Tensor self, Tensor tensor) -> Tensor: MatMul of two 1-D tensors is 0-d"""
    return g.op("MatMul", self, tensor)


@onnx_symbolic("aten::mv")
def aten_mv(g: GraphContext, self: Value, vec: Value) -> Value:
    """mv(Tensor self, Tensor vec) -> Tensor"""
    return g.op("MatMul", self, vec)


def _outer(g: GraphContext, a: Value, b: Value) -> Value:
    """A column times a row (mixed dtypes arrive promoted: outer is in promotion's table)."""
    column = h.unsqueeze(g, a, [1])
    if a.dtype == ir.DataType.BOOL:  # bool * bool is logical and; Mul has no bool kernel
        return g.op("And", column, b)
    return g.op("Mul", column, b)


@onnx_symbolic("aten::outer", promotion=Promotion(("self", "vec2")))
def aten_outer(g: GraphContext, self: Value, vec2: Value) -> Value:
    """outer(Tensor self, Tensor vec2) -> Tensor

    A broadcast Mul of a column and a row, so it needs no Einsum (torch's exporter waits for
    opset 12).
    """
    return _outer(g, self, vec2)


@onnx_symbolic("aten::ger", promotion=Promotion(("self", "vec2")))
def aten_ger(g: GraphContext, self: Value, vec2: Value) -> Value:
    """ger(Tensor self, Tensor vec2) -> Tensor (the old name of outer)"""
    return _outer(g, self, vec2)


def _cross(g: GraphContext, a: Value, b: Value, dim: int) -> Value:
    """a x b along ``dim`` (size 3): a[(i+1)%3] b[(i+2)%3] - a[(i+2)%3] b[(i+1)%3], with the
    rotations as Gathers of constant indices. A negative dim counts from each input's end,
    which is the same dim after broadcasting."""
    rank = _broadcast_rank(a, b)
    if rank is None:
        raise NeedsExportTimeValue("cross needs the input ranks")
    a, b = _unsqueeze_to_rank(g, a, rank), _unsqueeze_to_rank(g, b, rank)
    axis = h.normalize_dim(dim, rank)
    next_index, last_index = g.constant([1, 2, 0]), g.constant([2, 0, 1])

    def rotated(v: Value, index: Value) -> Value:
        return g.op("Gather", v, index, axis=axis)

    left = g.op("Mul", rotated(a, next_index), rotated(b, last_index))
    right = g.op("Mul", rotated(a, last_index), rotated(b, next_index))
    return g.op("Sub", left, right)


@onnx_symbolic("aten::linalg_cross")
def aten_linalg_cross(g: GraphContext, self: Value, other: Value, dim: int = -1) -> Value:
    """linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor"""
    return _cross(g, self, other, dim)


@onnx_symbolic("aten::cross")
def aten_cross(g: GraphContext, self: Value, other: Value, dim: int | None = None) -> Value:
    """cross(Tensor self, Tensor other, int? dim=None) -> Tensor

    dim=None is torch's deprecated default: the first dim of size 3 (needs static sizes).
    """
    if dim is None:
        shape = h.static_shape(self)
        if shape is None or 3 not in shape:
            raise NeedsExportTimeValue("cross without dim needs a static shape with a dim of size 3")
        dim = shape.index(3)
    return _cross(g, self, other, dim)


@onnx_symbolic("aten::tensordot")
def aten_tensordot(
    g: GraphContext, self: Value, other: Value, dims_self: Sequence[int], dims_other: Sequence[int]
) -> Value:
    """tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor

    Transpose the contracted dims together, Reshape to two matrices and MatMul: opset 9 can
    express it (torch's exporter needs Einsum at 12). Dynamic sizes go through Shape.
    """
    rank_a, rank_b = h.rank_of(self), h.rank_of(other)
    if rank_a is None or rank_b is None:
        raise NeedsExportTimeValue("tensordot needs the input ranks")
    contract_a = [h.normalize_dim(d, rank_a) for d in dims_self]
    contract_b = [h.normalize_dim(d, rank_b) for d in dims_other]
    free_a = [d for d in range(rank_a) if d not in contract_a]
    free_b = [d for d in range(rank_b) if d not in contract_b]

    def moved(x: Value, perm: list[int]) -> Value:
        return x if perm == list(range(len(perm))) else g.op("Transpose", x, perm=perm)

    inner = _axis_sizes(g, self, contract_a)
    if isinstance(inner, list):
        inner_size: list[int] | Value = [math.prod(inner)]
    else:
        inner_size = g.op("ReduceProd", inner, keepdims=1)
    outer_a, outer_b = _axis_sizes(g, self, free_a), _axis_sizes(g, other, free_b)
    # -1 cannot stand for a free size next to an empty contraction (0 elements), so a known one is written
    rows = [math.prod(outer_a)] if isinstance(outer_a, list) else [-1]
    columns = [math.prod(outer_b)] if isinstance(outer_b, list) else [-1]
    a2 = g.op("Reshape", moved(self, free_a + contract_a), _shape_input(g, [rows, inner_size]))
    b2 = g.op("Reshape", moved(other, contract_b + free_b), _shape_input(g, [inner_size, columns]))
    product = g.op("MatMul", a2, b2)
    out_shape = _shape_input(g, [outer_a, outer_b])
    return g.op("Reshape", product, out_shape)


def _einsum_labels(equation: str, ranks: Sequence[int]) -> tuple[list[list[str]], list[str]]:
    """Per-operand labels and output labels of an einsum equation. The dims an ellipsis
    stands for get private labels, right-aligned across operands as broadcasting aligns
    them; without '->' the output is the ellipsis dims, then the labels used once, sorted."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"einsum equation {equation!r} has {len(terms)} operands, got {len(ranks)} tensors")
    parsed: list[tuple[str, int, str]] = []
    for term, rank in zip(terms, ranks):
        before, dots, after = term.partition("...")
        hidden = rank - len(before) - len(after) if dots else 0
        if hidden < 0 or (not dots and len(term) != rank):
            raise ValueError(f"einsum term {term!r} does not fit a tensor of rank {rank}")
        parsed.append((before, hidden, after))
    most = max((hidden for _, hidden, _ in parsed), default=0)
    spare = [chr(0x3B1 + i) for i in range(most)]  # Greek letters never clash with torch's
    inputs = [list(before) + spare[most - hidden :] + list(after) for before, hidden, after in parsed]
    if arrow:
        before, dots, after = rhs.partition("...")
        output = list(before) + (spare if dots else []) + list(after)
    else:
        counts: dict[str, int] = {}
        for labels in inputs:
            for label in labels:
                counts[label] = counts.get(label, 0) + 1
        output = spare + sorted(label for label, c in counts.items() if c == 1 and label not in spare)
    return inputs, output


def _einsum_pair(
    g: GraphContext, a: Value, la: list[str], b: Value, lb: list[str], keep: set[str], sizes: dict[str, int | None]
) -> tuple[Value, list[str]]:
    """Contract two operands as one batched MatMul: [batch, free_a, contracted] x
    [batch, contracted, free_b]. Labels are tracked here, so intermediate values need no
    shapes; batch dims are copied by Reshape's 0 and may be dynamic."""
    a, la = _einsum_sum_out(g, a, la, keep | set(lb))
    b, lb = _einsum_sum_out(g, b, lb, keep | set(la))
    batch = [label for label in la if label in lb and label in keep]
    contracted = [label for label in la if label in lb and label not in keep]
    free_a = [label for label in la if label not in lb]
    free_b = [label for label in lb if label not in la]

    def static(labels: list[str]) -> list[int]:
        known = [sizes[label] for label in labels]
        if any(not isinstance(s, int) for s in known):
            raise NeedsExportTimeValue("einsum below opset 12 needs static sizes for dims that are not batch dims")
        return known  # type: ignore[return-value]

    def arranged(x: Value, labels: list[str], order: list[str]) -> Value:
        perm = [labels.index(label) for label in order]
        return x if perm == list(range(len(perm))) else g.op("Transpose", x, perm=perm)

    keep_batch = [0] * len(batch)
    inner = math.prod(static(contracted))
    a_shape = g.constant(keep_batch + [math.prod(static(free_a)), inner])
    b_shape = g.constant(keep_batch + [inner, math.prod(static(free_b))])
    a2 = g.op("Reshape", arranged(a, la, batch + free_a + contracted), a_shape)
    b2 = g.op("Reshape", arranged(b, lb, batch + contracted + free_b), b_shape)
    product = g.op("MatMul", a2, b2)
    out = g.op("Reshape", product, g.constant(keep_batch + static(free_a) + static(free_b)))
    return out, batch + free_a + free_b


def _einsum_sum_out(g: GraphContext, x: Value, labels: list[str], keep: set[str]) -> tuple[Value, list[str]]:
    axes = [i for i, label in enumerate(labels) if label not in keep]
    if not axes:
        return x, labels
    return h.reduce(g, "ReduceSum", x, axes, False), [label for label in labels if label in keep]


@onnx_symbolic("aten::einsum")
def aten_einsum(g: GraphContext, equation: str, tensors: Sequence[Value], path: Sequence[int] | None = None) -> Value:
    """einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor

    Einsum is opset 12; before it the equation is lowered to ReduceSum (labels used by one
    operand only), Transpose/Reshape and one batched MatMul per operand pair, folded left to
    right. Diagonals (a label repeated within one operand) have no such lowering and need
    opset 12. Bool operands are computed as int32 and turned back into bool.
    """
    del path
    return einsum_lowered(g, equation, list(tensors))


def einsum_lowered(g: GraphContext, equation: str, operands: list[Value]) -> Value:
    ranks = [h.rank_of(t) for t in operands]
    if any(r is None for r in ranks):
        raise NeedsExportTimeValue("einsum below opset 12 needs the operand ranks")
    inputs, output = _einsum_labels(equation, ranks)  # type: ignore[arg-type]
    if any(len(set(labels)) != len(labels) for labels in inputs):
        raise ValueError(f"einsum {equation!r} takes a diagonal, which needs opset 12 (Einsum)")
    sizes: dict[str, int | None] = {}
    for value, labels in zip(operands, inputs):
        for axis, label in enumerate(labels):
            size = value.shape[axis] if value.shape is not None else None
            if isinstance(size, int) and size != 1 or label not in sizes:
                sizes[label] = size if isinstance(size, int) else sizes.get(label)
    is_bool = operands[0].dtype == ir.DataType.BOOL
    if is_bool:
        operands = [h.cast(g, t, ir.DataType.INT32) for t in operands]
    current, labels = operands[0], inputs[0]
    for index in range(1, len(operands)):
        keep = set(output).union(*inputs[index + 1 :])
        current, labels = _einsum_pair(g, current, labels, operands[index], inputs[index], keep, sizes)
    current, labels = _einsum_sum_out(g, current, labels, set(output))
    perm = [labels.index(label) for label in output]
    if perm != list(range(len(perm))):
        current = g.op("Transpose", current, perm=perm)
    return h.cast(g, current, ir.DataType.BOOL) if is_bool else current


@onnx_symbolic("aten::addr", promotion=Promotion(("self", "vec1", "vec2")))
def aten_addr(
    g: GraphContext, self: Value, vec1: Value, vec2: Value, beta: float | Value = 1, alpha: float | Value = 1
) -> Value:
    """addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor

    beta * self + alpha * outer(vec1, vec2); unlike addmv, torch promotes mixed dtypes here.
    """
    return _plus_scaled_input(g, _outer(g, vec1, vec2), self, beta, alpha)


@onnx_symbolic("aten::addmv")
def aten_addmv(
    g: GraphContext, self: Value, mat: Value, vec: Value, beta: float | Value = 1, alpha: float | Value = 1
) -> Value:
    """addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    return _plus_scaled_input(g, g.op("MatMul", mat, vec), self, beta, alpha)


@onnx_symbolic("aten::vdot")
def aten_vdot(g: GraphContext, self: Value, other: Value) -> Value:
    """vdot(Tensor self, Tensor other) -> Tensor: dot with self conjugated, which for the real
    dtypes ONNX holds is dot"""
    return g.op("MatMul", self, other)


@onnx_symbolic("aten::inner", promotion=Promotion(("self", "other")))
def aten_inner(g: GraphContext, self: Value, other: Value) -> Value:
    """inner(Tensor self, Tensor other) -> Tensor

    A sum over both last dims (tensordot, so the result is self's leading dims then other's);
    a 0-d operand multiplies instead, and only then can the dtypes differ (promoted as mul).
    """
    ranks = (h.known_rank(self, "inner"), h.known_rank(other, "inner"))
    if 0 in ranks:
        return arithmetic.aten_mul(g, self, other)
    if ranks == (1, 1):
        return g.op("MatMul", self, other)
    return aten_tensordot(g, self, other, [-1], [-1])


@onnx_symbolic("aten::diagflat")
def aten_diagflat(g: GraphContext, self: Value, offset: int = 0) -> Value:
    """diagflat(Tensor self, int offset=0) -> Tensor: the flattened input on diagonal
    ``offset`` of a square matrix (diag_embed of a vector)"""
    return aten_diag_embed(g, h.reshape(g, self, [-1]), offset, 0, 1)
