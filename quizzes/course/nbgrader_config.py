# nbgrader configuration of the gradacc course: every setting, and why, is in
# gradacc_grader/settings.py (the instructor's guide, quizzes/README.md, has the table). Run
# nbgrader from this folder with the course's environment on PATH; lines after configure(c)
# override a setting.
from gradacc_grader.private import use_private_umask
from gradacc_grader.settings import configure

c = get_config()  # noqa: F821 (nbgrader defines get_config when it reads this file)
configure(c)
# What this nbgrader command writes (gradebook, autograded copies, feedback, exports) holds
# answers or grades: readable by you only, whatever your umask (gradacc_grader/private.py).
use_private_umask()
