"""Symbolic batches under construction, merged into the symbolic_opsetN modules when done.

Each module here registers its own symbolics; it imports only registry, graph_context,
symbolic_helper and tensors, exactly like an opset module.
"""
