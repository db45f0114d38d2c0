"""The kernels a meta trace runs for some ops on meta tensors, in its own thread only.

Fast kernels for the ops that dominated a meta trace's time. torch registers Python meta
kernels (decompositions into ``torch._refs``) over some ops, even where a C++ meta kernel exists
underneath. A handful of them cost milliseconds per call, and a transformer calls them in every
layer: on BERT-base, ``native_layer_norm`` (2.6 ms a call), ``addmm`` (0.7 ms),
``_safe_softmax`` and ``gelu`` were about 60 % of the meta trace. A trace only needs each
result's sizes, strides and dtype, so while a meta trace runs these ops get kernels that
allocate their results as the CPU kernels do (what the real trace records) and compute nothing.
Any case outside the plain one each kernel knows (mixed dtypes, non-contiguous inputs, shapes
that do not fit: what should raise) goes to torch's own meta kernel, so errors and unusual
layouts are torch's. ``tests/capture/test_fast_meta.py`` compares every kernel with the CPU
kernel's results.

And convolutions that trace as CPU ones do (:meth:`MetaKernels.convolution`).

The kernels are a :class:`MetaKernels` dispatch mode, which the meta trace enters in the thread
it traces in: dispatch modes are per thread, so no other thread's ops (on meta tensors or not)
see them, and nothing is registered with torch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["FAST_META_KERNELS", "MetaKernels"]

_aten = torch.ops.aten


def _torch_meta(op: torch._ops.OpOverload) -> Callable[..., Any]:
    """The Python meta kernel torch registers for ``op``, picked as torch's activate_meta
    picks it (meta table, then post- and pre-autograd decompositions)."""
    from torch._decomp import global_decomposition_table

    for kind in ("meta", "post_autograd", "pre_autograd"):
        kernel = global_decomposition_table[kind].get(op)
        if kernel is not None:
            return kernel
    raise LookupError(f"torch has no Python meta kernel for {op}")


def _floating(*tensors: torch.Tensor | None) -> bool:
    return all(t is None or t.is_floating_point() for t in tensors)


def _same_dtype(first: torch.Tensor, *others: torch.Tensor | None) -> bool:
    return all(t is None or t.dtype == first.dtype for t in others)


def _empty(shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype, device="meta")


def _native_layer_norm(
    input: torch.Tensor,
    normalized_shape: Sequence[int],
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    eps: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # CPU: the output is contiguous; mean and rstd have the input's dtype (half gives half)
    # and its leading sizes, with a 1 for each normalized axis
    normalized = tuple(normalized_shape)
    axis = input.dim() - len(normalized)
    if (
        not normalized
        or axis < 0
        or tuple(input.shape[axis:]) != normalized
        or any(t is not None and tuple(t.shape) != normalized for t in (weight, bias))
        or not _floating(input, weight, bias)
        or not _same_dtype(input, weight, bias)
    ):
        return _torch_meta(_aten.native_layer_norm.default)(input, normalized_shape, weight, bias, eps)
    stats = tuple(input.shape[:axis]) + (1,) * len(normalized)
    return _empty(input.shape, input.dtype), _empty(stats, input.dtype), _empty(stats, input.dtype)


def _addmm(
    self: torch.Tensor, mat1: torch.Tensor, mat2: torch.Tensor, *, beta: Any = 1, alpha: Any = 1
) -> torch.Tensor:
    # CPU: a contiguous (rows of mat1) x (columns of mat2) result in the operands' dtype
    if (
        mat1.dim() != 2
        or mat2.dim() != 2
        or mat1.shape[1] != mat2.shape[0]
        or self.dim() > 2
        or not _floating(self, mat1, mat2)
        or not _same_dtype(mat1, mat2, self)
        or isinstance(beta, complex)
        or isinstance(alpha, complex)
    ):
        return _torch_meta(_aten.addmm.default)(self, mat1, mat2, beta=beta, alpha=alpha)
    result = (mat1.shape[0], mat2.shape[1])
    # self must broadcast to the result
    for have, want in zip(reversed(self.shape), reversed(result)):
        if have not in (1, want):
            return _torch_meta(_aten.addmm.default)(self, mat1, mat2, beta=beta, alpha=alpha)
    return _empty(result, mat1.dtype)


def _safe_softmax(self: torch.Tensor, dim: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    # CPU: softmax into a contiguous result of the requested dtype, then where() over it
    rank = max(self.dim(), 1)
    if not -rank <= dim < rank or not self.is_floating_point() or (dtype is not None and not dtype.is_floating_point):
        return _torch_meta(_aten._safe_softmax.default)(self, dim, dtype)
    return _empty(self.shape, dtype if dtype is not None else self.dtype)


def _gelu(self: torch.Tensor, *, approximate: str = "none") -> torch.Tensor:
    # CPU: an elementwise result laid out as the input; only contiguous inputs are handled here
    if approximate not in ("none", "tanh") or not self.is_floating_point() or not self.is_contiguous():
        return _torch_meta(_aten.gelu.default)(self, approximate=approximate)
    return _empty(self.shape, self.dtype)


def _elementwise(op: torch._ops.OpOverload) -> Callable[..., Any]:
    """A binary elementwise op's kernel for two contiguous meta tensors of one floating dtype:
    CPU's TensorIterator lays the broadcast result out contiguously when every operand is."""

    def kernel(self: Any, other: Any, **kwargs: Any) -> torch.Tensor:
        if not (
            isinstance(self, torch.Tensor)
            and isinstance(other, torch.Tensor)
            and self.is_meta
            and other.is_meta
            and self.dtype == other.dtype
            and self.is_floating_point()
            and self.is_contiguous()
            and other.is_contiguous()
            and not any(isinstance(v, complex) for v in kwargs.values())
        ):
            return _torch_meta(op)(self, other, **kwargs)
        try:
            shape = torch.broadcast_shapes(self.shape, other.shape)
        except RuntimeError:
            return _torch_meta(op)(self, other, **kwargs)  # torch's error
        return _empty(shape, self.dtype)

    kernel.__name__ = f"fast_{op.__name__.replace('.', '_')}"
    return kernel


