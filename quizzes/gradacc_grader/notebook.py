"""Turn a drawn release into the instructor's source notebook for nbgrader.

Cells, with their grade ids (nbgrader 0.9, metadata schema 3):

- `intro` (locked markdown) and, when the assignment has coding exercises, a locked `setup`
  cell that imports torch (and finishes its lazy imports) before any student code;
- per multiple-choice question `q`: `q_prompt` (locked markdown), `q_answer` (the student sets
  `answer_q` to a letter) and `q_test`, a *report* cell: it prints the value the notebook gave
  `answer_q`, one line, and knows nothing else;
- per coding exercise `e`: `e_prompt`, `e_answer` (the function to write), `e_check` (a locked
  quick check the student can run; never graded) and `e_test`, a report cell that runs nothing;
- per written answer `w`: `w_prompt` and `w` (markdown, graded by hand; its source holds the
  model answer and the rubric, which nbgrader replaces by "YOUR ANSWER HERE" in the release).

Nothing secret goes into a cell the student's kernel runs: no letter, no explanation, no
seed, no reference. The grader scores outside the sandbox (gradacc_grader.trusted), from
what the report cells printed and from the student's cells run again on cases of its own,
and writes its scores and its own message into the gradebook and the test cells.
"""

from __future__ import annotations

import nbformat

from gradacc_grader.bank.core import Written
from gradacc_grader.draw import LETTERS, Asked, Release, Seeded

TEXT = {
    "en": {
        "how": (
            "**How to answer.** For each question, set `answer_...` in the cell below it to one "
            'letter, `"A"`, `"B"`, `"C"` or `"D"`: the variable, `=` and the letter in quotes, '
            "nothing else. Add cells of your own to compute whatever you need. After you submit, "
            "the grader reads the value each answer holds when its test cell runs and grades "
            "it outside the notebook; the cells marked as tests stay empty here. "
            "Before you submit, run *Kernel → Restart Kernel and Run All Cells*: the notebook "
            "must run from top to bottom without errors. Locked cells are put back as they were "
            "when nbgrader grades."
        ),
        "answer": 'Your answer: set answer_{id} to one letter, "A", "B", "C" or "D"',
        "test": "Graded outside this notebook: answer_{id} ({points} point).",
        "report": "This cell only reports your answer's value to the grader; it holds no test.",
        "exercise_test": (
            "Graded by the grader, outside this notebook: it runs {function} on cases of its "
            "own ({points} points)."
        ),
        "check": "Quick check (not graded): run it after your function. It catches common bugs.",
        "points": "{points} points",
        "question": "Question {number} ({points} point)",
        "setup": "Setup (locked): runs before any of your answers; nbgrader puts it back as it "
        "is when grading.",
        "setup_why": "One tiny training step: torch finishes its lazy imports (torch._dynamo, "
        "which an optimizer\n# imports on first use) now, before any other cell can change what "
        "they rely on.",
    },
    "yo": {
        "how": (
            "**Bí o ṣe lè dáhùn.** Fún ìbéèrè kọ̀ọ̀kan, nínú sẹ́ẹ̀lì tó wà nísàlẹ̀ rẹ̀, fi lẹ́tà kan "
            'sí `answer_...`: `"A"`, `"B"`, `"C"` tàbí `"D"` (orúkọ náà, `=` àti lẹ́tà náà nínú '
            "àmì ìtọ́kasí, lẹ́ẹ̀kan ṣoṣo). O lè fi sẹ́ẹ̀lì tìrẹ kún un láti ṣe ìṣirò. Àwọn ìdánwò "
            "tó farapamọ́ ni yóò máàkì ìdáhùn rẹ lẹ́yìn tí o bá fi ránṣẹ́. Kí o tó fi ránṣẹ́, ṣe "
            "`Kernel → Restart Kernel and Run All Cells`: gbogbo sẹ́ẹ̀lì gbọ́dọ̀ ṣiṣẹ́ láìsí "
            "àṣìṣe. nbgrader yóò dá àwọn sẹ́ẹ̀lì tí a tì padà bí wọ́n ṣe wà."
        ),
        "answer": 'Ìdáhùn rẹ: fi lẹ́tà kan sí answer_{id}: "A", "B", "C" tàbí "D"',
        "test": "Olùmáàkì ni yóò máàkì answer_{id}, ní ìta ìwé yìí ({points} máàkì).",
        "report": "Sẹ́ẹ̀lì yìí kàn sọ iye ìdáhùn rẹ fún olùmáàkì; kò ní ìdánwò kankan.",
        "exercise_test": (
            "Olùmáàkì ni yóò máàkì {function}, ní ìta ìwé yìí, lórí àpẹẹrẹ tirẹ̀ ({points} máàkì)."
        ),
        "check": "Àyẹ̀wò kíákíá (kò ní máàkì): ṣe é lẹ́yìn iṣẹ́ rẹ. Ó ń rí àwọn àṣìṣe tó wọ́pọ̀.",
        "points": "{points} máàkì",
        "question": "Ìbéèrè {number} ({points} máàkì)",
        "code_stub": "# Kọ kóòdù rẹ síbí\nraise NotImplementedError()",
        "text_stub": "Kọ ìdáhùn rẹ síbí",
        "setup": "Ìmúra sílẹ̀ (a ti tì í): ó ń ṣiṣẹ́ ṣáájú ìdáhùn rẹ kankan; nbgrader yóò dá a "
        "padà bí ó ṣe wà nígbà ìmáàkì.",
        "setup_why": "Ìmúdójúìwọ̀n kékeré kan: torch parí gbígbé àwọn module rẹ̀ wọlé "
        "(torch._dynamo,\n# tí optimizer ń gbé wọlé nígbà àkọ́kọ́) báyìí, kí sẹ́ẹ̀lì mìíràn tó "
        "lè yí ohun tí wọ́n gbára lé padà.",
    },
}

