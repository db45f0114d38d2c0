"""exporter/capture/fast_meta.py: the fast meta kernels give the results' sizes, strides and dtypes the
CPU kernels give, fall back to torch's meta kernels (and errors) outside their plain cases, and
are registered only while a meta trace runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from exporter.capture import fast_meta

aten = torch.ops.aten


def _layout(result: Any) -> Any:
    if isinstance(result, (tuple, list)):
        return [_layout(r) for r in result]
    return (tuple(result.shape), result.stride(), result.dtype)


def _make(shape: tuple[int, ...], dtype: torch.dtype, device: str, transposed: bool = False) -> torch.Tensor:
    if transposed:
        return (
            torch.randn(tuple(reversed(shape))).to(dtype).to(device).t()
            if device == "cpu"
            else (torch.empty(*reversed(shape), dtype=dtype, device=device).t())
        )
    if device == "cpu":
        return torch.randn(shape).to(dtype) if dtype.is_floating_point else torch.randint(0, 5, shape, dtype=dtype)
    return torch.empty(shape, dtype=dtype, device=device)


def _both(build: Callable[[str], tuple[Any, ...]], call: Callable[..., Any]) -> tuple[Any, Any]:
    """The op's result layout on CPU, and under MetaKernels() on meta."""
    expected = _layout(call(*build("cpu")))
    with fast_meta.MetaKernels():
        actual = _layout(call(*build("meta")))
    return expected, actual


DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("shape", "normalized", "affine"),
    [((2, 3, 8), (8,), True), ((2, 3, 8), (3, 8), False), ((5, 4), (4,), True), ((4,), (4,), True)],
)
def test_layer_norm_matches_cpu(dtype: torch.dtype, shape: tuple, normalized: tuple, affine: bool) -> None:
    def build(device: str) -> tuple:
        weight = _make(normalized, dtype, device) if affine else None
        bias = _make(normalized, dtype, device) if affine else None
        return _make(shape, dtype, device), weight, bias

    expected, actual = _both(build, lambda x, w, b: aten.native_layer_norm(x, list(normalized), w, b, 1e-5))
    assert actual == expected


def test_layer_norm_of_a_transposed_input_is_contiguous_as_on_cpu() -> None:
    expected, actual = _both(
        lambda d: (_make((6, 4), torch.float32, d, transposed=True),),
        lambda x: aten.native_layer_norm(x, [4], None, None, 1e-5),
    )
    assert actual == expected


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias_shape", [(7,), (1, 7), (5, 7), (5, 1), ()])
def test_addmm_matches_cpu(dtype: torch.dtype, bias_shape: tuple) -> None:
    def build(device: str) -> tuple:
        return _make(bias_shape, dtype, device), _make((5, 3), dtype, device), _make((3, 7), dtype, device)

    expected, actual = _both(build, lambda b, m1, m2: aten.addmm(b, m1, m2, beta=0.5, alpha=2.0))
    assert actual == expected


def test_addmm_with_a_transposed_operand_matches_cpu() -> None:
    def build(device: str) -> tuple:
        return (
            _make((7,), torch.float32, device),
            _make((5, 3), torch.float32, device),
            _make((3, 7), torch.float32, device, transposed=True),
        )

    expected, actual = _both(build, lambda b, m1, m2: aten.addmm(b, m1, m2))
    assert actual == expected


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64])
@pytest.mark.parametrize("out_dtype", [None, torch.float64])
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_safe_softmax_matches_cpu(dtype: torch.dtype, out_dtype: torch.dtype | None, dim: int) -> None:
    expected, actual = _both(lambda d: (_make((2, 3, 4), dtype, d),), lambda x: aten._safe_softmax(x, dim, out_dtype))
    assert actual == expected


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("transposed", [False, True])
def test_gelu_and_relu_match_cpu(dtype: torch.dtype, approximate: str, transposed: bool) -> None:
    build = lambda d: (_make((4, 6), dtype, d, transposed=transposed),)  # noqa: E731
    for call in (lambda x: aten.gelu(x, approximate=approximate), aten.relu):
        expected, actual = _both(build, call)
        assert actual == expected


