"""Symbolic batches under construction, merged into the symbolic_opsetN modules when done."""
