"""The nbgrader 0.9 settings of a gradacc course, each with its reason.

A course's `nbgrader_config.py` calls `configure(c)`; lines after the call override any of
these. The instructor's guide (quizzes/README.md) has the same table in short.
"""

from __future__ import annotations

from gradacc_grader.names import guard_gradebook

GUARDS = "gradacc_grader.guards"


def configure(c) -> None:
    """Apply every gradacc setting to nbgrader's config object `c` (and refuse markup in the
    names nbgrader stores, in this process: gradacc_grader.names.guard_gradebook)."""
    # The course id: the gradebook, the exchange and formgrader file everything under it.
    c.CourseDirectory.course_id = "gradacc"

    # Seconds one cell may run when autograding. An honest cell takes well under a second (the
    # setup cell imports torch: 2-10 s on a loaded laptop). A cell that runs longer is
    # interrupted and scores 0; the rest of the notebook and of the class is still graded.
    c.Execute.timeout = 30
    # Seconds to wait for a cell's output after the kernel said it finished. nbgrader fails the
    # whole submission when this runs out (default 4 s), which a busy grading machine can reach
    # with an honest notebook; a kernel that stopped answering still fails after this long.
    c.Execute.iopub_timeout = 15

    # Any stderr output in a test cell scores it 0. torch and Python warnings are printed on
    # stderr ("/path/file.py:12: UserWarning: ...") by honest code too, so warnings in that
    # exact format are removed before grading; any other stderr still counts.
    c.IgnorePattern.enabled = True
    c.IgnorePattern.pattern = r"(?m)^\S.*:\d+: \w*Warning: "

    # Put deleted test cells back and run them (a deleted test must not be a way out of it);
    # RestoreMissingCells also warns only about locked cells a student really edited. The
    # other sanitizing steps are nbgrader's defaults, in their order.
    c.OverwriteCells.add_missing_cells = True
    c.Autograde.sanitize_preprocessors = [
        "nbgrader.preprocessors.ClearOutput",
        "nbgrader.preprocessors.DeduplicateIds",
        "nbgrader.preprocessors.OverwriteKernelspec",
        f"{GUARDS}.RestoreMissingCells",
        "nbgrader.preprocessors.CheckCellMetadata",
    ]

    # nbgrader's own autograde (the command, formgrader's Autograde button) would run students'
    # code with your rights and give every answered question full marks: it refuses, before it
    # touches anything, with one line saying to run gradacc-grade, which sets this back to
    # nbconvert's NotebookExporter for its own, sandboxed autograde
    # (gradacc_grader.plain_autograde).
    c.Autograde.exporter_class = "gradacc_grader.plain_autograde.RefusePlainAutograde"

    # Feedback goes to students. SanitizeFeedback, first, makes the notebook data
    # (gradacc_grader.untrusted_output): the student's markdown as text, outputs as text or checked
    # images, no markup from metadata. The test cells hold no secret (they only report values; the
    # grader scores outside the sandbox and writes its own message into them), so only the
    # hidden regions' report lines are stripped, of the test cells only (ClearTestCellsHiddenTests:
    # nbgrader's fails a student's feedback whose own cell mentions its marker).
    c.GenerateFeedback.preprocessors = [
        "gradacc_grader.untrusted_output.SanitizeFeedback",
        "nbgrader.preprocessors.GetGrades",
        "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
        f"{GUARDS}.ClearTestCellsHiddenTests",
    ]
    # When a wrong choice's message says what that choice gets wrong (never which one is
    # right): "after_deadline" (the default: once the due date set with `nbgrader db assignment
    # add --duedate` has passed when gradacc-grade runs, so students who may still resubmit
    # learn only that it is wrong) or "now" (a self-paced course without resubmission).
    c.GradaccFeedback.explain_wrong_choices = "after_deadline"
    # HTML and JavaScript that student code displays (outputs) are sanitized in feedback too.
    c.HTMLExporter.sanitize_html = True
    # A student's name is data. formgrader's Manual Grading page writes the name and id into its
    # markup unescaped (nbgrader 0.9.6, formgrade_macros.html.j2): this preprocessor of the page's
    # HTMLExporter escapes them. And no name with markup or a control character enters the
    # gradebook in the first place, whichever nbgrader command or page adds it
    # (gradacc_grader.names).
    c.HTMLExporter.preprocessors = ["gradacc_grader.names.EscapeStudentFields"]
    guard_gradebook()

    # nbgrader chmods what it writes: autograded copies 444, feedback 644. They hold a
    # student's answers and grades: the instructor's only (gradacc_grader/private.py; nbgrader
    # reads these numbers as octal digits).
    c.Autograde.permissions = 400
    c.GenerateFeedback.permissions = 600

    # `nbgrader export` writes exports/grades_by_question.csv (every grade cell) and
    # exports/grades_for_lms.csv (totals, in the columns Canvas and Moodle import).
    c.ExportApp.plugin_class = "gradacc_grader.export.GradesExport"

    # `nbgrader collect` copies what a link in the exchange points to, with your rights: a
    # student's link to a file only you may read would land in submitted/. This collect copies
    # a link as a link (a named pipe as a named pipe), and gradacc-grade refuses such a
    # submission, naming each entry (see GRADING.md).
    c.ExchangeFactory.collect = "gradacc_grader.submissions.KeepLinksCollect"

    # Files that never go to students nor come back from them: checkpoints and caches.
    c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", ".DS_Store"]
