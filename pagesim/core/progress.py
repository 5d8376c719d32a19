"""Progress bars for pagesim's loops: tqdm's notebook bar in Jupyter, a text bar in a terminal,
nothing when ``show`` is false (CI's quick runs).

In Jupyter the widget bar is displayed under a display id and, when the bar closes, that display
is replaced by one line of text with the bar's final state (``sweep: 100%|██████████| 18/18
[00:03<00:00, 5.20run/s]``, or where it stopped): a saved or exported notebook shows that line,
never the widget's text at the moment it was first displayed (``6% 1/18`` of a finished loop).
"""

from __future__ import annotations

import sys


def bar(**kw):
    """A ``tqdm.auto`` bar made with ``kw`` (total, desc, unit, leave, ...); see the module's text for
    what it leaves in a notebook."""
    from tqdm.auto import tqdm  # deferred: only a progress bar needs tqdm

    notebook = sys.modules.get("tqdm.notebook")  # imported by tqdm.auto only in a Jupyter kernel with ipywidgets
    if notebook is not None and issubclass(tqdm, notebook.tqdm_notebook):
        return _final_line(tqdm)(**kw)
    return tqdm(**kw)


def _final_line(base):
    class FinalLineBar(base):
        def __init__(self, *a, **kw):
            self._handle = None
            super().__init__(*a, display=False, **kw)
            if not self.disable:
                from IPython.display import display  # deferred: IPython, only in a notebook

                self._handle = display(self.container, display_id=True)
                self.displayed = True

        def close(self):
            super().close()
            handle, self._handle = self._handle, None
            if handle is not None:
                handle.update({"text/plain": self.format_meter(**self.format_dict)}, raw=True)
                self.container.close()

    return FinalLineBar


def steps(iterable, desc: str, show: bool = True, total: int | None = None):
    """``iterable`` wrapped in a progress bar (:func:`bar`) named ``desc`` when ``show``, else unchanged."""
    if not show:
        return iterable
    return bar(iterable=iterable, desc=desc, total=total if total is not None else (len(iterable) if hasattr(iterable, "__len__") else None), leave=False)
