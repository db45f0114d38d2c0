"""Constructs the transformers zoo sweep (bench/zoo_sweep.py, issue #15) found failing, each as a
small hand-written module and, where transformers is installed, as the model from a tiny config:

- ``torch.cat`` skips 1-D empty tensors whatever the others' rank (XLM's attention starts its
  key/value cache from ``torch.tensor([])``); ONNX Concat rejects the rank mismatch.
- an autograd Function whose own ``symbolic`` is written against torch's exporter internals
  (``value.type().dtype()``, ``torch.onnx.symbolic_opset9`` helpers) cannot run on this
  exporter's values (SEW-D's ``XSoftmax``): its forward is traced instead, with a warning.
- a forward that raises while traced (not eagerly) is reported as a TracingError naming the
  model's source line, not as torch's bare size mismatch (DeepSeek-V3, Nystromformer).
"""

from __future__ import annotations

import io
import re

import pytest
import torch
from cases import Case, op_params, run_case
from conftest import NEWEST, assert_matches_torch, import_transformers

import exporter
from exporter.errors import SymbolicError, TracingError

CASES = [
    Case("cat_legacy_empty_first", lambda k: torch.cat([torch.tensor([]), k], dim=-2), lambda: (torch.randn(2, 3, 4),)),
    Case(
        "cat_legacy_empty_input",
        lambda e, k, v: torch.cat([k, e, v], dim=1),
        lambda: (torch.empty(0), torch.randn(2, 3, 4), torch.randn(2, 1, 4)),
    ),
    Case("cat_legacy_empty_1d", lambda e, k: torch.cat([e, k]), lambda: (torch.empty(0), torch.randn(5))),
    Case(
        "cat_legacy_empty_int_promotes",
        lambda k: torch.cat([torch.tensor([]), k], 0),
        lambda: (torch.arange(6).view(2, 3),),
    ),
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_zoo_construct(case: Case, opset: int) -> None:
    run_case(case, opset)


# -- a Function's symbolic written against torch's exporter ------------------------------------


class TorchStyleMaskedSoftmax(torch.autograd.Function):
    """SEW-D's XSoftmax in small: the symbolic reads ``self.type().dtype()`` (torch._C.Value's
    API), which this exporter's values do not have."""

    @staticmethod
    def forward(ctx, x, mask, dim):  # noqa: ANN001, ANN205
        blocked = ~mask.bool()
        out = torch.softmax(x.masked_fill(blocked, torch.finfo(x.dtype).min), dim)
        return out.masked_fill(blocked, 0.0)

    @staticmethod
    def symbolic(g, x, mask, dim):  # noqa: ANN001, ANN205
        lowest = torch.tensor(torch.finfo(x.type().dtype()).min)  # torch._C.Value only
        return g.op("Softmax", g.op("Where", mask, x, lowest), axis_i=dim)


class MaskedAttention(torch.nn.Module):
    def forward(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return TorchStyleMaskedSoftmax.apply(scores, mask, -1) * 2


@pytest.mark.parametrize("opset", [9, 13, NEWEST])
def test_torch_style_function_symbolic_falls_back_to_its_forward(opset: int) -> None:
    scores = torch.randn(2, 3, 4, 4)
    mask = torch.ones(2, 1, 1, 4, dtype=torch.long)
    mask[1, ..., :2] = 0
    with pytest.warns(UserWarning, match=r"TorchStyleMaskedSoftmax .*symbolic staticmethod failed.*TypeError"):
        model = assert_matches_torch(MaskedAttention(), (scores, mask), opset=opset)
    assert "Softmax" in {node.op_type for node in model.graph}


class MisusedAttribute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # noqa: ANN001, ANN205
        return torch.relu(x)

    @staticmethod
    def symbolic(g, x):  # noqa: ANN001, ANN205
        return g.op("LeakyRelu", x, alpha=0.1)  # this exporter refuses it: no type suffix


def test_symbolic_refused_by_this_exporter_is_still_an_error() -> None:
    """Only failures inside the symbolic's own (or torch's) code fall back; a request this
    exporter refuses is the symbolic's bug and is reported."""

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return MisusedAttribute.apply(x)

    with pytest.raises(SymbolicError, match="invalid attribute specifier 'alpha'"):
        exporter.export(Model(), (torch.randn(3),), io.BytesIO(), opset_version=17)


# -- errors while tracing ------------------------------------------------------------------------


class DiffersWhenTraced(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        heads = 2 if torch.jit.is_tracing() else 4
        return x.view(x.shape[0], 4, -1) + torch.ones(heads, 1)  # the line the error names


class AlwaysFails(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ torch.ones(5, 2)


def test_forward_failing_only_while_traced_names_the_line_and_the_cause() -> None:
    model, x = DiffersWhenTraced(), torch.randn(3, 8)
    model(x)  # runs eagerly
    with pytest.raises(TracingError) as info:
        exporter.export(model, (x,), io.BytesIO())
    message = str(info.value)
    line = DiffersWhenTraced.forward.__code__.co_firstlineno + 2
    assert re.search(rf"test_zoo_constructs\.py:{line} \(in forward\): RuntimeError: The size of tensor", message)
    assert "run eagerly" in message and "torch.jit.is_tracing()" in message
    assert isinstance(info.value.__cause__, RuntimeError)


def test_forward_failing_eagerly_says_so() -> None:
    with pytest.raises(TracingError, match=r"(?s)test_zoo_constructs\.py:\d+ \(in forward\).*when run eagerly"):
        exporter.export(AlwaysFails(), (torch.randn(3, 4),), io.BytesIO())


# -- the transformers models the sweep found ------------------------------------------------------


def _tiny(model_type: str, **overrides: object) -> torch.nn.Module:
    transformers = import_transformers()
    base = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64}
    config = transformers.AutoConfig.for_model(model_type, **{**base, **overrides})
    torch.manual_seed(0)
    return transformers.AutoModel.from_config(config).eval()


class FirstOutput(torch.nn.Module):
    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return self.model(*args, return_dict=False)[0]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_sew_d_xsoftmax() -> None:
    model = _tiny(
        "sew-d",
        conv_dim=[16, 16],
        conv_stride=[5, 2],
        conv_kernel=[10, 3],
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4,
        squeeze_factor=2,
        max_position_embeddings=64,
        position_buckets=16,
    )
    assert_matches_torch(FirstOutput(model), (torch.randn(2, 800),), opset=17, atol=1e-4)


def test_xlm_empty_cache_concat() -> None:
    model = _tiny("xlm", emb_dim=32, n_layers=2, n_heads=4, vocab_size=100)
    ids = torch.randint(3, 100, (2, 8))
    assert_matches_torch(FirstOutput(model), (ids, torch.ones_like(ids)), opset=17, atol=1e-4)


def test_deepseek_v3_tracing_error_names_the_attention_line() -> None:
    model = _tiny(
        "deepseek_v3",
        num_key_value_heads=2,
        vocab_size=100,
        kv_lora_rank=16,
        q_lora_rank=32,
        qk_rope_head_dim=8,
        qk_nope_head_dim=8,
        v_head_dim=16,
        head_dim=8,
        first_k_dense_replace=1,
        n_routed_experts=4,
        num_experts_per_tok=2,
        moe_intermediate_size=16,
        n_group=1,
        topk_group=1,
        use_cache=False,
    )
    ids = torch.randint(3, 100, (2, 8))
    with pytest.raises(TracingError, match=r"sdpa_attention\.py:\d+ .*\n  the same inputs run eagerly"):
        exporter.export(FirstOutput(model), (ids, torch.ones_like(ids)), io.BytesIO())


# -- a run-time value where a lowering needs a constant -------------------------------------------


def test_run_time_value_for_a_constant_argument_says_what_would_work() -> None:
    @torch.jit.script
    def swapped(x: torch.Tensor, n: int) -> torch.Tensor:
        return x.transpose(n, 0)  # ONNX Transpose takes its permutation as an attribute

    with pytest.raises(SymbolicError) as info:
        exporter.export(swapped, (torch.randn(4, 3), 1), io.BytesIO(), opset_version=17)
    message = str(info.value)
    assert "aten::transpose" in message and "argument 'dim0'" in message
    assert "test_zoo_constructs.py:" in info.value.location
    assert "make it a Python constant in the model" in message
