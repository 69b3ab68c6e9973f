"""The final's coding exercise, FAQ 3 in code: write the accumulation loop.

The prompt (English and Yoruba), the starter, the solution and the partial one (a loop that
divides by N, wrong only on a shorter last window), and the quick check cell, which runs the
real code of `loop_check.py` on the student's function with messages in their language.
"""

from __future__ import annotations

from pathlib import Path

from .core import Exercise

LOOP_PROMPT = {
    "en": """\
### FAQ 3 in code: write the accumulation loop ({points})

Complete `train_with_accumulation(model, optimizer, loss_fn, micro_batches, accumulation_steps)`:

- `micro_batches` is a list of `(inputs, targets)` pairs, all micro-batches of the same size;
  `loss_fn(outputs, targets)` returns the mean loss over a micro-batch;
- clear the gradients before the first micro-batch: the model may hold leftover gradients;
- run the model on one micro-batch at a time (that is the point: memory holds one micro-batch);
- after each window of `accumulation_steps` micro-batches call `optimizer.step()`, then
  `optimizer.zero_grad()`;
- when the micro-batches run out in the middle of a window, step on that shorter last window
  too, weighted as a batch of its own samples; the function returns nothing.

Each window must make the same update as one batch holding all of its samples. Run the quick
check below your function: it catches the common bugs. The grader then trains models case
by case (whole windows, a shorter last window, leftover gradients), part of the points for each.""",
    "yo": """\
### FAQ 3 ní kóòdù: kọ lupu ìkójọpọ̀ ({points})

Parí `train_with_accumulation(model, optimizer, loss_fn, micro_batches, accumulation_steps)`:

- `micro_batches` jẹ́ àtòjọ àwọn méjì `(inputs, targets)`, gbogbo micro-batches ní ìwọ̀n kan
  náà; `loss_fn(outputs, targets)` ń dá àròpín ìpàdánù micro-batch kan padà;
- pa gradients rẹ́ ṣáájú micro-batch àkọ́kọ́: àwòṣe náà lè ní gradients tó kù;
- ṣiṣẹ́ àwòṣe náà lórí micro-batch kan ní ẹ̀ẹ̀kan (ìyẹn ni kókó: iranti ní micro-batch kan);
- lẹ́yìn fèrèsé kọ̀ọ̀kan ti micro-batches `accumulation_steps`, pe `optimizer.step()`, lẹ́yìn
  náà `optimizer.zero_grad()`;
- tí micro-batches bá tán láàrin fèrèsé kan, ṣe igbesẹ lórí fèrèsé kúkúrú tó kẹ́yìn náà, tí a
  wọ̀n bí batch ti àwọn àpẹẹrẹ tirẹ̀; iṣẹ́ náà kò dá nǹkan padà.

Fèrèsé kọ̀ọ̀kan gbọ́dọ̀ ṣe ìmúdójúìwọ̀n kan náà bí batch kan tó ní gbogbo àwọn àpẹẹrẹ rẹ̀. Ṣe
àyẹ̀wò kíákíá nísàlẹ̀ iṣẹ́ rẹ: ó ń rí àwọn àṣìṣe tó wọ́pọ̀. Ìdánwò tó farapamọ́ yóò kọ́ àwọn àwòṣe
ní ọ̀kọ̀ọ̀kan (fèrèsé kíkún, fèrèsé kúkúrú tó kẹ́yìn, gradients tó kù), apá kan máàkì fún ọ̀kọ̀ọ̀kan.""",
}

LOOP_STARTER = '''\
def train_with_accumulation(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    """Train on micro_batches, one optimizer step per window of accumulation_steps."""'''

LOOP_SOLUTION = """\
    optimizer.zero_grad()  # leftover gradients would leak into the first step
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        for inputs, targets in window:
            loss = loss_fn(model(inputs), targets)
            # .grad adds up the window's gradients: a SUM. Each loss is a mean over an
            # equal share of the window, so divide by the window's length to get its mean.
            (loss / len(window)).backward()
        optimizer.step()
        optimizer.zero_grad()"""

LOOP_PARTIAL = LOOP_SOLUTION.replace("(loss / len(window))", "(loss / accumulation_steps)")

# The quick check is real code in loop_check.py; the cell gets its text and one call.
LOOP_CHECK = Path(__file__).with_name("loop_check.py").read_text(encoding="utf-8")
LOOP_CHECK = LOOP_CHECK[LOOP_CHECK.index("\nimport torch\n") + 1 :]  # after the docstring


def _loop_check(lang: str) -> str:
    """The check cell's code: the check, then a call on the student's function."""
    return f"{LOOP_CHECK}\n\n_quick_check(train_with_accumulation, {LOOP_MESSAGES[lang]!r})"


LOOP_MESSAGES = {
    "en": {
        "every": "optimizer.step() ran after every micro-batch: step once per window of "
        "accumulation_steps micro-batches",
        "count": "optimizer.step() ran {} times for 2 windows of 2 micro-batches: once per window",
        "after": "gradients were left in .grad after the last step: clear them after each step",
        "divide": "each window moved the weights twice as far as one batch of its samples: each "
        "loss is a mean, so the window's gradients add up to N times the mean",
        "leftover": "the leftover gradient in .grad joined the first step: clear the gradients "
        "before the first micro-batch",
        "other": "the weights differ from one full-batch step per window",
        "passed": "Quick check passed: 2 windows of 2 micro-batches, leftover gradients. The "
        "grader tries other sizes, a shorter last window too.",
    },
    "yo": {
        "every": "optimizer.step() ṣiṣẹ́ lẹ́yìn micro-batch kọ̀ọ̀kan: ṣe igbesẹ lẹ́ẹ̀kan fún fèrèsé "
        "kọ̀ọ̀kan ti micro-batches accumulation_steps",
        "count": "optimizer.step() ṣiṣẹ́ ní ìgbà {} fún fèrèsé 2 ti micro-batches 2: lẹ́ẹ̀kan "
        "fún fèrèsé kọ̀ọ̀kan",
        "after": "gradients kù nínú .grad lẹ́yìn igbesẹ tó kẹ́yìn: pa wọ́n rẹ́ lẹ́yìn igbesẹ kọ̀ọ̀kan",
        "divide": "fèrèsé kọ̀ọ̀kan yí àwọn ìwọ̀n padà ní ìlọ́po méjì ti batch kan: ìpàdánù "
        "kọ̀ọ̀kan jẹ́ àròpín, nítorí náà gradients fèrèsé kó jọ sí ìlọ́po N ti àròpín",
        "leftover": "gradient tó kù nínú .grad wọ igbesẹ àkọ́kọ́: pa gradients rẹ́ ṣáájú "
        "micro-batch àkọ́kọ́",
        "other": "àwọn ìwọ̀n yàtọ̀ sí igbesẹ batch kíkún kan fún fèrèsé kọ̀ọ̀kan",
        "passed": "Àyẹ̀wò kíákíá yege: fèrèsé 2 ti micro-batches 2, gradients tó kù. Ìdánwò tó "
        "farapamọ́ yóò gbìyànjú àwọn ìwọ̀n mìíràn, fèrèsé kúkúrú tó kẹ́yìn náà.",
    },
}

LOOP = Exercise(
    id="faq3_loop",
    module="window_loop",
    goal="the accumulation loop (whole windows, short last window, leftover gradients)",
    prompt=LOOP_PROMPT,
    starter=LOOP_STARTER,
    solution=LOOP_SOLUTION,
    check={lang: _loop_check(lang) for lang in LOOP_MESSAGES},
    partial=LOOP_PARTIAL,
    partial_fails=("a short last window",),
)
