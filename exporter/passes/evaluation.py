"""One TorchScript node evaluated on what is known at export time (export_values.py).

Three kinds of node give known results:

- Queries of a tensor's facts: ``dim()``, ``size()``, ``stride()``, ``dtype``, ``device``,
  ``layout``, ``is_cuda`` and the like, ``is_floating_point()``, ``requires_grad`` of an input.
- Computation on known values (numbers, strings, lists, dicts, TorchScript objects): the op is
  run in torch (``promote_types``, ``eq.str``, ``__getitem__``), or handled here for the prim
  ops that pack and unpack containers, refine types (``isinstance``, ``unchecked_cast``) and
  read attributes of objects.
- Tensor ops: run on meta tensors of the inputs' example sizes (no data, no work), laid out in
  the examples' memory order, which gives the result's dtype, rank, sizes and strides. A size
  stays fixed only where no input has a size chosen at run time; the rank and each stride stand
  only where a second run, with those sizes changed, agrees (strides only where every input's
  layout is known: a meta tensor of an unknown layout is contiguous, its views' strides made up).

Anything else is :data:`UNKNOWN`. Nothing here changes the graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from exporter import eager_ops, tensors
from exporter.passes.export_values import (
    NEVER,
    STRIDED,
    UNKNOWN,
    Fact,
    Items,
    Known,
    MaybeNone,
    TensorFacts,
    as_items,
    tensor_facts,
)
from exporter.passes.strides import dense_order, laid_out_like
from exporter.ts_graph import is_script_object, schema_of, script_class_name

__all__ = ["evaluate", "as_tensor", "trackable", "holds_tensor", "MUTABLE_CONTAINERS"]

# How much larger than its example a dynamic size is made for the second meta run.
_PERTURBATION = 7

# Container types whose values the graph may change in place: known only while nothing does.
MUTABLE_CONTAINERS = (torch._C.ListType, torch._C.DictType)


def evaluate(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    """The facts of the outputs of ``node`` (a node without blocks), given its inputs'."""
    count = node.outputsSize()
    if count == 0:
        return []
    handler = _HANDLERS.get(node.kind())
    if handler is not None:
        result = handler(node, inputs)
    else:
        result = _by_schema(node, inputs)
    if len(result) != count:
        return [UNKNOWN] * count
    return result


def as_tensor(fact: Fact) -> TensorFacts | None:
    """A tensor's facts (a known tensor's too), or None."""
    if isinstance(fact, TensorFacts):
        return fact
    if isinstance(fact, Known) and isinstance(fact.value, torch.Tensor) and not fact.value.is_quantized:
        return tensor_facts(fact.value)
    return None


def trackable(value: torch._C.Value) -> bool:
    """Whether a list or dict value keeps what it holds when made: every use reads it, none
    changes it in place or lets another value alias it (a container, a block's result, a
    loop-carried value). Other values always are."""
    if not isinstance(value.type(), MUTABLE_CONTAINERS):
        return True
    for use in value.uses():
        user = use.user
        if user.kind() in _READS_CONTAINER:
            continue
        schema = schema_of(user)
        if schema is None or use.offset >= len(schema.arguments):
            return False
        alias = schema.arguments[use.offset].alias_info
        if alias is not None and (alias.is_write or _returns_alias(schema, user)):
            return False
    return True


def _returns_alias(schema: torch._C.FunctionSchema, user: torch._C.Node) -> bool:
    """Whether a result of ``user`` may alias its container argument: a result the schema
    says may alias, of a type that can be changed in place (``__getitem__`` of a list of lists;
    not of a list of ints)."""
    return any(
        r.alias_info is not None and _mutable(output.type()) for r, output in zip(schema.returns, user.outputs())
    )


def _mutable(ts_type: torch._C.JitType) -> bool:
    if isinstance(ts_type, (*MUTABLE_CONTAINERS, torch._C.ClassType, torch._C.AnyType)):
        return True
    return any(_mutable(t) for t in ts_type.containedTypes())


# prim ops that read a container's items without keeping it
_READS_CONTAINER = frozenset({"prim::ListUnpack", "prim::min", "prim::max"})


# -- tensor queries ---------------------------------------------------------------------------


