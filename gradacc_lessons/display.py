"""How the course shows a widget: live where a kernel runs, as static HTML where none does.

A course page rendered without a kernel (the course site, a notebook viewer) cannot
draw a widget: it would show an empty box. `show_widget` therefore sends one output
with two representations, and each front end picks the richest it can draw:
JupyterLab and Colab draw the live widget, a static page draws the HTML fallback.
"""

from __future__ import annotations

import html
import sys

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


def html_table(caption: str, header: list[str], rows: list[list]) -> str:
    """An HTML table of `rows` under `header`; numbers right-aligned.

    >>> html_table("sizes", ["part", "bytes"], [["weights", 1024]])[:35]
    '<table><caption>sizes</caption><tr>'
    """

    def cell(value) -> str:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return f"<td style='text-align:right'>{html.escape(str(value))}</td>"
        return f"<td>{html.escape(str(value))}</td>"

    head = "".join(f"<th>{html.escape(str(name))}</th>" for name in header)
    body = "".join("<tr>" + "".join(cell(value) for value in row) + "</tr>" for row in rows)
    return f"<table><caption>{html.escape(caption)}</caption><tr>{head}</tr>{body}</table>"
