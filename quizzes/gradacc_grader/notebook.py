"""Turn a drawn release into the instructor's source notebook for nbgrader.

Cells, with their grade ids (nbgrader 0.9, metadata schema 3):

- `intro` (locked markdown) and, when the assignment has coding exercises, a locked `setup`
  cell that runs before any student code and snapshots what the hidden tests rely on;
- per multiple-choice question `q`: `q_prompt` (locked markdown), `q_answer` (the student sets
  `answer_q` to a letter) and `q_test` (hidden test; a wrong letter fails with that choice's
  explanation from the bank);
- per coding exercise `e`: `e_prompt`, `e_answer` (the function to write), `e_check` (a locked
  quick check the student can run; never graded) and `e_test` (hidden: the exercise's module
  grades the function case by case and the cell's last value is the partial credit);
- per written answer `w`: `w_prompt` and `w` (markdown, graded by hand; its source holds the
  model answer and the rubric, which nbgrader replaces by "YOUR ANSWER HERE" in the release).
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from gradacc_grader.bank.core import Written
from gradacc_grader.draw import LETTERS, Asked, Release, Seeded

INSIDE = Path(__file__).resolve().parent / "inside"

TEXT = {
    "en": {
        "how": (
            "**How to answer.** For each question, set `answer_...` in the cell below it to one "
            'letter, `"A"`, `"B"`, `"C"` or `"D"`: the variable, `=` and the letter in quotes, '
            "nothing else, once. Add cells of your own to compute whatever you need. Hidden tests "
            "grade your answers after you submit; the cells marked as tests stay empty here. "
            "Before you submit, run *Kernel → Restart Kernel and Run All Cells*: the notebook "
            "must run from top to bottom without errors. Locked cells are put back as they were "
            "when nbgrader grades."
        ),
        "answer": 'Your answer: set answer_{id} to one letter, "A", "B", "C" or "D"',
        "plain": 'answer_{id} must be a plain string: one letter, "A", "B", "C" or "D"',
        "letter": 'answer_{id} must be one letter: "A", "B", "C" or "D"',
        "right": "Right:",
        "test": "Hidden test: checks answer_{id} ({points} point).",
        "exercise_test": "Hidden test: grades {function} case by case ({points} points).",
        "check": "Quick check (not graded): run it after your function. It catches common bugs.",
        "points": "{points} points",
        "question": "Question {number} ({points} point)",
    },
    "yo": {
        "how": (
            "**Bí o ṣe le dáhùn.** Fún ìbéèrè kọ̀ọ̀kan, nínú sẹ́ẹ̀lì tó wà nísàlẹ̀ rẹ̀, fi lẹ́tà kan "
            'sí `answer_...`: `"A"`, `"B"`, `"C"` tàbí `"D"` (orúkọ náà, `=` àti lẹ́tà náà nínú '
            "àmì ìtọ́kasí, lẹ́ẹ̀kan ṣoṣo). O lè fi sẹ́ẹ̀lì tìrẹ kún un láti ṣe ìṣirò. Àwọn ìdánwò "
            "tó farapamọ́ ni yóò máàkì ìdáhùn rẹ lẹ́yìn tí o bá fi ránṣẹ́. Kí o tó fi ránṣẹ́, ṣe "
            "*Kernel → Restart Kernel and Run All Cells*: gbogbo sẹ́ẹ̀lì gbọ́dọ̀ ṣiṣẹ́ láìsí "
            "àṣìṣe. nbgrader yóò dá àwọn sẹ́ẹ̀lì tí a tì padà bí wọ́n ṣe wà."
        ),
        "answer": 'Ìdáhùn rẹ: fi lẹ́tà kan sí answer_{id}: "A", "B", "C" tàbí "D"',
        "plain": 'answer_{id} gbọ́dọ̀ jẹ́ ọ̀rọ̀ lásán: lẹ́tà kan, "A", "B", "C" tàbí "D"',
        "letter": 'answer_{id} gbọ́dọ̀ jẹ́ lẹ́tà kan: "A", "B", "C" tàbí "D"',
        "right": "Ó tọ̀nà:",
        "test": "Ìdánwò tó farapamọ́: ó ṣàyẹ̀wò answer_{id} ({points} máàkì).",
        "exercise_test": "Ìdánwò tó farapamọ́: ó máàkì {function} ní ọ̀kọ̀ọ̀kan ({points} máàkì).",
        "check": "Àyẹ̀wò kíákíá (kò ní máàkì): ṣe é lẹ́yìn iṣẹ́ rẹ. Ó ń rí àwọn àṣìṣe tó wọ́pọ̀.",
        "points": "{points} máàkì",
        "question": "Ìbéèrè {number} ({points} máàkì)",
    },
}

SETUP = """\
# Setup (locked): runs before any of your answers; nbgrader puts it back as it is when grading.
# It snapshots Python's builtins and the parts of torch that the hidden tests use. The tests
# compare them with this snapshot, so a notebook that replaces any of them
# (torch.allclose = ..., builtins.isinstance = ...) fails those tests instead of fooling them.
import importlib

import torch

