"""Build the nbgrader quiz `gradacc_faq` from the question bank.

Run `python -m gradacc_grader.build` from the repository root.

The source notebook `quizzes/source/gradacc_faq/gradacc_faq.ipynb` is generated
here and committed; a test checks that the committed file equals a fresh build,
so the question bank and the quiz never drift apart.

Layout of the notebook, in the FAQ's order (grade ids in brackets):

- a locked setup cell [setup] that runs before any student code and snapshots
  what the hidden tests rely on (Python's builtins, the parts of torch they use);
- for each FAQ item k: its question [faqk_prompt], the answer cell [faqk_answer]
  setting `answer_faqk` to one letter, and a hidden test [faqk_test], 1 point;
- after FAQ 3, the coding exercise: its text [loop_prompt], the function
  `train_with_accumulation` [loop_answer] and its hidden test [loop_test], 3 points;
- with FAQ 5, a written answer [faq5_written], 2 points, graded by hand. Its
  source holds a model answer and the rubric; nbgrader replaces the whole cell
  with "YOUR ANSWER HERE" in the student version, so students never see them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

from gradacc_lessons.quiz.questions import LETTERS, Question, faq_questions

ASSIGNMENT = "gradacc_faq"
SOURCE = Path("quizzes") / "course" / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
CHOICES = 4  # every graded question has choices A-D
LOOP_POINTS = 3
WRITTEN_POINTS = 2

INTRO = """\
# Quiz: the gradient accumulation FAQ

One question per FAQ item, in the FAQ's order, a short coding exercise on FAQ 3 and a written
answer on FAQ 5.

- **Multiple choice**: in the cell below each question, set `answer_faq1` ... `answer_faq5` to one
  letter, `"A"`, `"B"`, `"C"` or `"D"`: the variable, `=`, and the letter in quotes, nothing else.
- **Coding exercise** (FAQ 3): complete `train_with_accumulation`.
- **Written answer** (FAQ 5): a few sentences in your own words, graded by hand.

Hidden tests grade your answers after you submit; the cells marked as tests stay empty here.
Before you submit, run *Kernel → Restart Kernel and Run All Cells*: the notebook must run from top
to bottom without errors. Do not edit or delete the locked cells: nbgrader puts them back as they
were when it grades."""

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
        "torch.optim",
        "torch.optim.optimizer",
        "torch.optim.sgd",
        "torch.autograd",
        "torch.autograd.graph",
        "torch._tensor",
    )
)
_GRADACC_CLASSES = (
    torch.Tensor,
    torch.nn.Parameter,
    torch.nn.Module,
    torch.nn.Linear,
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

MC_TEST = """\
# Hidden test: checks answer_faq{k} ({points} point).
### BEGIN HIDDEN TESTS
# The real str type comes from a literal ('' is always a str), not from a name the notebook
# could rebind; a str subclass or an object whose __eq__ always says yes is not a plain str.
_gradacc_answer = answer_faq{k}
assert "".__class__.__class__(_gradacc_answer) is "".__class__, (
    'answer_faq{k} must be a plain string: one letter, "A", "B", "C" or "D"'
)
assert _gradacc_answer == "{letter}", "answer_faq{k} is not the right choice"
### END HIDDEN TESTS"""

LOOP_PROMPT = """\
## FAQ 3 in code: write the accumulation loop

Complete `train_with_accumulation(model, optimizer, loss_fn, micro_batches, accumulation_steps)`:

- `micro_batches` is a list of `(inputs, targets)` pairs, all micro-batches of the same size;
- clear the gradients before the first micro-batch: the model may hold leftover gradients;
- run the model on one micro-batch at a time (that is the point: memory holds one micro-batch);
- after each window of `accumulation_steps` micro-batches call `optimizer.step()`, then
  `optimizer.zero_grad()`;
- when the micro-batches run out in the middle of a window, step on that shorter last window too,
  weighted as a batch of its own samples;
- `loss_fn(outputs, targets)` returns the mean loss over a micro-batch;
- the function returns nothing.

Each window must make the same update as one batch holding all of its samples. The hidden test
compares your parameters with that full-batch training, for several values of
`accumulation_steps` ({points} points)."""

LOOP_ANSWER = '''\
def train_with_accumulation(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    """Train on micro_batches, one optimizer step per window of accumulation_steps."""
    ### BEGIN SOLUTION
    optimizer.zero_grad()  # leftover gradients would leak into the first step
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        for inputs, targets in window:
            loss = loss_fn(model(inputs), targets)
            # .grad adds up the window's gradients: a SUM. Each loss is a mean over an
            # equal share of the window, so divide by the window's length to get its mean.
            (loss / len(window)).backward()
        optimizer.step()
        optimizer.zero_grad()
    ### END SOLUTION'''

