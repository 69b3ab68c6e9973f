"""Everything from a student's notebook is data: made safe before an instructor's page shows it.

Past 400 lines on purpose: the allow-list is one idea, and this docstring lists the template
line each of its rules answers (a sixth of the module), so a reader checks a rule and its
reason in one place.

The sandbox keeps student code away from the course; this module keeps what that code printed,
and what the student typed, from becoming markup in the instructor's browser or escape
sequences in the instructor's terminal. It is an allow-list: what it does not know is dropped
or shown as text.

Where a notebook's content becomes HTML (nbgrader 0.9.6, nbconvert 7.17):

- formgrader's Manual Grading renders `autograded/<student>/<assignment>/<notebook>.ipynb` with
  nbconvert's `HTMLExporter` and nbgrader's `formgrade` template; `generate_feedback` renders
  the same file with the `feedback` template. Both templates override nbconvert's markdown
  block: `cell.source | markdown2html` goes into the page as it is (the `sanitize_html` setting
  never reaches it), so `<img src=x onerror=...>` in a written answer ran as the instructor.
  They also put `metadata.nbgrader.grade_id` into element ids and links unescaped.
- nbconvert's `classic` template (their base) writes an image's `width`/`height` output
  metadata unquoted (`width=1 onerror=...` is an attribute of its own), its `filenames`
  metadata as an `<img src>` (a request anywhere), `text/html` and `text/markdown` as markup,
  `application/javascript` and widget views in a `<script>`, `execution_count` unescaped in
  the prompt, raw cells through bleach, a markdown cell's `attachment:` images as data URLs.

So, before formgrader or feedback sees an autograded notebook (`sanitize_autograded`, called
by gradacc-grade), and again inside `generate_feedback` (`SanitizeFeedback`):

- markdown is rendered only when it is, character for character, a markdown cell of the
  instructor's source notebook (with that cell's attachments, not the student's). Any other
  markdown cell, and any raw cell, is shown as the text the student typed: every character
  but letters, digits and spaces written as an HTML entity inside a `<pre>`, so neither HTML
  nor markdown (links, images, math) can come out of it;
- outputs keep `text/plain`, and PNG or JPEG images whose bytes are checked and base64
  written again; any other type (HTML, JavaScript, SVG, LaTeX, markdown, widgets, PDF,
  `application/vnd.*`) becomes its source as text, or a note that it is not shown. Output
  metadata keeps only whole-number `width` and `height` of the images; stream and error text
  stays text (the templates escape it);
- a test cell's outputs (grade cell, not a solution) are cleared: they come from student code
  run around the hidden tests (grader-core's scoring writes the grader's own message there);
- cell metadata keeps only nbgrader's fields, each checked against nbgrader's schema (a
  `grade_id` of letters, digits, `_` and `-`), and `deletable`/`editable`; notebook metadata
  keeps only the kernel's and the language's names; counts are integers; cell ids match
  nbformat's pattern.

Text bound for the instructor's terminal is cleaned by `gradacc_grader.terminal_text`.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
import stat
import unicodedata
from pathlib import Path

from gradacc_grader.guards import FeedbackPreprocessor
from gradacc_grader.terminal_text import printable

# a letter, digit or "_" first: never "-" (`-h` is read as an option) nor "." (hidden, "..")
STUDENT_ID = re.compile(r"[\w@][\w.@-]{0,99}")


def is_student_id(name: str) -> bool:
    """Whether a folder name of submitted/ is a plain student id, safe in a page's markup.

    nbgrader's formgrader writes the id of a student without a name into its pages as it is.
    An id is in NFC and its letters are of one script: `аda` (a Cyrillic а) reads as `ada`.

    >>> [is_student_id(s) for s in ("ada", "jo.ng@uni.edu", "Adéwálé", "<b>", "..", "a b")]
    [True, True, True, False, False, False]
    >>> [is_student_id(s) for s in ("\\u0430da", "-h", "\\udcff", "Ade\\u0301", "ада")]
    [False, False, False, False, True]
    """
    if STUDENT_ID.fullmatch(name) is None or unicodedata.normalize("NFC", name) != name:
        return False
    return len(_scripts(name)) <= 1


def _scripts(name: str) -> set[str]:
    """The scripts of a name's letters, by their Unicode names (LATIN, CYRILLIC, GREEK, ...)."""
    return {unicodedata.name(char, "?").split()[0] for char in name if char.isalpha()}


