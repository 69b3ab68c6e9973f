"""Exercises: the learner writes the code a lesson teaches, and a check names what is wrong.

Each lesson's module (`lesson1`, `lesson2`, ...) holds its exercises, each an `Exercise`
(`runner.py`) with `check(your_function)`, `hint()` and `solution()`. The messages, in
English and Yorùbá, are in `words.py`.
"""

from gradacc_lessons.exercises.lesson1 import ACCUMULATION_LOOP, WINDOW_END
from gradacc_lessons.exercises.lesson2 import SCHEDULE_AND_CLIP, TOKEN_WINDOW, UNEVEN_WINDOW
from gradacc_lessons.exercises.lesson3 import ACCUMULATION_SAFE
from gradacc_lessons.exercises.lesson4 import LARGEST_MICRO_BATCH, PREDICT_PEAK
from gradacc_lessons.exercises.lesson5 import SCHEDULE_LENGTH
from gradacc_lessons.exercises.lesson7 import FRAMEWORK_ARGUMENTS
from gradacc_lessons.exercises.lesson9 import READ_A_PLAN
from gradacc_lessons.exercises.runner import Exercise, Verdict

# Every exercise of the course, in lesson order: lesson 8's score counts them.
EXERCISES: dict[str, Exercise] = {
    e.id: e
    for e in (
        WINDOW_END,
        ACCUMULATION_LOOP,
        UNEVEN_WINDOW,
        TOKEN_WINDOW,
        SCHEDULE_AND_CLIP,
        ACCUMULATION_SAFE,
        PREDICT_PEAK,
        LARGEST_MICRO_BATCH,
        SCHEDULE_LENGTH,
        FRAMEWORK_ARGUMENTS,
        READ_A_PLAN,
    )
}

__all__ = ["EXERCISES", "Exercise", "Verdict"]