@pytest.mark.parametrize("op", [aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor, aten.div.Tensor])
@pytest.mark.parametrize(
    ("a", "b"),
    [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((4,), (2, 3, 4)), ((3, 1), (1, 4)), ((1, 4), (3, 1)), ((), (2, 3))],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_binary_elementwise_matches_cpu(op: Any, a: tuple, b: tuple, dtype: torch.dtype) -> None:
    expected, actual = _both(lambda d: (_make(a, dtype, d), _make(b, dtype, d)), op)
    assert actual == expected


@pytest.mark.parametrize(
    "build",
    [
        lambda d: (_make((2, 3), torch.float32, d), _make((2, 3), torch.float16, d)),  # type promotion
        lambda d: (_make((2, 3), torch.int64, d), _make((2, 3), torch.int64, d)),  # integers
        lambda d: (_make((3, 4), torch.float32, d, transposed=True), _make((3, 4), torch.float32, d)),  # layout
        lambda d: (_make((2, 3), torch.float32, d), 2.5),  # a Python number
    ],
    ids=["mixed-dtypes", "integers", "transposed", "scalar"],
)
def test_other_elementwise_cases_go_to_torch_meta_and_match_cpu(build: Callable[[str], tuple]) -> None:
    for op in (aten.add.Tensor, aten.mul.Tensor):
        expected, actual = _both(build, op)
        assert actual == expected


@pytest.mark.parametrize(
    "call",
    [
        lambda d: aten.addmm(
            _make((7,), torch.float32, d), _make((5, 3), torch.float32, d), _make((4, 7), torch.float32, d)
        ),
        lambda d: aten.addmm(
            _make((6,), torch.float32, d), _make((5, 3), torch.float32, d), _make((3, 7), torch.float32, d)
        ),
        lambda d: aten.native_layer_norm(_make((2, 5), torch.float32, d), [4], None, None, 1e-5),
        lambda d: aten.native_layer_norm(
            _make((2, 4), torch.float32, d), [4], _make((3,), torch.float32, d), None, 1e-5
        ),
        lambda d: aten.add(_make((2, 3), torch.float32, d), _make((2, 4), torch.float32, d)),
        lambda d: aten._safe_softmax(_make((2, 3), torch.float32, d), 2),
    ],
    ids=["addmm-inner", "addmm-bias", "layer-norm-shape", "layer-norm-weight", "add-broadcast", "softmax-dim"],
)
def test_shapes_that_do_not_fit_raise_as_torch(call: Callable[[str], Any]) -> None:
    with pytest.raises((RuntimeError, IndexError)):
        call("cpu")
    with fast_meta.MetaKernels(), pytest.raises((RuntimeError, IndexError)):
        call("meta")


def test_kernels_run_only_inside_the_mode_and_only_in_its_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    calls: list[str] = []
    original = fast_meta.FAST_META_KERNELS["addmm"]

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setitem(fast_meta.FAST_META_KERNELS, "addmm", counting)
    args = (torch.empty(7, device="meta"), torch.empty(5, 3, device="meta"), torch.empty(3, 7, device="meta"))
    other = threading.Thread(target=lambda: aten.addmm(*args), name="other")
    with fast_meta.MetaKernels():
        assert aten.addmm(*args).shape == (5, 7)
        other.start()
        other.join()
    assert calls == [threading.current_thread().name]  # not the other thread's call
    assert aten.addmm(*args).shape == (5, 7)  # torch's own kernel again
    assert len(calls) == 1


def test_a_meta_trace_uses_them_and_exports_the_same_bytes() -> None:
    """A Linear + LayerNorm + GELU + softmax model, traced on meta (with the fast kernels) and
    for real, gives byte-identical ONNX files."""
    import io

    import exporter
    from exporter.capture import meta_trace

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(16, 16)
            self.norm = torch.nn.LayerNorm(16)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = torch.nn.functional.gelu(self.linear(x)) * x + x
            return torch.softmax(self.norm(h), dim=-1) - torch.relu(h) / 3

    model = Block().eval()
    x = torch.randn(2, 5, 16)
    files = {}
    for mode in ("meta", "real"):
        saved = meta_trace.MODE
        meta_trace.MODE = mode
        try:
            buffer = io.BytesIO()
            report = exporter.export(model, (x,), buffer, opset_version=17, report=True)
        finally:
            meta_trace.MODE = saved
        assert report.capture == ("meta trace" if mode == "meta" else "trace")
        files[mode] = buffer.getvalue()
    assert files["meta"] == files["real"]
