"""How the course shows things: a table of results, and a widget.

`Table` is the course's one table: rows of values under a header, drawn as text in a
terminal (`__repr__`) and as HTML in a notebook (`_repr_html_`). A result object draws
itself with it.

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
    """Rows of values with a header: plain text in a terminal, an HTML table in a notebook."""

    headers: tuple
    rows: list

    def __repr__(self) -> str:
        cells = [list(self.headers)] + [[_cell(v) for v in row] for row in self.rows]
        widths = [max(len(row[i]) for row in cells) for i in range(len(self.headers))]
        return "\n".join(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))
            )
            for row in cells
        )

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(str(h))}</th>" for h in self.headers)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>"
            for row in self.rows
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value):
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e4:
        return f"{value:.1f}"
    if isinstance(value, float):
        return f"{value:.4g}" if 1e-3 <= abs(value) < 1e4 else f"{value:.2e}"
    return str(value)
