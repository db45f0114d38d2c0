"""The opset-17 families (complex arithmetic), indexed by ``exporter.symbolic_opset17``."""