SETUP = """\
# {setup}
import torch

# {setup_why}
_model = torch.nn.Linear(1, 1)
_optimizer = torch.optim.SGD(_model.parameters(), lr=0.1, momentum=0.9)
torch.nn.functional.mse_loss(_model(torch.ones(1, 1)), torch.zeros(1, 1)).backward()
_optimizer.step()
del _model, _optimizer"""

REPORT = "gradacc-report"  # the first word of a report cell's line (gradacc_grader.trusted)


def _meta(grade_id: str, *, grade=False, solution=False, locked=False, points=None) -> dict:
    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
    }
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def _locked(kind: str, source: str, grade_id: str):
    make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    return make(source, metadata=_meta(grade_id, locked=True))


def _solution(source: str, indent: str = "") -> str:
    # nbgrader writes its stub at the markers' indentation: inside a function, the body's
    return f"{indent}### BEGIN SOLUTION\n{source}\n{indent}### END SOLUTION"


def _question_cells(asked: Asked, number: int, lang: str) -> list:
    """Prompt, answer cell and report cell (the test) of one multiple-choice question."""
    text, qid, points = TEXT[lang], asked.item.id, asked.item.points
    listed = "\n".join(f"- **{LETTERS[i]}.** {c.text}" for i, c in enumerate(asked.choices))
    heading = text["question"].format(number=number, points=points)
    prompt = f"### {heading}\n\n{asked.prompt}\n\n{listed}"
    answer = f"# {text['answer'].format(id=qid)}\n" + _solution(f'answer_{qid} = "{asked.letter}"')
    test = "\n".join(
        [
            f"# {text['test'].format(id=qid, points=points)}",
            "### BEGIN HIDDEN TESTS",
            f"# {text['report']}",
            # str's own repr: np.str_("D") reports 'D' (repr() gives np.str_('D')); anything
            # but a str raises, so reports nothing; "".__class__ even when `str` is reassigned
            f'print("{REPORT}", "answer_{qid}", "".__class__.__repr__(answer_{qid}))',
            "### END HIDDEN TESTS",
        ]
    )
    return [
        _locked("markdown", prompt, f"{qid}_prompt"),
        nbformat.v4.new_code_cell(answer, metadata=_meta(f"{qid}_answer", solution=True)),
        nbformat.v4.new_code_cell(
            test, metadata=_meta(f"{qid}_test", grade=True, locked=True, points=points)
        ),
    ]


def _exercise_cells(seeded: Seeded, lang: str) -> list:
    """Prompt, answer, quick check and test cell (it runs nothing) of one coding exercise."""
    item, text = seeded.item, TEXT[lang]
    function = _function_name(item.starter)
    answer = f"{item.starter}\n{_solution(item.solution, indent='    ')}"
    test = f"# {text['exercise_test'].format(function=function, points=item.points)}"
    prompt = item.prompt[lang].format(points=text["points"].format(points=item.points))
    return [
        _locked("markdown", prompt, f"{item.id}_prompt"),
        nbformat.v4.new_code_cell(answer, metadata=_meta(f"{item.id}_answer", solution=True)),
        _locked("code", f"# {text['check']}\n{item.check[lang]}", f"{item.id}_check"),
        nbformat.v4.new_code_cell(
            test, metadata=_meta(f"{item.id}_test", grade=True, locked=True, points=item.points)
        ),
    ]


def _function_name(starter: str) -> str:
    for line in starter.splitlines():
        if line.startswith("def "):
            return line[4:].split("(")[0]
    raise ValueError(f"the starter code defines no function: {starter[:80]!r}")


def _written_cells(item: Written, lang: str) -> list:
    """The prompt and the hand-graded answer cell (model answer and rubric in its source)."""
    rubric = "\n".join(f"- {line}" for line in item.rubric)
    source = (
        f"**Model answer.** {item.model_answer}\n\n**Rubric for the instructor ({item.points} "
        f"points; students never see this cell's source).**\n\n{rubric}"
    )
    meta = _meta(item.id, grade=True, solution=True, points=item.points)
    return [
        _locked("markdown", item.prompt[lang].format(points=item.points), f"{item.id}_prompt"),
        nbformat.v4.new_markdown_cell(source, metadata=meta),
    ]


def build_notebook(release: Release):
    """The source notebook of a release, ready for `nbgrader generate_assignment`.

    >>> from gradacc_grader.bank.lesson3 import LESSON3
    >>> from gradacc_grader.draw import draw_release
    >>> notebook = build_notebook(draw_release(LESSON3, b"s" * 64))
    >>> [c.metadata.nbgrader["grade_id"] for c in notebook.cells][:4]
    ['intro', 'setup', 'l3_running_share_prompt', 'l3_running_share_answer']
    """
    assignment, lang = release.assignment, release.lang
    intro = f"# {assignment.title[lang]}\n\n{assignment.intro[lang]}\n\n{TEXT[lang]['how']}"
    cells = [_locked("markdown", intro, "intro")]
    if any(isinstance(item, Seeded) for item in release.items):
        cells.append(_locked("code", SETUP.format(**TEXT[lang]), "setup"))
    numbers = iter(range(1, len(release.items) + 1))
    for item in release.items:
        if isinstance(item, Asked):
            cells += _question_cells(item, next(numbers), lang)
        elif isinstance(item, Seeded):
            cells += _exercise_cells(item, lang)
        else:
            cells += _written_cells(item, lang)
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata.kernelspec = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    notebook.metadata.language_info = {"name": "python"}
    for cell in notebook.cells:
        cell.pop("id", None)  # stable file: ids would change at every build
    notebook.nbformat_minor = 4
    return notebook
