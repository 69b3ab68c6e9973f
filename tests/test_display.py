"""The course's one table: text in a terminal, HTML in a notebook, and results drawn by it."""

from dataclasses import dataclass

import pytest

from gradacc_lessons.display import Result, Table


def test_text_aligns_figures_right_and_words_left():
    table = Table(("case", "error", "note"), [("a", 0.5, "short"), ("longer", "12.5%", "x")], "N=4")
    assert repr(table).splitlines() == [
        "N=4",
        "case    error  note",
        "a         0.5  short",
        "longer  12.5%  x",
    ]


def test_html_escapes_every_cell_and_the_title():
    html = Table(("<b>", "v"), [("a & b", "<script>")], title="x < y")._repr_html_()
    assert html == (
        "<table><caption>x &lt; y</caption><thead><tr><th>&lt;b&gt;</th><th>v</th></tr></thead>"
        "<tbody><tr><td>a &amp; b</td><td>&lt;script&gt;</td></tr></tbody></table>"
    )


@dataclass(frozen=True, repr=False)
class _Errors(Result):
    broken: float
    fixed: float

    def table(self):
        return Table(("loop", "error"), [("broken", self.broken), ("fixed", self.fixed)])


def test_a_result_shows_itself_as_its_table_and_keeps_its_fields():
    result = _Errors(0.25, 1e-16)
    assert repr(result) == repr(result.table())
    assert result._repr_html_() == result.table()._repr_html_()
    assert repr(result).splitlines()[1:] == ["broken      0.25", "fixed   1.00e-16"]
    assert (result.broken, result.fixed) == (0.25, 1e-16)
    with pytest.raises(NotImplementedError, match="table"):
        repr(Result())
