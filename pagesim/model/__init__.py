"""Layer 2: the machines (TLBs, page-walk caches, walkers and their costs), the address-space layout and the cost model."""
