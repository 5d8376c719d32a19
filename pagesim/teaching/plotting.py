"""Plotting helpers for the notebooks, built on seaborn (each returns the matplotlib Axes), and
each figure's one-line description, its alt text (:func:`describe`, :func:`describe_figures`)."""

from __future__ import annotations

import math
import re

import numpy as np

# Readable axis labels, with units, for the column names the studies use (a label given to a plotting
# function wins; a column not listed keeps its name).
LABELS = {
    "small_page_change_pct": "% change with small pages (positive: 4 KB better)",
    "derat_misses": "D-ERAT misses",
    "MiB": "page-table memory (MiB)",
    "page faults": "page faults",
    "walks per access": "page walks per access",
    "working set MiB": "working set (MiB)",
    "plane KiB": "plane size (KiB)",
    "planes in use": "planes in use (pages touched in turn)",
    "database GiB": "database size D (GiB)",
    "disk I/O reduction %": "disk I/Os per transaction (% fewer)",
    "pool_pages": "buffer-pool pages",
    "processors": "processors",
}


def label(column) -> str:
    """The axis label for a column: its readable form from ``LABELS``, else the name itself."""
    return LABELS.get(column, str(column))


def theme():
    """Set the seaborn theme every figure of pagesim uses and return seaborn (imported here: it loads
    matplotlib, which only drawing needs)."""
    import seaborn as sns  # deferred: seaborn (and matplotlib) are slow to import; only figures need them

    sns.set_theme(style="whitegrid", context="notebook", palette="colorblind")  # told apart with any colour vision
    return sns


def bars(df, x, y, hue=None, title="", ylabel=None, log=False, ax=None, annotate=False, xlabel=None):
    """A bar chart of ``y`` by ``x`` (and ``hue``); horizontal when ``x`` is the numeric column. Axis
    labels default to the readable form of the column names (``LABELS``)."""
    sns = theme()
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.6))
    sns.barplot(data=df, x=x, y=y, hue=hue, ax=ax)
    if log:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(label(x) if xlabel is None else xlabel)
    ax.set_ylabel(label(y) if ylabel is None else ylabel)
    if annotate:
        for c in ax.containers:
            ax.bar_label(c, fmt="%.3g", fontsize=8)
    return ax


def lines(df, x, y, hue=None, title="", ylabel=None, logx=False, logy=False, ax=None, marker="o", xlabel=None, hline=None):
    """A line chart of ``y`` against ``x`` (one line per ``hue``). ``hline``: ``(value, label)`` of a
    dashed horizontal reference line, named in the legend."""
    sns = theme()
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.6))
    extra = {"label": label(y)} if hue is None and hline is not None else {}  # name the line beside the reference in the legend
    sns.lineplot(data=df, x=x, y=y, hue=hue, marker=marker, ax=ax, **extra)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    if hline is not None:
        value, text = hline
        ax.axhline(value, color="gray", ls="--", label=text)
        ax.legend(fontsize=8, loc="best")
    ax.set_title(title)
    ax.set_xlabel(label(x) if xlabel is None else xlabel)
    ax.set_ylabel(label(y) if ylabel is None else ylabel)
    return ax


def heatmap(pivot, title="", fmt=".0f", center=0.0, cbar_label="", ax=None, clip=None, xlabel=None, ylabel=None):
    """A heat map of a pivoted DataFrame (rows x columns), diverging around ``center``. ``clip=(lo, hi)``
    limits the colour scale only: every cell is labelled with its true value (a cell beyond the
    scale takes the colour of its end)."""
    sns = theme()
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    lo, hi = clip if clip is not None else (None, None)
    sns.heatmap(pivot, annot=pivot, fmt=fmt, center=center, vmin=lo, vmax=hi, cmap="RdBu_r", cbar_kws={"label": cbar_label}, ax=ax)
    ax.set_title(title)
    ax.set_xlabel(label(pivot.columns.name) if xlabel is None else xlabel)
    ax.set_ylabel(label(pivot.index.name) if ylabel is None else ylabel)
    return ax


