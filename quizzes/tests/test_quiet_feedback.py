"""generate_feedback's preprocessors take nbconvert's configuration without a warning.

nbgrader's `generate_feedback` printed "Config option `display_data_priority` not recognized"
three times on every run (see gradacc_grader.guards.FeedbackPreprocessor); here the HTML
exporter is built and given the course's preprocessors as nbgrader does it.
"""

from __future__ import annotations

import logging

from gradacc_grader import settings
from nbconvert.exporters import HTMLExporter
from traitlets.config import Config
from traitlets.utils.importstring import import_item


def test_the_feedback_preprocessors_take_the_exporters_config_quietly(caplog):
    config = Config()
    settings.configure(config)
    with caplog.at_level(logging.WARNING):
        exporter = HTMLExporter(config=config)  # with the HTMLExporter's own preprocessors
        for name in config.GenerateFeedback.preprocessors:
            exporter.register_preprocessor(import_item(name), enabled=True)
    assert "display_data_priority" in exporter.config.NbConvertBase  # what they are given
    assert [r.getMessage() for r in caplog.records] == []
    ours = [p for p in exporter._preprocessors if type(p).__module__.startswith("gradacc_grader")]
    # EscapeStudentFields: every HTMLExporter's, for formgrader's page (it finds no name here)
    names = ["EscapeStudentFields", "SanitizeFeedback", "ClearTestCellsHiddenTests"]
    assert [type(p).__name__ for p in ours] == names
    for preprocessor in ours:  # each took the exporter's setting instead of ignoring it
        assert preprocessor.display_data_priority == list(
            exporter.config.NbConvertBase.display_data_priority
        )


def test_clear_hidden_tests_still_clears_them():
    import nbformat
    from gradacc_grader.guards import ClearTestCellsHiddenTests

    cell = nbformat.v4.new_code_cell(
        "assert answer == 1\n### BEGIN HIDDEN TESTS\nassert answer != 2\n### END HIDDEN TESTS"
    )
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "q_test", "points": 1, "locked": True}
    notebook = nbformat.v4.new_notebook(cells=[cell])
    cleared, _ = ClearTestCellsHiddenTests().preprocess(notebook, {})
    assert cleared.cells[0].source == "assert answer == 1"
