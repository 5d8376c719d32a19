"""Every figure the notebooks draw carries a one-line description (its alt text): what
``plotting.describe`` reads from a figure, and the kernel hook that puts it in the output."""

import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from pagesim.teaching import diagrams  # noqa: E402
from pagesim.teaching import plotting as P  # noqa: E402

DF = pd.DataFrame({"working set MiB": [1, 2, 4] * 2, "walks per access": [0.1, 0.2, 0.3, 0.0, 0.01, 0.02], "page": ["4K"] * 3 + ["2M"] * 3})


def test_a_line_chart_is_named_by_its_title_axes_and_legend():
    ax = P.lines(DF, x="working set MiB", y="walks per access", hue="page", title="Walks", logx=True)
    text = P.describe(ax.figure)
    assert text == "A chart: 'Walks': 2 lines; page walks per access against working set (MiB) (log scale); for page 4K, 2M."
    plt.close("all")


def test_bars_a_heat_map_and_panels():
    ax = P.bars(DF, x="page", y="walks per access", hue="working set MiB", title="B", log=True)
    assert P.describe(ax.figure) == "A chart: 'B': 6 bars; page walks per access (log scale) against page; for working set MiB 1, 2, 4."
    ax = P.heatmap(DF.pivot(index="page", columns="working set MiB", values="walks per access"), title="H")
    assert P.describe(ax.figure) == "A chart: 'H': a heat map; rows page, columns working set (MiB)."  # the colour bar is not a panel
    fig, (a, b) = plt.subplots(1, 2)
    a.plot([1, 2], label="x")
    b.set_title("empty")
    fig.suptitle("Two")
    assert P.describe(fig) == "Two. 2 panels: (1) 1 line; for x | (2) 'empty': nothing."
    plt.close("all")


def test_a_long_description_stays_one_line_and_short():
    fig, ax = plt.subplots()
    for i in range(40):
        ax.plot([0, i], label=f"a long\nline name {i}")
    ax.set_title("t\nu")
    ax.legend()
    text = P.describe(fig, limit=120)
    assert "\n" not in text and len(text) <= 120 and text.endswith("...")
    assert "and 34 more" in P.describe(fig, limit=1000)
    plt.close("all")


def test_what_is_drawn_is_named_truly():
    import seaborn as sns

    fig, ax = plt.subplots()
    sns.boxplot(pd.DataFrame({"a": [1, 2, 3], "b": list("xyx")}), x="b", y="a", ax=ax)  # a container without a length
    assert P.describe(fig) == "A chart: shapes; a against b."
    fig, ax = plt.subplots()
    ax.plot([1, 2], label="walks")
    ax.twinx().plot([3, 4], label="misses")
    assert P.describe(fig) == "A chart: 1 line; for walks; on a second y axis: 1 line; for misses."
    ax = P.points(DF, x="working set MiB", y="walks per access", hue="page", logx=False, logy=False)
    assert P.describe(ax.figure) == "A chart: points; walks per access against working set MiB; for 4K, 2M."  # no legend stand-ins as lines
    fig, ax = plt.subplots()
    ax.errorbar(range(7), range(7), yerr=1)
    ax.fill_between([0, 1, 2], [0, 1, 0], [1, 2, 1], label="band")
    ax.legend()
    assert P.describe(fig) == "A chart: 1 line and shaded areas; for band."
    fig, ax = plt.subplots()
    ax.loglog([1, 10], [1, 10])
    ax.plot([1, 10], [2, 20])
    assert P.describe(fig) == "A chart: 2 lines; log y scale against log x scale."
    ax.set_ylabel("logical pages")
    ax.set_xlabel("catalog entries")
    assert P.describe(fig) == "A chart: 2 lines; logical pages (log scale) against catalog entries (log scale)."
    fig, ax = plt.subplots()
    ax.bar(["a", "b"], [1, 2], label="x")
    fig.legend()
    fig.suptitle("Sup.")
    assert P.describe(fig) == "Sup. A chart: 2 bars; legend: x."
    assert P.describe(plt.figure()) == "An empty figure."
    with pytest.raises(ValueError, match="limit=0"):
        P.describe(fig, limit=0)
    plt.close("all")


def test_a_diagram_gives_its_own_description():
    fig = diagrams.walk("skylake", 0x7F123456789A)
    assert P.describe(fig) == " ".join(fig.description.split()) and "memory references" in P.describe(fig)


def test_in_a_kernel_every_figure_carries_its_alt_text():
    """A real kernel (nbclient): the hook is set in the cell that imports pyplot; the first figure
    drawn after it, and the figures after a change of figure format (SVG, retina PNG), have the
    description in their output's metadata."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import matplotlib.pyplot as plt\nfrom pagesim.teaching.plotting import describe_figures\ndescribe_figures()\ndescribe_figures()"
        ),
        nbformat.v4.new_code_cell("plt.plot([1, 2], label='a'); plt.legend(); plt.title('first'); plt.show()"),
        nbformat.v4.new_code_cell("fig, ax = plt.subplots(); ax.bar(['x'], [1]); ax.set_title('second')"),
        nbformat.v4.new_code_cell("%config InlineBackend.figure_formats = ['svg']"),
        nbformat.v4.new_code_cell("fig, ax = plt.subplots(); ax.plot([1, 2]); ax.set_title('third')"),
        nbformat.v4.new_code_cell("%config InlineBackend.figure_formats = ['retina']"),
        nbformat.v4.new_code_cell("import seaborn as sns, pandas as pd\nsns.boxplot(pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']}), x='b', y='a')"),
    ]
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=120).execute()
    outs = [(m, o["metadata"].get(m, {})) for c in nb.cells for o in c.outputs for m in ("image/png", "image/svg+xml") if m in o.get("data", {})]
    assert [(m, meta.get("alt")) for m, meta in outs] == [
        ("image/png", "A chart: 'first': 1 line; for a."),
        ("image/png", "A chart: 'second': 1 bar."),
        ("image/svg+xml", "A chart: 'third': 1 line."),  # a change of figure format keeps the alt text
        ("image/png", "A chart: shapes; a against b."),  # a box plot: boxes and whiskers, not lines
    ]
    assert outs[-1][1]["width"] > 0  # retina's own metadata kept beside it


def test_in_terminal_ipython_calling_it_again_adds_nothing():
    """A shell with no figure formatter (terminal IPython, Agg): one hook, however many calls."""
    code = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "ip = InteractiveShell.instance()\n"
        "from pagesim.teaching.plotting import describe_figures\n"
        "before = len(ip.events.callbacks['pre_execute'])\n"
        "for _ in range(3):\n"
        "    describe_figures()\n"
        "print(len(ip.events.callbacks['pre_execute']) - before)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "MPLBACKEND": "Agg"}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "1"
