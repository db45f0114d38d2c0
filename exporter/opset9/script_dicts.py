"""TorchScript dict builtins of scripted models: ``{}``/``dict()``/``OrderedDict()``, item
assignment and lookup, ``keys``/``values``/``items``, ``len``, ``get``, ``pop``, ``update``,
``setdefault`` and copies; and ``list.copy()``.

torchvision's scripted models build their feature maps in dicts
(``IntermediateLayerGetter``: ``out = OrderedDict(); out[name] = x``; segmentation heads
``result["out"] = x``) and return them. As with export-time lists (script_lists), a dict whose
keys are constants is a Python dict while the graph is emitted: every builtin acts on it then,
and the values stay ONNX values. A dict returned by the model is one output per value, in
insertion order (prim::DictConstruct's rule). Keys computed at run time have no ONNX form and are
refused by name.
"""

from __future__ import annotations

import onnx_ir as ir

from exporter import runtime_list
from exporter.graph_context import GraphContext
from exporter.registry import onnx_symbolic
from exporter.runtime_list import RuntimeList

Value = ir.Value

_KEY_TYPES = (str, int, float, bool)


def _dict(value: object, what: str) -> dict[object, object]:
    if not isinstance(value, dict):
        raise ValueError(f"{what} on {type(value).__name__} is not supported (a dict with export-time keys is)")
    return value


def _key(key: object, what: str) -> object:
    if not isinstance(key, _KEY_TYPES):
        raise ValueError(f"{what} with a key computed at run time is not supported (dict keys must be constants)")
    return key


@onnx_symbolic("aten::dict", fold=False)
def aten_dict(g: GraphContext, *inputs: object) -> object:
    """dict() -> Dict(str, Tensor); dict.str((str, tVal)[] inputs); dict.Dict_str(Dict self):
    an empty dict, one from (key, value) pairs, or a copy."""
    if not inputs:
        return {}
    (source,) = inputs
    if isinstance(source, dict):
        return dict(source)
    if isinstance(source, (list, tuple)):
        return {_key(k, "dict()"): v for k, v in source}
    raise ValueError(f"dict() of {type(source).__name__} is not supported")


@onnx_symbolic("aten::_set_item.str")
def aten__set_item_str(g: GraphContext, l: object, idx: object, v: object) -> None:  # noqa: E741 - schema name
    """_set_item.str(Dict(str, t)(a!) l, str(b -> *) idx, t(c -> *) v) -> (): ``d[key] = v``"""
    _dict(l, "item assignment")[_key(idx, "item assignment")] = v


@onnx_symbolic("aten::_set_item.int")
def aten__set_item_int(g: GraphContext, l: object, idx: object, v: object) -> None:  # noqa: E741 - schema name
    """_set_item.int(Dict(int, t)(a!) l, int(b -> *) idx, t(c -> *) v) -> ()"""
    _dict(l, "item assignment")[_key(idx, "item assignment")] = v


@onnx_symbolic("aten::__getitem__.Dict_str")
def aten___getitem___dict_str(g: GraphContext, self: object, key: object) -> object:
    """__getitem__.Dict_str(Dict(str, t) self, str key) -> t(*)"""
    items = _dict(self, "d[key]")
    key = _key(key, "d[key]")
    if key not in items:
        raise KeyError(f"{key!r} is not a key of the dict (keys: {list(items)})")
    return items[key]


@onnx_symbolic("aten::__getitem__.Dict_int")
def aten___getitem___dict_int(g: GraphContext, self: object, key: object) -> object:
    """__getitem__.Dict_int(Dict(int, t) self, int key) -> t(*)"""
    return aten___getitem___dict_str(g, self, key)


@onnx_symbolic("aten::keys.str")
def aten_keys_str(g: GraphContext, self: object) -> object:
    """keys.str(Dict(str, t) self) -> str[](*)"""
    return list(_dict(self, "keys()"))


@onnx_symbolic("aten::values.str")
def aten_values_str(g: GraphContext, self: object) -> object:
    """values.str(Dict(str, t) self) -> t[](*): the values in insertion order."""
    return list(_dict(self, "values()").values())


@onnx_symbolic("aten::values.int")
def aten_values_int(g: GraphContext, self: object) -> object:
    """values.int(Dict(int, t) self) -> t[](*)"""
    return aten_values_str(g, self)


@onnx_symbolic("aten::items.str")
def aten_items_str(g: GraphContext, self: object) -> object:
    """items.str(Dict(str, t) self) -> ((str, t)[]): (key, value) tuples in insertion order."""
    return [(k, v) for k, v in _dict(self, "items()").items()]


@onnx_symbolic("aten::len.Dict_str")
def aten_len_dict_str(g: GraphContext, self: object) -> int:
    """len.Dict_str(Dict(str, t) self) -> int"""
    return len(_dict(self, "len()"))


@onnx_symbolic("aten::get.str")
def aten_get_str(g: GraphContext, self: object, key: object) -> object:
    """get.str(Dict(str, t) self, str key) -> t(*)?: None for a missing key."""
    return _dict(self, "get()").get(_key(key, "get()"))


@onnx_symbolic("aten::get.default_str")
def aten_get_default_str(g: GraphContext, self: object, key: object, default_value: object) -> object:
    """get.default_str(Dict(str, t) self, str key, t default_value) -> t(*)"""
    return _dict(self, "get()").get(_key(key, "get()"), default_value)


@onnx_symbolic("aten::pop.Dict_str")
def aten_pop_dict_str(g: GraphContext, self: object, key: object) -> object:
    """pop.Dict_str(Dict(str, t)(a!) self, str key) -> t(*)"""
    items = _dict(self, "pop()")
    key = _key(key, "pop()")
    if key not in items:
        raise KeyError(f"{key!r} is not a key of the dict (keys: {list(items)})")
    return items.pop(key)


@onnx_symbolic("aten::pop.Dict_default_str")
def aten_pop_dict_default_str(g: GraphContext, self: object, key: object, default_value: object) -> object:
    """pop.Dict_default_str(Dict(str, t)(a!) self, str key, t default_value) -> t(*)"""
    return _dict(self, "pop()").pop(_key(key, "pop()"), default_value)


@onnx_symbolic("aten::setdefault.str")
def aten_setdefault_str(g: GraphContext, self: object, key: object, default_value: object) -> object:
    """setdefault.str(Dict(str, t)(a!) self, str(b -> *) key, t(c -> *) default_value) -> t(*)"""
    return _dict(self, "setdefault()").setdefault(_key(key, "setdefault()"), default_value)


@onnx_symbolic("aten::update.str")
def aten_update_str(g: GraphContext, self: object, to_add: object) -> None:
    """update.str(Dict(str, t)(a!) self, Dict(str, t)(a!) to_add) -> ()"""
    _dict(self, "update()").update(_dict(to_add, "update()"))


@onnx_symbolic("aten::copy.Dict_str")
def aten_copy_dict_str(g: GraphContext, self: object) -> object:
    """copy.Dict_str(Dict(str, t)(a) self) -> Dict(str, t): a shallow copy."""
    return dict(_dict(self, "copy()"))


@onnx_symbolic("aten::copy.t")
def aten_copy_t(g: GraphContext, self: object) -> object:
    """copy.t(t[](a) self) -> t[]: ``l.copy()``, a new list (as ``list(l)``), so later mutation
    of either stays separate."""
    if isinstance(self, RuntimeList):
        return runtime_list.copy(self)
    if isinstance(self, Value):  # a shape computed at run time: immutable
        return self
    if not isinstance(self, list):
        raise ValueError(f"copy() of {type(self).__name__} is not supported")
    return list(self)
