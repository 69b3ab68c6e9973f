"""gradacc_grader: the instructor's side of the gradacc course.

It builds the nbgrader assignments from the graded question bank (`build`), keeps
grading fair (`guards`: nbgrader preprocessors), and grades a class with each
student's code in a bubblewrap sandbox (`grading`, `sandbox`), re-checking the answers
outside it (`trusted`); a submission holds regular files only (`submissions`), and each
student is graded apart, then merged into the course (`results`). The scripts in
`inside/` run inside the sandbox. It issues certificates with a verifiable ID from the
gradebook (`certify`, `certificates/`). Students never install this package: their
lessons need only `gradacc_lessons`.
"""