_GRADACC_MODULES = tuple(
    importlib.import_module(name)
    for name in (
        "builtins",
        "torch",
        "torch.nn",
        "torch.nn.functional",
        "torch.nn.modules.module",
        "torch.nn.modules.batchnorm",
        "torch.optim",
        "torch.optim.optimizer",
        "torch.optim.sgd",
        "torch.autograd",
        "torch.autograd.graph",
        "torch._tensor",
        "contextlib",
    )
)
_GRADACC_CLASSES = (
    torch.Tensor,
    torch.nn.Parameter,
    torch.nn.Module,
    torch.nn.Linear,
    torch.nn.Embedding,
    torch.nn.BatchNorm1d,
    torch.nn.modules.batchnorm._BatchNorm,
    torch.nn.MSELoss,
    torch.optim.Optimizer,
    torch.optim.SGD,
    torch.Generator,
)
# One tiny training step first: torch finishes its lazy imports, which rebind a few of its own
# functions (torch.manual_seed, ...), before the snapshot is taken.
_model = torch.nn.Linear(1, 1)
_optimizer = torch.optim.SGD(_model.parameters(), lr=0.1, momentum=0.9)
torch.nn.functional.mse_loss(_model(torch.ones(1, 1)), torch.zeros(1, 1)).backward()
_optimizer.step()
_optimizer.zero_grad()
_GRADACC_REBOUND = ("input", "getpass", "get_ipython", "exit", "quit", "display", "_", "__", "___")


def _gradacc_attributes(namespace):
    # IPython and ipykernel rebind a few builtins at every cell: those are left out
    return {k: v for k, v in vars(namespace).items() if k not in _GRADACC_REBOUND}


# (namespace, copy of its attributes, whether new attributes count as tampering too)
_gradacc_snapshot = tuple(
    [(module, _gradacc_attributes(module), False) for module in _GRADACC_MODULES]
    + [(cls, _gradacc_attributes(cls), True) for cls in _GRADACC_CLASSES]
)"""

UNTOUCHED = """\
def _gradacc_untouched():
    # Nothing the grading uses was replaced since the setup cell ran. Only types taken from
    # literals and the methods of the snapshot's own dicts are used here.
    _type = "".__class__.__class__
    assert _type(_gradacc_snapshot) is ().__class__, "the setup cell's snapshot was replaced"
    for _space, _before, _exact in _gradacc_snapshot:
        assert _type(_before) is {}.__class__, "the setup cell's snapshot was replaced"
        _now = _space.__dict__
        for _name, _value in _before.items():
            assert _name in _now and _now[_name] is _value, (
                "the notebook replaced " + _space.__name__ + "." + _name + ": no marks here"
            )
        assert not _exact or _now.__len__() == _before.__len__(), (
            "the notebook added attributes to " + _space.__name__ + ": no marks here"
        )
    _builtins = _gradacc_snapshot[0][1]
    assert _builtins["__import__"]("torch") is _gradacc_snapshot[1][0], "torch was replaced"
"""


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
    """Prompt, answer cell and hidden test of one multiple-choice question."""
    text, qid, points = TEXT[lang], asked.item.id, asked.item.points
    listed = "\n".join(f"- **{LETTERS[i]}.** {c.text}" for i, c in enumerate(asked.choices))
    heading = text["question"].format(number=number, points=points)
    prompt = f"### {heading}\n\n{asked.prompt}\n\n{listed}"
    answer = f"# {text['answer'].format(id=qid)}\n" + _solution(f'answer_{qid} = "{asked.letter}"')
    whys = "\n".join(f"    {LETTERS[i]!r}: {c.why!r}," for i, c in enumerate(asked.choices))
    test = "\n".join(
        [
            f"# {text['test'].format(id=qid, points=points)}",
            "### BEGIN HIDDEN TESTS",
            f"_gradacc_answer = answer_{qid}",
            "# The real str type comes from a literal, not from a name the notebook could rebind.",
            '_gradacc_plain = "".__class__.__class__(_gradacc_answer) is "".__class__',
            f"assert _gradacc_plain, {text['plain'].format(id=qid)!r}",
            f"_gradacc_why = {{\n{whys}\n}}",
            "_gradacc_letter = _gradacc_answer.strip().upper()",
            "_gradacc_wrong = _gradacc_why.get(",
            f"    _gradacc_letter, {text['letter'].format(id=qid)!r}",
            ")",
            f'assert _gradacc_letter == "{asked.letter}", _gradacc_wrong',
            f'print({text["right"]!r}, _gradacc_why["{asked.letter}"])',
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


def _module_source(module: str) -> str:
    """The text of `inside/<module>.py`, checked fit to be pasted into a hidden test."""
    source = (INSIDE / f"{module}.py").read_text(encoding="utf-8")
    if "'''" in source or "HIDDEN TESTS" in source or "BEGIN SOLUTION" in source:
        raise ValueError(f"inside/{module}.py cannot be pasted into a hidden test: it holds ''' ")
    return source


def _exercise_cells(seeded: Seeded, lang: str) -> list:
    """Prompt, answer, quick check and hidden test of one coding exercise."""
    item, text = seeded.item, TEXT[lang]
    function = _function_name(item.starter)
    answer = f"{item.starter}\n{_solution(item.solution, indent='    ')}"
    test = "\n".join(
        [
            f"# {text['exercise_test'].format(function=function, points=item.points)}",
            "### BEGIN HIDDEN TESTS",
            UNTOUCHED,
            f"_gradacc_source = r'''{_module_source('scoring')}'''",
            '_gradacc_scoring = {"__name__": "gradacc_scoring"}',
            "exec(_gradacc_source, _gradacc_scoring)",
            f"_gradacc_source = r'''{_module_source(item.module)}'''",
            f'_gradacc_module = {{"__name__": "gradacc_{item.module}"}}',
            "exec(_gradacc_source, _gradacc_module)",
            "_gradacc_untouched()",
            f'_gradacc_points = _gradacc_scoring["grade"](_gradacc_module, {function}, '
            f'{seeded.seed}, {item.points}, "{lang}")',
            "_gradacc_untouched()",
            "_gradacc_points",
            "### END HIDDEN TESTS",
        ]
    )
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
        cells.append(_locked("code", SETUP, "setup"))
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
