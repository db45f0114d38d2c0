"""Functions of whole matrices: the inverse (linalg_inv, inverse), integer matrix powers,
chained products (linalg_multi_dot), Vandermonde matrices and block-diagonal assembly.

ONNX idioms: ONNX has no inverse, so it is an unrolled Gauss-Jordan elimination with partial
pivoting (ArgMax picks the pivot row, Where swaps and eliminates, so no NaN leaks through a
multiplication by zero), which needs the matrix size at export time; batch dims may be dynamic.
Powers and chains are MatMuls in the order torch multiplies, so integers match exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors as tensors_module
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.opset9 import splitting
from exporter.registry import onnx_symbolic

Value = ir.Value


def _matrix_size(a: Value, what: str, argument: str) -> int:
    """n of an (*, n, n) input, which the unrolled elimination needs at export time."""
    rank = h.known_rank(a, what)
    if rank < 2:
        raise ValueError(f"{what} takes (*, n, n) matrices, got a {rank}-d tensor")
    sizes = [a.shape[-2], a.shape[-1]] if a.shape is not None else [None, None]
    if not all(isinstance(s, int) for s in sizes):
        raise NeedsExportTimeValue(
            f"{what}: argument '{argument}' needs its matrix size (its last two dims) at export time, as the inverse"
            " is an unrolled elimination; mark only batch dims as dynamic"
        )
    return int(sizes[-1])


def inverse(g: GraphContext, a: Value, what: str, argument: str) -> Value:
    """The inverse of every (n, n) matrix of ``a`` by Gauss-Jordan elimination on [A | I].

    Step k picks the row of largest |value| in column k among rows k.. (NaN counts as the
    largest, so a NaN anywhere spreads to the whole result, as in torch), swaps it with row k,
    scales it to a leading 1 and subtracts its multiples from every other row. A singular
    matrix, which torch refuses with an error at run time, gives infs or NaNs here.
    """
    n = _matrix_size(a, what, argument)
    if n == 0:
        return a
    rank = h.known_rank(a, what)
    row_axis, col_axis = rank - 2, rank - 1
    identity = g.op("Expand", g.constant(torch.eye(n, dtype=tensors_module.to_torch_dtype(a.dtype))), h.shape_of(g, a))
    m = g.op("Concat", a, identity, axis=col_axis)
    rows = torch.arange(n).reshape(n, 1)
    row_index = g.constant(rows)
    zero, below_any = h.scalar_like(g, 0, a), h.scalar_like(g, -1, a)
    largest = h.scalar_like(g, float("inf"), a)
    for k in range(n):
        column = g.op("Gather", m, g.constant([k]), axis=col_axis)
        magnitude = g.op("Abs", column)
        magnitude = g.op("Where", g.op("IsNaN", magnitude), largest, magnitude)
        if k:
            magnitude = g.op("Where", g.constant(rows < k), below_any, magnitude)
        pivot = g.op("ArgMax", magnitude, axis=row_axis, keepdims=1)
        is_pivot = g.op("Equal", row_index, pivot)
        pivot_row = h.reduce(g, "ReduceSum", g.op("Where", is_pivot, m, zero), [row_axis], True)
        current_row = g.op("Gather", m, g.constant([k]), axis=row_axis)
        is_k = g.constant(rows == k)
        swapped = g.op("Where", is_k, pivot_row, g.op("Where", is_pivot, current_row, m))
        normalized = g.op("Div", pivot_row, g.op("Gather", pivot_row, g.constant([k]), axis=col_axis))
        factors = g.op("Gather", swapped, g.constant([k]), axis=col_axis)
        eliminated = g.op("Sub", swapped, g.op("Mul", factors, normalized))
        m = g.op("Where", is_k, normalized, eliminated)
    return h.slice_static(g, m, [col_axis], [n], [2 * n])


@onnx_symbolic("aten::linalg_inv")
def aten_linalg_inv(g: GraphContext, A: Value) -> Value:  # noqa: N803 - schema name
    """linalg_inv(Tensor A) -> Tensor (torch.inverse traces to it too; see ``inverse``)"""
    return inverse(g, A, "linalg_inv", "A")


@onnx_symbolic("aten::inverse")
def aten_inverse(g: GraphContext, self: Value) -> Value:
    """inverse(Tensor self) -> Tensor: torch 2.13 records torch.inverse as linalg_inv when it
    traces or scripts; this serves graphs that still name aten::inverse (see ``inverse``)"""
    return inverse(g, self, "inverse", "self")


def _identity_like(g: GraphContext, a: Value) -> Value:
    """Identity matrices of a's shape and dtype (bool too), for a size known or not."""
    size = h.dim_size(g, a, -1)
    if isinstance(size, int):
        eye = g.constant(torch.eye(size, dtype=tensors_module.to_torch_dtype(a.dtype)))
    else:
        steps = h.iota(g, size)
        eye = h.cast(g, g.op("Equal", h.unsqueeze(g, steps, [1]), h.unsqueeze(g, steps, [0])), a.dtype)
    return g.op("Expand", eye, h.shape_of(g, a))


