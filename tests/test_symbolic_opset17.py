"""What opset 17 adds (exporter.symbolic_opset17): torch.fft and torch.stft lowered to ONNX DFT
and STFT, with complex intermediates carried as float tensors with a trailing dim of 2 between
the fft functions and .real/.imag; below 17 both are refused naming the opset. (Its
LayerNormalization is in the normalization table, tests/opset9/test_normalization.py.)

FNet's token mixing (torch.fft.fftn(x, dim=(-1, -2)).real) exactly, rfft/irfft round trips,
norm= modes, n=/s= padding and trimming. Each case runs at the opsets from tests/cases.py
(17, where DFT appears, and the newest) and at 20, where DFT takes its axis as an input.
"""

from __future__ import annotations

import io

import pytest
import torch
from cases import Case, op_params, run_case
from conftest import Wrap, export_to_bytes

import exporter
from exporter.errors import ComplexOutputError, ExporterError, SymbolicError, UnsupportedOperatorError

fft = torch.fft


def rand(*shape: int, dtype: torch.dtype = torch.float32):  # noqa: ANN201 - an inputs factory
    return lambda: (torch.randn(*shape).to(dtype),)


class FNetBasicFourierTransform(torch.nn.Module):
    """transformers' FNetBasicFourierTransform without scipy: fftn over (hidden, sequence)."""

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return torch.fft.fftn(hidden_states, dim=(-1, -2)).real


