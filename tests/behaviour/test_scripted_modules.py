"""What TorchScript modules are made of, beyond their tensors: ModuleList iteration and
ModuleDict lookup, ``__constants__`` and ``Final``, ``@torch.jit.export`` and
``@torch.jit.unused`` methods, interfaces, scripted free functions, NamedTuple results,
fork/wait, ``with torch.no_grad()`` blocks, frozen and inference-optimized modules, traced parts
inside scripted ones, and archives saved with torch.jit.save and loaded from files or bytes.
"""

import io
from typing import Final, NamedTuple, Optional

import pytest
import torch
import torch.nn.functional as F
from conftest import (
    NEWEST,
    SEQUENCE_OPSETS,
    assert_matches_torch,
    dynamic_inputs,
)


@torch.jit.script
def lengths_to_mask(lengths: torch.Tensor, max_len: Optional[int] = None) -> torch.Tensor:
    """A scripted free function: a padding mask from lengths, arange with a run-time bound."""
    if max_len is None:
        max_len = int(lengths.max())
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


def test_scripted_function_with_run_time_arange() -> None:
    others = [(torch.tensor([1, 1]),), (torch.tensor([7, 2, 5, 1]),)]
    dynamic = {"input_names": ["lengths"], "dynamic_axes": {"lengths": {0: "b"}}}
    for opset in SEQUENCE_OPSETS:
        assert_matches_torch(lengths_to_mask, (torch.tensor([3, 5, 2]),), opset=opset, other_inputs=others, **dynamic)


@torch.jit.script
def scaled_residual(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return x + alpha * y


class Block(torch.nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(width, width)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return scaled_residual(x, torch.relu(self.linear(self.norm(x))), 0.5)


class StructuredModel(torch.nn.Module):
    """ModuleList iteration, ModuleDict lookup by constant key, ``__constants__`` and ``Final``,
    an ``Optional[Tensor]`` argument, ignored/unused methods never reached, a helper method,
    size arithmetic, and Dict/List/Tuple outputs."""

    __constants__ = ["scale"]
    use_gate: Final[bool]

    def __init__(self, width: int = 8, depth: int = 3) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(width) for _ in range(depth)])
        self.scale = 0.5
        self.head = torch.nn.ModuleDict({"cls": torch.nn.Linear(width, 3), "reg": torch.nn.Linear(width, 2)})
        self.use_gate = True

    @torch.jit.unused
    def debug_dump(self, x: torch.Tensor) -> torch.Tensor:
        print(x.numpy())
        return x

    @torch.jit.ignore
    def python_only(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    def pooled(self, x: torch.Tensor, mask: Optional[torch.Tensor]) -> torch.Tensor:
        if mask is None:
            return x.mean(1)
        weights = mask.to(x.dtype).unsqueeze(-1)
        return (x * weights).sum(1) / weights.sum(1).clamp(min=1.0)

    def forward(
        self, x: torch.Tensor, mask: Optional[torch.Tensor] = None
    ) -> tuple[dict[str, torch.Tensor], list[torch.Tensor]]:
        if self.training:
            x = self.debug_dump(x)
        states: list[torch.Tensor] = []
        for block in self.blocks:
            x = block(x)
            states.append(x)
        half = x.size(1) // 2
        chunks = (x.size(1) + 2) // 3  # a ceil division on a dynamic size
        pooled = self.pooled(x, mask)
        if self.use_gate:
            pooled = pooled * torch.sigmoid(pooled)
        outputs: dict[str, torch.Tensor] = {}
        outputs["cls"] = self.head["cls"](pooled)
        outputs["reg"] = self.head["reg"](pooled) * self.scale
        outputs["first_half"] = x[:, :half].sum(1)
        outputs["chunks"] = torch.tensor(chunks)
        return outputs, states


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_structured_module_with_mask(opset: int) -> None:
    model = torch.jit.script(StructuredModel().eval())
    dynamic = {"input_names": ["x", "mask"], "dynamic_axes": {"x": {0: "b", 1: "t"}, "mask": {0: "b", 1: "t"}}}
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    others = [
        (torch.randn(1, 2, 8), torch.ones(1, 2, dtype=torch.bool)),
        (torch.randn(3, 7, 8), torch.rand(3, 7) > 0.5),
    ]
    assert_matches_torch(model, (torch.randn(2, 5, 8), mask), opset=opset, other_inputs=others, **dynamic)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_structured_module_without_mask(opset: int) -> None:
    model = torch.jit.script(StructuredModel().eval())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 1: "t"}}}
    others = [(torch.randn(1, 2, 8),), (torch.randn(3, 7, 8),)]
    assert_matches_torch(model, (torch.randn(2, 5, 8),), opset=opset, other_inputs=others, **dynamic)