@onnx_symbolic("aten::linalg_matrix_power")
def aten_linalg_matrix_power(g: GraphContext, self: Value, n: int) -> Value:
    """linalg_matrix_power(Tensor self, int n) -> Tensor

    torch's own order of products: n up to 3 directly, larger n by squaring from the least
    significant bit, the result multiplied by each square whose bit is set. A negative n
    powers the inverse (whose matrix size must be known at export time); 0 gives identities.
    """
    h.known_rank(self, "linalg_matrix_power")
    if n == 0:
        return _identity_like(g, self)
    a = inverse(g, self, "linalg_matrix_power", "self") if n < 0 else self
    n = abs(n)
    if n <= 3:
        result = a
        for _ in range(n - 1):
            result = g.op("MatMul", result, a)
        return result if n > 1 else g.op("Identity", a)
    square: Value | None = None
    product: Value | None = None
    while n > 0:
        bit, n = n % 2, n // 2
        square = a if square is None else g.op("MatMul", square, square)
        if bit:
            product = square if product is None else g.op("MatMul", product, square)
    assert product is not None
    return product


def _chain_order(dims: Sequence[int]) -> list[list[int]]:
    """torch's multi_dot order for matrices dims[i] x dims[i+1]: split[i][j] is the k where
    the product of i..j splits, the cheapest by multiplications, the first on ties."""
    count = len(dims) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                candidate = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] < 0 or candidate < cost[i][j]:
                    cost[i][j], split[i][j] = candidate, k
    return split


@onnx_symbolic("aten::linalg_multi_dot")
def aten_linalg_multi_dot(g: GraphContext, tensors: Sequence[Value]) -> Value:
    """linalg_multi_dot(Tensor[] tensors) -> Tensor

    The chain multiplied in torch's order (the fewest multiplications: a choice between two
    for three matrices, dynamic programming beyond), read from sizes known at export time,
    left to right otherwise. A 1-D first or last operand is a row or column vector: MatMul
    drops its dim as torch does.
    """
    operands = list(tensors)
    if len(operands) < 2:
        raise ValueError("linalg_multi_dot takes at least two tensors")
    if len(operands) == 2:
        return g.op("MatMul", *operands)
    shapes = [h.static_shape(t) for t in operands]
    dims: list[int] = []
    if all(s is not None for s in shapes):
        # a 1-d first operand is a (1, n) row, a 1-d last one an (n, 1) column
        rows = [1 if i == 0 and len(s) == 1 else s[0] for i, s in enumerate(shapes)]  # type: ignore[arg-type]
        dims = [*rows, shapes[-1][-1] if len(shapes[-1]) == 2 else 1]  # type: ignore[index]
    if not dims:
        result = operands[0]
        for operand in operands[1:]:
            result = g.op("MatMul", result, operand)
        return result
    if len(operands) == 3:  # torch compares the two orders itself: (AB)C unless A(BC) is cheaper
        a, b, c, d = dims
        if (a * c) * (b + d) > (b * d) * (a + c):
            return g.op("MatMul", operands[0], g.op("MatMul", operands[1], operands[2]))
        return g.op("MatMul", g.op("MatMul", operands[0], operands[1]), operands[2])
    split = _chain_order(dims)

    def product(i: int, j: int) -> Value:
        if i == j:
            return operands[i]
        return g.op("MatMul", product(i, split[i][j]), product(split[i][j] + 1, j))

    return product(0, len(operands) - 1)


