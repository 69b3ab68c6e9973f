"""The graded question bank: one assignment per lesson and the FAQ final (instructors only).

These questions are not the lessons' self-checks: they share their goals, with other wording
and numbers that each course's secret draws.
"""

from gradacc_grader.bank.faq import FAQ
from gradacc_grader.bank.lesson1 import LESSON1
from gradacc_grader.bank.lesson2 import LESSON2
from gradacc_grader.bank.lesson3 import LESSON3
from gradacc_grader.bank.lesson4 import LESSON4
from gradacc_grader.bank.lesson5 import LESSON5
from gradacc_grader.bank.lesson6 import LESSON6

ASSIGNMENTS = (LESSON1, LESSON2, LESSON3, LESSON4, LESSON5, LESSON6, FAQ)
