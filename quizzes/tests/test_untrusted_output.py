"""What comes out of a student's notebook is shown as data (gradacc_grader.untrusted_output),
and what reaches the instructor's terminal as plain text (gradacc_grader.terminal_text).

A battery of hostile notebooks, each payload marked `PWN<n>`, is rendered with the very
templates that show it to the instructor: nbgrader 0.9.6's `formgrade` (Manual Grading) and
`feedback`, on nbconvert's `classic`. An independent HTML parser then says where each mark
landed: inside a tag, an attribute, a script or a style is markup; text inside `<pre>` is data.
Without the sanitizer the same payloads land in attributes and scripts, so the check can fail.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
import re
import unicodedata
import warnings
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from gradacc_grader.grading import score_table
from gradacc_grader.results import Outcome, prepare
from gradacc_grader.terminal_text import one_line, printable, scrub_log
from gradacc_grader.untrusted_output import (
    NOT_READABLE,
    PRE_OPEN,
    SanitizeFeedback,
    sanitize_autograded,
    sanitize_notebook,
)
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell
from PIL import Image

MARK = re.compile(r"PWN\d+")


def js(n: int) -> str:
    """A script that, if it ever runs, says so three ways (used by the browser test too)."""
    return f"window.top.PWNED=(window.top.PWNED||[]).concat({n});alert({n});fetch(/PWN{n}/.source)"


def image(kind: str, size=(3, 2)) -> str:
    """A real PNG or JPEG, made by Pillow, as base64."""
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(buffer, kind)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def nbgrader(grade_id: str, **flags) -> dict:
    meta = {"grade": False, "locked": False, "solution": False, "schema_version": 3}
    return {"nbgrader": {**meta, "grade_id": grade_id, **flags}}


def source_notebook() -> dict:
    """The instructor's notebook: a prompt, an answer, its test, a written answer."""
    return new_notebook(
        cells=[
            new_markdown_cell(
                "# Quiz\n\nSee **this** and $x^2$.", metadata=nbgrader("intro", locked=True)
            ),
            new_code_cell("answer = None", metadata=nbgrader("q1_answer", solution=True)),
            new_code_cell(
                "assert answer == 1",
                metadata=nbgrader("q1_test", grade=True, locked=True, points=1),
            ),
            new_markdown_cell(
                "Model answer.",
                metadata=nbgrader("q2_written", grade=True, solution=True, points=2),
            ),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    )


def display(data: dict, metadata: dict | None = None, kind: str = "display_data") -> dict:
    output = {"output_type": kind, "data": data, "metadata": metadata or {}}
    if kind == "execute_result":
        output["execution_count"] = 1
    return output


def hostile_notebook() -> dict:
    """An autograded notebook as a hostile student's kernel and editor can leave it."""
    nb = source_notebook()
    intro, answer, test, written = nb.cells
    written.source = (
        f'Mine: <img src=x onerror="{js(1)}"> <script>{js(2)}</script> '
        f'<svg onload="{js(3)}"></svg> [click](javascript:{js(4)}) '
        f"![t](http://127.0.0.1:9/PWN5.png) $\\href{{javascript:{js(6)}}}{{x}}$ "
        f"[d](data:text/html;base64,PWN7) <style>body{{background:url(/PWN8)}}</style>"
    )
    answer.source = "answer = 1  # PWN9"
    answer.outputs = [
        display({"image/png": image("PNG")}, {"image/png": {"width": f"1 onerror={js(10)}"}}),
        display({"text/html": f'<img src=x onerror="{js(11)}">'}),
        display(
            {
                "application/javascript": js(12),
                "text/plain": "<IPython.core.display.Javascript object>",
            }
        ),
        display({"image/svg+xml": f'<svg xmlns="http://www.w3.org/2000/svg" onload="{js(13)}"/>'}),
        display({"text/markdown": f'<img src=x onerror="{js(14)}">'}),
        display({"text/latex": f"$\\href{{javascript:{js(15)}}}{{x}}$ <img src=x onerror=PWN15>"}),
        display({"application/vnd.jupyter.widget-view+json": {"model_id": "PWN16"}}),
        display({"application/vnd.evil+json": {"x": f"<img src=x onerror={js(17)}>"}}),
        display(
            {"text/html": f'<img src=x onerror="{js(18)}">', "text/plain": "PWN18 as text"},
            {"text/html": {"isolated": True}},
        ),
        display({"image/png": image("PNG")}, {"filenames": {"image/png": "http://x/PWN19.png"}}),
        {"output_type": "stream", "name": "stdout", "text": "\x1b[31m<img src=x onerror=PWN20>"},
        {
            "output_type": "error",
            "ename": "ValueError",
            "evalue": "<script>PWN21()</script>",
            "traceback": ["\x1b[31mValueError\x1b[0m: <img src=x onerror=PWN21>"],
        },
        display({"image/png": '" onerror="PWN22'}),
        display({"image/png": base64.b64encode(b'<svg onload="PWN23"/>').decode()}),
        display({"image/jpeg": image("PNG"), "text/plain": "PWN24 a PNG called a JPEG"}),
        display({"text/plain": "PWN25"}, kind="execute_result") | {"execution_count": "<b>PWN25"},
        {"output_type": "PWN26", "data": {"text/html": "<script>PWN26</script>"}},
    ]
    answer.execution_count = f'<img src=x onerror="{js(27)}">'
    answer.metadata["tags"] = ['"><img src=x onerror=PWN28>']
    answer.metadata["magics_language"] = "PWN29"
    test.outputs = [{"output_type": "stream", "name": "stdout", "text": "hidden key PWN30"}]
    written.metadata["nbgrader"]["comment"] = f"<img src=x onerror={js(31)}>"
    extra = new_markdown_cell(
        f'<iframe src="javascript:{js(32)}"></iframe>\n\n![a](attachment:a.svg)',
        attachments={
            "a.svg": {"image/svg+xml": base64.b64encode(b'<svg onload="PWN33"/>').decode()}
        },
        metadata={"alt": "PWN34", **nbgrader('x" onmouseover="PWN35', grade=True, points=1)},
    )
    extra["id"] = '"><img src=x onerror=PWN36>'
    raw = new_raw_cell(f'<img src=x onerror="{js(37)}">', metadata={"raw_mimetype": "text/html"})
    edited = new_markdown_cell(
        f"# Quiz <img src=x onerror={js(38)}>", metadata=nbgrader("intro", locked=True)
    )  # the instructor's metadata, the student's text
    nb.cells += [extra, raw, edited, {"cell_type": "PWN39", "source": "<b>PWN39</b>"}]
    nb.metadata.update(
        {
            "title": "<img src=x onerror=PWN40>",
            "widgets": {
                "application/vnd.jupyter.widget-state+json": {"state": {"PWN16": {}, "PWN41": {}}}
            },
            "kernelspec": {"name": "python3", "display_name": "<b>PWN42</b>"},
            "language_info": {"name": "python", "pygments_lexer": '"><b>PWN43'},
        }
    )
    return json.loads(json.dumps(nb))  # plain dicts, as json.loads reads a file


# marks that must still be readable, as text, after sanitizing (the others are metadata,
# a test cell's output, a broken image or a named attachment: gone)
SHOWN = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 20, 21, 24, 25, 32, 37, 38, 39}