def _relu(self: torch.Tensor) -> torch.Tensor:
    if not self.is_contiguous() or not self.is_floating_point():
        return _torch_meta(_aten.relu.default)(self)
    return _empty(self.shape, self.dtype)


# aten op name -> the fast kernel registered on its Meta key while a meta trace runs
FAST_META_KERNELS: dict[str, Callable[..., Any]] = {
    "native_layer_norm": _native_layer_norm,
    "addmm": _addmm,
    "_safe_softmax": _safe_softmax,
    "gelu": _gelu,
    "relu": _relu,
    "add.Tensor": _elementwise(_aten.add.Tensor),
    "sub.Tensor": _elementwise(_aten.sub.Tensor),
    "mul.Tensor": _elementwise(_aten.mul.Tensor),
    "div.Tensor": _elementwise(_aten.div.Tensor),
}


class MetaKernels(TorchDispatchMode):
    """:data:`FAST_META_KERNELS` and :meth:`convolution` for ops whose tensors are all on meta,
    in the thread that enters the mode; every other op dispatches as usual."""

    def __init__(self) -> None:
        super().__init__()
        self._kernels: dict[torch._ops.OpOverload, Callable[..., Any]] = {
            _overload(name): kernel for name, kernel in FAST_META_KERNELS.items()
        }
        self._kernels[_aten.convolution.default] = self.convolution
        self._outside: torch._C.DispatchKeySet | None = None

    def __enter__(self) -> MetaKernels:
        # the dispatch keys this thread excludes outside any kernel (see convolution)
        self._outside = torch._C._dispatch_tls_local_exclude_set()
        return super().__enter__()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        kernel = self._kernels.get(func)
        if kernel is None or not all(a.is_meta for a in args if isinstance(a, torch.Tensor)):
            return func(*args, **kwargs)
        return kernel(*args, **kwargs)

    def convolution(
        self, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, transposed: Any, *rest: Any
    ) -> Any:
        """``aten::convolution`` on meta tensors, recorded as on CPU.

        On CPU, ``aten::convolution`` (no tracer kernel of its own) calls
        ``aten::_convolution``, which the tracer records with the cuDNN flags as constants. On
        meta, a Python kernel sits on ``aten::convolution`` itself: it runs while the tracer
        records, reads traced sizes and fails, so the convolution is never recorded. This
        kernel calls ``aten::_convolution`` with the flags the CPU path passes, as a call of
        its own (a dispatch mode's kernel runs with the tracer's dispatch key excluded: the
        keys this thread excludes outside kernels are put back for the call), so the tracer
        records it; its meta kernel then runs with the tracer paused, as on CPU."""
        output_padding, groups = rest
        cudnn = torch.backends.cudnn
        deterministic = cudnn.deterministic or torch.are_deterministic_algorithms_enabled()
        with torch._C._ForceDispatchKeyGuard(torch._C._dispatch_tls_local_include_set(), self._outside):
            return _aten._convolution(
                input, weight, bias, stride, padding, dilation, transposed, output_padding, groups,
                cudnn.benchmark, deterministic, cudnn.enabled, cudnn.allow_tf32,
            )  # fmt: skip


def _overload(name: str) -> torch._ops.OpOverload:
    """``torch.ops.aten`` overload of "name" or "name.overload" ("default" when none is named)."""
    op, _, overload = name.partition(".")
    return getattr(getattr(_aten, op), overload or "default")
