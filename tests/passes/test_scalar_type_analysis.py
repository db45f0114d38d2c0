"""passes/scalar_type_analysis.py on small graphs: implicit scalars get explicit dtypes by torch's
promotion rules (promotion.promote: dimensioned tensors, zero-dim tensors and Python numbers
take part in that order)."""

from __future__ import annotations

import pytest
import torch

from exporter.capture.lowering import inline_calls
from exporter.passes import remove_dead_code, remove_inplace, scalar_type_analysis
from exporter.promotion import Operand, promote

T, Z, N = 2, 1, 0  # dimensioned tensor, zero-dim tensor, Python number


@pytest.mark.parametrize(
    ("operands", "expected"),
    [
        ([(torch.float16, T), (torch.int64, N)], torch.float16),
        ([(torch.float16, T), (torch.float64, N)], torch.float16),
        ([(torch.int32, T), (torch.float64, N)], torch.float32),
        ([(torch.int32, T), (torch.int64, N)], torch.int32),
        ([(torch.int32, T), (torch.int64, T)], torch.int64),
        ([(torch.int32, T), (torch.float64, Z)], torch.float64),
        ([(torch.float16, T), (torch.float64, Z)], torch.float16),
        ([(torch.bool, T), (torch.int64, N)], torch.int64),
        ([(torch.bool, T), (torch.bool, N)], torch.bool),
        ([(torch.uint8, T), (torch.int8, T)], torch.int16),
        ([(torch.float16, Z), (torch.float64, N)], torch.float16),
        ([(torch.int64, N), (torch.float64, N)], torch.float32),
        ([(torch.int32, T), (torch.int64, Z), (torch.float64, N)], torch.float32),
        ([(torch.uint8, T), (torch.float16, Z), (torch.int8, T)], torch.float16),
        ([(torch.bool, Z), (torch.int32, Z), (torch.int64, N)], torch.int32),
    ],
)
def test_promotion_matches_torch(operands: list[tuple[torch.dtype, int]], expected: torch.dtype) -> None:
    assert promote([Operand(d, p) for d, p in operands]) == expected
    # and torch agrees
    samples = []
    for dtype, priority in operands:
        if priority == T:
            samples.append(torch.zeros(2, dtype=dtype))
        elif priority == Z:
            samples.append(torch.zeros((), dtype=dtype))
        else:
            samples.append({torch.bool: False, torch.int64: 1, torch.float64: 1.5}[dtype])
    if len(samples) == 2:
        assert torch.result_type(samples[0], samples[1]) == expected
    else:  # fold with a real op: a tensor result keeps its priority class for the next step
        result = samples[0]
        for other in samples[1:]:
            result = torch.add(result, other)
        assert result.dtype == expected


def _analysed(fn, *args: torch.Tensor) -> torch._C.Graph:  # noqa: ANN001
    graph = torch.jit.trace(fn, args, check_trace=False).graph.copy()
    inline_calls(graph)
    remove_dead_code(graph)
    remove_inplace(graph)
    scalar_type_analysis(graph)
    return graph


def _operand_dtypes(graph: torch._C.Graph, kind: str) -> list[torch.dtype]:
    node = next(n for n in graph.nodes() if n.kind() == kind)
    return [i.type().dtype() for i in list(node.inputs())[:2]]


def test_half_plus_int_constant_stays_half() -> None:
    graph = _analysed(lambda x: x + 2, torch.randn(3).half())
    assert _operand_dtypes(graph, "aten::add") == [torch.float16, torch.float16]


def test_int32_plus_float_constant_casts_to_float32() -> None:
    graph = _analysed(lambda x: x + 2.5, torch.arange(3, dtype=torch.int32))
    assert _operand_dtypes(graph, "aten::add") == [torch.float32, torch.float32]
    assert any(n.kind() == "aten::to" for n in graph.nodes())


def test_int_true_division_computes_in_float() -> None:
    graph = _analysed(lambda a, b: a / b, torch.arange(1, 4), torch.arange(1, 4))
    assert _operand_dtypes(graph, "aten::div") == [torch.float32, torch.float32]


def test_int_floor_division_stays_integer() -> None:
    graph = _analysed(lambda a: a // 2, torch.arange(-3, 3))
    assert _operand_dtypes(graph, "aten::floor_divide") == [torch.int64, torch.int64]


def test_comparison_promotes_operands_but_returns_bool() -> None:
    graph = _analysed(lambda a: a < 0.5, torch.arange(3, dtype=torch.int32))
    assert _operand_dtypes(graph, "aten::lt") == [torch.float32, torch.float32]


def test_scripted_scalar_operand_becomes_typed_tensor() -> None:
    @torch.jit.script
    def fn(x: torch.Tensor) -> torch.Tensor:
        return x * 3

    graph = torch._C._propagate_and_assign_input_shapes(fn.graph.copy(), (torch.randn(2).half(),), [0], False, True)
    scalar_type_analysis(graph)
    mul = next(n for n in graph.nodes() if n.kind() == "aten::mul")
    constant = list(mul.inputs())[1]
    assert constant.toIValue().dtype == torch.float16
