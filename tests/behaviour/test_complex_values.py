"""Complex tensors through the export (exporter/complex_values.py): carried as float pairs from
torch.fft, stft(return_complex=True), view_as_complex and torch.complex, through the ops that
act on real and imaginary parts alike (their ``complex_inputs`` fact), the complex arithmetic
of exporter/opset17/complex_arithmetic.py and istft, to view_as_real, .real/.imag, abs and
angle. Each case is traced and scripted and compared with eager torch at the opsets of its
ops from 17 (where DFT and STFT appear); audio front ends in torchaudio's, Whisper's, julius'
and GriffinLim's style; refusals of a complex argument without a lowering and of a complex
model output, by name.
"""

from __future__ import annotations

import math

import pytest
import torch
from cases import Case, lowering_opsets, op_params, run_case, traced_and_scripted
from conftest import Wrap, assert_matches_torch, export_to_bytes

from exporter.errors import ComplexOutputError, SymbolicError, UnsupportedOperatorError

NAN, INF = math.nan, math.inf
# where stft and istft are registered (17, with DFT and STFT) and the newest
SPECTRAL_OPSETS = lowering_opsets("aten::stft", "aten::istft", min_opset=17)


def parts(*shape: int):  # noqa: ANN201 - an inputs factory
    return lambda: (torch.randn(*shape), torch.randn(*shape))


def special_parts():  # noqa: ANN201 - an inputs factory
    """Every pair of special parts: signed zeros, ones, tiny, huge (|z| overflows float32), inf, NaN."""
    values = torch.tensor([0.0, -0.0, 1.0, -1.0, 1e-30, 3e38, -3e38, -INF, INF, NAN])
    real, imag = torch.meshgrid(values, values, indexing="ij")
    return lambda: (real.contiguous(), imag.contiguous())


# -- complex arithmetic (own lowerings) ------------------------------------------------------


