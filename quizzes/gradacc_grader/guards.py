"""nbgrader preprocessors that keep grading fair: restore deleted test cells, clear reports.

`gradacc_grader.settings` plugs them into nbgrader 0.9:

- `RestoreMissingCells` replaces nbgrader's `OverwriteCells` at autograde. Like it, it puts
  locked cells and tests back as they were in the source (hidden tests included); unlike
  nbgrader's, it warns only about a locked cell the student really edited. nbgrader saves each
  cell's checksum *before* it strips the hidden tests from the release, so its own warning
  "Attribute 'checksum' for cell ... has changed" fires for every test cell with hidden tests
  of every submission, untouched or not; here a cell that matches its released version is put
  back silently, and an edited one is reported as "cell X was edited". Unlike nbgrader's own
  `add_missing_cells`, which fails with a KeyError when the cell before a deleted test
  is gone too, it puts a deleted grade cell back after the nearest earlier cell
  that is still there, so deleting a test never skips it. A deleted written answer comes
  back empty, never with the source's model answer and rubric (nbgrader's own puts those
  back). It also reads cell metadata that claims another schema version as the current one:
  nbgrader would otherwise stop grading the whole class at that submission; and it drops
  the empty metadata DeduplicateIds leaves on a copied cell, on which nbgrader's own
  `add_missing_task_cells` fails the submission with `KeyError: 'grade_id'`.
- `ClearTestCellsHiddenTests` strips the hidden regions (the report lines) of the test cells in
  the feedback, and leaves a student's own cells as they are.
- `ClearTestCellsHiddenTests` declares `display_data_priority` configurable (see
  `_display_data_priority`), so nbconvert's setting of it is no warning.
"""

from __future__ import annotations

from nbformat.notebooknode import NotebookNode
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor, OverwriteCells
from nbgrader.utils import compute_checksum
from traitlets import List

BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
SCHEMA_VERSION = 3  # of nbgrader's cell metadata, in nbgrader 0.9


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _is_test(cell) -> bool:
    meta = _nbgrader(cell)
    return cell.cell_type == "code" and meta.get("grade", False) and not meta.get("solution")


def hidden_lines(source: str) -> set[str]:
    """The stripped lines inside the hidden-test regions of a cell's source.

    >>> source = "a = 1\\n### BEGIN HIDDEN TESTS\\nassert a == 1\\n### END HIDDEN TESTS"
    >>> sorted(hidden_lines(source))
    ['assert a == 1']
    """
    lines, inside = set(), False
    for line in source.splitlines():
        if BEGIN_HIDDEN in line:
            inside = True
        elif END_HIDDEN in line:
            inside = False
        elif inside and len(line.strip()) >= 6:  # shorter lines (")", "else:") say nothing
            lines.add(line.strip())
    return lines


def without_hidden_tests(source: str) -> str:
    """A cell's source as nbgrader's ClearHiddenTests leaves it in the release.

    >>> source = "a = 1\\n### BEGIN HIDDEN TESTS\\nassert a\\n### END HIDDEN TESTS\\nb = 2"
    >>> without_hidden_tests(source).split()
    ['a', '=', '1', 'b', '=', '2']
    """
    kept, inside = [], False
    for line in source.split("\n"):
        if BEGIN_HIDDEN in line:
            inside = True
        elif END_HIDDEN in line:
            inside = False
        elif not inside:
            kept.append(line)
    return "\n".join(kept)


