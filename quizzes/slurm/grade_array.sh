#!/bin/bash
# Grade a class on a Slurm cluster: one array task per student who submitted the assignment,
# each into its own results folder; one `gradacc-grade --merge` afterwards writes them all into
# the course. Run from the repository root (the course folder and the venv on a shared file
# system, at the same path on every node). quizzes/GRADING.md explains each step.
#
#   quizzes/slurm/grade_array.sh gradacc_faq --list > students.txt
#   sbatch --array=1-$(wc -l < students.txt)%20 quizzes/slurm/grade_array.sh gradacc_faq students.txt
#   .venv/bin/gradacc-grade --course quizzes/course gradacc_faq --merge results/gradacc_faq
#
# COURSE (quizzes/course), RESULTS (results/<assignment>) and GRADE (.venv/bin/gradacc-grade)
# change where it looks.
#SBATCH --job-name=gradacc-grade
#SBATCH --cpus-per-task=1
#SBATCH --mem=6G
#SBATCH --time=00:15:00
set -euo pipefail

usage() {
    echo "usage: grade_array.sh ASSIGNMENT --list          (the students to grade, one a line)" >&2
    echo "       grade_array.sh ASSIGNMENT STUDENTS_FILE   (as a Slurm array task)" >&2
    exit 2
}
[ $# -eq 2 ] || usage
ASSIGNMENT=$1
COURSE=${COURSE:-quizzes/course}
RESULTS=${RESULTS:-results/$ASSIGNMENT}
GRADE=${GRADE:-.venv/bin/gradacc-grade}

# Only the students with a submission of THIS assignment: `ls submitted` would list everyone
# who handed in anything, and grading a student without this assignment fails.
if [ "$2" = "--list" ]; then
    for folder in "$COURSE"/submitted/*/"$ASSIGNMENT"/; do
        [ -d "$folder" ] || continue # no submission at all: the pattern stays as written
        basename "$(dirname "$folder")"
    done
    exit 0
fi

STUDENTS=$2
if [ -z "${SLURM_ARRAY_TASK_ID+set}" ]; then
    echo "grade_array.sh: SLURM_ARRAY_TASK_ID is not set: submit with sbatch --array=1-N" >&2
    exit 2
fi
TASK=$SLURM_ARRAY_TASK_ID
case "$TASK" in
'' | *[!0-9]*)
    echo "grade_array.sh: task index '$TASK' is not a line number of $STUDENTS: nothing to grade" >&2
    exit 0
    ;;
esac
[ -r "$STUDENTS" ] || { echo "grade_array.sh: cannot read $STUDENTS" >&2; exit 2; }

# An index past the end of the list (an --array range larger than the class) or a blank line
# grades nobody: `--student ""` would be refused, and must never name the results folder.
STUDENT=$(sed -n "${TASK}p" "$STUDENTS" | tr -d '\r')
if [ -z "${STUDENT// /}" ]; then
    echo "grade_array.sh: task $TASK: line $TASK of $STUDENTS is blank or past its end" \
        "($(wc -l <"$STUDENTS") lines): nothing to grade" >&2
    exit 0
fi
# --student=ID, one word: an id such as `-h` is never read as an option
exec "$GRADE" --course "$COURSE" "$ASSIGNMENT" "--student=$STUDENT" --results "$RESULTS"