# characters of a student's markdown shown (a written answer is a few thousand): 8 MB of `<`
# once became a 41 MB notebook and 1.6 GB of feedback rendering
SHOWN_CHARS = 200_000
PRE_OPEN = '<pre class="gradacc-student-text" style="white-space: pre-wrap">'
PRE_CLOSE = "</pre>"
_ESCAPED = re.compile(
    re.escape(PRE_OPEN) + r"(?:[A-Za-z0-9 \n]|[^\x00-\x7f]|&#[0-9]{1,7};)*" + re.escape(PRE_CLOSE)
)


def as_text(source: str) -> str:
    """Markdown that shows `source` as the text it is: no HTML, no markdown, no math.

    Every ASCII character but letters, digits, spaces and newlines becomes a numeric entity
    (`<` is `&#60;`, `[` is `&#91;`), inside one `<pre>` HTML block: markdown passes the block
    through, the browser shows the entities as the characters, MathJax skips `<pre>`.

    >>> as_text('<img src=x onerror="go()">')[len(PRE_OPEN):]
    '&#60;img src&#61;x onerror&#61;&#34;go&#40;&#41;&#34;&#62;</pre>'
    >>> len(as_text("<" * 8_000_000)) < 11 * SHOWN_CHARS
    True
    """
    text = printable(source.replace("\r\n", "\n").replace("\r", "\n"))
    if len(text) > SHOWN_CHARS:  # each character may become 10: bound what the pages render
        text = f"{text[:SHOWN_CHARS]}\n[{len(text) - SHOWN_CHARS} more characters not shown]"
    return PRE_OPEN + "".join(map(_entity, text)) + PRE_CLOSE


def _entity(char: str) -> str:
    """The character itself if HTML and markdown read it as text, else its numeric entity."""
    if not char.isascii() or char.isalnum() or char in " \n":
        return char
    return f"&#{ord(char)};"


def is_text(source: str) -> bool:
    """Whether markdown is already what `as_text` makes (so a second pass leaves it alone).

    >>> is_text(as_text("<b>x</b> & [y](z)")) and not is_text("<b>x</b>")
    True
    """
    return _ESCAPED.fullmatch(source) is not None


# --- notebooks ----------------------------------------------------------------------------

GRADE_ID = re.compile(r"[A-Za-z0-9_\-]{1,200}")  # nbgrader's schema, not empty
CELL_ID = re.compile(r"[a-zA-Z0-9_\-]{1,64}")  # nbformat 4.5's schema
_NAME = re.compile(r"[A-Za-z0-9_.+\- ]{1,64}")  # a kernel's or language's name
IMAGES = {"image/png": b"\x89PNG\r\n\x1a\n", "image/jpeg": b"\xff\xd8\xff"}
NOT_READABLE = "(this notebook could not be read as a notebook, so it is not shown)"
# IPython's text for a display object (HTML, SVG, ...): the other type, as text, says more
_PLACEHOLDER = re.compile(r"<IPython\.core\.display\.\w+ object>")


