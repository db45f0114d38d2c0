"""Capture's lowering rewrites (exporter/capture/lowering.py) on small graphs."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from exporter.capture.lowering import inline_calls, inline_forks, lower_script_module, substitute_interpolate
from exporter.capture.script import fix_index_dtypes
from exporter.ts_graph import CALL_SITES, all_nodes, source_location


def _kinds(graph: torch._C.Graph) -> list[str]:
    return [n.kind() for n in all_nodes([graph])]


def test_substitute_interpolate_makes_one_node() -> None:
    @torch.jit.script
    def upsample(x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, scale_factor=2.0, mode="nearest")

    graph = upsample.graph.copy()
    substitute_interpolate(graph)
    inline_calls(graph)
    assert _kinds(graph).count("aten::__interpolate") == 1
    assert "prim::CallFunction" not in _kinds(graph)


def test_fix_index_dtypes_retypes_argmax_as_int64() -> None:
    graph = torch._C.parse_ir(
        """
        graph(%x : Float(2, 3)):
          %dim : int = prim::Constant[value=1]()
          %keep : bool = prim::Constant[value=0]()
          %i : Float(2) = aten::argmax(%x, %dim, %keep)
          return (%i)
        """
    )
    fix_index_dtypes(graph)
    (node,) = [n for n in graph.nodes() if n.kind() == "aten::argmax"]
    assert node.output().type().dtype() == torch.int64


class _WithFlag(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.flag = True
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x) if self.flag else x


def test_lower_script_module_makes_weights_inputs() -> None:
    graph, params = lower_script_module(torch.jit.script(torch.nn.Linear(2, 2)))
    assert len(params) == 2
    assert len(list(graph.inputs())) == 1 + 2


def test_lower_script_module_with_a_bool_attribute() -> None:
    graph, params = lower_script_module(torch.jit.script(_WithFlag()))
    assert len([p for p in params if isinstance(p, torch.Tensor)]) == 2
    assert len(list(graph.inputs())) == 1 + len(params)


@torch.jit.script
def _padded(x: torch.Tensor) -> torch.Tensor:
    return F.pad(x, [1, 1], mode="reflect") + 1  # pad call


class _Caller(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(2):
            x = _padded(x)  # caller call
        return x


def test_inline_calls_inlines_as_torch_does_and_records_call_sites() -> None:
    """The same nodes as torch's inlining, no marker left, and the nodes of torch's F.pad
    named by both user calls (the one in a loop body included), outermost first."""
    module = torch.jit.script(_Caller())
    ours, theirs = module.graph.copy(), module.graph.copy()
    inline_calls(ours, module._c)
    torch._C._jit_pass_inline(theirs)
    assert _kinds(ours) == _kinds(theirs)
    assert not any(n.kind() == "prim::Constant" and "exporter" in str(n) for n in all_nodes([ours]))
    (pad,) = [n for n in all_nodes([ours]) if n.kind() == "aten::pad"]
    lines = [text.split("\t")[0] for text in pad.s(CALL_SITES).splitlines()]
    assert [line.split(" (", 1)[1].split("  #")[0] for line in lines] == [
        "x = _padded(x)",
        'return F.pad(x, [1, 1], mode="reflect") + 1',
    ]
    location = source_location(pad)
    assert location.endswith("(in pad)") and " -> torch/nn/functional.py:" in location
    (add,) = [n for n in all_nodes([ours]) if n.kind() == "aten::add"]
    assert "test_lowering.py" in source_location(add) and "->" not in source_location(add)  # the user's own line


def test_inline_calls_leaves_a_graph_without_calls_alone() -> None:
    graph = torch._C.parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)")
    before = str(graph)
    inline_calls(graph)
    assert str(graph) == before


@torch.jit.script
def _doubled(x: torch.Tensor) -> torch.Tensor:
    return x * 2


class _Forks(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        futures = [torch.jit.fork(_doubled, x) for _ in range(2)]
        direct = torch.jit.fork(_doubled, x + 1)
        return torch.stack([torch.jit.wait(f) for f in futures]).sum(0) + torch.jit.wait(direct)


def test_inline_forks_leaves_no_futures() -> None:
    graph = torch.jit.script(_Forks()).graph.copy()
    inline_calls(graph)
    inline_forks(graph)
    torch._C._jit_pass_dce(graph)  # alias analysis accepts the retyped lists
    kinds = _kinds(graph)
    assert "prim::fork" not in kinds and "aten::wait" not in kinds
    assert kinds.count("aten::mul") == 2  # the forked function, inlined once per fork site
    assert "Future" not in str(graph)
