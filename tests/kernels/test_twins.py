"""Every compiled kernel against its plain-Python twin, all pairs run the same way (tests/twins/registry.py):
a few generated cases through both, and the results compared."""

from pathlib import Path

import numpy as np
import pytest
from twins.registry import COMPARISONS, NOT_KERNELS

import pagesim._kernels


def test_every_kernel_module_has_a_twin():
    modules = {p.stem for p in Path(pagesim._kernels.__file__).parent.glob("*.py") if p.stem != "__init__"}
    missing = modules - {pair.module for pair in COMPARISONS.values()} - set(NOT_KERNELS)
    assert not missing, f"kernel modules with no reference twin in tests/twins/registry.py (COMPARISONS) and no reason in NOT_KERNELS: {sorted(missing)}"
    assert not (set(NOT_KERNELS) - modules) and not ({pair.module for pair in COMPARISONS.values()} - modules), "the registry names a module that is gone"


@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_kernel_equals_its_twin(name):
    pair = COMPARISONS[name]
    cases = pair.cases(np.random.default_rng(sorted(COMPARISONS).index(name)))
    assert cases
    for i, case in enumerate(cases):
        got, want = pair.kernel(case), pair.twin(case)
        assert pair.compare(got, want), f"{name} ({pair.what}), case {i}: the kernel and its twin differ"
