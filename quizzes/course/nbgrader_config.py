# nbgrader 0.9 configuration of the gradacc quizzes. Run nbgrader from this folder
# (quizzes/course/), with the course's virtual environment active: nbgrader calls the
# `alembic` executable when it creates gradebook.db, and the autograder and the
# feedback import gradacc_grader. The instructor's guide is ../README.md.
c = get_config()  # noqa: F821 (nbgrader defines get_config when it reads this file)

# The course id: the gradebook, the exchange and formgrader file everything under it.
c.CourseDirectory.course_id = "gradacc"

# Seconds one cell may run when autograding. An honest cell takes well under a second
# (the setup cell imports torch: 2-10 s on a loaded laptop). A cell that runs longer is
# interrupted and scores 0, and the rest of the notebook and of the class is still graded.
c.Execute.timeout = 30
# Seconds to wait for a cell's output after the kernel said it finished. nbgrader fails the
# whole submission when this runs out (default 4 s), which a busy grading machine can reach
# with an honest notebook; a kernel that stopped answering still fails after this long.
c.Execute.iopub_timeout = 15

# Any stderr output in a test cell scores that cell 0. torch and Python warnings are
# printed on stderr ("/path/file.py:12: UserWarning: ...") by honest code too, so warnings
# in that exact format are removed before grading; any other stderr still counts.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"(?m)^\S.*:\d+: \w*Warning: "

# Put deleted test cells back and run them (a deleted test must not be a way out of it).
# nbgrader's own OverwriteCells.add_missing_cells fails with a KeyError when the cell
# before the deleted test is gone too; RestoreMissingCells inserts after the nearest cell
# still there. The other sanitizing steps are nbgrader's defaults, in their order.
c.OverwriteCells.add_missing_cells = True
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "gradacc_grader.guards.RestoreMissingCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# Feedback goes to students, so it must not show the hidden tests. nbgrader's defaults
# (GetGrades, CSSHTMLHeaderPreprocessor) show them twice: in the test cells' source, and
# in the traceback of a failing test. HideHiddenTests cuts tracebacks of test cells to
# their last line and any output quoting a hidden line; it must run before ClearHiddenTests,
# which strips the hidden regions from the source. EscapeStudentMarkdown shows a student's
# markdown as text: nbgrader's feedback template renders it as raw HTML (<script> runs).
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    "gradacc_grader.guards.HideHiddenTests",
    "nbgrader.preprocessors.ClearHiddenTests",
    "gradacc_grader.guards.EscapeStudentMarkdown",
]
# HTML and JavaScript that student code displays (outputs) are sanitized in feedback too.
c.HTMLExporter.sanitize_html = True

# Files that never go to students nor come back from them: notebook checkpoints and caches.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", ".DS_Store"]

# `nbgrader collect` copies what a link in the exchange points to, with your rights: a
# student's link to a file only you may read would land in submitted/. This collect copies
# a link as a link (a named pipe as a named pipe), and gradacc-grade refuses such a
# submission, naming each entry (see GRADING.md).
c.ExchangeFactory.collect = "gradacc_grader.submissions.KeepLinksCollect"