def reach(df, title="TLB reach of every preset (largest level, data side)", ax=None):
    """Reach per machine and page size, log scale, from :func:`pagesim.reach_table` rows."""
    sns = theme()
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 4.2))
    d = df[df["reach_bytes"] > 0].copy()
    d["reach MiB"] = d["reach_bytes"] / 2**20
    order = d.drop_duplicates("page").sort_values("page_size")["page"].tolist()  # by size, not by name
    sns.barplot(data=d, x="machine", y="reach MiB", hue="page", hue_order=order, ax=ax)
    ax.set_yscale("log")
    ax.set_xlabel("")
    ax.set_ylabel("TLB reach (MiB, log scale)")
    ax.set_title(title)
    ax.legend(title="page", bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.tick_params(axis="x", rotation=45)
    for t in ax.get_xticklabels():
        t.set_ha("right")
    return ax


def mark_sizes(ax, marks, unit: float = 2**20, color="0.4"):
    """Dashed vertical lines at sizes in bytes (``marks``: (label, bytes) pairs; x axis in ``unit``),
    each labelled at the top; lines at the same size share one label."""
    import matplotlib.transforms as mtransforms  # deferred: matplotlib is slow to import; only figures need it

    trans = mtransforms.blended_transform_factory(ax.transData, ax.transAxes)
    by_x: dict[float, list[str]] = {}
    for label, b in marks:
        by_x.setdefault(b / unit, []).append(label)
    lo, hi = ax.get_xlim()
    for x, labels in sorted(by_x.items()):
        if not lo <= x <= hi:
            continue
        ax.axvline(x, color=color, ls="--", lw=0.8)
        ax.text(x, 0.98, " / ".join(labels), transform=trans, rotation=90, va="top", ha="right", fontsize=7, color=color)
    return ax


def points(df, x, y, hue=None, style=None, title="", xlabel=None, ylabel=None, logx=True, logy=True, ax=None, hue_order=None):
    """A scatter plot of ``y`` against ``x`` (log x; y on a scale linear below 0.01, so zeros show)."""
    sns = theme()
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 4))
    sns.scatterplot(data=df, x=x, y=y, hue=hue, style=style, ax=ax, hue_order=hue_order)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("symlog", linthresh=0.01)
        ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    if hue is not None or style is not None:
        ax.legend(bbox_to_anchor=(1.01, 1), loc="upper left", fontsize=8)
    return ax


def latency(df, x="working set MiB", y="median_ns", lo="q1_ns", hi="q3_ns", curve="curve", marks=(), title="", ax=None):
    """Latency curves on log-log axes, each with its quartile band in the same colour, and dashed
    lines at ``marks`` ((label, bytes) pairs; x in MiB)."""
    sns = theme()
    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 4.5))
    names = list(dict.fromkeys(df[curve]))
    for name, color in zip(names, sns.color_palette(n_colors=len(names))):
        g = df[df[curve] == name].sort_values(x)
        ax.plot(g[x], g[y], marker="o", ms=4, color=color, label=name)
        ax.fill_between(g[x], g[lo], g[hi], color=color, alpha=0.25, lw=0)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel("ns per load")
    ax.set_title(title)
    ax.legend(loc="lower right")
    mark_sizes(ax, marks)


def sweep(
    df,
    x,
    y,
    *,
    band=None,
    mark=None,
    mark_label="this notebook's value",
    intervals=None,
    holds=None,
    title="",
    xlabel="",
    ylabel="",
    logx=False,
    logy=False,
    joined=True,
    ax=None,
):
    """A parameter sweep: ``y`` (a column, or a list of columns) against ``x``, with the document's
    figure as a horizontal band: ``band=(lo, hi)`` or a list of ``(lo, hi, label)`` (a line when
    lo == hi; an infinite edge runs to the edge of the plot). ``mark``: the value of the parameter
    the notebook uses (a dashed vertical line). ``intervals``: ranges of ``x`` where the finding
    holds (shaded). ``holds``: a boolean column; swept values where the finding holds are drawn
    filled, the others hollow. ``joined=False`` draws the swept values only (for a result that jumps
    between neighbouring values, where a line would suggest values in between). ``xlabel`` and
    ``ylabel`` should carry the units."""
    theme()

    import matplotlib.pyplot as plt  # deferred: matplotlib is slow to import; only figures need it

    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 3.8))
    d = df.sort_values(x)
    ys = [y] if isinstance(y, str) else list(y)
    for col in ys:
        (line,) = ax.plot(d[x], d[col], ls="-" if joined else "none", lw=1.2, label=col if len(ys) > 1 else None)
        if holds is not None:
            ok = d[holds].astype(bool)
            ax.plot(d[x][ok], d[col][ok], "o", color=line.get_color(), ms=5, label="finding holds" if col == ys[0] else None)
            ax.plot(d[x][~ok], d[col][~ok], "o", mfc="white", color=line.get_color(), ms=5, label="finding fails" if col == ys[0] else None)
        else:
            ax.plot(d[x], d[col], "o", color=line.get_color(), ms=4)
    if logx:
        from matplotlib.ticker import NullFormatter, ScalarFormatter  # deferred: matplotlib is slow to import; only figures need it

        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
    if logy:
        ax.set_yscale("log")
    lo_y, hi_y = ax.get_ylim()
    bands = [] if band is None else ([(band[0], band[1], "document")] if len(band) == 2 and not isinstance(band[0], (tuple, list)) else list(band))
    colors = ["tab:green", "tab:purple", "tab:brown"]
    for i, (lo, hi, label) in enumerate(bands):
        lo, hi = (lo_y if math.isinf(lo) else lo), (hi_y if math.isinf(hi) else hi)
        if lo == hi:
            ax.axhline(lo, color=colors[i % 3], ls="--", lw=1, label=label)
        else:
            ax.axhspan(lo, hi, color=colors[i % 3], alpha=0.15, label=label)
    ax.set_ylim(lo_y, hi_y)
    for j, (a, b) in enumerate(intervals or []):
        ax.axvspan(a, b, color="gold", alpha=0.18, label="where the finding holds" if j == 0 else None)
    if mark is not None:
        ax.axvline(mark, color="gray", ls=":", lw=1.5, label=mark_label)
    ax.set_title(title)
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or (ys[0] if len(ys) == 1 else ""))
    ax.legend(fontsize=8, loc="best")
    return ax


