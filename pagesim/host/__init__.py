"""Layer 6: the running machine: its Linux page-size settings and real page-fault counts, and probing its TLB."""
