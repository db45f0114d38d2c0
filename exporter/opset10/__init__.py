"""The opset-10 families (quantized ops), indexed by ``exporter.symbolic_opset10``."""