LOOP_TEST = """\
# A quick check you can run: one window of two micro-batches must move the parameters and
# leave the gradients cleared. The hidden test compares with full-batch training.
_model = torch.nn.Linear(3, 1)
_start = [p.detach().clone() for p in _model.parameters()]
_batches = [(torch.ones(2, 3), torch.zeros(2, 1)), (-torch.ones(2, 3), torch.ones(2, 1))]
_optimizer = torch.optim.SGD(_model.parameters(), lr=0.1)
train_with_accumulation(_model, _optimizer, torch.nn.MSELoss(), _batches, 2)
assert any(not torch.equal(p, q) for p, q in zip(_model.parameters(), _start)), "no step was made"
assert all(p.grad is None or not p.grad.any() for p in _model.parameters()), "clear after a step"


### BEGIN HIDDEN TESTS
def _gradacc_untouched():
    # Nothing the check uses was replaced since the setup cell ran. Only types taken from
    # literals and the methods of the snapshot's own dicts are used here.
    _type = "".__class__.__class__
    assert _type(_gradacc_snapshot) is ().__class__, "the setup cell's snapshot was replaced"
    for _space, _before, _exact in _gradacc_snapshot:
        assert _type(_before) is {}.__class__, "the setup cell's snapshot was replaced"
        _now = _space.__dict__
        for _name, _value in _before.items():
            assert _name in _now and _now[_name] is _value, (
                "the notebook replaced " + _space.__name__ + "." + _name + ": no marks for the loop"
            )
        assert not _exact or _now.__len__() == _before.__len__(), (
            "the notebook added attributes to " + _space.__name__ + ": no marks for the loop"
        )


_gradacc_torch = _gradacc_snapshot[1][0]


def _gradacc_case(steps, count, seed):
    # A float64 model, `count` micro-batches of 2 samples, and the reference: every window
    # concatenated into one batch, one backward, one step (computed before student code runs).
    _torch = _gradacc_torch
    generator = _torch.Generator().manual_seed(seed)
    batches = [
        (
            _torch.randn(2, 3, generator=generator, dtype=_torch.float64),
            _torch.randn(2, 2, generator=generator, dtype=_torch.float64),
        )
        for _ in range(count)
    ]
    start = [
        _torch.randn(2, 3, generator=generator, dtype=_torch.float64),
        _torch.randn(2, generator=generator, dtype=_torch.float64),
    ]
    reference = _torch.nn.Linear(3, 2, dtype=_torch.float64)
    with _torch.no_grad():
        for p, value in zip(reference.parameters(), start):
            p.copy_(value)
    optimizer = _torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    for first in range(0, count, steps):
        window = batches[first : first + steps]
        inputs = _torch.cat([x for x, _ in window])
        targets = _torch.cat([y for _, y in window])
        optimizer.zero_grad()
        _torch.nn.functional.mse_loss(reference(inputs), targets).backward()
        optimizer.step()
    return batches, start, [p.detach().clone() for p in reference.parameters()]


def _gradacc_check(steps, count, seed):
    _torch = _gradacc_torch
    _gradacc_untouched()
    batches, start, expected = _gradacc_case(steps, count, seed)
    model = _torch.nn.Linear(3, 2, dtype=_torch.float64)
    with _torch.no_grad():
        for p, value in zip(model.parameters(), start):
            p.copy_(value)
            p.grad = _torch.full_like(p, 7.0)  # leftover gradients from an earlier run
    sizes = []
    model.register_forward_pre_hook(lambda module, args: sizes.append(len(args[0])))
    optimizer = _torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    copies = [(x.clone(), y.clone()) for x, y in batches]
    train_with_accumulation(model, optimizer, _torch.nn.MSELoss(), copies, steps)
    _gradacc_untouched()
    case = f"accumulation_steps={steps} with {count} micro-batches"
    assert max(sizes, default=0) <= 2, f"{case}: run the model on one micro-batch at a time"
    for p in model.parameters():
        assert p.grad is None or not p.grad.any(), f"{case}: gradients left after the last step"
    for p, q in zip(model.parameters(), expected):
        error = (p.detach() - q).abs().max().item()
        # float64: accumulated and full-batch updates agree to ~1e-16 (measured-facts.md)
        assert error <= 1e-10 * q.abs().max().item() + 1e-12, (
            f"{case}: the parameters differ from one full-batch step per window by {error:.2g}"
        )


# several N, windows that divide the micro-batches, a shorter last window, a single short one
for _steps, _count, _seed in [(1, 3, 1), (2, 4, 2), (3, 7, 3), (4, 6, 4), (5, 3, 5)]:
    _gradacc_check(_steps, _count, _seed)
### END HIDDEN TESTS"""

WRITTEN_PROMPT = """\
### FAQ 5, in your own words ({points} points, graded by hand)

In the cell below, explain in three to five sentences why four micro-batches through a model with
BatchNorm give different gradients from one batch of the same total size, even when every loss
is weighted correctly, and name one way to make accumulation match the full batch."""

