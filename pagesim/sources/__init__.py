"""Layer 3: where accesses come from: workload generators, traces and their recording, the shipped datasets."""