def _abs(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    return torch.complex(re, im).abs()


def _angle(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    return torch.complex(re, im).angle()


def _conj_mul(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    z = torch.complex(re, im)
    return torch.view_as_real(z * z.flip(0).conj())


def _mul_real(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    z = torch.complex(re, im)
    return torch.view_as_real(re * z * 2)


def _div(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    z = torch.complex(re, im)
    w = torch.complex(im, re * 3)
    return torch.view_as_real(z / w)


def _div_real(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    z = torch.complex(re, im)
    return torch.view_as_real(z / (z.abs() + 1e-16)) + torch.view_as_real(2.0 / z)


def _mul_div_special(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    """torch promotes a real operand to c + 0i: (1 + inf i) * 2 is nan + inf i there."""
    z = torch.complex(re, im)
    w = torch.complex(im, re)
    return torch.cat(
        [torch.view_as_real(z * re), torch.view_as_real(z / im), torch.view_as_real(z * w), torch.view_as_real(z / w)]
    )


def _pow_int(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    z = torch.complex(re, im)
    return torch.view_as_real(z**2 + z**3 - z**-2 + z**0)


def _pow_real(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    z = torch.complex(re, im)
    return torch.view_as_real(z**0.5 + z.pow(1.5))


def _sqrt_power(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    z = torch.complex(re, im)
    return torch.cat([torch.view_as_real(z**0.5), torch.view_as_real(torch.sqrt(z))])


def _add_sub(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    z = torch.complex(re, im)
    return torch.view_as_real(z + re - 2 * z + 1.5 - (z - im))


def _polar(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    z = torch.polar(re.abs(), im)
    return torch.view_as_real(z).sum(-1) + z.real


def _created(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    z = torch.complex(re, im)
    made = torch.full(re.shape, 2.5, dtype=torch.complex64) + torch.ones(re.shape, dtype=torch.complex64)
    made = made - torch.zeros_like(re, dtype=torch.complex64) * torch.ones_like(z) + torch.full_like(z, -1.5)
    real = torch.zeros(re.shape[0], 1) + torch.ones(re.shape) * torch.full(re.shape, 0.5)  # real ones keep float32
    return torch.view_as_real(z * made + torch.zeros_like(z) + real)


def _view_as_complex(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    z = torch.view_as_complex(torch.stack([re, im], dim=-1))
    return torch.view_as_real(-z).sum(-1) + z.imag


ARITHMETIC = [
    *traced_and_scripted("abs", _abs, parts(3, 5), min_opset=17),
    *traced_and_scripted("abs_special", _abs, special_parts(), min_opset=17),
    *traced_and_scripted("angle", _angle, parts(3, 5), min_opset=17),
    *traced_and_scripted("angle_quadrants_and_zeros", _angle, special_parts(), min_opset=17),
    Case("angle_of_real", lambda x: torch.angle(x), lambda: (torch.tensor([-2.0, -0.0, 0.0, 3.0, NAN]),), min_opset=17),
    *traced_and_scripted("conj_mul", _conj_mul, parts(4, 3), min_opset=17, atol=1e-4),
    *traced_and_scripted("mul_real", _mul_real, parts(4, 3), min_opset=17),
    *traced_and_scripted("div", _div, parts(4, 3), min_opset=17, atol=1e-4),
    *traced_and_scripted("div_real", _div_real, parts(4, 3), min_opset=17, atol=1e-4),
    *traced_and_scripted("mul_div_special", _mul_div_special, special_parts(), min_opset=17),
    *traced_and_scripted("pow_int", _pow_int, parts(4, 3), min_opset=17, atol=1e-3),
    *traced_and_scripted("pow_real", _pow_real, parts(4, 3), min_opset=17, atol=1e-4),
    *traced_and_scripted("sqrt_power_specials", _sqrt_power, special_parts(), min_opset=17),
    *traced_and_scripted("add_sub", _add_sub, parts(4, 3), min_opset=17),
    *traced_and_scripted("polar", _polar, parts(4, 3), min_opset=17),
    *traced_and_scripted("view_as_complex", _view_as_complex, parts(4, 3), min_opset=17),
    *traced_and_scripted(
        "created",
        _created,
        parts(4, 3),
        min_opset=17,
        dynamic={"x0": {0: "rows"}, "x1": {0: "rows"}},
        others=lambda: [(torch.randn(6, 3), torch.randn(6, 3))],
    ),
]


@pytest.mark.parametrize(("case", "opset"), op_params(ARITHMETIC))
def test_complex_arithmetic(case: Case, opset: int) -> None:
    run_case(case, opset)


# -- ops acting on real and imaginary parts alike (complex_inputs=PARTS / LINEAR / SHAPE) -------


def _structural(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    z = torch.complex(re, im)  # [2, 3, 4]
    y = z[:, 1:, ::2].permute(2, 0, 1).reshape(2, -1).flatten()  # slice, permute, reshape, flatten
    y = torch.cat([y, y.flip(0)]).unsqueeze(0).squeeze(0)  # cat, flip, unsqueeze, squeeze
    y = torch.stack([y, torch.roll(y, 1, 0)]).transpose(0, 1)  # stack, roll, transpose
    a, b = y.chunk(2, dim=0)  # chunk
    c = torch.narrow(z, 2, 1, 2).select(0, 1)[torch.tensor([2, 0])]  # narrow, select, index
    d = z[0].expand(2, 3, 4).repeat(1, 1, 2)  # expand, repeat
    return torch.cat(
        [
            torch.view_as_real(a - b).flatten(),
            torch.view_as_real(-c).flatten(),
            torch.view_as_real(d.sum(0) + d.mean(1, keepdim=True)).flatten(),
            torch.view_as_real(z.cumsum(2)).flatten(),
            torch.view_as_real(torch.nn.functional.pad(z, (1, 2))).flatten(),
            torch.view_as_real(torch.nn.functional.pad(z, (1, 1), value=2.5)).flatten(),
            torch.view_as_real(z.split([1, 2], dim=1)[1]).flatten(),
        ]
    )


def _sizes(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
    z = torch.complex(re, im)
    return torch.view_as_real(z.reshape(z.shape[0] * z.size(1), -1)) * z.dim()


PARTS = [
    *traced_and_scripted("structural", _structural, parts(2, 3, 4), min_opset=17, atol=1e-4),
    *traced_and_scripted(
        "sizes",
        _sizes,
        parts(2, 3, 4),
        min_opset=17,
        dynamic={"x0": {0: "batch"}, "x1": {0: "batch"}},
        others=lambda: [(torch.randn(5, 3, 4), torch.randn(5, 3, 4))],
    ),
]


@pytest.mark.parametrize(("case", "opset"), op_params(PARTS))
def test_ops_on_parts(case: Case, opset: int) -> None:
    run_case(case, opset)


# -- audio front ends ----------------------------------------------------------------------------


class Spectrogram(torch.nn.Module):
    """torchaudio.transforms.Spectrogram(power=2, normalized=True) as torchaudio computes it."""

    def __init__(self, n_fft: int = 64, hop: int = 16) -> None:
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))

    def forward(self, waveform: torch.Tensor) -> torch.Tensor:
        shape = waveform.size()
        waveform = waveform.reshape(-1, shape[-1])
        spec_f = torch.stft(
            waveform, self.n_fft, self.hop, self.n_fft, self.window, True, "reflect", False, True, return_complex=True
        )
        spec_f = spec_f.reshape(shape[:-1] + spec_f.shape[-2:])
        spec_f /= self.window.pow(2.0).sum().sqrt()
        return spec_f.abs().pow(2.0)


class MelSpectrogram(torch.nn.Module):
    """torchaudio.transforms.MelSpectrogram: the power spectrogram through a mel filter bank."""

    def __init__(self) -> None:
        super().__init__()
        self.spectrogram = Spectrogram()
        self.register_buffer("fb", torch.rand(33, 8))

    def forward(self, waveform: torch.Tensor) -> torch.Tensor:
        specgram = self.spectrogram(waveform)
        return torch.matmul(specgram.transpose(-1, -2), self.fb).transpose(-1, -2)


class WhisperLogMel(torch.nn.Module):
    """Whisper's log_mel_spectrogram (audio.py) on a small n_fft."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("window", torch.hann_window(64))
        self.register_buffer("filters", torch.rand(10, 33))

    def forward(self, audio: torch.Tensor) -> torch.Tensor:
        stft = torch.stft(audio, 64, 16, window=self.window, return_complex=True)
        magnitudes = stft[..., :-1].abs() ** 2
        mel_spec = self.filters @ magnitudes
        log_spec = torch.clamp(mel_spec, min=1e-10).log10()
        log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
        return (log_spec + 4.0) / 4.0


class FFTConv1d(torch.nn.Module):
    """julius.fftconv.fft_conv1d's spectral product: rfft, view_as_complex of the pairs,
    multiplication by the conjugated kernel spectrum, irfft."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(3, 2, 8))

    def forward(self, input: torch.Tensor) -> torch.Tensor:  # noqa: A002 - julius' name
        length = input.shape[-1]
        weight = torch.nn.functional.pad(self.weight, (0, length - self.weight.shape[-1]))
        weight_z = torch.view_as_complex(torch.view_as_real(torch.fft.rfft(weight, dim=-1)))
        input_z = torch.view_as_complex(torch.view_as_real(torch.fft.rfft(input, dim=-1)))
        out_z = (input_z[:, None] * weight_z.conj()).sum(2)
        out = torch.fft.irfft(out_z, n=length, dim=-1)
        return out[..., : length - self.weight.shape[-1] + 1]


class GriffinLim(torch.nn.Module):
    """torchaudio.functional.griffinlim (momentum, rand_init=False) for n_iter iterations."""

    def __init__(self, n_fft: int = 64, hop: int = 16, n_iter: int = 3) -> None:
        super().__init__()
        self.n_fft, self.hop, self.n_iter = n_fft, hop, n_iter
        self.register_buffer("window", torch.hann_window(n_fft))

    def forward(self, specgram: torch.Tensor) -> torch.Tensor:
        momentum = 0.99 / (1 + 0.99)
        shape = specgram.size()
        specgram = specgram.reshape([-1] + list(shape[-2:])).pow(1 / 2.0)
        angles = torch.full(specgram.size(), 1, dtype=torch.complex64, device=specgram.device)
        tprev = torch.tensor(0.0, dtype=specgram.dtype, device=specgram.device)
        for _ in range(self.n_iter):
            inverse = torch.istft(specgram * angles, self.n_fft, self.hop, window=self.window)
            rebuilt = torch.stft(
                inverse, self.n_fft, self.hop, window=self.window, center=True, pad_mode="reflect", return_complex=True
            )
            angles = rebuilt
            angles = angles - tprev.mul_(momentum)
            angles = angles.div(angles.abs().add(1e-16))
            tprev = rebuilt
        waveform = torch.istft(specgram * angles, self.n_fft, self.hop, window=self.window)
        return waveform.reshape(shape[:-2] + waveform.shape[-1:])


def _spectrogram_of(n: int) -> torch.Tensor:
    return torch.stft(torch.randn(2, n), 64, 16, window=torch.hann_window(64), return_complex=True).abs()


FRONT_ENDS = {
    "spectrogram": (Spectrogram, lambda: (torch.randn(2, 3, 400),), lambda: [(torch.randn(2, 3, 560),)], 2),
    "mel_spectrogram": (MelSpectrogram, lambda: (torch.randn(2, 400),), lambda: [(torch.randn(2, 720),)], 1),
    "whisper_log_mel": (WhisperLogMel, lambda: (torch.randn(480),), lambda: [(torch.randn(800),)], 0),
    "fft_conv1d": (FFTConv1d, lambda: (torch.randn(2, 2, 40),), None, None),
    "griffin_lim": (GriffinLim, lambda: (_spectrogram_of(400),), lambda: [(_spectrogram_of(240),)], 2),
}


@pytest.mark.parametrize("opset", SPECTRAL_OPSETS)
@pytest.mark.parametrize("script", [False, True], ids=["traced", "scripted"])
@pytest.mark.parametrize("name", list(FRONT_ENDS))
def test_audio_front_end(name: str, script: bool, opset: int) -> None:
    factory, inputs, others, time_axis = FRONT_ENDS[name]
    model = factory().eval()
    if script:
        model = torch.jit.script(model)
    dynamic = {} if time_axis is None else {"input_names": ["x"], "dynamic_axes": {"x": {time_axis: "time"}}}
    assert_matches_torch(
        model,
        inputs(),
        opset=opset,
        atol=1e-3,
        rtol=1e-3,
        other_inputs=others() if others is not None else [],
        **dynamic,
    )


# -- istft ---------------------------------------------------------------------------------------


class Inverse(torch.nn.Module):
    def __init__(self, n_fft: int, hop: int, length: int | None, normalized: bool, center: bool) -> None:
        super().__init__()
        self.n_fft, self.hop, self.length, self.normalized, self.center = n_fft, hop, length, normalized, center
        self.register_buffer("window", torch.hamming_window(n_fft))

    def forward(self, real: torch.Tensor, imag: torch.Tensor) -> torch.Tensor:
        spec = torch.complex(real, imag)
        return torch.istft(
            spec,
            self.n_fft,
            self.hop,
            window=self.window,
            center=self.center,
            normalized=self.normalized,
            length=self.length,
        )


def _spectrum(n: int, n_fft: int, hop: int, normalized: bool, center: bool, batch: bool = True):  # noqa: ANN202
    signal = torch.randn(2, n) if batch else torch.randn(n)
    window = torch.hamming_window(n_fft)
    spec = torch.stft(signal, n_fft, hop, window=window, normalized=normalized, center=center, return_complex=True)
    return spec.real.contiguous(), spec.imag.contiguous()


ISTFT = {
    # n_fft, hop, length, normalized, center, other signal length
    "center": (64, 16, None, False, True, 640),
    "hop_not_dividing_n_fft": (60, 25, None, True, True, 300),
    "length_cut_and_padded": (60, 25, 420, False, True, 300),
    "not_centered": (32, 8, None, False, False, 200),
}


@pytest.mark.parametrize("opset", SPECTRAL_OPSETS)
@pytest.mark.parametrize("script", [False, True], ids=["traced", "scripted"])
@pytest.mark.parametrize("name", list(ISTFT))
def test_istft_with_a_run_time_frame_count(name: str, script: bool, opset: int) -> None:
    n_fft, hop, length, normalized, center, other = ISTFT[name]
    model = Inverse(n_fft, hop, length, normalized, center)
    if script:
        model = torch.jit.script(model)
    axes = {"re": {2: "frames"}, "im": {2: "frames"}}
    assert_matches_torch(
        model,
        _spectrum(400, n_fft, hop, normalized, center),
        opset=opset,
        atol=1e-4,
        other_inputs=[_spectrum(other, n_fft, hop, normalized, center)],
        input_names=["re", "im"],
        dynamic_axes=axes,
    )


def test_istft_of_an_unbatched_two_sided_spectrum() -> None:
    def inverse(real: torch.Tensor, imag: torch.Tensor) -> torch.Tensor:
        return torch.istft(torch.complex(real, imag), 16, 4, window=torch.ones(16), onesided=False)

    spec = torch.stft(torch.randn(100), 16, 4, window=torch.ones(16), onesided=False, return_complex=True)
    assert_matches_torch(Wrap(inverse), (spec.real.contiguous(), spec.imag.contiguous()), opset=17, atol=1e-4)


# -- refusals ------------------------------------------------------------------------------------


def test_below_17_complex_ops_are_refused_naming_17() -> None:
    with pytest.raises(UnsupportedOperatorError, match=r"(?s)aten::complex.*opset 17"):
        export_to_bytes(Wrap(_abs), parts(2, 3)(), opset_version=16)


def test_complex_argument_without_a_lowering_is_refused_naming_op_argument_and_line() -> None:
    def exp_of_complex(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(torch.exp(torch.complex(re, im)))

    with pytest.raises(SymbolicError, match=r"argument 'self' of aten::exp is a complex tensor") as error:
        export_to_bytes(torch.jit.script(exp_of_complex), parts(2, 3)(), opset_version=17)
    message = str(error.value)
    assert "test_complex_values.py" in message and "torch.view_as_real(z)" in message


def test_complex_pow_by_a_tensor_is_refused() -> None:
    def pow_by_tensor(re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(torch.complex(re, im) ** im)

    with pytest.raises(SymbolicError, match="real exponent known at export time"):
        export_to_bytes(Wrap(pow_by_tensor), parts(2, 3)(), opset_version=17)


@pytest.mark.parametrize("script", [False, True], ids=["traced", "scripted"])
def test_complex_model_output_is_refused_with_what_to_write(script: bool) -> None:
    def spectrum(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x, torch.stft(x, 16, 4, window=torch.ones(16), return_complex=True) * 2

    model = torch.jit.script(spectrum) if script else Wrap(spectrum)
    with pytest.raises(ComplexOutputError, match=r"returns the complex result of aten::mul at .*view_as_real"):
        export_to_bytes(model, (torch.randn(1, 64),), opset_version=17)


# -- control flow ----------------------------------------------------------------------------


def _carried_by_a_counted_loop(x: torch.Tensor) -> torch.Tensor:
    z = torch.fft.rfft(x)
    for _ in range(3):
        z = z * 0.5 + z.conj()
    return torch.view_as_real(z)


def test_complex_value_carried_by_a_loop_with_a_known_count_is_unrolled() -> None:
    model = assert_matches_torch(torch.jit.script(_carried_by_a_counted_loop), (torch.randn(2, 8),), opset=17)
    assert "Loop" not in {node.op_type for node in model.graph}


def _carried_by_a_run_time_loop(x: torch.Tensor, n: int) -> torch.Tensor:
    z = torch.fft.rfft(x)
    for _ in range(n):
        z = z * 0.5
    return torch.view_as_real(z)


def _chosen_by_a_branch(x: torch.Tensor) -> torch.Tensor:
    z = torch.fft.rfft(x)
    if bool(x.sum() > 0):
        z = z * 2
    return torch.view_as_real(z)


@pytest.mark.parametrize(
    ("fn", "args", "message"),
    [
        (_carried_by_a_run_time_loop, (torch.randn(2, 8), 3), "complex tensor carried through a loop"),
        (_chosen_by_a_branch, (torch.randn(2, 8),), "returns a complex tensor: ONNX If and Loop carry real"),
    ],
    ids=["run_time_loop", "branch"],
)
def test_complex_value_through_run_time_control_flow_is_refused(fn, args, message: str) -> None:  # noqa: ANN001
    with pytest.raises(SymbolicError, match=message):
        export_to_bytes(torch.jit.script(fn), args, opset_version=17)