RUBRIC = """\
**Model answer.** {explanation} In training mode BatchNorm normalises each micro-batch with the
mean and variance of that micro-batch alone, so the forward pass (activations, loss) is not the
full batch's, and the gradients cannot match whatever the loss weighting. Layers that normalise
each sample on its own (GroupNorm, LayerNorm), BatchNorm in eval mode (frozen statistics), or
micro-batches large enough that their statistics are close to the batch's make it match (the
first two exactly).

**Rubric for the instructor ({points} points; students never see this cell's source).**

- 1 point: BatchNorm's statistics (mean and variance) are computed per micro-batch in training
  mode, so the forward computation itself differs from the full batch (the outputs/loss differ,
  not only the bookkeeping of the gradients).
- 1 point: one correct remedy or consequence: per-sample normalisation (GroupNorm, LayerNorm),
  BatchNorm frozen or in eval mode, or larger micro-batches to shrink the gap; or that no loss
  scaling can fix it.
- 0 points for: "the loss was not divided by N", "float32 rounding", or "momentum" as the cause.
- Mentioning that the running statistics get four momentum updates instead of one is correct but
  not required; it earns no extra point."""


def _cell_meta(grade_id: str, *, grade=False, solution=False, locked=False, points=None) -> dict:
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


def _read_only(kind: str, source: str, grade_id: str):
    make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    return make(source, metadata=_cell_meta(grade_id, locked=True))


def _choices(question: Question) -> str:
    if len(question.choices) != CHOICES:
        raise ValueError(
            f"question {question.id!r} has {len(question.choices)} choices; the nbgrader quiz "
            f"needs exactly {CHOICES} (A-D): give it four choices in questions.py"
        )
    return "\n".join(f"- **{letter}.** {text}" for letter, text in zip(LETTERS, question.choices))


def _question_cells(question: Question) -> list:
    """The prompt, the answer cell and the hidden test of one FAQ question."""
    k = question.faq
    prompt = f"## FAQ {k}\n\n{question.prompt}\n\n{_choices(question)}"
    answer = (
        f'# Your answer: set answer_faq{k} to one letter, "A", "B", "C" or "D" (a plain string)\n'
        f'### BEGIN SOLUTION\nanswer_faq{k} = "{question.letter}"\n### END SOLUTION'
    )
    test = MC_TEST.format(k=k, points=1, letter=question.letter)
    return [
        _read_only("markdown", prompt, f"faq{k}_prompt"),
        nbformat.v4.new_code_cell(answer, metadata=_cell_meta(f"faq{k}_answer", solution=True)),
        nbformat.v4.new_code_cell(
            test, metadata=_cell_meta(f"faq{k}_test", grade=True, locked=True, points=1)
        ),
    ]


def _loop_cells() -> list:
    """The coding exercise on FAQ 3: text, function to complete, hidden test."""
    return [
        _read_only("markdown", LOOP_PROMPT.format(points=LOOP_POINTS), "loop_prompt"),
        nbformat.v4.new_code_cell(LOOP_ANSWER, metadata=_cell_meta("loop_answer", solution=True)),
        nbformat.v4.new_code_cell(
            LOOP_TEST,
            metadata=_cell_meta("loop_test", grade=True, locked=True, points=LOOP_POINTS),
        ),
    ]


def _written_cell(question: Question):
    """The hand-graded answer on FAQ 5; its source (model answer, rubric) never reaches students."""
    text = RUBRIC.format(explanation=question.explanation, points=WRITTEN_POINTS)
    meta = _cell_meta("faq5_written", grade=True, solution=True, points=WRITTEN_POINTS)
    return nbformat.v4.new_markdown_cell(text, metadata=meta)


def build_notebook():
    """The source notebook of `gradacc_faq`, built from the question bank.

    >>> nb = build_notebook()
    >>> [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if c.metadata["nbgrader"]["grade"]]
    ['faq1_test', 'faq2_test', 'faq3_test', 'loop_test', 'faq4_test', 'faq5_test', 'faq5_written']
    """
    cells = [_read_only("markdown", INTRO, "intro"), _read_only("code", SETUP, "setup")]
    for question in faq_questions():
        prompt, answer, test = _question_cells(question)
        if question.faq == 5:
            # the written question shares the prompt cell: a restored written cell then
            # follows a grade cell, where nbgrader knows where to put it back
            prompt.source += "\n\n" + WRITTEN_PROMPT.format(points=WRITTEN_POINTS)
        cells += [prompt, answer, test]
        if question.faq == 3:
            cells += _loop_cells()
        if question.faq == 5:
            cells.append(_written_cell(question))
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


def notebook_text() -> str:
    """The source notebook as the exact text committed in the repository."""
    return nbformat.writes(build_notebook(), version=4) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the source notebook under quizzes/course/ of the repository at `argv[0]` (or here)."""
    root = Path(argv[0]) if argv else Path(".")
    path = root / SOURCE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(notebook_text(), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