def _scaled(text: str, scale: str, axis: str) -> str:
    """An axis in words: its label, with its scale when not linear and the label does not say it."""
    if scale == "linear":
        return text
    if not text:
        return f"{scale} {axis} scale"
    return text if re.search(r"\blog\b", text, re.I) else f"{text} ({scale} scale)"


def _area(v) -> float:
    """The area of a polygon (its vertices, n x 2), by the shoelace formula; 0 for NaN vertices."""
    if len(v) < 3:
        return 0.0
    x, y = v[:, 0], v[:, 1]
    a = abs(float((x * np.roll(y, -1) - np.roll(x, -1) * y).sum())) / 2
    return a if a == a else 0.0


def _drawn(ax) -> tuple[list[str], list]:
    """What one set of axes draws, by kind, and its labelled lines (those a legend would name)."""
    from matplotlib.collections import PathCollection, PolyCollection, QuadMesh  # deferred: only figures need matplotlib
    from matplotlib.container import BarContainer
    from matplotlib.contour import ContourSet

    bars = sum(len(c.patches) for c in ax.containers if isinstance(c, BarContainer))
    drawn_lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 0]  # not the empty stand-ins of a legend
    labelled = [ln for ln in drawn_lines if not str(ln.get_label()).startswith("_")]
    lines = labelled or ([] if bars or ax.patches else drawn_lines)  # beside bars or boxes, unlabelled lines are whiskers and error bars
    drawn = []
    if ax.images or any(isinstance(c, QuadMesh) for c in ax.collections):
        drawn.append("a heat map")
    if any(isinstance(c, ContourSet) for c in ax.collections):
        drawn.append("contours")
    if bars:
        drawn.append(f"{bars} bar{'s' if bars > 1 else ''}")
    if lines:
        drawn.append(f"{len(lines)} line{'s' if len(lines) > 1 else ''}")
    if any(isinstance(c, PathCollection) and len(c.get_offsets()) for c in ax.collections):
        drawn.append("points")
    if any(isinstance(c, PolyCollection) and any(_area(path.vertices) > 0 for path in c.get_paths()) for c in ax.collections):
        drawn.append("shaded areas")
    if not drawn:
        drawn.append("shapes" if ax.patches or ax.artists or drawn_lines else "text" if ax.texts else "nothing")
    return drawn, labelled


def _legend_names(legend) -> list[str]:
    return [t.get_text() for t in legend.get_texts() if t.get_text()] if legend is not None else []


def _panel(ax, twins=()) -> str:
    """One panel of a figure in words: its titles, what it draws, its axes and its legend;
    ``twins``: axes drawn over it (a second y axis), described after it."""
    parts = []
    titles = [t.strip() for t in (ax.get_title("left"), ax.get_title(), ax.get_title("right")) if t.strip()]
    drawn, labelled = _drawn(ax)
    parts.append((" / ".join(f"'{t}'" for t in titles) + ": " if titles else "") + " and ".join(drawn))
    x, y = ax.get_xlabel().strip(), ax.get_ylabel().strip()
    xs, ys = _scaled(x, ax.get_xscale(), "x"), _scaled(y, ax.get_yscale(), "y")
    if "a heat map" in drawn and (x or y):
        parts.append(f"rows {y or 'unlabelled'}, columns {x or 'unlabelled'}")
    elif (y or ys) and (x or xs):
        parts.append(f"{ys} against {xs}")
    elif ys or xs:
        parts.append(ys or xs)
    legend = ax.get_legend()
    names = _legend_names(legend) or [str(ln.get_label()) for ln in labelled]
    if names:
        what = legend.get_title().get_text() if legend is not None else ""
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        parts.append(f"for {what + ' ' if what else ''}{shown}")
    text = "; ".join(parts)
    for t in twins:
        text += "; on a second y axis: " + _panel(t)
    return text