def test_structured_module_saved_and_loaded(tmp_path) -> None:
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(StructuredModel().eval()), buffer)
    buffer.seek(0)
    loaded = torch.jit.load(buffer)
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 1: "t"}}}
    others = [(torch.randn(3, 7, 8),)]
    assert_matches_torch(loaded, (torch.randn(2, 5, 8),), opset=17, other_inputs=others, **dynamic)
    path = tmp_path / "model.pt"
    torch.jit.save(torch.jit.script(StructuredModel().eval()), str(path))
    assert_matches_torch(
        torch.jit.load(str(path)), (torch.randn(2, 5, 8),), opset=NEWEST, other_inputs=others, **dynamic
    )


class StackOfLayers(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(5, 5) for _ in range(3)])
        self.norms = torch.nn.ModuleList([torch.nn.LayerNorm(5) for _ in range(3)])
        self.heads = torch.nn.ModuleDict({"a": torch.nn.Linear(5, 2), "b": torch.nn.Linear(5, 1)})

    def forward(self, x: torch.Tensor, skip: Optional[int] = None) -> list[torch.Tensor]:
        assert x.dim() == 3, "expects (batch, steps, features)"
        if not torch.jit.is_scripting():
            x = x * 1.0
        for i, (layer, norm) in enumerate(zip(self.layers, self.norms)):
            if skip is None or i != skip:
                x = norm(x + torch.relu(layer(x)))
        outs: list[torch.Tensor] = []
        for name, head in self.heads.items():
            outs.append(head(x))
        hidden = torch.jit.annotate(list[torch.Tensor], [])
        hidden.append(x.mean(1))
        return outs + hidden


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_stack_of_layers(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 1: "t"}}}
    others = [(torch.randn(1, 1, 5),), (torch.randn(3, 8, 5),)]
    assert_matches_torch(
        torch.jit.script(StackOfLayers().eval()), (torch.randn(2, 4, 5),), opset=opset, other_inputs=others, **dynamic
    )
    assert_matches_torch(
        torch.jit.script(StackOfLayers().eval()),
        (torch.randn(2, 4, 5), 1),
        opset=opset,
        other_inputs=[(torch.randn(3, 8, 5), 1)],
        **dynamic,
    )


class ExportedHelpers(torch.nn.Module):
    sizes: list[int]

    def __init__(self) -> None:
        super().__init__()
        self.sizes = [2, 3]
        self.proj = torch.nn.Linear(5, 5)

    @torch.jit.export
    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.proj(x))

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        h = self.encode(x)
        parts: list[torch.Tensor] = []
        start = 0
        for size in self.sizes:
            parts.append(h[:, start : start + size])
            start += size
        return parts


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_exported_helper_method_and_list_attribute(opset: int) -> None:
    model = torch.jit.script(ExportedHelpers())
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b"}}}
    assert_matches_torch(model, (torch.randn(2, 5),), opset=opset, other_inputs=[(torch.randn(4, 5),)], **dynamic)


