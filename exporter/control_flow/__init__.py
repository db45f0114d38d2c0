"""The If/Loop engine: TorchScript blocks as ONNX If branches and Loop bodies.

Modules, each with one job:

- ``flatten``: nested tuples and fixed-length lists as one value per item, and back
- ``subgraph``: a block emitted as an ONNX subgraph (its outputs made ONNX-legal); its
  ``BlockScope`` is the engine's one way into the emitter
"""
