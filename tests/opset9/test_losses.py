"""The op table for loss functions (exporter.opset9.losses).

Each case is traced, exported, run in onnxruntime and compared with eager torch at every opset
where its lowering changes (tests/cases.py), from its first supported one.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from cases import INF, NAN, Case, classes, f32s, helper_params, op_params, pair, run_case

LOSS_INPUT = [NAN, INF, 1.0, -INF, 0.5, 3.0]
LOSS_TARGET = [0.0, INF, -INF, 2.0, 0.5, -1.0]


@torch.jit.script
def _script_huber_smooth_l1(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.nn.functional.huber_loss(a, b, reduction="sum", delta=0.5),
        torch.nn.functional.smooth_l1_loss(a, b, beta=0.25),
        torch.nn.functional.smooth_l1_loss(a, b, reduction="none", beta=0.0),
    )


CASES = [
    # losses
    Case("mse_loss", lambda a, b: torch._C._nn.mse_loss(a, b, 1), f32s(2, 3, 4)),
    Case("mse_loss_sum", lambda a, b: torch._C._nn.mse_loss(a, b, 2), f32s(2, 3, 4)),
    Case("mse_loss_none", lambda a, b: torch._C._nn.mse_loss(a, b, 0), f32s(2, 3, 4)),
    Case(
        "kl_div",
        lambda a, t: F.kl_div(a, t, reduction="batchmean"),
        lambda: (
            F.log_softmax(torch.randn(3, 5), 1),
            torch.cat([torch.zeros(3, 1), F.softmax(torch.randn(3, 4), 1)], 1),
        ),
    ),
    Case(
        "kl_div_none",
        lambda a, t: F.kl_div(a, t, reduction="none"),
        lambda: (torch.randn(3, 5), torch.tensor([[0.0, 0.5, 0.2, 0.3, 0.0]] * 3)),
    ),
    Case("kl_div_mean_log_target", lambda a, t: F.kl_div(a, t, reduction="mean", log_target=True), f32s(2, 3, 5)),
    Case("kl_div_sum", lambda a, t: F.kl_div(a, t, reduction="sum"), lambda: (torch.randn(4), torch.rand(4))),
    Case(
        "bce_logits",
        F.binary_cross_entropy_with_logits,
        lambda: (
            torch.tensor([-200.0, -20.0, -1.0, 0.0, 2.0, 30.0, 200.0]),
            torch.tensor([0.0, 1.0, 0.3, 1.0, 0.0, 1.0, 0.0]),
        ),
    ),
    Case(
        "bce_logits_weights",
        lambda x, t, w, p: F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=p, reduction="sum"),
        lambda: (torch.randn(4, 3) * 5, torch.rand(4, 3), torch.rand(3), torch.rand(3) * 3),
    ),
    Case("bce_logits_none", lambda x, t: F.binary_cross_entropy_with_logits(x, t, reduction="none"), f32s(2, 2, 5)),
    # losses
    Case(
        "nll_loss_reductions",
        lambda x, t: (
            F.nll_loss(F.log_softmax(x, 1), t),
            F.nll_loss(x, t, reduction="sum"),
            F.nll_loss(x, t, reduction="none"),
        ),
        classes(5, 4),
    ),
    Case(
        "nll_loss_ignore",
        lambda x, t: (F.nll_loss(x, t), F.nll_loss(x, t, reduction="sum")),
        classes(6, 4, ignore=-100),
    ),
    Case(
        "nll_loss_ignore_in_range",
        lambda x, t: (F.nll_loss(x, t, ignore_index=1, reduction="none"), F.nll_loss(x, t, ignore_index=1)),
        classes(6, 4),
    ),
    Case(
        "nll_loss_weight",
        lambda x, t: F.nll_loss(x, t, weight=torch.tensor([0.5, 2.0, 1.0, 3.0]), ignore_index=2),
        classes(7, 4),
    ),
    Case(
        "nll_loss_2d",
        lambda x, t: (F.nll_loss(x, t), F.nll_loss(x, t, weight=torch.tensor([1.0, 0.0, 2.0]), reduction="none")),
        classes(2, 3, 4, 5, ignore=-100),
    ),
    Case("nll_loss_unbatched", lambda x, t: F.nll_loss(x[0], t[0]), classes(2, 4)),
    Case(
        "nll_loss_neg_inf_elsewhere",
        lambda x, t: F.nll_loss(x, t),
        lambda: (torch.tensor([[-INF, -0.5, -1.0], [-0.1, -INF, -2.0]]), torch.tensor([1, 0])),
    ),
    Case("nll_loss_all_ignored_is_nan", lambda x, t: F.nll_loss(x, t * 0 - 100), classes(3, 4)),
    Case(
        "cross_entropy",
        lambda x, t: (F.cross_entropy(x, t), F.cross_entropy(x, t, ignore_index=0, reduction="none")),
        classes(5, 4),
    ),
    Case(
        "cross_entropy_sum_weight",
        lambda x, t: F.cross_entropy(x, t, weight=torch.tensor([1.0, 2.0, 0.5]), reduction="sum"),
        classes(5, 3),
    ),
    Case(
        "cross_entropy_smoothing", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.2), classes(6, 4, ignore=-100)
    ),
    Case(
        "cross_entropy_smoothing_weight",
        lambda x, t: F.cross_entropy(
            x, t, weight=torch.tensor([1.0, 2.0, 0.5, 1.5]), label_smoothing=0.1, ignore_index=3
        ),
        classes(8, 4),
    ),
    Case(
        "cross_entropy_smoothing_none_2d",
        lambda x, t: (
            F.cross_entropy(x, t, label_smoothing=0.3, reduction="none"),
            F.cross_entropy(x, t, label_smoothing=0.3, reduction="sum"),
        ),
        classes(2, 3, 2, 2, ignore=-100),
    ),
    Case(
        "cross_entropy_probs",
        lambda x, p: (
            F.cross_entropy(x, p.softmax(1)),
            F.cross_entropy(x, p.softmax(1), reduction="sum"),
            F.cross_entropy(x, p.softmax(1), reduction="none"),
        ),
        pair((4, 5), (4, 5)),
    ),
    Case(
        "cross_entropy_probs_weight_smooth",
        lambda x, p: F.cross_entropy(x, p.softmax(1), weight=torch.arange(1.0, 4.0), label_smoothing=0.25),
        pair((2, 3, 4), (2, 3, 4)),
    ),
    Case(
        "losses_unbatched",
        lambda a, t: (
            F.cross_entropy(a[0], t[0], label_smoothing=0.1),
            F.cross_entropy(a[0], a[1].softmax(0)),
            F.cosine_similarity(a[0], a[1], dim=0),
            F.pairwise_distance(a[0], a[1]),
        ),
        lambda: (torch.randn(3, 4), torch.tensor([1, 2, 0])),
    ),
    # huber and smooth L1
    Case(
        "huber_loss",
        lambda a, b: (
            F.huber_loss(a, b),
            F.huber_loss(a, b, reduction="sum", delta=0.5),
            F.huber_loss(a, b, reduction="none", delta=2.0),
        ),
        lambda: (torch.randn(3, 4) * 3, torch.randn(3, 4)),
    ),
    Case(
        "huber_loss_weight",
        lambda a, b, w: (F.huber_loss(a, b, weight=w, delta=0.5), F.huber_loss(a, b, reduction="sum", weight=w)),
        lambda: (torch.randn(3, 4) * 3, torch.randn(3, 4), torch.rand(3, 4)),
    ),
    Case(
        "huber_loss_broadcast",
        lambda a, b: F.huber_loss(a, b, reduction="none"),
        lambda: (torch.randn(3, 1) * 2, torch.randn(4)),
    ),
    Case(
        "huber_loss_special",
        lambda a, b: F.huber_loss(a, b, reduction="none"),
        lambda: (torch.tensor(LOSS_INPUT), torch.tensor(LOSS_TARGET)),
    ),
    Case(
        "huber_loss_nan_mean",
        lambda a, b: F.huber_loss(a, b),
        lambda: (torch.tensor(LOSS_INPUT), torch.tensor(LOSS_TARGET)),
    ),
    Case(
        "huber_loss_empty",
        lambda a, b: (F.huber_loss(a, b), F.huber_loss(a, b, reduction="sum"), F.huber_loss(a, b, reduction="none")),
        f32s(2, 0, 3),
    ),
    Case(
        "huber_loss_self_dtype",
        lambda a, b: torch._C._nn.huber_loss(a, b),
        lambda: (torch.randn(5), torch.randn(5).double()),
    ),
    Case(
        "huber_loss_double_self",
        lambda a, b: torch._C._nn.huber_loss(a, b, 0, 0.3),
        lambda: (torch.randn(5).double(), torch.randn(5)),
    ),
    Case(
        "huber_loss_half",
        lambda a, b: F.huber_loss(a, b, reduction="none"),
        f32s(2, 6, dtype=torch.float16),
        atol=2e-3,
        rtol=2e-3,
    ),
    Case(
        "l1_loss",
        lambda a, b: (F.l1_loss(a, b), F.l1_loss(a, b, reduction="sum"), F.l1_loss(a, b, reduction="none")),
        lambda: (torch.randn(3, 4), torch.randn(4)),
    ),
    Case(
        "l1_loss_special_empty",
        lambda a, b, e: (F.l1_loss(a, b, reduction="none"), F.l1_loss(e, e)),
        lambda: (torch.tensor(LOSS_INPUT), torch.tensor(LOSS_TARGET), torch.randn(0, 2)),
    ),
    Case(
        "l1_loss_promotes", lambda a, b: torch._C._nn.l1_loss(a, b, 1), lambda: (torch.randn(5).half(), torch.randn(5))
    ),
    Case(
        "loss_mean_dynamic",
        lambda a, b: (F.l1_loss(a, b), F.huber_loss(a, b), F.smooth_l1_loss(a, b)),
        f32s(2, 2, 3),
        dynamic={"x0": [0], "x1": [0]},
        others=lambda: [(torch.randn(5, 3), torch.randn(5, 3)), (torch.randn(0, 3), torch.randn(0, 3))],
    ),
    Case(
        "smooth_l1_loss",
        lambda a, b: (
            F.smooth_l1_loss(a, b),
            F.smooth_l1_loss(a, b, reduction="sum", beta=0.5),
            F.smooth_l1_loss(a, b, reduction="none", beta=2.0),
        ),
        lambda: (torch.randn(3, 4) * 3, torch.randn(3, 4)),
    ),
    Case(
        "smooth_l1_loss_beta_0",
        lambda a, b: (F.smooth_l1_loss(a, b, beta=0.0), F.smooth_l1_loss(a, b, reduction="none", beta=0.0)),
        f32s(2, 2, 3),
    ),
    Case(
        "smooth_l1_loss_special",
        lambda a, b: F.smooth_l1_loss(a, b, reduction="none", beta=0.5),
        lambda: (torch.tensor(LOSS_INPUT), torch.tensor(LOSS_TARGET)),
    ),
    Case(
        "smooth_l1_loss_empty",
        lambda a, b: (F.smooth_l1_loss(a, b), F.smooth_l1_loss(a, b, reduction="sum")),
        f32s(2, 0),
    ),
    Case(
        "smooth_l1_loss_promotes",
        lambda a, b: torch._C._nn.smooth_l1_loss(a, b, 1, 0.5),
        lambda: (torch.randn(5), torch.randn(5).double()),
    ),
    Case(
        "smooth_l1_loss_half_float",
        lambda a, b: torch._C._nn.smooth_l1_loss(a, b, 0, 1.0),
        lambda: (torch.randn(5).half(), torch.randn(5)),
        atol=2e-3,
        rtol=2e-3,
    ),
    Case("huber_smooth_l1_scripted", _script_huber_smooth_l1, f32s(2, 3, 4), script=True),
    Case("cross_entropy_half", lambda x, t: F.cross_entropy(x.half(), t), classes(5, 4), atol=1e-2, rtol=1e-2),
]


# run at HELPER_OPSETS too: the Slice/Clip/Pad/Squeeze/Reduce* signatures of symbolic_helper
HELPER_CASES = ["kl_div", "mse_loss", "nll_loss_reductions", "cross_entropy_smoothing"]


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss")
@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_op(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss")
@pytest.mark.parametrize(("case", "opset"), helper_params(CASES, HELPER_CASES))
def test_helper_opsets(case: Case, opset: int) -> None:
    """Representative cases where exporter.symbolic_helper changes an ONNX signature."""
    run_case(case, opset)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)