def _text(value) -> str:
    """A notebook's multi-line string (a string or a list of strings); anything else is ''."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    return ""


def _count(value) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _number(value) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and value >= 0


def _nbgrader(meta, cell_type: str) -> dict | None:
    """A cell's nbgrader metadata as nbgrader's schema (v3) allows it; None if it does not."""
    if not isinstance(meta, dict):
        return None
    clean = {key: meta.get(key) is True for key in ("grade", "locked", "solution")}
    clean["schema_version"] = 3
    if meta.get("task") is True:
        clean["task"] = True
    if isinstance(meta.get("grade_id"), str) and GRADE_ID.fullmatch(meta["grade_id"]):
        clean["grade_id"] = meta["grade_id"]
    if _number(meta.get("points")):
        clean["points"] = meta["points"]
    if isinstance(meta.get("checksum"), str) and re.fullmatch(r"[0-9a-f]{32}", meta["checksum"]):
        clean["checksum"] = meta["checksum"]
    if meta.get("cell_type") in ("code", "markdown", "raw"):
        clean["cell_type"] = meta["cell_type"]
    # nbgrader's own rules (v3.validate_cell): generate_feedback refuses a notebook that breaks them
    graded = clean["grade"] or clean["solution"] or clean["locked"] or clean.get("task")
    if graded and "grade_id" not in clean:
        return None
    if clean["grade"] and "points" not in clean:
        return None
    if cell_type == "markdown" and not clean.get("task") and clean["grade"] != clean["solution"]:
        return None
    if clean.get("task") and cell_type != "markdown":
        return None
    return clean


def _is_test(cell: dict) -> bool:
    meta = cell["metadata"].get("nbgrader", {})
    return cell["cell_type"] == "code" and meta.get("grade") and not meta.get("solution")


def _image(mime: str, value) -> str | None:
    """The image's base64, written again, if it decodes to an image of that type; else None."""
    try:
        data = base64.b64decode("".join(_text(value).split()), validate=True)
    except (binascii.Error, ValueError):
        return None
    return base64.b64encode(data).decode("ascii") if data.startswith(IMAGES[mime]) else None


def _is_textual(mime: str) -> bool:
    return mime.startswith("text/") or mime.endswith(("json", "xml", "javascript"))


def _as_plain_text(mime: str, value) -> str:
    if isinstance(value, (dict, list)) and not _text(value):
        return f"[{mime}, shown as text]\n{json.dumps(value, indent=1)}"
    if _is_textual(mime):
        return f"[{mime}, shown as text]\n{_text(value)}"
    return f"[{mime} output, not shown]"


def _data(data) -> dict:
    """An output's data as the allow-list keeps it: text/plain, checked PNG and JPEG images."""
    if not isinstance(data, dict):
        return {"text/plain": "[an output that is not a mime bundle, not shown]"}
    clean = {mime: image for mime in IMAGES if (image := _image(mime, data.get(mime)))}
    plain = _text(data.get("text/plain"))
    others = [mime for mime in data if mime not in clean and mime != "text/plain"]
    if "text/plain" in data and not (others and _PLACEHOLDER.fullmatch(plain)):
        clean["text/plain"] = plain
    elif others:  # nothing to read but the other types: one of them, as text
        readable = [mime for mime in others if _is_textual(mime)]
        clean["text/plain"] = _as_plain_text((readable or others)[0], data[(readable or others)[0]])
    elif not clean:
        clean["text/plain"] = ""
    return clean


def _size(meta) -> dict:
    sizes = {}
    for key in ("width", "height"):
        value = meta.get(key) if isinstance(meta, dict) else None
        if type(value) is int and 0 < value <= 100_000:
            sizes[key] = value
    return sizes


def _output(output) -> dict | None:
    kind = output.get("output_type") if isinstance(output, dict) else None
    if kind == "stream":
        name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout"
        return {"output_type": "stream", "name": name, "text": _text(output.get("text"))}
    if kind == "error":
        lines = output.get("traceback") if isinstance(output.get("traceback"), list) else []
        return {
            "output_type": "error",
            "ename": _text(output.get("ename")),
            "evalue": _text(output.get("evalue")),
            "traceback": [line for line in lines if isinstance(line, str)],
        }
    if kind in ("display_data", "execute_result"):
        data = _data(output.get("data"))
        meta = output.get("metadata") if isinstance(output.get("metadata"), dict) else {}
        sizes = {mime: size for mime in IMAGES if mime in data and (size := _size(meta.get(mime)))}
        clean = {"output_type": kind, "data": data, "metadata": sizes}
        if kind == "execute_result":
            clean["execution_count"] = _count(output.get("execution_count"))
        return clean
    return None