def _query(read: Callable[[TensorFacts], object]) -> Callable[[torch._C.Node, Sequence[Fact]], list[Fact]]:
    def handler(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
        tensor = as_tensor(inputs[0]) if inputs else None
        if tensor is None:
            return [UNKNOWN]
        value = read(tensor)
        return [UNKNOWN if value is None else Known(value)]

    return handler


def _dtype(t: TensorFacts) -> int | None:
    return None if t.dtype is None else tensors.DTYPE_TO_SCALAR_TYPE.get(t.dtype)


def _on(device_type: str) -> Callable[[TensorFacts], bool | None]:
    return lambda t: None if t.device is None else t.device.type == device_type


def _dense(t: TensorFacts) -> bool | None:
    """False for the layout queries of a strided tensor (is_sparse, is_mkldnn)."""
    return None if t.layout is None else (False if t.layout == STRIDED else None)


def _size(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    """aten::size(Tensor self) -> int[]; size.int(Tensor self, int dim) -> int."""
    tensor = as_tensor(inputs[0])
    return _per_dim(None if tensor is None else tensor.sizes, inputs[1:])


def _stride(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    """aten::stride(Tensor self) -> int[]; stride.int(Tensor self, int dim) -> int: the strides
    fixed at export (exporter.passes.strides)."""
    tensor = as_tensor(inputs[0])
    strided = tensor is not None and tensor.layout == STRIDED
    return _per_dim(tensor.strides if strided else None, inputs[1:])  # type: ignore[union-attr]


def _per_dim(values: tuple[int | None, ...] | None, dim: Sequence[Fact]) -> list[Fact]:
    """A per-dim query's result: the whole list (known in part where some are None), or the
    item of a known ``dim``."""
    if values is None:
        return [UNKNOWN]
    if not dim:
        if all(value is not None for value in values):
            return [Known(list(values))]
        return [Items(tuple(UNKNOWN if value is None else Known(value) for value in values))]
    index = dim[0]
    if (
        not isinstance(index, Known)
        or not isinstance(index.value, int)
        or not -len(values) <= index.value < len(values)
    ):
        return [UNKNOWN]
    value = values[index.value]
    return [UNKNOWN if value is None else Known(value)]


def _numel(t: TensorFacts) -> int | None:
    if not t.static or t.sizes is None:
        return None
    count = 1
    for size in t.sizes:
        count *= size  # type: ignore[operator]
    return count


def _first_size(t: TensorFacts) -> int | None:
    """len(tensor): the size of its first dim."""
    return t.sizes[0] if t.sizes else None


def _is_floating_point(t: TensorFacts) -> bool | None:
    return None if t.dtype is None else t.dtype.is_floating_point


def _is_complex(t: TensorFacts) -> bool | None:
    return None if t.dtype is None else t.dtype.is_complex


def _is_signed(t: TensorFacts) -> bool | None:
    return None if t.dtype is None else t.dtype.is_signed


def _is_quantized(t: TensorFacts) -> bool | None:
    return None if t.dtype is None else t.dtype in tensors.QUANTIZED_STORAGE


def _element_size(t: TensorFacts) -> int | None:
    return None if t.dtype is None else t.dtype.itemsize


def _get_device(t: TensorFacts) -> int | None:
    if t.device is None:
        return None
    return -1 if t.device.type == "cpu" else t.device.index


# -- prim ops on known values ------------------------------------------------------------------


def _construct(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    """prim::ListConstruct / prim::TupleConstruct."""
    is_tuple = node.kind() == "prim::TupleConstruct"
    if not is_tuple and not trackable(node.output()):
        return [UNKNOWN]
    if all(isinstance(f, Known) for f in inputs):
        values = [f.value for f in inputs]  # type: ignore[union-attr]
        return [Known(tuple(values) if is_tuple else values)]
    return [Items(tuple(inputs), is_tuple=is_tuple)]


def _unpack(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    """prim::ListUnpack / prim::TupleUnpack."""
    items = as_items(inputs[0])
    if items is None or len(items.items) != node.outputsSize():
        return [UNKNOWN] * node.outputsSize()
    return list(items.items)


def _tuple_index(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    items, index = as_items(inputs[0]), inputs[1]
    if items is None or not isinstance(index, Known) or not isinstance(index.value, int):
        return [UNKNOWN]
    if not -len(items.items) <= index.value < len(items.items):
        return [UNKNOWN]
    return [items.items[index.value]]


def _dict_construct(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    if not trackable(node.output()) or not all(isinstance(f, Known) for f in inputs):
        return [UNKNOWN]
    values = [f.value for f in inputs]  # type: ignore[union-attr]
    return [Known(dict(zip(values[::2], values[1::2])))]


def _unchecked_cast(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    """prim::unchecked_cast: the value refined after a check (``is not None``, isinstance)."""
    fact = inputs[0]
    return [fact.inner if isinstance(fact, MaybeNone) else fact]


def _isinstance(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    """prim::isinstance[types](x): decided where the fact says what ``x`` holds at run time."""
    fact = inputs[0]
    matches = [_is_instance(fact, candidate) for candidate in node.tys("types")]
    if any(m is True for m in matches):
        return [Known(True)]
    if all(m is False for m in matches):
        return [Known(False)]
    return [UNKNOWN]


def _is_instance(fact: Fact, candidate: torch._C.JitType) -> bool | None:
    kind = candidate.kind()
    if isinstance(fact, TensorFacts) or as_tensor(fact) is not None:
        if kind == "TensorType":
            return True
        return None if kind in ("OptionalType", "UnionType", "AnyType") else False
    if not isinstance(fact, Known):
        return None
    value = fact.value
    if value is None:
        return kind in ("NoneType", "OptionalType") or (None if kind in ("UnionType", "AnyType") else False)
    simple = {bool: "BoolType", int: "IntType", float: "FloatType", str: "StringType"}.get(type(value))
    if simple is not None:
        if kind == simple:
            return True
        return None if kind in ("OptionalType", "UnionType", "AnyType", "NumberType") else False
    name = script_class_name(value)
    if name is not None:
        return kind == "ClassType" and name == candidate.qualified_name()
    return None


def _is(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    """aten::__is__ / aten::__isnot__: decided where None-ness is known on both sides."""
    nones = [_none_ness(f) for f in inputs]
    if None in nones:
        return [UNKNOWN]
    a, b = nones
    if not (a or b):  # two values that are not None: identity is not known here
        return [UNKNOWN]
    same = a == b
    return [Known(same if node.kind() == "aten::__is__" else not same)]


def _none_ness(fact: Fact) -> bool | None:
    if isinstance(fact, Known):
        return fact.value is None
    if isinstance(fact, (TensorFacts, Items)):
        return False
    return None


def _get_attr(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    """prim::GetAttr of a TorchScript object known at export (read from a module attribute)."""
    owner = inputs[0]
    if not isinstance(owner, Known) or not is_script_object(owner.value):
        return [UNKNOWN]
    name = node.s("name")
    obj = owner.value
    if isinstance(obj, torch._C.ScriptObject):
        if not obj.hasattr(name):
            return [UNKNOWN]
        value = obj.getattr(name)
    elif hasattr(obj, name):
        value = getattr(obj, name)
    else:
        return [UNKNOWN]
    if isinstance(value, (list, dict)) and not trackable(node.output()):
        return [UNKNOWN]
    return [Known(value)]


def _constant(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    output = node.output()
    if isinstance(output.type(), MUTABLE_CONTAINERS) and not trackable(output):
        return [UNKNOWN]
    return [Known(output.toIValue())]


def _uninitialized(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    return [NEVER]


def _list_read(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    """len and indexing of a known list, dict or string, of a list known in part (``x.shape``
    with a dynamic axis), and len of a tensor; a list an op made is left to run time (torch's
    exporter reads it as a sequence)."""
    tensor = as_tensor(inputs[0])
    if tensor is not None:
        size = _first_size(tensor) if node.kind() == "aten::len" else None
        return [UNKNOWN if size is None else Known(size)]
    if isinstance(inputs[0], Known) and isinstance(inputs[0].value, (list, tuple, dict, str)):
        return [_read_known(node.kind(), inputs[0].value, inputs[1:])]
    items = inputs[0] if isinstance(inputs[0], Items) else None
    if items is None:
        return _by_schema(node, inputs)
    if items.made_by_op:
        return [UNKNOWN]
    if node.kind() == "aten::len":
        return [Known(len(items.items))]
    index = inputs[1]
    if not isinstance(index, Known) or not isinstance(index.value, int):
        return [UNKNOWN]
    if not -len(items.items) <= index.value < len(items.items):
        return [UNKNOWN]
    return [items.items[index.value]]


def _read_known(kind: str, container: list | tuple | dict | str, rest: Sequence[Fact]) -> Fact:  # type: ignore[type-arg]
    if kind == "aten::len":
        return Known(len(container))
    if not rest or not isinstance(rest[0], Known):
        return UNKNOWN
    key = rest[0].value
    if isinstance(container, dict):
        return Known(container[key]) if key in container else UNKNOWN
    if not isinstance(key, int) or isinstance(key, bool) or not -len(container) <= key < len(container):
        return UNKNOWN
    return Known(container[key])


def _slice(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    """aten::slice.t of a list known in whole or in part (``shape[1:]`` of a list of names,
    ``x.shape[offset:]`` with a dynamic axis): the items in the slice, as Python slices them,
    where its bounds are known (torch cannot run this generic op itself). Slices of tensors
    and strings go by their schema."""
    if not isinstance(node.inputsAt(0).type(), torch._C.ListType):
        return _by_schema(node, inputs)
    items = as_items(inputs[0])
    bounds = inputs[1:]
    if items is None or items.made_by_op or not trackable(node.output()):
        return [UNKNOWN]
    if not all(isinstance(f, Known) and (f.value is None or _is_int(f.value)) for f in bounds):
        return [UNKNOWN]
    start, end, step = (*(f.value for f in bounds), None, None, 1)[:3]  # type: ignore[union-attr]
    if step is None or step < 1:  # type: ignore[operator]
        return [UNKNOWN]
    sliced = items.items[slice(start, end, step)]  # type: ignore[misc]
    if all(isinstance(f, Known) for f in sliced):
        return [Known([f.value for f in sliced])]  # type: ignore[union-attr]
    return [Items(sliced)]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _format(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    """aten::format(str self, ...): ``"{}".format(...)`` of known strings, ints and bools (how
    TorchScript prints other values is its own)."""
    if not all(isinstance(f, Known) for f in inputs):
        return [UNKNOWN]
    text, *values = [f.value for f in inputs]  # type: ignore[union-attr]
    if not isinstance(text, str) or not all(isinstance(v, (str, int)) for v in values):
        return [UNKNOWN]
    pieces = text.split("{}")
    if len(pieces) - 1 != len(values):
        return [UNKNOWN]
    rendered = [str(v) if not isinstance(v, bool) else ("True" if v else "False") for v in values]
    return [Known("".join(p + r for p, r in zip(pieces, [*rendered, ""])))]


_HANDLERS: dict[str, Callable[[torch._C.Node, Sequence[Fact]], list[Fact]]] = {
    "prim::Constant": _constant,
    "aten::dim": _query(lambda t: t.rank),
    "aten::size": _size,
    "aten::numel": _query(_numel),
    "aten::stride": _stride,
    "aten::len": _list_read,
    "aten::__getitem__": _list_read,
    "prim::dtype": _query(_dtype),
    "prim::device": _query(lambda t: t.device),
    "prim::layout": _query(lambda t: t.layout),
    "prim::requires_grad": _query(lambda t: t.requires_grad),
    "prim::is_cuda": _query(_on("cuda")),
    "prim::is_xpu": _query(_on("xpu")),
    "prim::is_mps": _query(_on("mps")),
    "prim::is_meta": _query(_on("meta")),
    "prim::is_vulkan": _query(_on("vulkan")),
    "prim::is_ipu": _query(_on("ipu")),
    "prim::is_maia": _query(_on("maia")),
    "prim::is_sparse": _query(_dense),
    "prim::is_sparse_csr": _query(_dense),
    "prim::is_mkldnn": _query(_dense),
    "prim::is_nested": _query(_dense),
    "prim::is_quantized": _query(_is_quantized),
    "aten::is_floating_point": _query(_is_floating_point),
    "aten::is_complex": _query(_is_complex),
    "aten::is_signed": _query(_is_signed),
    "aten::element_size": _query(_element_size),
    "aten::get_device": _query(_get_device),
    "prim::ListConstruct": _construct,
    "prim::TupleConstruct": _construct,
    "prim::ListUnpack": _unpack,
    "prim::TupleUnpack": _unpack,
    "prim::TupleIndex": _tuple_index,
    "prim::DictConstruct": _dict_construct,
    "prim::unchecked_cast": _unchecked_cast,
    "aten::unchecked_unwrap_optional": _unchecked_cast,
    "prim::isinstance": _isinstance,
    "aten::__is__": _is,
    "aten::__isnot__": _is,
    "prim::GetAttr": _get_attr,
    "prim::Uninitialized": _uninitialized,
    "aten::format": _format,
    "aten::slice": _slice,
}


# -- ops with a schema ---------------------------------------------------------------------------

# Results TorchScript holds as ints, converted back from the torch objects an op returns.
_AS_INTS: dict[type, Callable[[object], object]] = {
    torch.dtype: lambda d: tensors.DTYPE_TO_SCALAR_TYPE[d],  # type: ignore[index]
    torch.layout: lambda layout: STRIDED if layout == torch.strided else None,
    torch.memory_format: lambda f: None,
}


def _by_schema(node: torch._C.Node, inputs: Sequence[Fact]) -> list[Fact]:
    schema = schema_of(node)
    count = node.outputsSize()
    if schema is None or schema.is_mutable or not _computes_on_values(node.kind()) or _nondeterministic(node):
        return [UNKNOWN] * count
    returns_tensors = any(holds_tensor(r.type) for r in schema.returns)
    if not returns_tensors:
        if inputs and all(isinstance(f, Known) for f in inputs):
            return _run_known(node, schema, [f.value for f in inputs])  # type: ignore[union-attr]
        return [UNKNOWN] * count
    return _meta_results(node, schema, inputs)


# prim ops on numbers and lists torch runs like aten ops (other prim ops read graph state, make
# MKLDNN constants and the like: never run here)
_PRIM_COMPUTATIONS = frozenset({"prim::min", "prim::max", "prim::abs"})


def _computes_on_values(kind: str) -> bool:
    return kind.startswith("aten::") or kind in _PRIM_COMPUTATIONS


def holds_tensor(ts_type: torch._C.JitType) -> bool:
    """Whether a TorchScript type is a tensor or holds one (a list, tuple, Optional, Union)."""
    return isinstance(ts_type, torch._C.TensorType) or any(holds_tensor(t) for t in ts_type.containedTypes())


def _nondeterministic(node: torch._C.Node) -> bool:
    try:
        return node.isNondeterministic()
    except RuntimeError:  # it asserts on some schemas (native_dropout with train=None)
        return True


def _run_known(node: torch._C.Node, schema: torch._C.FunctionSchema, values: list[object]) -> list[Fact]:
    count = node.outputsSize()
    try:
        result = eager_ops.run_op(schema, values)
    except eager_ops.TORCH_REFUSALS:  # left to the emitter, which says why if it matters
        return [UNKNOWN] * count
    results = list(result) if count > 1 and isinstance(result, tuple) else [result]
    facts: list[Fact] = []
    for value, output in zip(results, node.outputs()):
        convert = _AS_INTS.get(type(value))
        if convert is not None:
            value = convert(value)
        if value is None and not isinstance(output.type(), (torch._C.NoneType, torch._C.OptionalType)):
            facts.append(UNKNOWN)
        elif isinstance(value, (list, dict)) and not trackable(output):
            facts.append(UNKNOWN)
        else:
            facts.append(Known(value))
    return facts


def _meta_results(node: torch._C.Node, schema: torch._C.FunctionSchema, inputs: Sequence[Fact]) -> list[Fact]:
    """A tensor op's results from meta tensors of its inputs' example sizes (see the module
    docstring); UNKNOWN where an input is not known well enough or the op has no meta kernel."""
    count = node.outputsSize()
    dynamic = any(_has_dynamic_size(f) for f in inputs)
    first = _meta_run(schema, inputs, 0)
    if first is None or len(first) != count:
        return [UNKNOWN] * count
    second = _meta_run(schema, inputs, _PERTURBATION) if dynamic else first
    device = _result_device(schema, inputs)
    laid_out = all(_laid_out(f) for f in inputs)
    return [_result_facts(a, b, dynamic, device, laid_out) for a, b in zip(first, second or [None] * count)]


def _laid_out(fact: Fact) -> bool:
    """Whether a meta run's input has the example's layout (a dense one, whose order is known):
    only then are the strides of the op's results the example run's."""
    tensor = as_tensor(fact)
    if tensor is not None:
        return tensor.order is not None
    if isinstance(fact, Items):
        return all(_laid_out(item) for item in fact.items)
    return True


def _has_dynamic_size(fact: Fact) -> bool:
    tensor = as_tensor(fact)
    if tensor is not None:
        return tensor.sizes is None or not tensor.static
    if isinstance(fact, Items):
        return any(_has_dynamic_size(item) for item in fact.items)
    return False


def _meta_run(schema: torch._C.FunctionSchema, inputs: Sequence[Fact], grow: int) -> list[object] | None:
    try:
        values = [_meta_value(f, grow) for f in inputs]
        with torch.no_grad():
            result = eager_ops.run_op(schema, values)
    except (*eager_ops.TORCH_REFUSALS, _NotKnown, NotImplementedError, AssertionError, ArithmeticError):
        return None
    return list(result) if isinstance(result, tuple) else [result]


class _NotKnown(Exception):
    pass


def _meta_value(fact: Fact, grow: int) -> object:
    """What a meta run gets for an input: a meta tensor of its example sizes (its dynamic
    sizes grown by ``grow``), a known value, or a list of them."""
    tensor = as_tensor(fact)
    if tensor is not None:
        if tensor.dtype is None or tensor.example is None or tensor.sizes is None:
            raise _NotKnown
        shape = [e + grow if s is None else e for s, e in zip(tensor.sizes, tensor.example)]
        return laid_out_like(shape, tensor.order, tensor.dtype, "meta")
    if isinstance(fact, Known):
        return fact.value
    if isinstance(fact, Items):
        values = [_meta_value(item, grow) for item in fact.items]
        return tuple(values) if fact.is_tuple else values
    raise _NotKnown


def _result_device(schema: torch._C.FunctionSchema, inputs: Sequence[Fact]) -> torch.device | None:
    """The device of a tensor op's result: its ``device`` argument, else its tensor inputs'
    one device, else the CPU (a factory op without a device)."""
    for arg, fact in zip(schema.arguments, inputs):
        if arg.name == "device" and isinstance(fact, Known) and fact.value is not None:
            value = fact.value
            return value if isinstance(value, torch.device) else None
    devices = {t.device for t in (as_tensor(f) for f in inputs) if t is not None}
    if len(devices) == 1:
        return devices.pop()
    return torch.device("cpu") if not devices else None


def _result_facts(
    first: object, second: object, dynamic: bool, device: torch.device | None, laid_out: bool = True
) -> Fact:
    if isinstance(first, torch.Tensor):
        if not isinstance(second, torch.Tensor) or first.dim() != second.dim():  # the rank depends on a size
            return TensorFacts(first.dtype, device, None, None)
        example = tuple(int(s) for s in first.shape)
        sizes = tuple(None for _ in example) if dynamic else example
        layout = STRIDED if first.layout == torch.strided else None
        if layout is None or not laid_out:
            return TensorFacts(first.dtype, device, sizes, example, layout=layout)
        strides = tuple(a if a == b else None for a, b in zip(first.stride(), second.stride()))
        order = dense_order(example, first.stride())
        return TensorFacts(
            first.dtype,
            device,
            sizes,
            example,
            layout=layout,
            strides=strides,
            order=None if order is None else tuple(order),
        )
    if isinstance(first, (list, tuple)) and isinstance(second, (list, tuple)):
        if len(first) != len(second):
            return UNKNOWN
        items = tuple(_result_facts(a, b, dynamic, device, laid_out) for a, b in zip(first, second))
        return Items(items, is_tuple=isinstance(first, tuple), made_by_op=isinstance(first, list))
    if isinstance(first, (bool, int, float)) and not dynamic:
        return Known(first)
    return UNKNOWN
