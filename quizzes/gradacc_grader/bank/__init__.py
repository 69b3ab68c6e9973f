"""The graded question bank: one assignment per lesson and the FAQ final (instructors only).

These questions are not the lessons' self-checks: they share their goals, with other wording
and numbers that each course's secret draws. A lesson that `gradacc_lessons.lessons` marks
`graded` has its assignment here, in lessonN.py as `LESSONN`; the FAQ final comes last.
"""

import importlib

from gradacc_grader.bank.faq import FAQ
from gradacc_lessons.lessons import LESSONS

ASSIGNMENTS = (
    *(
        getattr(
            importlib.import_module(f"{__name__}.lesson{lesson.number}"), f"LESSON{lesson.number}"
        )
        for lesson in LESSONS
        if lesson.graded
    ),
    FAQ,
)
