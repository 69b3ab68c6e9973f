"""The final built with `gradacc-build --lang yo` and graded: a Yorùbá student reads Yorùbá.

The course is built as quizzes/README.md says (`gradacc-build --lang yo`), with the sample
class; three submissions are graded with gradacc-grade: one with every other answer wrong and
an exercise that fails a case (sample-partly), the untouched release (sample-blank: its stubs
raise), and one whose function has another name (the grader cannot find it). Every message the
grader writes into the test cells, and every prose line of the released notebook, must hold no
English word besides the terms the glossary keeps, and must follow the glossary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import glossary

BIN = Path(sys.executable).parent
SECRET = "5e" * 32
# English a Yorùbá text may hold: the glossary's kept words and the terms it keeps as they are.
KEPT = glossary.KEPT | {
    word.lower()
    for term in glossary.TERMS
    if term.yoruba == term.english
    for word in glossary.words(term.english)
}
# Yorùbá words written with the mid tone only and no under-dot: nothing marks them as Yorùbá,
# so they are listed (each one is Yorùbá, none is an English word).
_MID_TONE = """a o ni ti si kan kankan fi ohun gba ba mu pe wa di ka gbogbo wo gidi iye ara ju un
    yege ibi"""
MID_TONE = frozenset(_MID_TONE.split())


def english_words(text: str) -> list[str]:
    """The words of `text` that are neither Yorùbá nor a term the glossary keeps in English.

    Code (`…`, names with `_`, `()` or a dot), the guide's quotations «…», numbers and words in
    capitals (A, N, FAQ, GPU) are left out, as the glossary's check leaves them out.
    """
    found = []
    for word in glossary.words(text):
        if not word.isascii() or word.lower() in KEPT or word.lower() in MID_TONE:
            continue
        if word.isupper() or word in {"MiB"}:
            continue
        found.append(word)
    return found


def test_the_check_finds_english_and_passes_yoruba():
    english = "✗ a short last window: no result. Hint: the last window may hold fewer"
    assert english_words(english) == [
        "short", "last", "window", "no", "result", "Hint", "the", "last", "window", "may",
        "hold", "fewer",
    ]  # fmt: skip
    assert english_words("✗ fèrèsé tó kẹ́yìn tí ó kúrú: kò sí èsì kankan. Ìtọ́ka: model") == []
    assert english_words("àṣìṣe Python: `NotImplementedError: not done`") == []


def _run(*command: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [str(BIN / command[0]), *command[1:]], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    course = tmp_path_factory.mktemp("yoruba") / "course"
    course.mkdir()
    (course / "instructor.secret").write_text(SECRET + "\n", encoding="ascii")
    (course / "instructor.secret").chmod(0o600)
    _run("gradacc-build", "--course", str(course), "--lang", "yo", "--assignment", "gradacc_faq",
         "--sample-class")  # fmt: skip
    submitted = course / "submitted"
    for student in ("sample-honest", "sample-cheater"):
        shutil.rmtree(submitted / student)
    # a student whose function has another name: the grader finds nothing to run
    lost = submitted / "sample-lost" / "gradacc_faq"
    shutil.copytree(submitted / "sample-partly" / "gradacc_faq", lost)
    notebook = lost / "gradacc_faq.ipynb"
    text = notebook.read_text(encoding="utf-8")
    notebook.write_text(text.replace("def train_with_accumulation(", "def train_loop("))
    with (course / "nbgrader_config.py").open("a", encoding="utf-8") as config:
        config.write('c.GradaccFeedback.explain_wrong_choices = "now"\n')
    _run("gradacc-grade", "--course", str(course), "gradacc_faq")
    return course


def _messages(course: Path, student: str) -> dict[str, str]:
    """{grade id: the grader's message} of the student's autograded test cells."""
    path = course / "autograded" / student / "gradacc_faq" / "gradacc_faq.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = {}
    for cell in cells:
        meta = cell["metadata"].get("nbgrader", {})
        if cell["cell_type"] == "code" and meta.get("grade"):
            found[meta["grade_id"]] = "".join(o.get("text", "") for o in cell["outputs"])
    return found


def _released_prose(course: Path) -> list[str]:
    """The released notebook's prose: markdown cells and the comments of code cells (the quick
    check's own code excepted: code stays code)."""
    path = course / "release" / "gradacc_faq" / "gradacc_faq.ipynb"
    texts = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        if cell["cell_type"] == "markdown":
            texts.append(source)
        else:
            lines = source.splitlines()[:1] if grade_id.endswith("_check") else source.splitlines()
            texts += [line.strip("# ") for line in lines if line.lstrip().startswith("#")]
    return texts


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_the_yoruba_final_and_its_feedback_hold_no_english_sentence(graded):
    from gradacc_grader.bank.faq_loop import LOOP_MESSAGES

    partly, blank, lost = (_messages(graded, s) for s in ("sample-partly", "sample-blank",
                                                           "sample-lost"))  # fmt: skip
    # what each submission earned is said in Yorùbá, cases and hints included
    assert "✗ fèrèsé tó kẹ́yìn tí ó kúrú: weights yàtọ̀" in partly["faq3_loop_test"]
    assert "Ìtọ́ka: fèrèsé tó kẹ́yìn" in partly["faq3_loop_test"]
    assert "✓ fèrèsé tí ó kún" in partly["faq3_loop_test"]
    assert "2 / 3 máàkì" in partly["faq3_loop_test"]
    assert sum(": kò tọ̀nà (0 / 1)." in m for m in partly.values()) == 2
    assert blank["faq1_test"].startswith("A kò fi lẹ́tà kankan sínú answer_faq1")
    assert "àṣìṣe Python: `NotImplementedError" in blank["faq3_loop_test"]
    assert "a kò rí `train_with_accumulation`" in lost["faq3_loop_test"]
    texts = [*partly.values(), *blank.values(), *lost.values(), *_released_prose(graded)]
    texts += LOOP_MESSAGES["yo"].values()  # what the quick check says when it runs
    prose = _released_prose(graded)
    assert any("Kọ kóòdù rẹ síbí" in t for t in prose)  # nbgrader's stub, in Yorùbá
    assert sum(t.startswith("### FAQ") or "**FAQ" in t for t in prose) == 7
    found = []
    for text in texts:
        found += [f"English {w!r} in {text[:70]!r}" for w in english_words(text)]
        found += [f"{p} in {text[:70]!r}" for p in glossary.problems(text)]
    assert not found, "\n".join(found)
