"""The course's Yorùbá convention (docs/yoruba.md): every Yorùbá string follows the glossary.

The strings come from their files (string constants read with `ast`), so that a string added
anywhere in the student package's quiz, or under a "yo" key in the instructor's package, is
checked without this test naming it. The guide's own sentences are quotations and left out:
a string that is exactly one line of the guide's FAQ, or the «…» inside a string, which must
then be the guide's words verbatim.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from pathlib import Path

import nbformat
import pytest
from gradacc_grader.bank import ASSIGNMENTS
from gradacc_grader.bank.core import Exercise

from gradacc_lessons.quiz import yoruba, yoruba_summaries
from gradacc_lessons.quiz.language import languages_of, translated
from gradacc_lessons.quiz.questions import faq_questions, lesson_questions
from tools import glossary
from tools.glossary import problems

ROOT = Path(__file__).resolve().parents[1]
GUIDE_FAQ = (ROOT / "quizzes" / "tests" / "data" / "guide_faq.txt").read_text(encoding="utf-8")
GUIDE_LINES = set(GUIDE_FAQ.splitlines())
DOC = ROOT / "docs" / "yoruba.md"
EXERCISES = ROOT / "quizzes" / "gradacc_grader" / "exercises"
# The instructor's files with Yorùbá text: the final's FAQ bank, the notebook's headers,
# the feedback's catalogue, the exercises' hints, the certificate's wording. The whole
# exercises folder is scanned, its shared helpers (full_batch.py) included.
GRADER = [
    ROOT / "quizzes" / "gradacc_grader" / "bank" / "faq.py",
    ROOT / "quizzes" / "gradacc_grader" / "notebook.py",
    ROOT / "quizzes" / "gradacc_grader" / "feedback_text.py",
    *sorted(EXERCISES.glob("[!_]*.py")),
    ROOT / "quizzes" / "gradacc_grader" / "certificates" / "wording.py",
]
# The glossary (tools/glossary.py) is no file of the scan: its `WRONG` entries name the wrong
# words on purpose; its Yorùbá (`TERMS`) is checked as data below.
STUDENT = sorted((ROOT / "gradacc_lessons" / "quiz").rglob("*.py"))
_YORUBA_LETTERS = re.compile(r"[ẹọṣẸỌṢ\u0300\u0301\u0323]")


def looks_yoruba(text: str) -> bool:
    """A string with a Yorùbá letter (ẹ ọ ṣ) or a tone mark."""
    return bool(_YORUBA_LETTERS.search(unicodedata.normalize("NFD", text)))


def constants(path: Path) -> list[str]:
    """The string constants of a module, docstrings left out (f-strings give their text parts)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    ]


def under_yo_keys(path: Path) -> list[str]:
    """Every string constant inside the value of a dict key "yo"."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "yo":
                    found += [
                        n.value
                        for n in ast.walk(value)
                        if isinstance(n, ast.Constant) and isinstance(n.value, str)
                    ]
    return found


def student_strings() -> list[tuple[str, str]]:
    strings = [(p.name, s) for p in STUDENT for s in constants(p) if looks_yoruba(s)]
    strings += [("glossary.py", f"{t.yoruba} {t.gloss}") for t in glossary.TERMS]
    strings += [("glossary.py", w.right) for w in glossary.WRONG]
    return strings


def grader_strings() -> list[tuple[str, str]]:
    return [(p.name, s) for p in GRADER for s in under_yo_keys(p) if looks_yoruba(s)]


def doc_passages() -> list[str]:
    """The Yorùbá of docs/yoruba.md (its lang="yo" divs) and of the front page's guide."""
    passages = re.findall(r'<div lang="yo">(.*?)</div>', DOC.read_text(encoding="utf-8"), re.S)
    front = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    guide = re.findall(r'<div lang="yo">\n(.*?)</div>', front, re.S)  # each part's Yorùbá
    return passages + [re.sub(r"<[^>]+>", " ", g) for g in guide]


def is_quotation(text: str) -> bool:
    return text in GUIDE_LINES


# --- the check itself can fail ---


@pytest.mark.parametrize("entry", glossary.WRONG, ids=lambda w: w.wrong)
def test_every_word_marked_wrong_is_caught_with_or_without_marks(entry):
    text = f"Ó dára, ṣùgbọ́n {entry.wrong} kò tọ̀nà."
    assert any(f'"{entry.wrong}"' in p for p in problems(text))
    if not entry.exact:
        stripped = glossary.bare(entry.wrong)
        assert any(f'"{entry.wrong}"' in p for p in problems(f"Àwọn {stripped.upper()} náà"))
    for phrase in entry.unless:
        assert problems(f"Ó dára, ṣùgbọ́n {phrase} tọ̀nà.") == []


