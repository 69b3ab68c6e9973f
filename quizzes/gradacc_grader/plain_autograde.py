"""nbgrader's own autograde refuses a gradacc course, in one line: grade with gradacc-grade.

A course gradacc-build made has test cells that only report what the student's code produced
(gradacc_grader.notebook); the grader scores outside the sandbox. nbgrader's own `autograde`
(the command, and formgrader's Autograde button, which calls the same converter) would run the
student's code with the instructor's rights and give every answered question full marks.

The refusal sits where nothing has been touched yet. nbgrader 0.9.6's `BaseConverter.start`
(nbgrader/converters/base.py) builds its exporter from the configurable
`Autograde.exporter_class` right after finding the notebooks and before `convert_notebooks`:
before any folder of autograded/ is removed (`--force`), any student or submission is written
into the gradebook, or any cell runs. Its `pre_convert_hook` comes too late for that, and
nbgrader only logs what a hook raises. So the course's config (settings.configure) sets
`c.Autograde.exporter_class` to `RefusePlainAutograde`, whose construction logs the message
and raises nbgrader's own `NbGraderException`: `nbgrader autograde` exits 1 with that line,
formgrader shows it. gradacc-grade, which grades these notebooks safely with the same
converter, sets the exporter back to nbconvert's `NotebookExporter` (grading._autograde).
"""

from __future__ import annotations

from nbconvert.exporters import NotebookExporter
from nbgrader.converters.base import NbGraderException

MESSAGE = (
    "nbgrader autograde does not grade a gradacc course (it would run students' code with "
    "your rights and give every answered question full marks): run `gradacc-grade --course "
    "<this folder> <assignment>` instead (quizzes/GRADING.md)"
)
# what gradacc-grade sets in its own config to autograde (grading._autograde)
EXPORTER = "nbconvert.exporters.NotebookExporter"


class RefusePlainAutograde(NotebookExporter):
    """The exporter of nbgrader's Autograde in a gradacc course: refuses, before anything runs."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.log.error(MESSAGE)
        raise NbGraderException(MESSAGE)
