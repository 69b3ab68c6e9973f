"""How the course shows things: a table of results, and a widget.

`Table` is the course's one table: rows of values under a header, drawn as text in a
terminal (`__repr__`) and as HTML in a notebook (`_repr_html_`). A demo's result object
subclasses `Result`: it says what its `table()` is, and shows itself as that table.

A widget is shown live where a kernel runs, as static HTML where none does.

A course page rendered without a kernel (the course site, a notebook viewer) cannot
draw a widget: it would show an empty box. `show_widget` therefore sends one output
with two representations, and each front end picks the richest it can draw:
JupyterLab and Colab draw the live widget, a static page draws the HTML fallback.
"""

from __future__ import annotations

import html
import sys
from dataclasses import dataclass

from IPython.display import display

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def widget_bundle(widget, fallback_html: str) -> dict:
    """The output `show_widget` displays: the widget's own view plus the HTML fallback.

    >>> import ipywidgets
    >>> sorted(widget_bundle(ipywidgets.Label("hi"), "<p>hi</p>"))
    ['application/vnd.jupyter.widget-view+json', 'text/html', 'text/plain']
    """
    if not isinstance(fallback_html, str) or not fallback_html.strip():
        raise ValueError(
            "fallback_html must be the HTML a page without a kernel shows instead of the "
            f"widget (its current state as text or an image), got {fallback_html!r}"
        )
    bundle = getattr(widget, "_repr_mimebundle_", lambda: {})()
    if WIDGET_VIEW not in bundle:
        raise ValueError(f"widget must be an ipywidgets widget, got {type(widget).__name__}")
    return {**bundle, "text/html": fallback_html}


def show_widget(widget, fallback_html: str) -> None:
    """Display `widget`, with `fallback_html` for pages rendered without a kernel.

    On Colab, it first turns on Colab's widget manager, which draws ipywidgets 8.
    """
    bundle = widget_bundle(widget, fallback_html)
    if "google.colab" in sys.modules:
        from google.colab import output

        output.enable_custom_widget_manager()
    display(bundle, raw=True)


@dataclass(frozen=True)
class Table:
    """Rows of values with a header: plain text in a terminal, an HTML table in a notebook.

    A value that is a string is shown as it is: a result formats its own figures
    (a percentage, a number of bytes) when the default (`_cell`) would not read well.

    >>> print(Table(("N", "error"), [(1, 0.5), (4, 2e-7)], title="float64"))
    float64
    N     error
    1       0.5
    4  2.00e-07
    """

    headers: tuple
    rows: list
    title: str = ""  # a line above the table (a caption in HTML)

    def __repr__(self) -> str:
        cells = [list(map(str, self.headers))] + [[_cell(v) for v in row] for row in self.rows]
        columns = list(zip(*cells))
        widths = [max(map(len, column)) for column in columns]
        # figures right-aligned, words (and the first column) left-aligned
        right = [i > 0 and all(map(_is_number, column[1:])) for i, column in enumerate(columns)]
        lines = [
            "  ".join(
                c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right)
            ).rstrip()
            for row in cells
        ]
        return "\n".join([self.title] * bool(self.title) + lines)

    def _repr_html_(self) -> str:
        caption = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        head = "".join(f"<th>{html.escape(str(h))}</th>" for h in self.headers)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>"
            for row in self.rows
        )
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class Result:
    """What a demo returns: a frozen dataclass (declared with ``repr=False``) whose `table()`
    shows it, as text in a terminal and as HTML in a notebook. Tests read its fields."""

    def table(self) -> Table:
        raise NotImplementedError(f"{type(self).__name__} must say what its table() is")

    def __repr__(self) -> str:
        return repr(self.table())

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()


def _is_number(text: str) -> bool:
    """A figure (right-aligned in text), as opposed to words (left-aligned)."""
    try:
        float(text.replace(",", "").removesuffix("%"))
    except ValueError:
        return text in ("True", "False")
    return True


def _cell(value):
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e4:
        return f"{value:.1f}"
    if isinstance(value, float):
        return f"{value:.4g}" if 1e-3 <= abs(value) < 1e4 else f"{value:.2e}"
    return str(value)
