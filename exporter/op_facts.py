"""What the exporter knows of an op beyond its symbolic: facts declared where the op is registered.

An op's symbolic says how to lower it; some phases need to know more about the op itself:
how torch promotes its operands, how it treats quantized tensors, whether it changes a list,
what torch's exporter does with it. Each such fact is declared by keyword on the op's
``@onnx_symbolic(...)`` (``promotion=Promotion(("self", "other"))``), held by the registry per
op name, and asked through ``REGISTRY.facts(name, overload)``; no phase keeps its own table of
op names. A fact holds at every opset: it describes torch's op, not one lowering of it.

This module holds only the record types; :mod:`exporter.registry` merges the declarations.
"""

from __future__ import annotations

import dataclasses
import enum

__all__ = [
    "Result",
    "Promotion",
    "Quantized",
    "FixedQParams",
    "SequenceRead",
    "DictMutation",
    "ComplexInputs",
    "QPARAMS_0_TO_1",
    "QPARAMS_NEG1_TO_1",
    "OpFacts",
    "FACT_NAMES",
]


class Result(enum.Enum):
    """The dtype a promoting op computes and returns, given its operands' promoted dtype."""

    # computes in the promoted dtype and returns it (add, where, clamp)
    PROMOTED = "promoted"
    # compares in the promoted dtype and returns bool (eq, lt, isclose)
    BOOL = "bool"
    # the promoted dtype, made the default float dtype when it is bool or integral (atan2; div,
    # unless a rounding_mode is given: that is true division)
    FLOAT = "float"
    # the operands take the dtype of the tensor written into, argument 0 (masked_fill, fill)
    SELF = "self"


@dataclasses.dataclass(frozen=True)
class Promotion:
    """Which operands torch promotes to one dtype (by schema name) and what the op returns.

    ONNX has no implicit casts, so these operands are cast to the computed dtype before the
    symbolic runs (the scalar-type pass, and the emitter for untyped scripted values).
    Scalar overloads that name their operands ``a`` and ``b`` (``aten::add.int``) promote those.
    """

    operands: tuple[str, ...]
    result: Result = Result.PROMOTED

    @property
    def arithmetic(self) -> bool:
        """Whether the op computes in its output dtype (a comparison computes in the promoted one)."""
        return self.result is not Result.BOOL


class Quantized(enum.Enum):
    """How an aten op of an eager-quantized model treats quantized (integer) inputs."""

    # its float symbolic runs on dequantized values; results are quantized with the first
    # quantized input's scale and zero point, as torch keeps them (relu, pooling, upsample)
    DEQUANTIZE = "dequantize"
    # it runs on the integers as is: it only moves or selects elements (reshape, slice), reads
    # the shape, or takes the quantized tensor itself (dequantize)
    INTEGERS = "integers"


@dataclasses.dataclass(frozen=True)
class FixedQParams:
    """The output scale and zero point torch fixes for an op on quantized tensors, by storage
    dtype (its output range does not depend on the input's): inputs are dequantized as for
    :attr:`Quantized.DEQUANTIZE`, results quantized with these."""

    uint8: tuple[float, int]
    int8: tuple[float, int]


# torch's fixed qparams for outputs in [0, 1] (sigmoid, hardsigmoid) and [-1, 1] (tanh), as its
# default_fixed_qparams_range_0to1 / _neg1to1 observers set them
QPARAMS_0_TO_1 = FixedQParams(uint8=(1.0 / 256, 0), int8=(1.0 / 256, -128))
QPARAMS_NEG1_TO_1 = FixedQParams(uint8=(2.0 / 256, 128), int8=(2.0 / 256, 0))


class SequenceRead(enum.Enum):
    """What an op reads of a list that torch's exporter lowers to an ONNX sequence (opset 11+)."""

    # its length (SequenceLength); torch knows the length of a list literal nothing changes (len)
    LENGTH = "length"
    # the item at its index argument (SequenceAt); indexed at a position torch computes at run
    # time, even a list literal is a sequence for torch (__getitem__)
    ITEM = "item"
    # an item it removes (SequenceAt, SequenceErase: pop)
    REMOVED_ITEM = "removed item"


class DictMutation(enum.Enum):
    """How an op changes the dict that is its first input. A TorchScript dict is a Python dict
    at export time (opset9/script_dicts.py), so a change inside run-time control flow must be
    threaded through the If or Loop (control_flow/outer_state.py)."""

    # writes the value of one key, its argument 1 (``d[k] = v``, setdefault): the key's value
    # is threaded through the If or Loop as a variable would be
    WRITES_KEY = "writes key"
    # removes keys or merges in another dict (pop, del, clear, update): which keys the dict
    # holds would depend on run-time values, which ONNX cannot hold
    CHANGES_KEYS = "changes keys"


class ComplexInputs(enum.Enum):
    """How an op treats a complex tensor argument (exporter/complex_values.py carries one as a
    float tensor with a trailing dim of 2). An op that declares nothing refuses one by name."""

    # it acts on real and imaginary parts independently (slicing, reshaping, cat, neg, sum,
    # mul by a real tensor): its symbolic runs once on the real parts and once on the
    # imaginary parts of its complex arguments, every other argument as given, and the two
    # results are paired again
    PARTS = "parts"
    # as PARTS, and a real operand among those it promotes counts as complex with a zero
    # imaginary part (add, sub: the imaginary run adds zeros)
    LINEAR = "linear"
    # it reads only the shape (size, dim, numel): its symbolic runs on the real parts
    SHAPE = "shape"
    # its symbolic takes the complex value itself (abs, angle, mul, the fft functions)
    OWN = "own"


@dataclasses.dataclass(frozen=True)
class OpFacts:
    """Everything declared about one op, with the defaults of an op that declares nothing."""

    # the emitter may fold a node with constant inputs by running it in torch (False: torch's
    # result is random, or an identity the symbolic wants to see, as for dropout)
    fold: bool = True
    # torch's type promotion of its operands; None: it promotes none
    promotion: Promotion | None = None
    # on quantized inputs
    quantized: Quantized | FixedQParams = Quantized.DEQUANTIZE
    # it changes the list that is its first input in place (append, pop, _set_item)
    mutates_list: bool = False
    # it changes the dict that is its first input in place, and how (None: it changes no dict)
    mutates_dict: DictMutation | None = None
    # it only checks or refines an Optional value (``is None``, ``is not None``, Optional[T] ->
    # T), never computes with it: a scripted Optional[Tensor] input nothing else uses becomes an
    # ONNX optional input (opset 15), as in torch's exporter
    checks_optional: bool = False
    # What torch's exporter does with it, for the graph inputs its model keeps (input_parity.py):
    # what it reads of its list input where torch makes that list an ONNX sequence
    torch_sequence_read: SequenceRead | None = None
    # below this opset its lowering reads the input's shape at run time, through an op torch's
    # constant tracking does not evaluate (0: at no opset). Before Range (opset 11) torch's
    # arange is NonZero(ConstantOfShape(n)), so ``_dim_arange(x, 1)`` reads Shape(x) at run
    # time; ``arange(x.size(0))`` does not: there aten::size reads the shape, which torch folds.
    torch_shape_read_below: int = 0
    # TorchScript's constant propagation folds it when its inputs are constants, so torch knows
    # its result at export time (integer arithmetic)
    torch_folds_constants: bool = False
    # how it treats a complex tensor argument (None: it refuses one)
    complex_inputs: ComplexInputs | None = None


FACT_NAMES: tuple[str, ...] = tuple(field.name for field in dataclasses.fields(OpFacts))