@onnx_symbolic("aten::linalg_vander")
def aten_linalg_vander(g: GraphContext, x: Value, N: int | None = None) -> Value:  # noqa: N803 - schema name
    """linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor

    Columns x^0 .. x^(N-1) as torch computes them: a column of ones (ones even where x is
    NaN) and a running product, so floats match exactly; integers compute in int64 as torch's
    cumprod promotes them. The column count is unrolled, so N (or the size of x's last dim)
    must be known at export time.
    """
    rank = h.known_rank(x, "linalg_vander")
    if rank == 0:
        raise ValueError("linalg_vander takes a tensor of at least one dim")
    if N is None:
        size = h.dim_size(g, x, -1)
        if not isinstance(size, int):
            raise NeedsExportTimeValue(
                "linalg_vander: argument 'N' is None and x's last dim is dynamic; pass N (an int) explicitly"
            )
        N = size  # noqa: N806 - schema name
    if N <= 1:
        raise ValueError(f"linalg_vander: N must be greater than 1, got {N}")
    if not h.is_floating(x):
        x = h.cast(g, x, ir.DataType.INT64)
    column = h.unsqueeze(g, x, [rank])
    ones = g.op("Expand", h.scalar_like(g, 1, column), h.shape_of(g, column))
    columns = [ones, column]
    for _ in range(N - 2):
        columns.append(g.op("Mul", columns[-1], column))
    return g.op("Concat", *columns, axis=rank)


def _sum_sizes(g: GraphContext, sizes: Sequence[int | Value]) -> int | Value:
    """The sum of dim sizes, an int when all are known."""
    known = sum(s for s in sizes if isinstance(s, int))
    values = [s for s in sizes if isinstance(s, Value)]
    if not values:
        return known
    total = values[0]
    for value in values[1:]:
        total = g.op("Add", total, value)
    return g.op("Add", total, g.constant(known)) if known else total


@onnx_symbolic("aten::block_diag")
def aten_block_diag(g: GraphContext, tensors: Sequence[Value]) -> Value:
    """block_diag(Tensor[] tensors) -> Tensor

    Each input (0-d as 1x1, 1-d as a row) becomes a band of rows: zeros left of it for the
    columns of those before, zeros right for those after (Expand of a zero, so sizes may be
    dynamic), and the bands are stacked. Mixed dtypes promote as in cat; no input gives the
    (1, 0) float tensor torch returns.
    """
    if not tensors:
        return g.constant(torch.zeros(1, 0))
    blocks = []
    for t in splitting.promoted(g, tensors):
        rank = h.known_rank(t, "block_diag")
        if rank > 2:
            raise ValueError(f"block_diag takes tensors of at most 2 dims, got {rank}")
        blocks.append(h.reshape(g, t, [1, 1]) if rank == 0 else h.unsqueeze(g, t, [0]) if rank == 1 else t)
    zero = h.scalar_like(g, False if blocks[0].dtype == ir.DataType.BOOL else 0, blocks[0])
    widths = [h.dim_size(g, b, 1) for b in blocks]
    bands = []
    for i, block in enumerate(blocks):
        height = h.dim_size(g, block, 0)
        parts = []
        for width in (_sum_sizes(g, widths[:i]), None, _sum_sizes(g, widths[i + 1 :])):
            if width is None:
                parts.append(block)
            elif not (isinstance(width, int) and width == 0):
                parts.append(g.op("Expand", zero, h.sizes_to_shape(g, [height, width])))
        bands.append(parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=1))
    return bands[0] if len(bands) == 1 else g.op("Concat", *bands, axis=0)
