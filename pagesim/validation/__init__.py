"""Layer 9: executing the notebooks, comparing their verdicts with the baseline, and the report."""