def test_a_glossary_word_without_its_marks_is_caught():
    assert problems("Ìkójọpọ̀ gradient ń ṣiṣẹ́.") == []
    for untoned in ("ikojọpọ", "Ikojopo", "IKOJỌPỌ"):
        assert problems(f"{untoned} gradient ń ṣiṣẹ́.") == [
            f'"{untoned}" lacks its tone marks: "ìkójọpọ̀"'
        ]
    assert problems("awọn micro-batch") == ['"awọn" lacks its tone marks: "àwọn"']
    assert problems("ohun tí backward() ń ṣe") == []  # ohun (thing) needs no mark


def test_a_run_of_untoned_words_is_caught_and_english_terms_break_it():
    assert problems("Ronu nipa ohun ti o ṣe") == ['not tone-marked: "Ronu nipa ohun ti o"']
    assert problems("Ronu nipa ohun ti o ṣe", runs=False) == []
    assert problems("Ronu nipa gradient ti o ṣe") == []  # never five in a row


# The slips a reader found in the course's Yorùbá (issue 39), each beside its correction.
SLIPPED = [
    ("Lórí GPU, wọn peak gan-an pẹ̀lú `torch.cuda.max_memory_allocated`.", "wọn peak"),
    ("Ó ń wọn step náà lórí memory ẹ̀rọ yìí", "ń wọn"),
    ("Apá 6 wọn ohun tí `.grad` bfloat16 ń ná fèrèsé kan", "wọn ohun"),
    ("batch 128; micro-batch 32 tí a kó jọ ní mẹ́rin-mẹ́rin; batch 32", "micro-batch 32"),
    ("Jẹ́ kí `accumulation_steps = {n}`, kí micro-batch sì jẹ́ **{m}**", "micro-batch sì jẹ́"),
    ("kí micro-batch sì jẹ́ 11", "micro-batch sì jẹ́ 11"),
]
CORRECTED = [
    "Lórí GPU, wọ̀n peak gan-an pẹ̀lú `torch.cuda.max_memory_allocated`.",
    "Ó ń wọ̀n ìgbésẹ̀ náà lórí memory ẹ̀rọ yìí",
    "Apá 6 wọ̀n ohun tí `.grad` bfloat16 ń ná fèrèsé kan",
    "batch 128; micro-batch mẹ́rin tí ọ̀kọ̀ọ̀kan ní àpẹẹrẹ 32; batch 32",
    "Jẹ́ kí `accumulation_steps = {n}`, kí iye micro-batch sì jẹ́ **{m}**",
    "kí ìwọ̀n micro-batch sì jẹ́ 11",
    # they / their, where it is right: after a noun, before an auxiliary, in a word
    "kó gradient wọn jọ, àpapọ̀ gradient wọn ni gradient batch, wọn kò lè ṣe é, àwọn ohun",
    # a count after the noun, as meant: eight micro-batches, accumulated
    "Báwo ni pípín batch sí micro-batch 8 tí a kó jọ ṣe ń yí àkókò padà?",
]


@pytest.mark.parametrize("text, slip", SLIPPED, ids=[s for _, s in SLIPPED])
def test_each_known_slip_is_caught(text, slip):
    found = problems(text)
    assert any(slip in p for p in found), found
    assert any(p.startswith(f'"{slip}') for p in found)  # the message quotes the slip itself


@pytest.mark.parametrize("text", CORRECTED)
def test_the_corrections_and_the_right_uses_pass(text):
    assert problems(text) == []


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: glossary.bare(None), "word"),
        (lambda: glossary.quotations(b"\xc2\xab"), "text"),
        (lambda: glossary.words(["ìkójọpọ̀"]), "text"),
        (lambda: glossary.problems(3), "text"),
    ],
)
def test_a_text_that_is_no_string_is_a_value_error_naming_it(call, argument):
    with pytest.raises(ValueError, match=f"^{argument} must be a string"):
        call()


def test_quotations_code_and_blanks_are_left_out():
    assert problems("Ìtọ́sọ́nà náà dáhùn pé: «iwuwasi ẹgbẹ yago fun ibaamu»") == []
    assert problems("Pe `ipele = le()` àti {ipele}") == []
    assert problems("Pe ipele") != []


def test_nfd_text_is_read_as_nfc():
    nfd = unicodedata.normalize("NFD", "Ìkójọpọ̀ gradient; ayeraye")
    assert problems(nfd) == [problems("ayeraye")[0]]


# --- the course's Yorùbá follows it ---


def test_the_scan_finds_the_strings_it_checks():
    files = {name for name, _ in student_strings()}
    assert {"yoruba.py", "language.py", "glossary.py"} <= files
    # every exercise of the bank has its Yorùbá hints; the folder's other modules are
    # helpers the exercises share, with nothing a student reads
    exercises = {
        f"{item.module}.py" for a in ASSIGNMENTS for item in a.items if isinstance(item, Exercise)
    }
    assert len(exercises) == 5 and exercises <= {p.name for p in EXERCISES.glob("*.py")}
    others = {p.name for p in GRADER if p.parent != EXERCISES}
    assert {name for name, _ in grader_strings()} == others | exercises and len(others) == 4
    assert len(doc_passages()) == 1 + 5  # docs/yoruba.md's, and the guide's five parts


