"""The opset-9 base, one module per op family (imported by exporter.symbolic_opset9)."""
