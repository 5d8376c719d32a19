"""Compiled kernels. Private: they see numpy arrays and scalars only, and trust their inputs,
which the public API has validated (numba does not check array bounds)."""
