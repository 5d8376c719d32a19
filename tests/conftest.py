import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", max_examples=150, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=60, deadline=None)
# a one-off deep run: HYPOTHESIS_PROFILE=thorough pytest tests/test_differential.py tests/test_processes.py ...
settings.register_profile("thorough", max_examples=2000, deadline=None, derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
