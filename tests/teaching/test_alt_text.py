"""Every figure the notebooks draw carries a one-line description (its alt text): what
``plotting.describe`` reads from a figure, and the kernel hook that puts it in the output."""

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


def test_a_diagram_gives_its_own_description():
    fig = diagrams.walk("skylake", 0x7F123456789A)
    assert P.describe(fig) == " ".join(fig.description.split()) and "memory references" in P.describe(fig)


def test_in_a_kernel_the_first_figure_carries_its_alt_text():
    """A real kernel (nbclient): the hook is set in the cell that imports pyplot, and the first
    figure drawn after it has the description in its image/png metadata."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import matplotlib.pyplot as plt\nfrom pagesim.teaching.plotting import describe_figures\ndescribe_figures()\ndescribe_figures()"
        ),
        nbformat.v4.new_code_cell("plt.plot([1, 2], label='a'); plt.legend(); plt.title('first'); plt.show()"),
        nbformat.v4.new_code_cell("fig, ax = plt.subplots(); ax.bar(['x'], [1]); ax.set_title('second')"),
    ]
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=120).execute()
    alts = [o["metadata"].get("image/png", {}).get("alt") for c in nb.cells for o in c.outputs if "image/png" in o.get("data", {})]
    assert alts == ["A chart: 'first': 1 line; for a.", "A chart: 'second': 1 bar."]
