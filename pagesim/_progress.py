"""One progress bar for the studies' loops: tqdm's notebook bar in Jupyter, a text bar in a terminal,
nothing when ``show`` is false (CI's quick runs)."""

from __future__ import annotations


def steps(iterable, desc: str, show: bool = True, total: int | None = None):
    """``iterable`` wrapped in a tqdm.auto bar named ``desc`` when ``show``, else unchanged."""
    if not show:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, total=total if total is not None else (len(iterable) if hasattr(iterable, "__len__") else None), leave=False)