class FNetMixing(torch.nn.Module):
    """An FNet layer's mixing then residual, layer norm and feed-forward, as in the model."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(8)
        self.dense = torch.nn.Linear(8, 8)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        mixed = torch.fft.fftn(hidden_states, dim=(-1, -2)).real
        out = self.norm(hidden_states + mixed)
        return self.dense(out)


F32 = {"atol": 1e-4}
CASES = [
    Case("fnet_fourier", FNetBasicFourierTransform, rand(2, 6, 8), min_opset=17, factory=True, **F32),
    Case("fnet_layer", FNetMixing, rand(2, 5, 8), min_opset=17, factory=True, **F32),
    Case("fftn_imag", lambda x: fft.fftn(x, dim=(-1, -2)).imag, rand(2, 5, 6), min_opset=17, **F32),
    Case("fftn_all_dims", lambda x: fft.fftn(x).real, rand(2, 3, 4), min_opset=17, **F32),
    Case("fftn_s_pads_and_trims", lambda x: fft.fftn(x, s=(4, 8)).imag, rand(2, 5, 6), min_opset=17, **F32),
    Case("fftn_ortho", lambda x: fft.fftn(x, dim=(0, 2), norm="ortho").real, rand(3, 2, 5), min_opset=17, **F32),
    Case("fftn_forward", lambda x: fft.fftn(x, dim=(-1, -2), norm="forward").imag, rand(2, 4, 6), min_opset=17),
    Case("fft", lambda x: fft.fft(x).real, rand(3, 8), min_opset=17, **F32),
    Case("fft_dim_n_ortho", lambda x: fft.fft(x, n=8, dim=1, norm="ortho").imag, rand(2, 5, 3), min_opset=17),
    Case("fft_forward", lambda x: fft.fft(x, norm="forward").imag, rand(2, 7), min_opset=17),
    Case("fft_of_complex", lambda x: fft.fft(fft.fft(x, dim=0), dim=1).real, rand(4, 6), min_opset=17, **F32),
    Case("ifft_of_fft", lambda x: fft.ifft(fft.fft(x)).real, rand(2, 6), min_opset=17),
    # * 2: eager ifft(real).imag is a negated view numpy() refuses
    Case("ifft_ortho", lambda x: fft.ifft(x, norm="ortho").imag * 2, rand(2, 6), min_opset=17),
    Case("ifft_forward", lambda x: fft.ifft(x, norm="forward").real, rand(2, 6), min_opset=17, **F32),
    Case("rfft", lambda x: fft.rfft(x).real, rand(2, 8), min_opset=17, **F32),
    Case("rfft_odd_n_ortho", lambda x: fft.rfft(x, n=7, dim=0, norm="ortho").imag, rand(5, 3), min_opset=17),
    Case("rfft_irfft_even", lambda x: fft.irfft(fft.rfft(x)), rand(2, 8), min_opset=17),
    Case("rfft_irfft_odd", lambda x: fft.irfft(fft.rfft(x, dim=1), n=5, dim=1), rand(3, 5, 2), min_opset=17),
    Case("rfft_irfft_ortho", lambda x: fft.irfft(fft.rfft(x, norm="ortho"), norm="ortho"), rand(2, 6), min_opset=17),
    Case(
        "rfft_irfft_forward",
        lambda x: fft.irfft(fft.rfft(x, norm="forward"), norm="forward"),
        rand(2, 6),
        min_opset=17,
    ),
    Case("irfft_longer_n", lambda x: fft.irfft(fft.rfft(x), n=11), rand(2, 6), min_opset=17),
    # n= on a dim of run-time size: cut, then zero-padded by what is missing
    Case(
        "fft_n_of_run_time_size",
        lambda x: (fft.irfft(fft.rfft(x), n=11), fft.fft(x, n=9, dim=0).real),
        rand(9, 8),
        min_opset=17,
        dynamic={"x0": {0: "rows", 1: "length"}},
        others=lambda: [(torch.randn(12, 14),), (torch.randn(4, 8),)],
        **F32,
    ),
    # torch's c2r ignores the imaginary parts of X[0] and X[n/2]: a non-Hermitian input shows it
    Case("irfft_of_full_spectrum", lambda x: fft.irfft(fft.fft(x), n=4), rand(2, 6), min_opset=17),
    Case("fft_double", lambda x: fft.fftn(x, dim=(-1, -2)).real, rand(2, 3, 4, dtype=torch.float64), min_opset=17),
    Case("fft_of_ints", lambda x: fft.fft(x).real, lambda: (torch.arange(6).reshape(2, 3),), min_opset=17),
]


@pytest.mark.parametrize(("case", "opset"), op_params(CASES))
def test_fft(case: Case, opset: int) -> None:
    run_case(case, opset)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_fft_at_dft_20(case: Case) -> None:
    """DFT-20 takes the axis as an input where DFT-17 had an attribute."""
    run_case(case, 20)


def test_fft_below_17_names_opset_17() -> None:
    with pytest.raises(ExporterError, match="opset 17"):
        exporter.export(FNetBasicFourierTransform(), (torch.randn(2, 3, 4),), io.BytesIO(), opset_version=16)


@pytest.mark.parametrize("fn", [lambda x: fft.fft(x), lambda x: (fft.rfft(x), x)], ids=["returned", "in_tuple"])
def test_complex_model_output_is_refused_by_name(fn) -> None:  # noqa: ANN001
    model = torch.nn.Module()
    model.forward = fn  # type: ignore[method-assign]
    with pytest.raises(ComplexOutputError, match=r"returns the complex result of aten::fft_r?fft .*view_as_real"):
        exporter.export(model, (torch.randn(2, 4),), io.BytesIO(), opset_version=17)


def test_complex_argument_of_an_op_without_a_complex_lowering_is_refused_by_name() -> None:
    with pytest.raises(
        SymbolicError, match=r"aten::exp .*argument 'self' of aten::exp is a complex tensor.*view_as_real"
    ):
        export_to_bytes(Wrap(lambda x: torch.view_as_real(fft.fft(x).exp())), (torch.randn(2, 4),), opset_version=17)


# -- torch.stft ----------------------------------------------------------------------------------

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


def test_stft_below_17_names_17() -> None:
    fn, inputs = STFT_CASES["stft_rect_center"]
    with pytest.raises(UnsupportedOperatorError, match="17"):
        export_to_bytes(Wrap(fn), inputs(), opset_version=16)