class Marks(HTMLParser):
    """Where each `PWN<n>` mark lands in a page: as markup, or as text inside <pre>."""

    def __init__(self):
        super().__init__()
        self.depth = {"pre": 0, "script": 0, "style": 0, "textarea": 0}
        self.as_markup, self.as_text = set(), set()

    def handle_starttag(self, tag, attrs):
        found = MARK.findall(" ".join([tag, *(f"{k}={v}" for k, v in attrs)]))
        self.as_markup.update(found)
        if tag in self.depth:
            self.depth[tag] += 1

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        if tag in self.depth:
            self.depth[tag] = max(0, self.depth[tag] - 1)

    def handle_data(self, data):
        found = set(MARK.findall(data))
        live = self.depth["script"] or self.depth["style"] or not self.depth["pre"]
        (self.as_markup if live else self.as_text).update(found)

    def handle_comment(self, data):
        self.as_markup.update(MARK.findall(data))


def marks(page: str) -> Marks:
    parser = Marks()
    parser.feed(page)
    parser.close()
    return parser


def images(page: str) -> list[dict]:
    """The attributes of every <img> of a page."""
    found = []
    parser = HTMLParser()
    parser.handle_starttag = lambda tag, attrs: found.append(dict(attrs)) if tag == "img" else None
    parser.feed(page)
    return found


