"""Random ops and dropout: rand/randn/randint (and _like forms), uniform, normal, exponential,
bernoulli, multinomial, standard gamma and Dirichlet, dropout variants.

ONNX idioms: everything derives from RandomUniform/RandomNormal(+Like) and Multinomial by an
exact transform (Bernoulli as uniform < p, exponential by inversion, gamma by
Marsaglia-Tsang with enough proposals); dropout is the identity in eval and Dropout-12 in
training (refused below 12, where ONNX Dropout cannot drop).
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_ir as ir
import torch

from exporter import symbolic_helper as h
from exporter import tensors
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import Quantized
from exporter.registry import onnx_symbolic

Value = ir.Value


@onnx_symbolic("aten::dropout", fold=False, quantized=Quantized.INTEGERS)
def aten_dropout(g: GraphContext, input: Value, p: float, train: bool) -> Value:  # noqa: A002
    """dropout(Tensor input, float p, bool train) -> Tensor

    Identity in eval. Training-mode dropout below opset 12 has no ONNX form that drops
    (Dropout-7..10 is an identity at inference), so it is refused rather than exported silent.
    """
    if not train or p == 0:
        return input
    raise ValueError("dropout in training mode needs opset 12 or higher (Dropout with training_mode)")


@onnx_symbolic("aten::feature_dropout", fold=False, quantized=Quantized.INTEGERS)
def aten_feature_dropout(g: GraphContext, input: Value, p: float, train: bool) -> Value:  # noqa: A002
    """feature_dropout(Tensor input, float p, bool train) -> Tensor"""
    if not train or p == 0:
        return input
    raise ValueError("feature dropout in training mode cannot be exported")


@onnx_symbolic("aten::alpha_dropout", fold=False)
def aten_alpha_dropout(g: GraphContext, input: Value, p: float, train: bool) -> Value:  # noqa: A002
    """alpha_dropout(Tensor input, float p, bool train) -> Tensor

    Identity in eval. In training it sets dropped units to SELU's negative saturation and
    renormalizes, which no ONNX op does, so it is refused.
    """
    if not train or p == 0:
        return input
    raise ValueError("alpha_dropout in training mode cannot be exported")


@onnx_symbolic("aten::feature_alpha_dropout")
def aten_feature_alpha_dropout(g: GraphContext, input: Value, p: float, train: bool) -> Value:  # noqa: A002
    """feature_alpha_dropout(Tensor input, float p, bool train) -> Tensor (identity in eval)"""
    if not train or p == 0:
        return input
    raise ValueError("feature_alpha_dropout in training mode cannot be exported")


@onnx_symbolic("aten::native_dropout")
def aten_native_dropout(g: GraphContext, input: Value, p: float, train: bool | None) -> tuple[Value, Value]:  # noqa: A002
    """native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)

    train=None means training (torch drops). Eval returns the input and an all-true mask;
    a dropping Dropout (training_mode) needs opset 12.
    """
    if train is False or p == 0:
        return input, h.all_true_like(g, input)
    raise ValueError("native_dropout in training mode needs opset 12 or higher (Dropout with training_mode)")


def _target_dtype(dtype: torch.dtype | None, default: ir.DataType | None = None) -> ir.DataType:
    """The ONNX dtype of a factory's result: ``dtype``, else ``default``, else torch's default."""
    if dtype is not None:
        return h.ir_dtype(dtype)
    if default is not None:
        return default
    return h.ir_dtype(torch.get_default_dtype())


def _generation_dtype(target: ir.DataType) -> ir.DataType:
    """The dtype random noise is drawn in: double for double results, float otherwise.

    onnxruntime's RandomUniform/RandomNormal(/Like) kernels only exist for float and double,
    so half and bfloat16 (and integer results derived from noise) are drawn in float and cast.
    """
    return ir.DataType.DOUBLE if target == ir.DataType.DOUBLE else ir.DataType.FLOAT


def _random(
    g: GraphContext,
    kind: str,
    target: ir.DataType,
    *,
    shape: Sequence[int] | Value | None = None,
    like: Value | None = None,
    **attrs: float,
) -> Value:
    """Noise of ``kind`` ("Uniform" or "Normal") with a static ``shape``, a run-time shape
    (a 1-D int64 value) or the shape of ``like``, cast to ``target``.

    A static shape takes Random<kind> with the shape as an attribute; otherwise
    Random<kind>Like runs on a template of the drawing dtype (only the template's shape is read).
    """
    gen = _generation_dtype(target)
    if shape is None and like is not None:
        shape = h.static_shape(like)
    if shape is not None and not isinstance(shape, Value):
        out = g.op(f"Random{kind}", dtype=gen, shape=[int(s) for s in shape], **attrs)
        out.shape = ir.Shape(list(shape))
    else:
        if isinstance(shape, Value):
            template = g.op("ConstantOfShape", shape, value=torch.zeros(1, dtype=tensors.to_torch_dtype(gen)))
        else:
            assert like is not None
            template = h.cast(g, like, gen)
        out = g.op(f"Random{kind}Like", template, dtype=gen, **attrs)
    out.dtype = gen
    return h.cast(g, out, target)


def _uniform_like(g: GraphContext, like: Value) -> Value:
    """U[0, 1) noise with the shape of ``like``, in the drawing dtype for like's dtype."""
    return _random(g, "Uniform", _generation_dtype(like.dtype), like=like, low=0.0, high=1.0)


def _size_arg(size: Sequence[int] | Value) -> Sequence[int] | Value:
    if isinstance(size, Value) and size.dtype not in (None, ir.DataType.INT64):
        raise TypeError(f"size must be int64, got {size.dtype}")
    return size


def _raw_float(obj: object, what: str) -> float:
    """A Python float from a raw (unconverted) emitted input that must be a constant."""
    if isinstance(obj, torch.Tensor) and obj.numel() == 1:
        obj = obj.item()
    if isinstance(obj, Value) and obj.const_value is not None and obj.const_value.size == 1:
        obj = obj.const_value.numpy().item()
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return float(obj)
    raise TypeError(f"{what} must be a constant number, got {obj!r}")


def _raw_tensor(g: GraphContext, obj: object, what: str) -> Value:
    if isinstance(obj, Value):
        return obj
    if isinstance(obj, torch.Tensor):
        return g.constant(obj)
    raise TypeError(f"{what} must be a tensor, got {obj!r}")


def _check_no_generator(generator: object) -> None:
    if generator is not None:
        raise ValueError("an explicit torch.Generator cannot be exported; ONNX random ops seed themselves")


def _scale_shift(g: GraphContext, x: Value, scale: float | Value, shift: float | Value) -> Value:
    """x * scale + shift with scalars made in x's dtype (skipping identities)."""
    if not (isinstance(scale, float) and scale == 1.0):
        scale_v = h.cast_like(g, scale, x) if isinstance(scale, Value) else h.scalar_like(g, scale, x)
        x = g.op("Mul", x, scale_v)
    if not (isinstance(shift, float) and shift == 0.0):
        shift_v = h.cast_like(g, shift, x) if isinstance(shift, Value) else h.scalar_like(g, shift, x)
        x = g.op("Add", x, shift_v)
    return x


def _randint(
    g: GraphContext,
    low: int | Value,
    high: int | Value,
    target: ir.DataType,
    *,
    shape: Sequence[int] | Value | None = None,
    like: Value | None = None,
) -> Value:
    """Integers uniform in [low, high): floor(low + U * (high - low)) with U in [0, 1) drawn
    in double (fine-grained enough for any int32 range), clamped below high against rounding."""
    u = _random(g, "Uniform", ir.DataType.DOUBLE, shape=shape, like=like, low=0.0, high=1.0)

    def as_double(x: int | Value) -> Value:
        if isinstance(x, Value):
            return h.cast(g, x, ir.DataType.DOUBLE)
        return g.constant(float(x), ir.DataType.DOUBLE)

    low_d, high_d = as_double(low), as_double(high)
    span = g.op("Sub", high_d, low_d)
    drawn = g.op("Floor", g.op("Add", g.op("Mul", u, span), low_d))
    drawn = g.op("Min", drawn, g.op("Sub", high_d, g.constant(1.0, ir.DataType.DOUBLE)))
    return h.cast(g, drawn, target)


# Exclusive upper bound of Tensor.random_() without bounds: every integer the dtype holds
# exactly (floats: up to 2**mantissa digits, inclusive).
_RANDOM_DEFAULT_END = {
    ir.DataType.FLOAT: 2**24 + 1,
    ir.DataType.DOUBLE: 2**53 + 1,
    ir.DataType.FLOAT16: 2**11 + 1,
    ir.DataType.BFLOAT16: 2**8 + 1,
    ir.DataType.BOOL: 2,
    ir.DataType.UINT8: 2**8,
    ir.DataType.INT8: 2**7,
    ir.DataType.INT16: 2**15,
    ir.DataType.INT32: 2**31,
    ir.DataType.INT64: 2**63,
}


# Integers come from a double RandomUniform whose resolution runtimes do not promise (the
# ONNX spec says nothing of it); ranges wider than this are refused rather than risk values
# that can never be drawn.
_RANDOM_MAX_SPAN = 2**32


def _bernoulli_by_uniform(g: GraphContext, self: Value, prob: Value | float) -> Value:
    """1 with probability ``prob``: U < p for U uniform in [0, 1) (U < 0 never, U < 1 always)."""
    u = _uniform_like(g, self)
    p = h.cast(g, prob, u.dtype) if isinstance(prob, Value) else g.constant(prob, u.dtype)
    return h.cast(g, g.op("Less", u, p), self.dtype)


def _normal(g: GraphContext, mean: float | Value, std: float | Value, like: Value, target: ir.DataType) -> Value:
    """N(mean, std^2) noise shaped like ``like``, drawn in float/double and cast to ``target``."""
    noise = _random(g, "Normal", _generation_dtype(target), like=like, mean=0.0, scale=1.0)
    return h.cast(g, _scale_shift(g, noise, std, mean), target)


# Marsaglia-Tsang proposals drawn per element. Each is accepted with probability above 0.95
# (for shape >= 1, which boosting guarantees), so all 8 are rejected with probability below
# 0.05**8 ~ 4e-11; that element then takes the mode d, a negligible bias.
_GAMMA_PROPOSALS = 8


def _standard_gamma_draw(g: GraphContext, alpha: Value) -> Value:
    """Gamma(alpha, 1) samples of alpha's shape and dtype, by Marsaglia-Tsang rejection
    unrolled over a fixed number of proposals (ONNX has no loop-free rejection sampler)."""
    shape = h.static_shape(alpha)
    rank = h.rank_of(alpha)
    if rank is None:
        raise NeedsExportTimeValue("_standard_gamma needs the rank of its input")
    work = _generation_dtype(alpha.dtype)
    a = h.cast(g, alpha, work)
    one = g.constant(1.0, work)
    small = g.op("Less", a, one)
    # shape < 1: draw Gamma(shape + 1) and scale by U^(1/shape) (Marsaglia-Tsang's boost)
    boosted = g.op("Where", small, g.op("Add", a, one), a)
    d = g.op("Sub", boosted, g.constant(1.0 / 3.0, work))
    c = g.op("Reciprocal", g.op("Sqrt", g.op("Mul", d, g.constant(9.0, work))))
    if shape is not None:
        draws: dict[str, object] = {"shape": [_GAMMA_PROPOSALS] + shape}
    else:
        ones = g.constant([1] * rank)
        reps = g.op("Concat", g.constant([_GAMMA_PROPOSALS]), ones, axis=0)
        draws = {"like": g.op("Expand", h.unsqueeze(g, a, [0]), reps)}
    normals = _random(g, "Normal", work, mean=0.0, scale=1.0, **draws)  # type: ignore[arg-type]
    uniforms = _random(g, "Uniform", work, low=0.0, high=1.0, **draws)  # type: ignore[arg-type]
    zero = g.constant(0.0, work)
    half = g.constant(0.5, work)
    out = d
    for k in reversed(range(_GAMMA_PROPOSALS)):
        index = g.constant(k)
        x = g.op("Gather", normals, index, axis=0)
        u = g.op("Gather", uniforms, index, axis=0)
        base = g.op("Add", one, g.op("Mul", c, x))
        v = g.op("Mul", g.op("Mul", base, base), base)
        positive = g.op("Greater", v, zero)
        safe_v = g.op("Where", positive, v, one)
        # accept when log u < x^2/2 + d - d v + d log v
        bound = g.op(
            "Add",
            g.op("Mul", half, g.op("Mul", x, x)),
            g.op("Mul", d, g.op("Add", g.op("Sub", one, safe_v), g.op("Log", safe_v))),
        )
        accepted = g.op("And", positive, g.op("Less", g.op("Log", u), bound))
        out = g.op("Where", accepted, g.op("Mul", d, safe_v), out)
    boost_u = _random(g, "Uniform", work, like=a, low=0.0, high=1.0)
    scale = g.op("Pow", boost_u, g.op("Reciprocal", a))
    out = g.op("Where", small, g.op("Mul", out, scale), out)
    # torch never returns exact zeros (it clamps to the smallest normal number)
    tiny = float(torch.finfo(tensors.to_torch_dtype(alpha.dtype)).tiny)
    out = g.op("Max", out, g.constant(tiny, work))
    return h.cast(g, out, alpha.dtype)


@onnx_symbolic("aten::rand")
def aten_rand(
    g: GraphContext, size: Sequence[int] | Value, dtype: torch.dtype | None = None, generator: object = None
) -> Value:
    """rand(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor (and .generator)

    RandomUniform when the size is static, else RandomUniformLike on ConstantOfShape(size).
    """
    _check_no_generator(generator)
    return _random(g, "Uniform", _target_dtype(dtype), shape=_size_arg(size), low=0.0, high=1.0)


@onnx_symbolic("aten::randn")
def aten_randn(
    g: GraphContext, size: Sequence[int] | Value, dtype: torch.dtype | None = None, generator: object = None
) -> Value:
    """randn(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor (and .generator)"""
    _check_no_generator(generator)
    return _random(g, "Normal", _target_dtype(dtype), shape=_size_arg(size), mean=0.0, scale=1.0)


@onnx_symbolic("aten::rand_like")
def aten_rand_like(g: GraphContext, self: Value, dtype: torch.dtype | None = None, generator: object = None) -> Value:
    """rand_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor (and .generator)

    The result dtype is ``dtype`` or self's; RandomUniformLike's own dtype attribute only
    takes float types, so the noise is drawn in float/double and cast.
    """
    _check_no_generator(generator)
    return _random(g, "Uniform", _target_dtype(dtype, self.dtype), like=self, low=0.0, high=1.0)


@onnx_symbolic("aten::randn_like")
def aten_randn_like(g: GraphContext, self: Value, dtype: torch.dtype | None = None, generator: object = None) -> Value:
    """randn_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor (and .generator)"""
    _check_no_generator(generator)
    return _random(g, "Normal", _target_dtype(dtype, self.dtype), like=self, mean=0.0, scale=1.0)


@onnx_symbolic("aten::randint")
def aten_randint(
    g: GraphContext,
    high: int | Value,
    size: Sequence[int] | Value,
    low: int | Value = 0,
    dtype: torch.dtype | None = torch.int64,
    generator: object = None,
) -> Value:
    """randint(SymInt high, SymInt[] size, *, ScalarType? dtype=4, ...) -> Tensor (and .low, .generator, .low_generator)

    ONNX has no integer sampler: uniform noise in double, scaled, floored and cast.
    """
    _check_no_generator(generator)
    return _randint(g, low, high, _target_dtype(dtype, ir.DataType.INT64), shape=_size_arg(size))


@onnx_symbolic("aten::randint_like")
def aten_randint_like(
    g: GraphContext,
    self: Value,
    high: int | Value,
    low: int | Value = 0,
    dtype: torch.dtype | None = None,
    generator: object = None,
) -> Value:
    """randint_like(Tensor self, SymInt high, *, ScalarType? dtype=None, ...) -> Tensor (and .Tensor, .low_dtype and their generator forms)"""
    _check_no_generator(generator)
    if (
        isinstance(high, Value)
        and h.rank_of(high) not in (None, 0)
        and high.shape is not None
        and any(d != 1 for d in high.shape)
    ):
        raise ValueError("randint_like with a non-scalar high tensor is not supported")
    if isinstance(high, Value) and h.rank_of(high):
        high = g.op("Reshape", high, g.constant([], ir.DataType.INT64))
    return _randint(g, low, high, _target_dtype(dtype, self.dtype), like=self)


@onnx_symbolic("aten::random")
def aten_random(g: GraphContext, *inputs: object) -> Value:
    """random(Tensor self, *, Generator? generator=None) -> Tensor (and .to(self, int to), .from(self, int from, int? to))

    Integers uniform in [from, to) in self's dtype, from uniform noise like randint. Takes
    its inputs positionally: ``from`` is a Python keyword. Ranges over 2**32 values (the
    unbounded form on int32/int64/double) are refused: the noise cannot reach every value.
    """
    self_obj, *bounds, generator = inputs
    _check_no_generator(generator)
    self = _raw_tensor(g, self_obj, "self")
    default_end = _RANDOM_DEFAULT_END.get(self.dtype) if self.dtype is not None else None
    if len(bounds) == 2:
        low, high = int(_raw_float(bounds[0], "from")), bounds[1]
        high = default_end if high is None else int(_raw_float(high, "to"))
    else:
        low, high = 0, (int(_raw_float(bounds[0], "to")) if bounds else default_end)
    if high is None:
        raise ValueError(f"random_ on {self.dtype} needs explicit bounds")
    if high - low > _RANDOM_MAX_SPAN:
        raise ValueError(
            f"random_ over {high - low} values cannot be drawn exactly; give from/to spanning at most 2**32"
        )
    return _randint(g, low, high, self.dtype, like=self)


@onnx_symbolic("aten::uniform")
def aten_uniform(g: GraphContext, *inputs: object) -> Value:
    """uniform(Tensor self, float from=0., float to=1., *, Generator? generator=None) -> Tensor

    Takes its inputs positionally: the schema's ``from`` is a Python keyword, so it cannot
    be a parameter name.
    """
    self_obj, low, high, *rest = list(inputs) + [None] * (4 - len(inputs))
    _check_no_generator(rest[0] if rest else None)
    self = _raw_tensor(g, self_obj, "self")
    return _random(g, "Uniform", self.dtype, like=self, low=_raw_float(low, "from"), high=_raw_float(high, "to"))


@onnx_symbolic("aten::exponential")
def aten_exponential(g: GraphContext, self: Value, lambd: float = 1.0, generator: object = None) -> Value:
    """exponential(Tensor self, float lambd=1., *, Generator? generator=None) -> Tensor

    Inverse CDF: -log(1 - U) / lambd; 1 - U lies in (0, 1], so the log is finite.
    """
    _check_no_generator(generator)
    u = _uniform_like(g, self)
    one = h.scalar_like(g, 1.0, u)
    drawn = g.op("Neg", g.op("Log", g.op("Sub", one, u)))
    return h.cast(g, _scale_shift(g, drawn, 1.0 / lambd, 0.0), self.dtype)


@onnx_symbolic("aten::bernoulli")
def aten_bernoulli(g: GraphContext, self: Value, p: float | Value | None = None, generator: object = None) -> Value:
    """bernoulli(Tensor self, *, Generator? generator=None) -> Tensor (and .p with a float p, .Tensor with a tensor p)

    A uniform draw compared with the probability, at every opset. ONNX Bernoulli (opset 15)
    is not used: onnxruntime's CPU kernel (1.31) returns 1 with probability 1 - p, and it
    only takes a probability tensor of the output's shape anyway. The result keeps self's
    dtype (torch fills self's shape and dtype with 0/1).
    """
    _check_no_generator(generator)
    return _bernoulli_by_uniform(g, self, self if p is None else p)


@onnx_symbolic("aten::multinomial")
def aten_multinomial(
    g: GraphContext, self: Value, num_samples: int, replacement: bool = False, generator: object = None
) -> Value:
    """multinomial(Tensor self, SymInt num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor

    ONNX Multinomial draws with replacement from unnormalized log-probabilities, so it gets
    log(self). Without replacement (and more than one sample) it cannot be used: the
    Gumbel-top-k trick (top k of log p + Gumbel noise) draws k distinct categories with the
    same distribution, in the order sequential sampling would pick them.
    """
    _check_no_generator(generator)
    rank = h.rank_of(self)
    if rank not in (1, 2):
        raise ValueError(f"multinomial takes a 1-D or 2-D input, got rank {rank}")
    floating = self.dtype in (ir.DataType.FLOAT, ir.DataType.DOUBLE)
    probs = self if floating else h.cast(g, self, ir.DataType.FLOAT)
    logits = g.op("Log", probs)
    if rank == 1:
        logits = h.unsqueeze(g, logits, [0])
    if replacement or num_samples == 1:
        # onnxruntime's Multinomial takes float only
        logits = h.cast(g, logits, ir.DataType.FLOAT)
        out = g.op("Multinomial", logits, sample_size=num_samples, dtype=ir.DataType.INT64)
    else:
        u = _uniform_like(g, logits)
        gumbel = g.op("Neg", g.op("Log", g.op("Neg", g.op("Log", u))))
        keys = g.op("Add", logits, gumbel)
        _, out = h.topk(g, keys, num_samples, -1)
    return h.squeeze(g, out, [0]) if rank == 1 else out


@onnx_symbolic("aten::normal.Tensor_float")
def aten_normal_tensor_float(g: GraphContext, mean: Value, std: float = 1.0, generator: object = None) -> Value:
    """normal.Tensor_float(Tensor mean, float std=1., *, Generator? generator=None) -> Tensor"""
    _check_no_generator(generator)
    return _normal(g, mean, std, mean, mean.dtype)


@onnx_symbolic("aten::normal.float_Tensor")
def aten_normal_float_tensor(g: GraphContext, mean: float, std: Value, generator: object = None) -> Value:
    """normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor"""
    _check_no_generator(generator)
    return _normal(g, mean, std, std, std.dtype)


@onnx_symbolic("aten::normal.Tensor_Tensor")
def aten_normal_tensor_tensor(g: GraphContext, mean: Value, std: Value, generator: object = None) -> Value:
    """normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor

    The noise takes the broadcast shape of mean and std; mean + std serves as the shape
    template (RandomNormalLike reads only its shape, so its values never matter).
    """
    _check_no_generator(generator)
    template = g.op("Add", mean, h.cast(g, std, mean.dtype))
    return _normal(g, mean, std, template, mean.dtype)


@onnx_symbolic("aten::normal.float_float")
def aten_normal_float_float(
    g: GraphContext,
    mean: float,
    std: float,
    size: Sequence[int] | Value,
    dtype: torch.dtype | None = None,
    generator: object = None,
) -> Value:
    """normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None, ScalarType? dtype=None, ...) -> Tensor"""
    _check_no_generator(generator)
    return _random(g, "Normal", _target_dtype(dtype), shape=_size_arg(size), mean=mean, scale=std)


@onnx_symbolic("aten::normal_functional")
def aten_normal_functional(
    g: GraphContext, self: Value, mean: float = 0.0, std: float = 1.0, generator: object = None
) -> Value:
    """normal_functional(Tensor self, float mean=0., float std=1., *, Generator? generator=None) -> Tensor

    The functional form of Tensor.normal_: noise of self's shape and dtype. (The in-place
    pass must map aten::normal_ here: aten::normal has no (self, mean, std) overload.)
    """
    _check_no_generator(generator)
    return _normal(g, mean, std, self, self.dtype)


@onnx_symbolic("aten::_standard_gamma")
def aten__standard_gamma(g: GraphContext, self: Value, generator: object = None) -> Value:
    """_standard_gamma(Tensor self, Generator? generator=None) -> Tensor

    ONNX has no gamma sampler and no cheap loop: Marsaglia-Tsang rejection sampling is
    unrolled over 8 proposals per element drawn from RandomNormal/RandomUniform, the first
    accepted one kept (see _GAMMA_PROPOSALS for the failure odds).
    """
    _check_no_generator(generator)
    return _standard_gamma_draw(g, self)


@onnx_symbolic("aten::_sample_dirichlet")
def aten__sample_dirichlet(g: GraphContext, self: Value, generator: object = None) -> Value:
    """_sample_dirichlet(Tensor self, Generator? generator=None) -> Tensor

    Gamma(alpha_i) samples normalized over the last dim.
    """
    _check_no_generator(generator)
    rank = h.rank_of(self)
    if rank is None:
        raise NeedsExportTimeValue("_sample_dirichlet needs the rank of its input")
    gamma = h.cast(g, _standard_gamma_draw(g, self), _generation_dtype(self.dtype))
    total = h.reduce(g, "ReduceSum", gamma, [rank - 1], True)
    return h.cast(g, g.op("Div", gamma, total), self.dtype)