def _trusted_markdown(source: dict | None) -> dict[str, dict | None]:
    """The instructor's markdown: each markdown cell's text, with its attachments."""
    trusted = {}
    for cell in source.get("cells", []) if isinstance(source, dict) else []:
        if isinstance(cell, dict) and cell.get("cell_type") == "markdown":
            attachments = cell.get("attachments")
            trusted[_text(cell.get("source"))] = (
                attachments if isinstance(attachments, dict) else None
            )
    return trusted


def _test_ids(source: dict | None) -> set[str]:
    """The grade ids of the source's test cells (code grade cells that are not solutions)."""
    ids = set()
    for cell in source.get("cells", []) if isinstance(source, dict) else []:
        meta = cell.get("metadata", {}).get("nbgrader", {}) if isinstance(cell, dict) else {}
        if cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution"):
            ids.add(meta.get("grade_id"))
    return ids


def _cell(cell, trusted: dict, test_ids: set, clear_tests: bool) -> dict:
    if not isinstance(cell, dict):
        cell = {"cell_type": "raw", "source": "", "metadata": {}}
    cell_type, source = cell.get("cell_type"), _text(cell.get("source"))
    raw_meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
    if cell_type not in ("code", "markdown"):  # raw cells, unknown types: the text they hold
        cell_type, raw_meta = "markdown", {}
        source = source if is_text(source) else as_text(source)
    meta = {
        key: raw_meta[key] for key in ("deletable", "editable") if type(raw_meta.get(key)) is bool
    }
    nbgrader = _nbgrader(raw_meta.get("nbgrader"), cell_type)
    if nbgrader is not None:
        meta["nbgrader"] = nbgrader
    clean = {"cell_type": cell_type, "metadata": meta, "source": source}
    if isinstance(cell.get("id"), str) and CELL_ID.fullmatch(cell["id"]):
        clean["id"] = cell["id"]
    if cell_type == "markdown":
        if source in trusted:
            if trusted[source]:
                clean["attachments"] = trusted[source]
        elif not is_text(source):
            clean["source"] = as_text(source)
        return clean
    clean["execution_count"] = _count(cell.get("execution_count"))
    outputs = cell.get("outputs") if isinstance(cell.get("outputs"), list) else []
    clean["outputs"] = [out for out in map(_output, outputs) if out is not None]
    grade_id = (
        raw_meta.get("nbgrader", {}).get("grade_id")
        if isinstance(raw_meta.get("nbgrader"), dict)
        else None
    )
    if clear_tests and (_is_test(clean) or (isinstance(grade_id, str) and grade_id in test_ids)):
        clean["outputs"] = []
    return clean


def _notebook_metadata(meta) -> dict:
    """Only the kernel's and the language's names (and the language's version), if plain."""
    meta = meta if isinstance(meta, dict) else {}
    clean = {}
    for key, fields in (
        ("kernelspec", ("name", "display_name", "language")),
        ("language_info", ("name", "version", "pygments_lexer", "file_extension", "mimetype")),
    ):
        part = meta.get(key) if isinstance(meta.get(key), dict) else {}
        kept = {
            f: part[f] for f in fields if isinstance(part.get(f), str) and _NAME.fullmatch(part[f])
        }
        if "name" in kept:  # nbformat requires it (and a kernel's display name)
            clean[key] = kept
    if "kernelspec" in clean:
        clean["kernelspec"].setdefault("display_name", clean["kernelspec"]["name"])
    return clean


