"""TorchScript dict builtins of scripted models: ``d[k] = v``, ``d[k]``, ``get``/``setdefault``,
``pop``/``del``/``clear``/``update``/``copy``, ``len``, ``keys``/``values``/``items``, ``dict()``,
``dict(pairs)`` and ``dict(d)``, on dicts with str or int keys (torchvision's scripted models build
their feature maps in them: ``IntermediateLayerGetter``, segmentation heads); ``list.copy()``;
and objects of TorchScript classes made in forward
(prim::CreateObject, their attributes read and written, ``with`` blocks).

ONNX idioms: ONNX has no map a graph can build (its Map type is for inputs and outputs only, and
no operator makes or reads one), so a dict is a Python dict at export time: its keys must be
known while the graph is emitted (string and int constants, as scripted code writes them), and
its values are whatever the graph computed. A model returning a dict returns one output per
value, named by its key (prim::DictConstruct). A key computed at run time is an error naming it.
An object of a TorchScript class (a hypothesis of a beam search) is likewise a Python object at
export time whose attributes hold graph values.
"""

from __future__ import annotations

import onnx_ir as ir
import torch

from exporter import runtime_list
from exporter.errors import NeedsExportTimeValue
from exporter.graph_context import GraphContext
from exporter.op_facts import DictMutation
from exporter.opset9.script_lists import value_list_copy
from exporter.registry import onnx_symbolic
from exporter.runtime_list import RuntimeList
from exporter.script_object import ScriptObject
from exporter.ts_graph import is_script_object

_KEY_TYPES = (str, int, float, bool)


def _dict(value: object, what: str) -> dict:  # type: ignore[type-arg]
    if not isinstance(value, dict):
        raise ValueError(f"{what} on {type(value).__name__} is not supported (a dict is expected)")
    return value


def _key(key: object, what: str) -> object:
    """A key known at export time; a run-time one has no ONNX form (no operator reads a map)."""
    if not isinstance(key, _KEY_TYPES):
        raise NeedsExportTimeValue(
            f"{what} with a key computed at run time is not supported: ONNX has no map operators, so dict keys "
            "must be constants at export time"
        )
    return key


def _missing(key: object) -> KeyError:
    return KeyError(f"key {key!r} is not in the dict at export time")


@onnx_symbolic("aten::_set_item.str", mutates_dict=DictMutation.WRITES_KEY)
@onnx_symbolic("aten::_set_item.int", mutates_dict=DictMutation.WRITES_KEY)
def aten__set_item_dict(g: GraphContext, l: object, idx: object, v: object) -> None:  # noqa: E741 - schema name
    """_set_item.str(Dict(str, t)(a!) l, str(b -> *) idx, t(c -> *) v) -> (): `d[k] = v`"""
    _dict(l, "item assignment")[_key(idx, "item assignment")] = v


@onnx_symbolic("aten::__getitem__.Dict_str")
@onnx_symbolic("aten::__getitem__.Dict_int")
@onnx_symbolic("aten::__getitem__.Dict_bool")
@onnx_symbolic("aten::__getitem__.Dict_float")
def aten___getitem___dict(g: GraphContext, self: object, key: object) -> object:
    """__getitem__.Dict_str(Dict(str, t) self, str key) -> t(*)"""
    items = _dict(self, "indexing")
    if _key(key, "indexing") not in items:
        raise _missing(key)
    return items[key]


@onnx_symbolic("aten::get.str")
@onnx_symbolic("aten::get.int")
def aten_get_dict(g: GraphContext, self: object, key: object) -> object:
    """get.str(Dict(str, t) self, str key) -> t(*)?: None when the key is absent."""
    return _dict(self, "get").get(_key(key, "get"))


@onnx_symbolic("aten::get.default_str")
@onnx_symbolic("aten::get.default_int")
def aten_get_default_dict(g: GraphContext, self: object, key: object, default_value: object) -> object:
    """get.default_str(Dict(str, t) self, str key, t default_value) -> t(*)"""
    return _dict(self, "get").get(_key(key, "get"), default_value)


