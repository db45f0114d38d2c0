"""STFT (aten::stft), exported from opset 17 (exporter.symbolic_opset17): the short-time Fourier transform cases and its refusals."""

from __future__ import annotations

import pytest
import torch
from cases import Case, op_params, run_case
from conftest import Wrap, export_to_bytes

STFT_CASES = {
    "stft_rect_center": (
        lambda x: torch.stft(x, 16, window=torch.ones(16), return_complex=False),
        lambda: (torch.randn(2, 100),),
    ),
    "stft_short_hann_normalized": (
        lambda x, w: torch.stft(x, 16, 5, 12, w, normalized=True, return_complex=False),
        lambda: (torch.randn(2, 100), torch.hann_window(12)),
    ),
    "stft_1d_double_twosided": (
        lambda x: torch.stft(
            x, 16, 4, window=torch.ones(16, dtype=torch.float64), center=False, onesided=False, return_complex=False
        ),
        lambda: (torch.randn(64, dtype=torch.float64),),
    ),
    "stft_center_constant_pad": (
        lambda x, w: torch.stft(x, 8, 2, window=w, pad_mode="constant", return_complex=False),
        lambda: (torch.randn(3, 40), torch.hamming_window(8)),
    ),
}


STFT = [Case(name, fn, inputs, min_opset=17, atol=1e-4) for name, (fn, inputs) in STFT_CASES.items()]


@pytest.mark.parametrize(("case", "opset"), op_params(STFT))
def test_stft(case: Case, opset: int) -> None:
    run_case(case, opset)


def test_stft_below_17_names_17_and_complex_is_refused() -> None:
    from exporter.errors import SymbolicError, UnsupportedOperatorError

    fn, inputs = STFT_CASES["stft_rect_center"]
    with pytest.raises(UnsupportedOperatorError, match="17"):
        export_to_bytes(Wrap(fn), inputs(), opset_version=16)
    with pytest.raises(SymbolicError, match="return_complex"):
        export_to_bytes(
            Wrap(lambda x: torch.stft(x, 16, window=torch.ones(16), return_complex=True).abs()),
            inputs(),
            opset_version=17,
        )
