"""What every torch function mode of capture shares: calling the function it intercepted as
the user called it.

Capture runs the forward under torch function modes (trace.py keeps the attention fast paths
off, meta_trace.py refuses ``out=`` on meta). While a mode is active, every Python function of
torch dispatches to it through ``handle_torch_function``, handing on the arguments it chooses,
and some hand on fewer than they took (torch 2.13's ``F.l1_loss`` drops ``weight``): the mode's
call would compute without them, a trace unlike eager. :func:`call_as_called` adds them back,
read from the function's own frame, where its dispatch check runs first.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

__all__ = ["call_as_called"]


def call_as_called(func: Any, args: Any, kwargs: dict[str, Any] | None) -> Any:
    """``func(*args, **kwargs)`` with the arguments its dispatch dropped."""
    kwargs = dict(kwargs or {})
    if isinstance(func, types.FunctionType):
        kwargs.update(_dropped_arguments(func, args, kwargs))
    return func(*args, **kwargs)


def _dropped_arguments(func: types.FunctionType, args: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments ``func``'s running frame received that ``args``/``kwargs`` leave out (at a
    value other than the default)."""
    try:  # a wrapper of a builtin (Tensor.__pow__) has no signature of its own
        signature = inspect.signature(func)
        bound = signature.bind_partial(*args, **kwargs)
    except (TypeError, ValueError):
        return {}
    frame = inspect.currentframe()
    while frame is not None and frame.f_code is not func.__code__:
        frame = frame.f_back
    if frame is None:
        return {}
    received = frame.f_locals
    del frame  # no reference cycle through this frame
    dropped = {}
    for name, parameter in signature.parameters.items():
        if name in bound.arguments or parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            continue
        value = received.get(name, parameter.default)
        if value is not parameter.default:
            dropped[name] = value
    return dropped
