"""The op table for repeat, tile, broadcast, meshgrid, cartesian_prod, combinations, as_strided and
padding (exporter.opset9.repeat_pad).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from cases import (
    INF,
    NAN,
    Case,
    arange,
    f32,
    helper_params,
    lowering_opsets_below,
    op_params,
    run_case,
    traced_and_scripted,
    typed,
)
from conftest import Wrap, export_to_bytes


def _cartesian_prod(
    a: torch.Tensor, b: torch.Tensor, c: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.cartesian_prod(a, b, c), torch.cartesian_prod(c, a), torch.cartesian_prod(b)


def _combinations(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.combinations(x),
        torch.combinations(x, 3),
        torch.combinations(x, with_replacement=True),
        torch.combinations(x, 3, True),
    )


def _repeat_kernel(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """torchaudio's compute_deltas: a 1-D kernel repeated to (channels, 1, 5), a run-time count
    and more repeats than the kernel has dims; and a 0-d tensor repeated to two dims."""
    kernel = torch.arange(-2, 3, 1, dtype=x.dtype).repeat(x.shape[1], 1, 1)
    return kernel, x.repeat(1, x.shape[0], 1, 2), x.sum().repeat(x.shape[0], 2)


def _frames(x: torch.Tensor) -> torch.Tensor:
    """julius.core.unfold: frames of 4 samples every 2, as a view whose strides are read from
    the padded tensor (layout facts the specialization folds)."""
    shape = list(x.shape)
    length = shape.pop(-1)
    n_frames = math.ceil((max(length, 4) - 4) / 2) + 1
    padded = F.pad(x, (0, (n_frames - 1) * 2 + 4 - length)).contiguous()
    strides: list[int] = []
    for dim in range(padded.dim()):
        strides.append(padded.stride(dim))
    last_stride = strides.pop(-1)
    assert last_stride == 1, "data should be contiguous"
    return padded.as_strided(shape + [n_frames, 4], strides + [2, 1])


def _strided_by_input_strides(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """as_strided by an input's own strides (a transposed example reads them transposed) and
    by a run-time size with strides fixed at export."""
    return x.as_strided([x.shape[0], 2], [x.stride(0), x.stride(1)]), x.as_strided([x.shape[0] - 1, 3], [1, 1])


def _combinations_few(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """r = 0 (an empty 1-d tensor), r = 1, and r beyond the length (no rows without replacement)."""
    return torch.combinations(x, 0), torch.combinations(x, 1), torch.combinations(x, 4), torch.combinations(x, 4, True)


CASES = [
    # repeating and broadcasting
    Case("repeat", lambda a: a.repeat(2, 1, 3), arange(2, 3)),
    Case("repeat_same_rank_bool", lambda a: a.repeat(3, 2), typed(2, 3, dtype=torch.bool)),
    Case("tile_short", lambda a: torch.tile(a, (2,)), arange(2, 3)),
    Case("tile_long_half", lambda a: torch.tile(a, (2, 1, 2)), typed(3, dtype=torch.float16)),
    *traced_and_scripted(
        "repeat_run_time_more_dims",
        _repeat_kernel,
        lambda: (torch.rand(2, 4, 3),),
        dynamic={"x0": {0: "batch", 1: "channels"}},
        others=lambda: [(torch.rand(3, 1, 3),), (torch.rand(1, 6, 3),)],
    ),
    Case("repeat_interleave_int", lambda a: a.repeat_interleave(3, 1), arange(2, 3)),
    Case("repeat_interleave_flat", lambda a: torch.repeat_interleave(a, 2), arange(2, 3, dtype=torch.int32)),
    Case("repeat_interleave_zero", lambda a: a.repeat_interleave(0, 1) + 1, arange(2, 3)),
    Case(
        "repeat_interleave_runtime_int",
        lambda a, b: a.repeat_interleave(b.size(0), 0),
        lambda: (torch.randn(2, 3), torch.randn(3)),
        dynamic={"x1": [0]},
        others=lambda: [(torch.randn(2, 3), torch.randn(1))],
    ),
    Case("repeat_interleave_const_counts", lambda a: a.repeat_interleave(torch.tensor([1, 0, 3]), 0), arange(3, 2)),
    Case(
        "repeat_interleave_runtime_counts",
        lambda a, r: a.repeat_interleave(r, 0),
        lambda: (torch.randn(4, 2), torch.tensor([2, 0, 1, 3])),
        min_opset=11,
        others=lambda: [(torch.randn(4, 2), torch.tensor([0, 5, 1, 1]))],
    ),
    Case(
        # counts of a length known only at run time: one count (broadcast by torch) or one per index
        "repeat_interleave_runtime_count_length",
        lambda a, r: a.repeat_interleave(r, 1),
        lambda: (torch.tensor([[1, 2, 4], [3, 4, 7]]), torch.tensor([2])),
        min_opset=11,
        dynamic={"x1": [0]},
        others=lambda: [
            (torch.tensor([[1, 2, 4], [3, 4, 7]]), torch.tensor([4])),
            (torch.tensor([[1, 2, 4], [3, 4, 7]]), torch.tensor([3, 0, 2])),
        ],
    ),
    Case(
        "repeat_interleave_runtime_count_length_dynamic_input",
        lambda a, r: a.repeat_interleave(r, 0),
        lambda: (torch.randn(3, 2), torch.tensor([2])),
        min_opset=11,
        dynamic={"x0": [0], "x1": [0]},
        others=lambda: [(torch.randn(2, 2), torch.tensor([4])), (torch.randn(2, 2), torch.tensor([0, 3]))],
    ),
    Case(
        "repeat_interleave_counts_only",
        lambda r: torch.repeat_interleave(r) * 1,
        lambda: (torch.tensor([1, 3, 0, 2]),),
        min_opset=11,
    ),
    Case(
        "repeat_interleave_dynamic",
        lambda a: a.repeat_interleave(2, 0),
        arange(3, 2),
        dynamic={"x0": [0]},
        others=lambda: [(torch.randn(5, 2),)],
    ),
    Case("broadcast_to", lambda a: a.broadcast_to(2, 3, 4), f32(3, 1)),
    Case(
        "broadcast_tensors",
        lambda a, b, c: torch.broadcast_tensors(a, b, c),
        lambda: (torch.randn(3, 1), torch.randn(4), torch.randn(2, 1, 1)),
    ),
    Case(
        "broadcast_tensors_dynamic",
        lambda a, b: torch.broadcast_tensors(a, b),
        lambda: (torch.randn(3, 1), torch.randn(1, 4)),
        dynamic={"x0": [0], "x1": [1]},
        others=lambda: [(torch.randn(2, 1), torch.randn(1, 6))],
    ),
    Case(
        "meshgrid_ij",
        lambda a, b, c: torch.meshgrid(a, b, c, indexing="ij"),
        lambda: (torch.randn(2), torch.randn(3), torch.randn(4)),
    ),
    Case("meshgrid_default", lambda a, b: torch.meshgrid(a, b), lambda: (torch.randn(2), torch.randn(3))),
    Case("meshgrid_xy", lambda a, b: torch.meshgrid(a, b, indexing="xy"), lambda: (torch.randn(2), torch.randn(3))),
    Case(
        "meshgrid_int_dynamic",
        lambda a, b: torch.meshgrid(a, b, indexing="xy"),
        lambda: (torch.arange(3), torch.arange(4)),
        dynamic={"x0": [0], "x1": [0]},
        others=lambda: [(torch.arange(5), torch.arange(2))],
    ),
    Case("as_strided", lambda a: torch.as_strided(a, (3, 3), (1, 2), 1), arange(4, 3)),
    Case("as_strided_overlap_int", lambda a: a.as_strided((2, 2, 2), (3, 1, 2)), arange(12, dtype=torch.int64)),
    Case("as_strided_transposed_input", lambda a: a.t().as_strided((2, 3), (3, 1)), arange(3, 4)),
    Case("as_strided_expanded_input", lambda a: a.expand(3, 4).as_strided((2, 2), (1, 1)), arange(1, 4)),
    *traced_and_scripted(
        "as_strided_frames_of_strides",
        _frames,
        lambda: (torch.randn(2, 3, 11),),
        dynamic={"x0": {0: "batch"}},
        others=lambda: [(torch.randn(1, 3, 11),), (torch.randn(5, 3, 11),)],
    ),
    *traced_and_scripted(
        "as_strided_run_time_sizes",
        _strided_by_input_strides,
        lambda: (torch.randn(4, 3),),
        dynamic={"x0": {0: "rows"}},
        others=lambda: [(torch.randn(7, 3),), (torch.randn(2, 3),)],
    ),
    *traced_and_scripted("as_strided_transposed_example", _strided_by_input_strides, lambda: (torch.randn(3, 4).t(),)),
    Case("unfold", lambda a: a.unfold(1, 3, 2), arange(2, 8, 3)),
    Case(
        "unfold_dynamic",
        lambda a: a.unfold(1, 3, 2),
        arange(2, 8, 3),
        dynamic={"x0": [0, 1]},
        others=lambda: [(torch.randn(1, 11, 3),), (torch.randn(2, 3, 3),)],
    ),
    Case("unfold_last", lambda a: a.unfold(-1, 2, 1), arange(3, 4, dtype=torch.int32)),
    Case("repeat_int32", lambda a: a.repeat(2, 2), typed(2, 3, dtype=torch.int32)),
    Case("broadcast_to_int32", lambda a: a.broadcast_to(3, 2, 4), typed(2, 1, dtype=torch.int32)),
    Case(
        "meshgrid_half",
        lambda a, b: torch.meshgrid(a, b, indexing="ij"),
        lambda: (torch.randn(2).half(), torch.randn(3).half()),
    ),
    Case("as_strided_bool", lambda a: a.as_strided((2, 2), (1, 2)), typed(6, dtype=torch.bool)),
    Case("unfold_half", lambda a: a.unfold(0, 2, 2), typed(6, 2, dtype=torch.float16)),
    # padding
    Case("constant_pad", lambda a: F.pad(a, (1, 2, 0, 1), value=1.5), f32(2, 3, 4)),
    Case("constant_pad_nd_crop", lambda a: torch.constant_pad_nd(a, (-1, 2), 0.5), f32(2, 5)),
    Case("constant_pad_int64", lambda a: F.pad(a, (2, 1), value=7), typed(2, 3, dtype=torch.int64)),
    Case("constant_pad_int32", lambda a: F.pad(a, (1, 1, 1, 0)), typed(2, 3, dtype=torch.int32)),
    Case("constant_pad_bool", lambda a: F.pad(a, (1, 1)), typed(2, 3, dtype=torch.bool)),
    Case("constant_pad_half", lambda a: F.pad(a, (1, 0)), typed(2, 3, dtype=torch.float16)),
    Case("reflect_pad1d", lambda a: F.pad(a, (2, 1), mode="reflect"), f32(1, 2, 5)),
    Case("reflect_pad2d", lambda a: F.pad(a, (1, 2, 2, 1), mode="reflect"), f32(1, 2, 4, 5)),
    Case("reflect_pad3d", lambda a: F.pad(a, (1, 1, 1, 0, 0, 1), mode="reflect"), f32(1, 1, 3, 3, 3)),
    Case("replicate_pad1d", lambda a: F.pad(a, (3, 1), mode="replicate"), f32(1, 2, 4)),
    Case("replicate_pad2d", lambda a: F.pad(a, (0, 2, 1, 1), mode="replicate"), f32(2, 1, 3, 3)),
    Case("replicate_pad3d", lambda a: F.pad(a, (1, 0, 0, 1, 1, 1), mode="replicate"), f32(1, 1, 2, 3, 2)),
    Case("reflection_pad2d_fn", lambda a: torch.ops.aten.reflection_pad2d(a, [1, 1, 1, 1]), f32(1, 1, 3, 3)),
    Case("replication_pad1d_fn", lambda a: torch.ops.aten.replication_pad1d(a, [2, 0]), f32(1, 2, 3)),
    Case("replicate_pad_int64", lambda a: F.pad(a, (1, 2), mode="replicate"), typed(1, 2, 4, dtype=torch.int64)),
    Case("circular_pad", lambda a: F.pad(a, (1, 2, 2, 0), mode="circular"), arange(1, 2, 3, 4)),
    Case("circular_pad_crop", lambda a: F.pad(a, (-1, 2), mode="circular"), arange(1, 2, 5)),
    Case("reflect_pad_int32", lambda a: F.pad(a, (2, 1), mode="reflect"), typed(1, 2, 5, dtype=torch.int32)),
    Case("reflect_pad_half", lambda a: F.pad(a, (1, 1, 1, 1), mode="reflect"), typed(1, 1, 3, 3, dtype=torch.float16)),
    Case("circular_pad_bool", lambda a: F.pad(a, (1, 1), mode="circular"), typed(1, 2, 4, dtype=torch.bool)),
    # cartesian_prod, combinations: meshgrid and what it selects
    *traced_and_scripted(
        "cartesian_prod",
        _cartesian_prod,
        lambda: (torch.tensor([1.0, 2.0]), torch.tensor([3.0, NAN, INF]), torch.tensor([-1.0, 0.5, 7.0, 8.0])),
    ),
    Case(
        "cartesian_prod_dtypes_empty",
        lambda a, b, c: (
            torch.cartesian_prod(a, a.flip(0)),
            torch.cartesian_prod(b, b),
            torch.cartesian_prod(c, c[:0]),
        ),
        lambda: (torch.tensor([True, False]), torch.tensor([3, 1, 2], dtype=torch.int32), torch.randn(3).half()),
    ),
    *traced_and_scripted(
        "cartesian_prod_dynamic",
        _cartesian_prod,
        lambda: (torch.randn(2), torch.randn(3), torch.randn(4)),
        dynamic={"x0": {0: "a"}, "x1": {0: "b"}, "x2": {0: "c"}},
        others=lambda: [
            (torch.randn(5), torch.randn(1), torch.randn(2)),
            (torch.randn(0), torch.randn(2), torch.randn(3)),
        ],
    ),
    *traced_and_scripted("combinations", _combinations, lambda: (torch.tensor([4.0, NAN, -INF, 2.5, 1.0]),)),
    *traced_and_scripted("combinations_few", _combinations_few, lambda: (torch.tensor([3, 1, 2], dtype=torch.int32),)),
    Case(
        "combinations_dtypes_empty",
        lambda a, b: (torch.combinations(a), torch.combinations(b, 2, True), torch.combinations(b[:0], 3)),
        lambda: (torch.tensor([True, False, True]), torch.randn(4).half()),
    ),
    *traced_and_scripted(
        "combinations_dynamic",
        _combinations,
        lambda: (torch.randn(5),),
        dynamic={"x0": {0: "n"}},
        others=lambda: [(torch.randn(2),), (torch.randn(7),), (torch.randn(0),)],
    ),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = [
    "repeat",
    "repeat_run_time_more_dims_scripted",
    "constant_pad",
    "reflect_pad2d",
    "unfold",
    "combinations_dynamic",
    "cartesian_prod_dynamic",
]


@pytest.mark.filterwarnings("ignore:torch.meshgrid")
@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.filterwarnings("ignore:torch.meshgrid")
@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


def test_a_stride_a_dynamic_axis_changes_is_refused_by_name() -> None:
    """Frames of a run-time length: the padded rows' stride is the length, chosen at run time."""
    from exporter.errors import SymbolicError

    model = torch.jit.script(_frames)
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {2: "time"}}}
    with pytest.raises(SymbolicError, match=r"x\.stride\(0\) is not fixed at export: a dynamic axis inside"):
        export_to_bytes(model, (torch.randn(2, 3, 11),), **dynamic)


@pytest.mark.parametrize("opset", lowering_opsets_below("aten::repeat_interleave"))
def test_runtime_repeat_counts_name_opset_11(opset: int) -> None:
    """Per-index repeat counts known only at run time need Range/CumSum: the error says so."""
    from exporter.errors import SymbolicError

    model = Wrap(lambda a, r: a.repeat_interleave(r, 0))
    with pytest.raises(SymbolicError, match="opset 11"):
        export_to_bytes(model, (torch.randn(4, 2), torch.tensor([1, 2, 0, 1])), opset_version=opset)
