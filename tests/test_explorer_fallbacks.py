"""What an explorer shows where no kernel runs (the course site): its current text and figure.

The snapshot is checked against the live output the same explorer shows in JupyterLab
(the Output widget's image and text) and against the text functions called on their own.
"""

from __future__ import annotations

import base64
import io
import re

import torch
from IPython.core.formatters import DisplayFormatter
from PIL import Image

from gradacc_lessons.demos.token_pitfalls import compute_token_errors
from gradacc_lessons.display import WIDGET_VIEW, widget_bundle
from gradacc_lessons.figures import explorers
from gradacc_lessons.figures.explorers import (
    accumulation_explorer,
    budget_slider,
    describe_plan,
    spread_explorer,
    spread_report,
)

PNG_IN_HTML = re.compile(r'src="data:image/png;base64,([^"]+)"')


def _tiny_problem():
    generator = torch.Generator().manual_seed(0)
    model = torch.nn.Linear(4, 3)
    inputs = torch.randn(12, 4, generator=generator)
    targets = torch.randint(3, (12,), generator=generator)
    return model, torch.nn.CrossEntropyLoss(), inputs, targets


def test_displaying_an_explorer_sends_the_widget_and_its_snapshot(monkeypatch):
    shown = []
    monkeypatch.setattr(explorers, "show_widget", lambda w, html: shown.append((w, html)))
    explorer = spread_explorer(accumulation_steps=4)
    # what IPython does with a cell's last expression
    DisplayFormatter().format(explorer)
    assert shown == [(explorer, explorer.snapshot_html)]
    bundle = widget_bundle(explorer, explorer.snapshot_html)
    assert WIDGET_VIEW in bundle and bundle["text/html"] == explorer.snapshot_html


def _snapshot_png(html: str) -> bytes:
    (encoded,) = PNG_IN_HTML.findall(html)
    return base64.b64decode(encoded)


def test_the_accumulation_snapshot_is_the_current_figure_and_text():
    explorer = accumulation_explorer(*_tiny_problem(), max_n=4)
    slider, recipe = explorer.children[0].children
    first = _snapshot_png(explorer.snapshot_html)
    slider.value, recipe.value = 3, "naive"
    snapshot = explorer.snapshot_html
    assert "<pre>N = 3, micro-batch sizes [4, 4, 4], recipe: naive</pre>" in snapshot
    assert "<table" in snapshot  # the per-parameter comparison
    moved = _snapshot_png(snapshot)
    assert moved != first, "the figure marks the current N: it must change with the slider"
    for png in (first, moved):
        assert Image.open(io.BytesIO(png)).size[0] > 100  # a real figure, not an empty image


def test_the_spread_snapshot_follows_the_slider():
    explorer = spread_explorer(accumulation_steps=4)
    slider = explorer.children[0]
    slider.value = 0.9
    expected = spread_report(0.9, compute_token_errors(0.9, accumulation_steps=4))
    assert f"<pre>{expected}</pre>" in explorer.snapshot_html


def test_the_budget_snapshot_is_the_plan_of_the_slider_value():
    model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = torch.nn.CrossEntropyLoss()
    inputs, targets = torch.randn(4, 8), torch.randint(2, (4,))
    explorer = budget_slider(model, optimizer, loss_fn, inputs, targets, 16, (0.01, 1.0, 0.01))
    slider = explorer.children[0]
    slider.value = 0.5
    plan = describe_plan(model, optimizer, loss_fn, inputs, targets, 16, 0.5)
    assert plan in explorer.snapshot_html
    assert "budget 0.500 MiB" in explorer.snapshot_html
