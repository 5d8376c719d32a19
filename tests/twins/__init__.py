"""The plain-Python reference twins of the compiled kernels, and the registry that pairs them (registry.py)."""