def describe(fig, limit: int = 400) -> str:
    """A one-line text description of a matplotlib figure (its alt text), read from what it draws:
    the title, then each panel's title, kind (lines, bars, points, a heat map, contours, shaded
    areas), axis labels and scales, and legend entries (the figure's own legend too), in at most
    ``limit`` characters (at least 40). A figure that describes itself (a ``description``
    attribute, as the diagrams of :mod:`pagesim.teaching.diagrams` have) gives its own text, on
    one line."""
    if limit < 40:
        raise ValueError(f"limit={limit!r}: a description needs at least 40 characters")
    own = getattr(fig, "description", None)
    if isinstance(own, str) and own.strip():
        return " ".join(own.split())
    axes = [ax for ax in fig.get_axes() if ax.get_label() != "<colorbar>" and ax.get_visible()]
    # a twin (ax.twinx()) sits where its panel is: it is described with it
    groups: dict[tuple, list] = {}
    for ax in axes:
        groups.setdefault(tuple(round(v, 4) for v in ax.get_position().bounds), []).append(ax)
    panels = [_panel(g[0], g[1:]) for g in groups.values()]
    sup = fig._suptitle.get_text().strip() if getattr(fig, "_suptitle", None) is not None else ""
    if not panels:
        body = "An empty figure"
    elif len(panels) == 1:
        body = "A chart: " + panels[0]
    else:
        body = f"{len(panels)} panels: " + " | ".join(f"({i}) {p}" for i, p in enumerate(panels, start=1))
    names = [n for lg in getattr(fig, "legends", []) for n in _legend_names(lg)]
    if names:
        body += "; legend: " + ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    text = (sup.rstrip(".") + ". " if sup else "") + body.rstrip(".") + "."
    text = " ".join(text.split())  # one line
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


#: the image types a notebook output may hold (and a figure be drawn in)
IMAGE_TYPES = ("image/png", "image/svg+xml", "image/jpeg", "image/gif")


def _alt_formatters(ip) -> None:
    """Wrap the kernel's image formatters for figures (PNG, SVG, JPEG: whichever are on) so each
    output carries :func:`describe`'s line as its ``alt``; a formatter already wrapped is left."""
    from matplotlib.figure import Figure  # deferred: matplotlib is slow to import; only figures need it

    for mime in IMAGE_TYPES:
        formatter = ip.display_formatter.formatters.get(mime)
        if formatter is None:
            continue
        try:
            draw = formatter.lookup_by_type(Figure)
        except KeyError:
            continue
        if getattr(draw, "describes", False):
            continue
        formatter.for_type(Figure, _with_alt(draw))


def _with_alt(draw):
    def with_alt(fig):
        out = draw(fig)
        if out is None:
            return None
        data, meta = out if isinstance(out, tuple) else (out, {})
        try:
            alt = describe(fig)
        except Exception as e:  # noqa: BLE001 - a figure is never lost for its description
            alt = f"A figure (its description could not be read: {type(e).__name__})"
        return data, {**(meta or {}), "alt": alt}

    with_alt.describes = True
    return with_alt


def _rewrap() -> None:
    """Before each cell: wrap again any figure formatter set anew (a change of figure format)."""
    from IPython import get_ipython  # deferred: only a notebook kernel has one

    ip = get_ipython()
    if ip is not None:
        _alt_formatters(ip)


def describe_figures() -> None:
    """Make every matplotlib figure this IPython kernel displays carry its :func:`describe` line as
    alt text (the output's metadata, which the published site turns into the image's ``alt``),
    for PNG, SVG and JPEG output, and again after a change of figure format (from the next cell
    on). It loads the plotting backend, which closes any figure open. Outside IPython it does
    nothing; calling it again changes nothing."""
    try:
        from IPython import get_ipython  # deferred: only a notebook kernel has one
    except ImportError:
        return
    ip = get_ipython()
    if ip is None:
        return
    import matplotlib
    import matplotlib.pyplot as plt

    plt.switch_backend(matplotlib.get_backend())  # loaded now: the inline backend registers its formatters as it loads
    _alt_formatters(ip)
    if _rewrap not in ip.events.callbacks["pre_execute"]:
        ip.events.register("pre_execute", _rewrap)
