"""Replacement policies, one module each: what a hit and a miss do to a set's order.

A policy module gives:

- ``NAME``: the value of ``Structure.replacement`` / ``PageWalkCache.replacement`` that selects it;
- ``MODE``: its mode number in the kernels for sets whose tags are scanned, and ``WIDE``: the mode
  of sets too wide to scan (kept as a ring, ``writer.lookup_direct`` / ``lookup_list``), or None when
  it scans sets of any width it allows;
- ``allows(ways)``: None, or why a set of ``ways`` cannot have it (the error names the parameter);
- ``touch(site)`` and ``fill(site)``: the lines the kernel writer writes on a hit (the way found is
  ``hw``; no lines: a hit changes nothing) and on a miss (put ``site.tag`` into a way of the set
  whose tags start at ``base`` and whose order word is ``order[osl]``);
- ``IMPORTS``: the import line of the numba functions those lines call.

Its plain-Python twin is a branch of ``tests/twins/reference.py``'s ``RefCache``. Adding a policy is a new
module here, its name in :data:`REGISTRY`, and that twin.
"""

from . import fifo, lru, plru, random

REGISTRY = (lru, fifo, random, plru)
BY_NAME = {p.NAME: p for p in REGISTRY}
BY_MODE = {p.MODE: p for p in REGISTRY}
NAMES = tuple(BY_NAME)