def sanitize_notebook(nb, source: dict | None = None, clear_tests: bool = True) -> dict:
    """A notebook (a dict, as JSON loads it) made safe to render; `source` is the instructor's.

    `source` (the assignment's notebook in `source/`) says which markdown is the instructor's
    and which cells are tests; without it every markdown cell is shown as text.
    `clear_tests=False` keeps test cells' outputs (sanitized): inside generate_feedback, after
    the grader wrote its message there.
    """
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        note = {"cell_type": "markdown", "metadata": {}, "source": NOT_READABLE}
        return {"cells": [note], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    trusted, test_ids = _trusted_markdown(source), _test_ids(source)
    cells = [_cell(cell, trusted, test_ids, clear_tests) for cell in nb["cells"]]
    seen_grade_ids, seen_cell_ids = set(), set()
    for cell in cells:  # nbgrader refuses a notebook with a grade id twice: keep the first
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id is not None and grade_id in seen_grade_ids:
            del cell["metadata"]["nbgrader"]
        seen_grade_ids.add(grade_id)
        if "id" in cell and cell["id"] in seen_cell_ids:
            del cell["id"]
        seen_cell_ids.add(cell.get("id"))
    minor = nb.get("nbformat_minor") if _count(nb.get("nbformat_minor")) is not None else 4
    minor = min(minor, 5)
    for index, cell in enumerate(cells):
        if minor < 5:
            cell.pop("id", None)
        elif "id" not in cell:
            cell["id"] = _new_id(index, seen_cell_ids)
    return {
        "cells": cells,
        "metadata": _notebook_metadata(nb.get("metadata")),
        "nbformat": 4,
        "nbformat_minor": minor,
    }


def _new_id(index: int, taken: set) -> str:
    number = index
    while f"cell-{number}" in taken:
        number += 100_000
    taken.add(f"cell-{number}")
    return f"cell-{number}"


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def _notebooks(folder: Path, max_depth: int = 64):
    """The notebooks under `folder` (no links followed), without recursion; links are removed."""
    stack = [(folder, 0)]
    while stack:
        here, depth = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if entry.name.endswith(".ipynb") and not stat.S_ISDIR(mode):
                yield Path(entry.path), mode
            elif stat.S_ISDIR(mode) and depth < max_depth:
                stack.append((Path(entry.path), depth + 1))


def sanitize_autograded(folder: Path, source: Path) -> int:
    """Sanitize every notebook under a student's autograded folder, in place; how many.

    `source` is the assignment's folder in `source/`: `x.ipynb` is compared with
    `source/x.ipynb`. A notebook that is a link, or not a regular file, is removed; one that
    is not JSON is replaced by a notebook that says so. One that cannot be rewritten is
    removed: formgrader then shows nothing rather than the raw notebook.
    """
    done = 0
    for path, mode in list(_notebooks(folder)):
        try:
            if stat.S_ISREG(mode):
                _sanitize_file(path, mode, source / path.relative_to(folder))
                done += 1
            else:
                path.unlink()  # a link or a pipe named *.ipynb: formgrader would follow it
        except Exception:  # a bug of ours, a full disk: never the raw notebook, never a crash
            path.unlink(missing_ok=True)
    return done


def _sanitize_file(path: Path, mode: int, original: Path) -> None:
    trusted = _read_json(original) if original.is_file() and not original.is_symlink() else None
    clean = sanitize_notebook(_read_json(path), trusted)
    temporary = path.with_name(f".{path.name}.sanitized")
    temporary.write_text(json.dumps(clean, indent=1) + "\n", encoding="utf-8")
    os.chmod(temporary, stat.S_IMODE(mode) | stat.S_IRUSR)
    os.replace(temporary, path)


class SanitizeFeedback(FeedbackPreprocessor):
    """`sanitize_notebook` inside generate_feedback, first: what a page shows is data.

    gradacc-grade sanitized the autograded notebook already; this pass keeps feedback safe
    when it was not (a plain `nbgrader autograde`), and changes nothing in one that was
    (except the test cells' outputs, which it keeps: the grader's message is there).
    """

    def preprocess(self, nb, resources):
        import nbformat
        from nbgrader.coursedir import CourseDirectory

        info = resources.get("nbgrader", {})
        coursedir = CourseDirectory(config=self.config)
        folder = Path(
            coursedir.format_path(coursedir.source_directory, ".", info.get("assignment", ""))
        )
        original = folder / f"{info.get('notebook', '')}.ipynb"
        trusted = _read_json(original) if original.is_file() else None
        clean = sanitize_notebook(nb, trusted, clear_tests=False)
        return nbformat.from_dict(clean), resources