@torch.jit.script
def branch(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.relu(x) * scale


class ForkWait(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        futures = [torch.jit.fork(branch, x, float(i + 1)) for i in range(3)]
        results = [torch.jit.wait(f) for f in futures]
        return torch.stack(results).sum(0)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_fork_wait(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    assert_matches_torch(
        torch.jit.script(ForkWait()), (torch.randn(3, 2),), opset=opset, other_inputs=[(torch.randn(5, 2),)], **dynamic
    )


@torch.jit.interface
class Scorer(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pass


class Linear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l = torch.nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.l(x)


class WithInterface(torch.nn.Module):
    scorer: Scorer

    def __init__(self) -> None:
        super().__init__()
        self.scorer = Linear()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scorer.forward(x) * 2


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_interface_attribute(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    assert_matches_torch(
        torch.jit.script(WithInterface()),
        (torch.randn(3, 4),),
        opset=opset,
        other_inputs=[(torch.randn(5, 4),)],
        **dynamic,
    )


class Detections(NamedTuple):
    boxes: torch.Tensor
    scores: torch.Tensor
    labels: Optional[torch.Tensor]


class NamedOutputs(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> Detections:
        scores, labels = x.max(1)
        keep = scores > 0
        return Detections(x[keep], scores[keep], labels[keep])


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_named_tuple_outputs(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    assert_matches_torch(
        torch.jit.script(NamedOutputs()),
        (torch.randn(5, 4),),
        opset=opset,
        other_inputs=[(torch.randn(9, 4),)],
        **dynamic,
    )


class NoGradBlock(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l = torch.nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            y = self.l(x)
        return y * 2


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_no_grad_block(opset: int) -> None:
    assert_matches_torch(torch.jit.script(NoGradBlock()), (torch.randn(2, 3),), opset=opset, other_inputs=[])


class ForkMethods(torch.nn.Module):
    """Forked submodule calls waited on directly (ensembles scripted for parallelism)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(4, 3)
        self.b = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        fa = torch.jit.fork(self.a, x)
        fb = torch.jit.fork(self.b, x)
        return torch.jit.wait(fa) - torch.jit.wait(fb)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_forked_submodules(opset: int) -> None:
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "n"}}}
    assert_matches_torch(
        torch.jit.script(ForkMethods()),
        (torch.randn(3, 4),),
        opset=opset,
        other_inputs=[(torch.randn(5, 4),)],
        **dynamic,
    )


class ConvNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.conv(x)))
        if y.size(2) > 4:
            y = torch.nn.functional.max_pool2d(y, 2)
        return self.head(y.mean((2, 3)))


def _convnet() -> torch.nn.Module:
    model = ConvNet().eval()
    model.bn.running_mean.uniform_(-0.5, 0.5)
    model.bn.running_var.uniform_(0.5, 1.5)
    return model


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_frozen_module(opset: int) -> None:
    model = torch.jit.freeze(torch.jit.script(_convnet()))
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 2: "h", 3: "w"}}}
    others = [(torch.randn(1, 3, 4, 4),), (torch.randn(3, 3, 10, 7),)]
    assert_matches_torch(model, (torch.randn(2, 3, 8, 8),), opset=opset, other_inputs=others, **dynamic)


class MobileBlock(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.expand = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.depthwise = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.hardswish(self.expand(x))
        y = F.relu6(self.bn(self.depthwise(y))) + y
        return torch.sigmoid(self.fc(F.adaptive_avg_pool2d(y, 1).flatten(1)))


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize("make", [_convnet, lambda: MobileBlock().eval()], ids=["convnet", "mobile_block"])
def test_optimized_for_inference(opset: int, make: object) -> None:
    """optimize_for_inference rewrites a frozen CNN into MKLDNN layouts and kernels
    (prim::mkldnn_convolution, ConstantMKLDNNTensor, MKLDNNHardSwish_/HardTanh_,
    BroadcastMKLDNNTensors, to_mkldnn/to_dense): plain ONNX ops."""
    model = torch.jit.optimize_for_inference(torch.jit.script(make()))  # type: ignore[operator]
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b", 2: "h", 3: "w"}}}
    others = [(torch.randn(1, 3, 5, 9),), (torch.randn(3, 3, 12, 6),)]
    assert_matches_torch(
        model, (torch.randn(2, 3, 8, 8),), opset=opset, other_inputs=others, rtol=1e-3, atol=1e-4, **dynamic
    )


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_traced_then_saved_archive(opset: int, tmp_path) -> None:
    traced = torch.jit.trace(_convnet(), torch.randn(2, 3, 8, 8))
    path = tmp_path / "traced.pt"
    torch.jit.save(traced, str(path))
    loaded = torch.jit.load(str(path))
    dynamic = {"input_names": ["x"], "dynamic_axes": {"x": {0: "b"}}}
    assert_matches_torch(
        loaded, (torch.randn(2, 3, 8, 8),), opset=opset, other_inputs=[(torch.randn(4, 3, 8, 8),)], **dynamic
    )


class Mixed(torch.nn.Module):
    """A scripted wrapper around a traced backbone and a scripted decoding loop."""

    def __init__(self) -> None:
        super().__init__()
        self.backbone = torch.jit.trace(torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh()), torch.randn(2, 4))
        self.step = torch.nn.Linear(6, 6)

    def forward(self, x: torch.Tensor, steps: int) -> torch.Tensor:
        h = self.backbone(x)
        for _ in range(steps):
            h = torch.tanh(self.step(h)) + h
        return h


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_traced_backbone_in_a_scripted_module(opset: int) -> None:
    model = torch.jit.script(Mixed().eval())
    dynamic = {"input_names": ["x", "steps"], "dynamic_axes": {"x": {0: "b"}}}
    others = [(torch.randn(5, 4), 0), (torch.randn(1, 4), 4)]
    assert_matches_torch(model, (torch.randn(2, 4), 2), opset=opset, other_inputs=others, **dynamic)


class Saved(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(20, 8)
        self.rnn = torch.nn.GRU(8, 8, batch_first=True)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, h = self.rnn(self.embed(ids))
        lengths = (ids != 0).sum(1)
        last = out[torch.arange(ids.size(0)), (lengths - 1).clamp(min=0)]
        return last + h[0]


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_saved_scripted_archive_from_bytes(opset: int) -> None:
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(Saved().eval()), buffer)
    buffer.seek(0)
    loaded = torch.jit.load(buffer)
    dynamic = {"input_names": ["ids"], "dynamic_axes": {"ids": {0: "b", 1: "t"}}}
    others = [(torch.randint(1, 20, (1, 1)),), (torch.randint(0, 20, (4, 9)),)]
    assert_matches_torch(loaded, (torch.randint(0, 20, (2, 5)),), opset=opset, other_inputs=others, **dynamic)


class Tracked(NamedTuple):
    boxes: torch.Tensor
    scores: torch.Tensor
    extra: tuple[torch.Tensor, int]


class NamedTupleAndNested(torch.nn.Module):
    """A NamedTuple result holding a nested (tensor, int) tuple, built by a helper method, and
    a tuple of tuples unpacked again in forward."""

    def pair(self, x: torch.Tensor) -> tuple[tuple[torch.Tensor, torch.Tensor], int]:
        return (x.max(1)[0], x.min(1)[0]), x.size(1)

    def forward(self, x: torch.Tensor) -> Tracked:
        (high, low), width = self.pair(x)
        return Tracked(torch.stack([low, high], 1), (high - low) / width, (x.mean(1), width * 2))


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_named_tuple_with_nested_tuple(opset: int) -> None:
    model = torch.jit.script(NamedTupleAndNested())
    assert_matches_torch(
        model,
        (torch.randn(3, 5),),
        opset=opset,
        other_inputs=[(torch.randn(1, 5),), (torch.randn(8, 5),)],
        **dynamic_inputs(x={0: "n"}),
    )


class ExportedAndUnused(torch.nn.Module):
    """``@torch.jit.export`` methods called from forward, an ``@torch.jit.unused`` debugging
    method behind ``torch.jit.is_scripting()``, and an ``@torch.jit.ignore``d Python helper
    that is never reached when scripted."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    @torch.jit.export
    def normalize(self, x: torch.Tensor, eps: float) -> torch.Tensor:
        return x / (torch.linalg.vector_norm(x, dim=-1, keepdim=True) + eps)

    @torch.jit.export
    def score(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (self.normalize(a, 1e-6) * self.normalize(b, 1e-3)).sum(-1)

    @torch.jit.unused
    def debug_dump(self, x: torch.Tensor) -> torch.Tensor:
        print(x.numpy())  # eager-only Python
        return x

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if not torch.jit.is_scripting():
            a = self.debug_dump(a)
        return self.score(self.proj(a), b)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_exported_and_unused_methods(opset: int) -> None:
    model = torch.jit.script(ExportedAndUnused().eval())
    dynamic = dynamic_inputs(a={0: "n"}, b={0: "n"})
    others = [(torch.randn(1, 4), torch.randn(1, 4)), (torch.randn(9, 4), torch.randn(9, 4))]
    assert_matches_torch(model, (torch.randn(3, 4), torch.randn(3, 4)), opset=opset, other_inputs=others, **dynamic)
