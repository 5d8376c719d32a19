"""Plotting helpers for the notebooks, built on seaborn. Each returns the matplotlib Axes."""
from __future__ import annotations


def _setup():
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    return sns


def bars(df, x, y, hue=None, title="", ylabel=None, log=False, ax=None, annotate=False):
    """A bar chart of ``y`` by ``x`` (and ``hue``)."""
    sns = _setup()
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.6))
    sns.barplot(data=df, x=x, y=y, hue=hue, ax=ax)
    if log:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_ylabel(ylabel or y)
    if annotate:
        for c in ax.containers:
            ax.bar_label(c, fmt="%.3g", fontsize=8)
    return ax


def lines(df, x, y, hue=None, title="", ylabel=None, logx=False, logy=False, ax=None, marker="o"):
    """A line chart of ``y`` against ``x`` (one line per ``hue``)."""
    sns = _setup()
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.6))
    sns.lineplot(data=df, x=x, y=y, hue=hue, marker=marker, ax=ax)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_ylabel(ylabel or y)
    return ax


def heatmap(pivot, title="", fmt=".0f", center=0.0, cbar_label="", ax=None):
    """A heat map of a pivoted DataFrame (rows x columns), diverging around ``center``."""
    sns = _setup()
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    sns.heatmap(pivot, annot=True, fmt=fmt, center=center, cmap="RdBu_r", cbar_kws={"label": cbar_label}, ax=ax)
    ax.set_title(title)
    return ax


def reach(df, title="TLB reach of every preset (largest level, data side)", ax=None):
    """Reach per machine and page size, log scale, from :func:`pagesim.reach_table` rows."""
    sns = _setup()
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 4.2))
    d = df[df["reach_bytes"] > 0].copy()
    d["reach MiB"] = d["reach_bytes"] / 2**20
    sns.barplot(data=d, x="machine", y="reach MiB", hue="page", ax=ax)
    ax.set_yscale("log")
    ax.set_title(title)
    ax.legend(title="page", bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.tick_params(axis="x", rotation=45)
    for t in ax.get_xticklabels():
        t.set_ha("right")
    return ax
