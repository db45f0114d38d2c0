"""The If/Loop engine: TorchScript blocks as ONNX If branches and Loop bodies, or inlined.

The registrations of prim::If and prim::Loop (opset9/control_flow.py) call :mod:`.branches`
and :mod:`.loop`. What the engine threads through an If or a Loop besides the block's own
values (lists and dicts of enclosing code, a Loop's scan outputs and concat buffers, the
dummy Loop-1 needs) is laid out by one record (:mod:`.slots`), never by arithmetic on counts.
Its one way into the emitter is :class:`.subgraph.BlockScope`; everything else goes through
the GraphContext a symbolic has.

Modules, each with one job:

- ``flatten``: nested tuples and fixed-length lists as one value per item, and back
- ``slots``: the record of what an If or Loop carries (groups by name)
- ``subgraph``: a block emitted as an ONNX subgraph (its outputs made ONNX-legal)
- ``outer_state``: lists and dicts of enclosing code that blocks change
- ``optionals``: None on some run-time path (ONNX optionals through If and Loop)
- ``results``: If and Loop outputs read back (typed, sequences as run-time lists)
- ``branch_types``: the two branches of an If made to agree on each output's type
- ``branches``: prim::If
- ``list_forms``: which form a list changed in a Loop takes (scan output, buffer, sequence)
- ``carried``: a Loop's carried values (initial values, body inputs, one type through the body)
- ``onnx_loop``: the ONNX Loop form of prim::Loop
- ``termination``: a Loop that could never end is refused
- ``loop``: prim::Loop, an ONNX Loop or unrolled
"""