def render(nb: dict, template: str) -> str:
    """The page formgrader (`formgrade`) or generate_feedback (`feedback`) makes of a notebook."""
    import nbgrader
    from nbconvert import HTMLExporter

    templates = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
    css = templates.parent / "static" / "node_modules" / "bootstrap" / "dist" / "css"
    exporter = HTMLExporter(
        template_name=template,
        extra_template_basedirs=[str(templates)],
        extra_template_paths=[str(css)],  # as generate_feedback sets them
    )
    resources = {
        "base_url": "",
        "notebook_id": "quiz",
        "assignment_id": "quiz",
        "submission_id": "1",
        "index": 0,
        "total": 1,
        "student": "ada",
        "notebook_path": "autograded/ada/quiz/quiz.ipynb",
        "nbgrader": {"notebook": "quiz", "score": 0, "max_score": 3, "late_penalty": 0},
    }
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in nb.cells:  # what nbgrader's GetGrades adds before the feedback template
        meta = cell.metadata.get("nbgrader", {})
        if template == "feedback" and (meta.get("grade") or meta.get("task")):
            meta.setdefault("score", 0.0)
        if template == "feedback" and (meta.get("solution") or meta.get("task")):
            meta.setdefault("comment", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbformat's notes on the raw notebook's odd fields
        page, _ = exporter.from_notebook_node(nb, resources=resources)
    return page


def number(mark: str) -> int:
    return int(mark[3:])


@pytest.mark.parametrize("template", ["formgrade", "feedback"])
def test_the_payloads_are_live_without_the_sanitizer(template):
    raw = hostile_notebook()
    # what nbformat's schema refuses (nbconvert would not render the page at all): left out
    raw["cells"] = [c for c in raw["cells"] if c["cell_type"] != "PWN39"]
    for cell in raw["cells"]:
        cell["id"] = f"c{len(cell['source'])}"
        if cell["cell_type"] == "code":
            cell["execution_count"] = 1
            outputs = [o for o in cell["outputs"] if o["output_type"] != "PWN26"]
            cell["outputs"] = [
                o | {"execution_count": 1} if "execution_count" in o else o for o in outputs
            ]
    leaked = {number(m) for m in marks(render(raw, template)).as_markup}
    # markdown, unquoted image width, an image's file name, HTML, JavaScript, a grade id
    assert {1, 2, 3, 10, 11, 12, 14, 19, 35, 38} <= leaked, sorted(leaked)


@pytest.mark.parametrize("template", ["formgrade", "feedback"])
def test_no_payload_becomes_markup(template):
    clean = sanitize_notebook(hostile_notebook(), source_notebook())
    found = marks(render(clean, template))
    assert not found.as_markup
    assert {number(m) for m in found.as_text} == SHOWN


def test_the_sanitized_notebook_is_one_nbgrader_and_nbformat_accept():
    from nbgrader.nbgraderformat import MetadataValidator

    clean = sanitize_notebook(hostile_notebook(), source_notebook())
    nbformat.validate(nbformat.from_dict(clean))
    MetadataValidator().validate_nb(nbformat.from_dict(clean))
    assert json.loads(json.dumps(clean)) == clean
    # a second pass (generate_feedback's) changes nothing but what it must keep
    assert sanitize_notebook(clean, source_notebook(), clear_tests=False) == clean


def test_honest_work_and_the_instructors_text_are_shown_as_before():
    nb = source_notebook()
    intro, answer, test, written = nb.cells
    png = image("PNG", (30, 20))
    answer.outputs = [
        display({"image/png": png}, {"image/png": {"width": 30, "height": 20}}),
        display({"image/jpeg": image("JPEG")}),
        display({"text/plain": "42"}, kind="execute_result"),
        {"output_type": "stream", "name": "stderr", "text": "a warning\n"},
    ]
    test.outputs = [{"output_type": "stream", "name": "stdout", "text": "from the test"}]
    written.source = "Each micro-batch's *mean* differs: 3 < 4 & [so](x) it's `BatchNorm`."
    clean = sanitize_notebook(json.loads(json.dumps(nb)), source_notebook())
    page = render(clean, "formgrade")
    assert "<h1" in page and "<strong>this</strong>" in page  # the instructor's markdown
    shown = {"src": f"data:image/png;base64,{png}", "width": "30", "height": "20"}
    assert any(shown.items() <= img.items() for img in images(page))
    assert "data:image/jpeg;base64," in page and "42" in page and "a warning" in page
    assert "from the test" not in page  # the grader writes its own message there
    shown = re.search(re.escape(PRE_OPEN) + r"(.*?)</pre>", page, re.S).group(1)
    assert html.unescape(shown) == written.source  # the written answer, as typed


def test_images_keep_only_whole_number_sizes():
    output = display({"image/png": image("PNG")}, {"image/png": {"width": 3, "height": "2px"}})
    nb = new_notebook(cells=[new_code_cell("x", outputs=[output])])
    (cell,) = sanitize_notebook(json.loads(json.dumps(nb)))["cells"]
    assert cell["outputs"][0]["metadata"] == {"image/png": {"width": 3}}


def test_a_notebook_that_is_not_one_is_replaced_by_a_note():
    for junk in (None, [], {"cells": "x"}, "text"):
        (cell,) = sanitize_notebook(junk)["cells"]
        assert cell == {"cell_type": "markdown", "metadata": {}, "source": NOT_READABLE}


def test_every_notebook_of_an_autograded_folder_is_sanitized(tmp_path):
    source, folder = tmp_path / "source", tmp_path / "autograded"
    (source / "sub").mkdir(parents=True)
    (folder / "sub").mkdir(parents=True)
    nbformat.write(nbformat.from_dict(source_notebook()), source / "quiz.ipynb")
    nbformat.write(nbformat.from_dict(source_notebook()), source / "sub" / "more.ipynb")
    hostile = hostile_notebook()
    for path in (folder / "quiz.ipynb", folder / "sub" / "more.ipynb"):
        path.write_text(json.dumps(hostile))
        path.chmod(0o444)  # as nbgrader leaves them
    (folder / "broken.ipynb").write_text("{not json")
    (folder / "secret.ipynb").symlink_to(source / "quiz.ipynb")
    assert sanitize_autograded(folder, source) == 3
    assert not (folder / "secret.ipynb").exists() and (source / "quiz.ipynb").exists()
    for name in ("quiz.ipynb", "sub/more.ipynb"):
        path = folder / name
        assert os.stat(path).st_mode & 0o777 == 0o444
        assert json.loads(path.read_text()) == sanitize_notebook(hostile, source_notebook())
    broken = json.loads((folder / "broken.ipynb").read_text())
    assert broken["cells"][0]["source"] == NOT_READABLE


def test_feedback_sanitizes_and_keeps_the_graders_message_in_test_cells(tmp_path):
    from traitlets.config import Config

    (tmp_path / "source" / "quiz").mkdir(parents=True)
    nbformat.write(
        nbformat.from_dict(source_notebook()), tmp_path / "source" / "quiz" / "quiz.ipynb"
    )
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    raw = hostile_notebook()
    raw["cells"][2]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "3/3 ok"}]
    resources = {"nbgrader": {"assignment": "quiz", "notebook": "quiz", "student": "ada"}}
    nb, _ = SanitizeFeedback(config=config).preprocess(nbformat.from_dict(raw), resources)
    assert nb.cells[0].source == source_notebook()["cells"][0]["source"]  # the instructor's
    assert nb.cells[2].outputs[0].text == "3/3 ok"
    assert nb.cells[3].source.startswith(PRE_OPEN)  # the student's
    assert not marks(render(nb, "feedback")).as_markup


