"""Building pagesim's Datasets: the direct paths of ``pagesim/engine/xrdata.py`` against xarray's
public constructor and ``xr.concat``, the same inputs, interleaved, in one run.

    python benchmarks/bench_xrdata.py [--repeat 200] [--runs 24]

- ``dataset``: the variables and coordinates of one ``simulate("skylake", "random")`` result,
  built by ``xrdata.build_dataset``'s direct path and by ``xr.Dataset(...)``;
- ``concat``: ``--runs`` results of a sweep over three machines and seeds (labels that differ
  between machines), joined by ``xrdata.concat_runs`` with the direct paths and with one public
  ``xr.concat``, as on an xarray the probe refused.

First the probe's own cost (paid once a process). Each case prints the best and the median over the repeats (the machine is shared: the best is the
cost, the median shows the noise) and public / direct. Both paths give the same Dataset
(``xrdata.same``): checked before timing.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

import xarray as xr

import pagesim
from pagesim.engine import xrdata as X
from pagesim.engine.sweep import _point


def timed(fns: dict, repeat: int) -> dict:
    """Every function of ``fns`` called ``repeat`` times, interleaved: name -> list of seconds."""
    out = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            t = time.perf_counter()
            fn()
            out[k].append(time.perf_counter() - t)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--runs", type=int, default=24)
    a = ap.parse_args(argv)
    probe = {}
    for kind in ("dataset", "concat"):
        X._probe(kind)  # xarray's own first-call costs out of the figure
        t = time.perf_counter()
        ok = X._probe(kind)
        probe[kind] = (ok, time.perf_counter() - t)
    print(
        f"xarray {xr.__version__}; the probe, once a process: dataset {'accepted' if probe['dataset'][0] else 'REFUSED'} in "
        f"{probe['dataset'][1] * 1e3:.1f} ms, concat {'accepted' if probe['concat'][0] else 'REFUSED'} in {probe['concat'][1] * 1e3:.1f} ms"
    )

    ds = pagesim.simulate("skylake", "random", working_set="8M", accesses=3000)
    dv = {k: (v.dims, v.values, dict(v.attrs)) for k, v in ds.data_vars.items()}
    coords = {k: (v.dims[0] if v.dims else (), v.values, dict(v.attrs)) for k, v in ds.coords.items()}
    machines = ["skylake", "zen4", "power6"]
    seeds = range(max(1, a.runs // len(machines)))
    names = ["machine", "seed"]
    fixed = {"workload": "random", "working_set": "4M", "accesses": 500}
    parts = [_point({**fixed, "machine": m, "seed": s}, names) for m, s in itertools.product(machines, seeds)]
    aux = X._aux_coords(parts)

    cases = {
        "dataset": {"direct": lambda: X._direct(xr, dv, coords, dict(ds.attrs)), "public": lambda: xr.Dataset(dv, coords=coords, attrs=dict(ds.attrs))},
        f"concat of {len(parts)} runs": {
            "direct": lambda: X._concat_arrays(parts, aux, xr),
            "public": lambda: X._concat_xarray(parts, aux, xr, grouped=False),
        },
    }
    for name, fns in cases.items():
        got, want = fns["direct"](), fns["public"]()
        assert X.same(got, want), f"{name}: the direct path's Dataset differs from the public one"
        res = timed(fns, a.repeat if name == "dataset" else max(3, a.repeat // 20))
        best = {k: min(v) for k, v in res.items()}
        med = {k: statistics.median(v) for k, v in res.items()}
        print(
            f"{name:<18} direct best {best['direct'] * 1e3:8.3f} ms (median {med['direct'] * 1e3:8.3f})   "
            f"public best {best['public'] * 1e3:8.3f} ms (median {med['public'] * 1e3:8.3f})   "
            f"public/direct {best['public'] / best['direct']:5.1f}x best, {med['public'] / med['direct']:5.1f}x median"
        )


if __name__ == "__main__":
    main()