class RestoreMissingCells(OverwriteCells):
    """OverwriteCells that puts every deleted grade cell back, after the nearest surviving cell."""

    def preprocess(self, nb, resources):
        # nbgrader stops the WHOLE class run (not just this student) on a cell whose metadata
        # claims another schema version; the cells are checked against the gradebook anyway
        for cell in nb.cells:
            meta = _nbgrader(cell)
            if "nbgrader" in cell.get("metadata", {}) and not meta.get("grade_id"):
                # a copied cell: DeduplicateIds emptied the copy's metadata, and nbgrader's
                # add_missing_task_cells then fails the whole submission with KeyError
                del cell.metadata["nbgrader"]
                continue
            if meta and meta.get("schema_version") != SCHEMA_VERSION:
                self.log.warning(
                    "Cell metadata of schema %r: read as schema 3", meta.get("schema_version")
                )
                meta["schema_version"] = SCHEMA_VERSION
        return super().preprocess(nb, resources)

    def add_missing_grade_cells(self, nb, resources):
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        order = [cell.name for cell in source_nb.source_cells]
        solutions = {cell.name for cell in source_nb.solution_cells}
        for grade_cell in source_nb.grade_cells:
            if self._position(nb, grade_cell.name) is not None:
                continue
            self.log.warning("Missing grade cell %s: putting it back", grade_cell.name)
            source_cell = source_nb.source_cells[order.index(grade_cell.name)]
            solution = grade_cell.name in solutions
            cell = self.missing_cell_transform(source_cell, grade_cell.max_score, solution)
            if solution:  # the source's text is the model answer and the rubric: never that
                cell["source"] = self.missing_cell_notification.format(cell_id=grade_cell.name)
            earlier = [self._position(nb, name) for name in order[: order.index(grade_cell.name)]]
            present = [index for index in earlier if index is not None]
            nb.cells.insert(max(present) + 1 if present else 0, cell)
        return nb, resources

    def report_change(self, name: str, attr: str, old, new) -> None:
        if attr != "checksum":
            super().report_change(name, attr, old, new)
        elif new == self._released_checksum(name):
            # the release lacks the hidden tests by design: putting them back is no news
            self.log.debug("Cell %s: putting its hidden tests back", name)
        else:
            self.log.warning("Cell %s was edited by the student: put back as released", name)

    def _released_checksum(self, name: str) -> str:
        """The checksum of a locked cell as the release shows it (hidden tests removed)."""
        source = self.gradebook.find_source_cell(name, self.notebook_id, self.assignment_id)
        meta = {"grade_id": name, "locked": source.locked, "grade": False, "solution": False}
        try:
            graded = self.gradebook.find_graded_cell(name, self.notebook_id, self.assignment_id)
            meta.update(grade=True, points=graded.max_score)
        except MissingEntry:
            pass
        try:
            self.gradebook.find_solution_cell(name, self.notebook_id, self.assignment_id)
            meta["solution"] = True
        except MissingEntry:
            pass
        cell = NotebookNode(
            cell_type=source.cell_type,
            source=without_hidden_tests(source.source),
            metadata=NotebookNode(nbgrader=NotebookNode(meta)),
        )
        return compute_checksum(cell)

    @staticmethod
    def _position(nb, grade_id: str) -> int | None:
        for index, cell in enumerate(nb.cells):
            if _nbgrader(cell).get("grade_id") == grade_id:
                return index
        return None


def _display_data_priority() -> List:
    """nbgrader's `display_data_priority` trait, but configurable.

    nbconvert's HTML exporter configures `NbConvertBase.display_data_priority` for every
    preprocessor it runs (nbconvert 7.17, exporters/html.py, `default_config`). nbgrader 0.9.6's
    NbGraderPreprocessor declares that trait again without `config=True`
    (preprocessors/base.py, line 7), so traitlets warned "Config option
    `display_data_priority` not recognized" once for each such preprocessor of
    generate_feedback: three lines on every run. nbgrader's own GetGrades declares it
    configurable (preprocessors/getgrades.py, line 15); so do the feedback preprocessors here
    (`FeedbackPreprocessor`, `ClearTestCellsHiddenTests`).
    """
    return List(NbGraderPreprocessor.display_data_priority.default_value).tag(config=True)


class FeedbackPreprocessor(NbGraderPreprocessor):
    """An nbgrader preprocessor that runs inside nbconvert's HTML exporter, quietly."""

    display_data_priority = _display_data_priority()


class ClearTestCellsHiddenTests(ClearHiddenTests):
    """nbgrader's ClearHiddenTests for the test cells only, at generate_feedback.

    nbgrader's looks for the markers in every cell: a student's own cell that mentions
    "BEGIN HIDDEN TESTS" (a search for hidden tests, a string in a comment) failed that
    student's whole feedback with "No end hidden tests statement found".
    """

    display_data_priority = _display_data_priority()

    def preprocess_cell(self, cell, resources, cell_index):
        if not _is_test(cell):
            return cell, resources
        return super().preprocess_cell(cell, resources, cell_index)