@onnx_symbolic("aten::setdefault.str", mutates_dict=DictMutation.WRITES_KEY)
@onnx_symbolic("aten::setdefault.int", mutates_dict=DictMutation.WRITES_KEY)
def aten_setdefault_dict(g: GraphContext, self: object, key: object, default_value: object) -> object:
    """setdefault.str(Dict(str, t)(a!) self, str(b -> *) key, t(c -> *) default_value) -> t(*)"""
    return _dict(self, "setdefault").setdefault(_key(key, "setdefault"), default_value)


@onnx_symbolic("aten::pop.Dict_str", mutates_dict=DictMutation.CHANGES_KEYS)
@onnx_symbolic("aten::pop.Dict_int", mutates_dict=DictMutation.CHANGES_KEYS)
def aten_pop_dict(g: GraphContext, self: object, key: object) -> object:
    """pop.Dict_str(Dict(str, t)(a!) self, str key) -> t(*)"""
    items = _dict(self, "pop")
    if _key(key, "pop") not in items:
        raise _missing(key)
    return items.pop(key)


@onnx_symbolic("aten::pop.Dict_default_str", mutates_dict=DictMutation.CHANGES_KEYS)
@onnx_symbolic("aten::pop.Dict_default_int", mutates_dict=DictMutation.CHANGES_KEYS)
def aten_pop_default_dict(g: GraphContext, self: object, key: object, default_value: object) -> object:
    """pop.Dict_default_str(Dict(str, t)(a!) self, str key, t default_value) -> t(*)"""
    return _dict(self, "pop").pop(_key(key, "pop"), default_value)


@onnx_symbolic("aten::Delete.Dict_str", mutates_dict=DictMutation.CHANGES_KEYS)
@onnx_symbolic("aten::Delete.Dict_int", mutates_dict=DictMutation.CHANGES_KEYS)
def aten_delete_dict(g: GraphContext, self: object, key: object) -> None:
    """Delete.Dict_str(Dict(str, t)(a!) self, str key) -> (): `del d[k]`"""
    items = _dict(self, "del")
    if _key(key, "del") not in items:
        raise _missing(key)
    del items[key]


@onnx_symbolic("aten::clear.str", mutates_dict=DictMutation.CHANGES_KEYS)
@onnx_symbolic("aten::clear.int", mutates_dict=DictMutation.CHANGES_KEYS)
def aten_clear_dict(g: GraphContext, self: object) -> None:
    """clear.str(Dict(str, t)(a!) self) -> ()"""
    _dict(self, "clear").clear()


@onnx_symbolic("aten::update.str", mutates_dict=DictMutation.CHANGES_KEYS)
@onnx_symbolic("aten::update.int", mutates_dict=DictMutation.CHANGES_KEYS)
def aten_update_dict(g: GraphContext, self: object, to_add: object) -> None:
    """update.str(Dict(str, t)(a!) self, Dict(str, t)(a!) to_add) -> ()"""
    _dict(self, "update").update(_dict(to_add, "update"))


@onnx_symbolic("aten::copy.Dict_str")
@onnx_symbolic("aten::copy.Dict_int")
@onnx_symbolic("aten::dict.Dict_str")
@onnx_symbolic("aten::dict.Dict_int")
def aten_copy_dict(g: GraphContext, self: object) -> object:
    """copy.Dict_str(Dict(str, t)(a) self) -> Dict(str, t): a new dict, so later writes to
    either stay separate."""
    return dict(_dict(self, "copy"))


@onnx_symbolic("aten::len.Dict_str")
@onnx_symbolic("aten::len.Dict_int")
def aten_len_dict(g: GraphContext, self: object) -> int:
    """len.Dict_str(Dict(str, t) self) -> int"""
    return len(_dict(self, "len"))


@onnx_symbolic("aten::keys.str")
@onnx_symbolic("aten::keys.int")
def aten_keys_dict(g: GraphContext, self: object) -> list:  # type: ignore[type-arg]
    """keys.str(Dict(str, t) self) -> str[](*): in insertion order, as TorchScript iterates."""
    return list(_dict(self, "keys"))