def _controls(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) == "Cc" and c != "\n" or c == "\u202e"]


def test_the_score_table_shows_no_control_character_and_one_row_per_student():
    hostile = Outcome(
        "mal\x1b[2J",
        "failed: \x1b]0;owned\x07boom\nada  10.0  10.0  done    graded",
        notes=["faq1_test: 1 -> 0 (\x9b31m\u202eevil\r)"],
    )
    table = score_table([Outcome("ada", "graded", 8.0, 10.0), hostile])
    assert not _controls(table)
    assert len(table.splitlines()) == 4  # header, ada, mal, mal's note
    assert "boom ada" in table and "owned" not in table


def test_printable_keeps_text_and_drops_escapes():
    assert printable("Ẹ kú iṣẹ́\tok\n") == "Ẹ kú iṣẹ́\tok\n"
    assert printable("\x1b[1;31mred\x1b[0m\x1bc\x00") == "red"
    assert one_line("a\nb\tc") == "a b c"


def test_a_log_is_scrubbed_in_place(tmp_path):
    log = tmp_path / "grading.log"
    log.write_bytes(b"ok \x1b[31mred\x1b[0m \xff\xfe\n" * 5 + b"\x1b]2;title\x07end")
    scrub_log(log, chunk=7)  # sequences cut across chunks lose their ESC at least
    text = log.read_text(encoding="utf-8")
    assert not _controls(text) and text.count("ok ") == 5 and text.endswith("end")


def test_a_student_id_with_markup_is_refused_before_anything_is_copied(tmp_path):
    for student in ("<img src=x onerror=alert(1)>", "a b", "-x\u202e"):
        folder = tmp_path / "results" / student  # gradacc-grade names it after the student
        refused = prepare(tmp_path / "no-course", "quiz", student, folder)
        assert refused and refused.startswith("refused: the student id")
        assert list(folder.iterdir()) == []
