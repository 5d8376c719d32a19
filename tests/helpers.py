"""Turn a simulate() Dataset into the reference model's counter dict, for exact comparison, and
compare a hypothesis case with the reference model."""

import numpy as np
from twins.reference import reference_simulate

import pagesim


def dataset_counters(ds):
    sizes = list(ds["page_size"].values)
    out = {}

    def put(key, v):
        v = int(v)
        if v:
            out[key] = v

    for k, side in enumerate(ds["side"].values):
        for z in range(len(sizes)):
            put(("accesses", str(side), z), ds["accesses"].values[k, z])
            put(("walks", str(side), z), ds["walks"].values[k, z])
            put(("walk_refs", str(side), z), ds["walk_refs"].values[k, z])
            if "tsb_hits" in ds:
                put(("tsb_hits", str(side), z), ds["tsb_hits"].values[k, z])
                put(("tsb_misses", str(side), z), ds["tsb_misses"].values[k, z])
    for i, s in enumerate(ds["structure"].values):
        for z in range(len(sizes)):
            put(("hits", str(s), z), ds["hits"].values[i, z])
            put(("misses", str(s), z), ds["misses"].values[i, z])
    if "pwc_hits" in ds:
        for i, s in enumerate(ds["pwc"].values):
            for z in range(len(sizes)):
                put(("pwc_hits", str(s), z), ds["pwc_hits"].values[i, z])
                put(("pwc_misses", str(s), z), ds["pwc_misses"].values[i, z])
    if "host_walk_refs" in ds:  # a virtualised machine: the host's side of its nested walks
        for k, side in enumerate(ds["side"].values):
            for z in range(len(sizes)):
                put(("host_walk_refs", str(side), z), ds["host_walk_refs"].values[k, z])
        for z in range(len(sizes)):
            if "nested_tlb_hits" in ds:
                put(("nested_tlb_hits", z), ds["nested_tlb_hits"].values[z])
                put(("nested_tlb_misses", z), ds["nested_tlb_misses"].values[z])
            if "host_pwc_hits" in ds:
                for i, s in enumerate(ds["host_pwc"].values):
                    put(("host_pwc_hits", str(s), z), ds["host_pwc_hits"].values[i, z])
                    put(("host_pwc_misses", str(s), z), ds["host_pwc_misses"].values[i, z])
    for z in range(len(sizes)):
        put(("faults", z), ds["faults"].values[z])
        put(("prefaulted", z), ds["prefaulted"].values[z])
        if "hpt_secondary" in ds:
            put(("hpt_secondary", z), ds["hpt_secondary"].values[z])
    if "hpt_evictions" in ds:
        put("hpt_evictions", ds["hpt_evictions"].values)
        put("hpt_refills", ds["hpt_refills"].values)
    return out, int(np.asarray(ds["pages_touched"]).sum())


def assert_matches_reference(case, chunk) -> None:
    """A hypothesis case (machine, layout, addresses, kinds, seed) through pagesim.simulate in chunks
    of ``chunk`` and through the reference model: identical counters and touched pages."""

    m, layout, addrs, kinds, seed = case
    ds = pagesim.simulate(m, addresses=addrs, kinds=kinds, layout=layout, seed=seed, chunk_size=chunk)
    got, touched = dataset_counters(ds)
    want, ref_touched = reference_simulate(m, layout, [int(a) for a in addrs], None if kinds is None else list(kinds), seed)
    assert got == want
    assert touched == ref_touched