@onnx_symbolic("aten::values.str")
@onnx_symbolic("aten::values.int")
def aten_values_dict(g: GraphContext, self: object) -> list:  # type: ignore[type-arg]
    """values.str(Dict(str, t) self) -> t[](*)"""
    return list(_dict(self, "values").values())


@onnx_symbolic("aten::items.str")
@onnx_symbolic("aten::items.int")
def aten_items_dict(g: GraphContext, self: object) -> list:  # type: ignore[type-arg]
    """items.str(Dict(str, t) self) -> ((str, t)[])"""
    return list(_dict(self, "items").items())


@onnx_symbolic("prim::CreateObject")
def prim_create_object(g: GraphContext, *inputs: object) -> object:
    """prim::CreateObject() -> Class: the object its (inlined) __init__ fills with SetAttr."""
    del inputs
    return ScriptObject(g.node.output().type().qualified_name())


@onnx_symbolic("prim::SetAttr")
def prim_set_attr(g: GraphContext, *inputs: object) -> None:
    """prim::SetAttr[name](Class obj, t value) -> (): writes of module attributes were resolved
    before emission (capture/module_attributes.py); this is an object made in forward."""
    obj, value = inputs
    if not isinstance(obj, ScriptObject):
        raise ValueError(f"writing attribute {g.node.s('name')!r} of {type(obj).__name__} is not supported")
    obj.attributes[g.node.s("name")] = value


@onnx_symbolic("prim::GetAttr")
def prim_get_attr(g: GraphContext, *inputs: object) -> object:
    """prim::GetAttr[name](Class obj) -> t: an attribute of an object made in forward, or of
    one a module attribute holds (a constant of the module's objects: capture/lowering.py)."""
    (obj,) = inputs
    name = g.node.s("name")
    if isinstance(obj, torch._C.ScriptObject) and obj.hasattr(name):
        return obj.getattr(name)
    if is_script_object(obj) and hasattr(obj, name):
        return getattr(obj, name)
    if not isinstance(obj, ScriptObject) or name not in obj.attributes:
        raise ValueError(f"reading attribute {name!r} of {obj!r}: not set at export time")
    return obj.attributes[name]


@onnx_symbolic("prim::Enter")
def prim_enter(g: GraphContext, *inputs: object) -> None:
    """prim::Enter(Class ctx) -> (): a ``with`` block (``torch.no_grad()``) changes nothing an
    exported graph computes."""
    del g, inputs


@onnx_symbolic("prim::Exit")
def prim_exit(g: GraphContext, *inputs: object) -> None:
    """prim::Exit(Class ctx): the end of a ``with`` block."""
    del g, inputs


@onnx_symbolic("aten::dict", fold=False)
def aten_dict(g: GraphContext, *inputs: object) -> object:
    """dict() -> Dict(str, Tensor); dict.str((str, tVal)[] inputs): an empty dict, or one from
    (key, value) pairs (``dict(d)`` is dict.Dict_str, above)."""
    if not inputs:
        return {}
    (source,) = inputs
    if isinstance(source, dict):
        return dict(source)
    if isinstance(source, (list, tuple)):
        return {_key(k, "dict()"): v for k, v in source}
    raise ValueError(f"dict() of {type(source).__name__} is not supported")


@onnx_symbolic("aten::copy.t")
def aten_copy_t(g: GraphContext, self: object) -> object:
    """copy.t(t[](a) self) -> t[]: ``l.copy()``, a new list (as ``list(l)``), so later mutation
    of either stays separate."""
    if isinstance(self, RuntimeList):
        return runtime_list.copy(self)
    if isinstance(self, ir.Value):  # a shape computed at run time: one 1-d int64 value
        return value_list_copy(g, self)
    if not isinstance(self, list):
        raise ValueError(f"copy() of {type(self).__name__} is not supported")
    return list(self)