@pytest.mark.parametrize("where", ["student", "doc"])
def test_the_students_yoruba_follows_the_convention(where):
    if where == "student":
        texts = [(name, s) for name, s in student_strings() if not is_quotation(s)]
    else:
        texts = [("docs/yoruba.md", p) for p in doc_passages()]
        text = DOC.read_text(encoding="utf-8")
        texts.append(("docs/yoruba.md, in English", text))
    found = []
    for name, text in texts:
        runs = name != "docs/yoruba.md, in English"
        found += [f"{name}: {p} in {text[:60]!r}" for p in problems(text, runs=runs)]
    assert not found, "\n".join(found)


def test_the_instructors_yoruba_follows_the_convention():
    found = []
    for name, text in grader_strings():
        if not is_quotation(text):
            found += [f"{name}: {p} in {text[:60]!r}" for p in problems(text)]
    assert not found, "\n".join(found)


def test_every_quotation_is_the_guides_words_verbatim():
    shown = [translated(q, "yo").explanation for q in faq_questions()]
    texts = [s for _, s in student_strings()] + shown + [DOC.read_text(encoding="utf-8")]
    quoted = [q for s in texts for q in glossary.quotations(s)]
    assert len(quoted) >= 9  # the five answers and the words the explanations discuss
    for q in quoted:
        assert q in GUIDE_FAQ, q


def test_the_guide_faq_in_the_package_is_the_published_one():
    lines = GUIDE_FAQ.splitlines()[1:]
    assert [line for pair in yoruba.GUIDE_FAQ.values() for line in pair] == lines


def test_the_page_shows_the_glossary_data():
    assert glossary.markdown() in DOC.read_text(encoding="utf-8")
    assert "\nyoruba\n" in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")


def test_one_yoruba_word_per_idea():
    words = [t.yoruba for t in glossary.TERMS]
    english = [t.english for t in glossary.TERMS]
    assert len(set(words)) == len(words) and len(set(english)) == len(english)
    for term in glossary.TERMS:
        assert unicodedata.is_normalized("NFC", term.yoruba + term.gloss), term
    wrong = {glossary.bare(w.wrong) for w in glossary.WRONG if not w.exact}
    assert not wrong & {glossary.bare(w) for w in words}


# --- every lesson's self-check and summary in Yorùbá ---


@pytest.mark.parametrize("item", lesson_questions(), ids=lambda q: q.id)
def test_every_lesson_question_exists_in_yoruba(item):
    english, yo = translated(item, "en"), translated(item, "yo")
    for field in ("prompt", "hint", "explanation"):
        assert getattr(yo, field) and getattr(yo, field) != getattr(english, field), field
    if hasattr(english, "choices"):
        assert len(yo.choices) == len(english.choices) and yo.answer == english.answer
        assert all(y and y != e for y, e in zip(yo.choices, english.choices))
    assert languages_of([item]) == ["en", "yo"]


def _lesson_cells(number: int) -> list:
    (path,) = (ROOT / "notebooks").glob(f"0{number}_*.ipynb")
    return nbformat.read(path, as_version=4).cells


@pytest.mark.parametrize("number", sorted(yoruba_summaries.SUMMARIES))
def test_every_lesson_holds_its_yoruba_summary_right_after_the_english_one(number):
    cells = _lesson_cells(number)
    summary = yoruba_summaries.SUMMARIES[number]
    at = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and c.source == summary]
    assert len(at) == 1, f"lesson {number} must hold its Yorùbá summary once, as one cell"
    # the English summary ends in the cell before (lesson 2's: heading, table, then its points)
    before = cells[max(0, at[0] - 3) : at[0]]
    english = [c for c in before if re.search(r"^## (Summary|Where next)$", c.source, re.M)]
    # lessons 4 and 5 have no English summary: theirs closes the lesson, before its self-check
    assert english or number in (4, 5), before[-1].source[:80]
    assert cells[at[0] - 1].cell_type == "markdown" or number == 4
    later = [c for c in cells[at[0] + 1 :] if c.cell_type == "code"]
    assert len(later) <= 1 and all("self_check(" in c.source for c in later)


def test_the_summaries_follow_the_convention():
    found = []
    for number, summary in yoruba_summaries.SUMMARIES.items():
        body = re.search(r'<div lang="yo">(.*)</div>', summary, re.S).group(1)
        found += [f"lesson {number}: {p}" for p in problems(body)]
    assert not found, "\n".join(found)
