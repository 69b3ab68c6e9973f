"""The sandbox's promises, one test each, run in real bubblewrap sandboxes (no nbgrader).

Each test runs code the way a dishonest student would and checks what it could do from
the outside: what the code reports, what the grader got back, what files exist.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
from gradacc_grader.kernel import SandboxKernelManager
from gradacc_grader.sandbox import (
    RECORD_SECONDS,
    Limits,
    Sandbox,
    SandboxError,
    find_bwrap,
    run_exercise,
    start_harness,
    stop_harnesses,
)
from gradacc_grader.selftest import self_test
from nbclient import NotebookClient

try:
    find_bwrap()
except SandboxError:  # a fresh machine: one clear line, not a dozen failures after minutes
    pytest.fail(
        "the grader's tests need bubblewrap: sudo apt-get install bubblewrap", pytrace=False
    )

pytestmark = pytest.mark.timeout(300)  # each starts Python and torch in a sandbox or two
PACKAGE = Path(__file__).resolve().parents[1] / "gradacc_grader"
RIGHT_LOOP = """
def train_with_accumulation(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        for inputs, targets in window:
            (loss_fn(model(inputs), targets) / len(window)).backward()
        optimizer.step()
        optimizer.zero_grad()
"""


@pytest.fixture
def course(tmp_path) -> Path:
    """A course folder with an instructor-only file in it."""
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "instructor.secret").write_text("the answer key")
    return folder


def _reported(outcome: dict) -> dict:
    """What student code reported by raising SystemExit(json) from its cell."""
    error = outcome.get("error", "")
    return json.loads(error.strip().splitlines()[-1].split("SystemExit: ", 1)[1])


USERNS = """
import ctypes, json, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
made = libc.unshare(0x10000000) == 0  # CLONE_NEWUSER
tool = subprocess.run(["unshare", "--user", "true"], capture_output=True, text=True)
raise SystemExit(json.dumps({"unshare": made, "errno": os.strerror(ctypes.get_errno()),
                             "tool": tool.returncode}))
"""


def test_student_code_cannot_create_a_user_namespace_in_the_recheck_sandbox(course):
    found = _reported(run_exercise(USERNS, "window_loop", 1, Sandbox(hidden=(course,))))
    assert found["unshare"] is False, found
    assert found["tool"] != 0, found  # util-linux's unshare fails the same way


def test_recheck_sandbox_hides_the_course_like_the_kernels(course):
    paths = [str(course), str(course / "instructor.secret"), str(PACKAGE / "trusted.py")]
    probe = f"import json, os\nraise SystemExit(json.dumps([os.path.exists(p) for p in {paths}]))"
    found = _reported(run_exercise(probe, "window_loop", 1, Sandbox(hidden=(course,))))
    assert found == [False, False, False]


def test_a_course_inside_the_venv_is_covered_in_both_sandboxes():
    # The venv is bound read-only: a course inside it would show, unless covered.
    inside = Path(tempfile.mkdtemp(prefix="course-", dir=sys.prefix))
    try:
        (inside / "gradebook.db").write_text("grades")
        found = self_test(Sandbox(hidden=(inside,)))
    finally:
        shutil.rmtree(inside)
    assert set(found) == {"kernel", "re-check"}
    assert [probe["sees"] for probe in found.values()] == [[], []]


def test_self_test_probes_both_sandboxes_and_refuses_a_course_it_can_see(course):
    found = self_test(Sandbox(hidden=(course,)))
    for kind in ("kernel", "re-check"):
        assert found[kind]["userns"] is False and found[kind]["network"] is False, found
        assert found[kind]["cwd_on_path"] == [] and found[kind]["uid"] != 0, found
    # a hidden folder that the sandbox must show (it holds the venv): refused by name
    with pytest.raises(SandboxError, match="lies inside the course folder"):
        self_test(Sandbox(hidden=(Path(sys.prefix).parent,)))


KMSG = """
import os
os.symlink("/proc/kmsg", "result.json")  # the grader once read result.json: as root it hung
open("forged.json", "w").write('{"whole windows": {"weights": []}}')
os._exit(0)
"""


def test_the_harness_answers_on_the_graders_pipe_never_through_a_file(course):
    outcome = run_exercise(KMSG, "window_loop", 1, Sandbox(hidden=(course,)), timeout=60)
    assert outcome["error"].startswith("it sent no result")  # returned; no link read, no forgery


def test_a_result_larger_than_the_limit_is_refused(course):
    flood = "import os, sys\nos.write(int(sys.argv[-1]), b' ' * 11_000_000)\nos._exit(0)"
    outcome = run_exercise(flood, "window_loop", 1, Sandbox(hidden=(course,)), timeout=60)
    assert outcome == {"error": "it sent more than 10000000 bytes"}


@pytest.mark.slow  # three sandboxes, each importing torch
def test_a_harness_started_ahead_answers_like_a_new_one(course):
    sandbox = Sandbox(hidden=(course,))
    start_harness(sandbox)
    ahead = run_exercise(RIGHT_LOOP, "window_loop", 7, sandbox)
    assert sandbox.ready == []  # used once
    fresh = run_exercise(RIGHT_LOOP, "window_loop", 7, sandbox)
    assert ahead == fresh and set(ahead) == {
        "whole windows",
        "a short last window",
        "leftover gradients",
    }, ahead
    start_harness(sandbox)
    stop_harnesses(sandbox)  # an unused one is stopped, its scratch folder removed
    assert sandbox.ready == []


KERNEL_PROBE = """
import json, os, sys
import torch
print(json.dumps({"files": sorted(os.listdir(".")), "cwd_on_path": [p for p in sys.path
    if p in ("", ".", os.getcwd())], "torch": torch.__file__, "uid": os.getuid()}))
"""


def test_the_kernel_sees_only_the_notebook_and_not_its_folder_on_sys_path(course, tmp_path):
    """A submitted torch.py must not load before (or instead of) the real torch."""
    submitted = course / "submitted" / "eve" / "quiz"
    submitted.mkdir(parents=True)
    (submitted / "torch.py").write_text("print('SHADOW'); raise SystemExit('fake torch')")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(KERNEL_PROBE)])
    nbformat.write(notebook, submitted / "quiz.ipynb")
    autograded = course / "autograded" / "eve" / "quiz"
    autograded.mkdir(parents=True)
    manager = SandboxKernelManager(course_root=str(course), scratch_root=str(tmp_path))
    client = NotebookClient(notebook, km=manager, resources={"metadata": {"path": str(autograded)}})
    client.execute(cleanup_kc=True)  # a client given its manager leaves the kernel running
    found = json.loads(notebook.cells[0].outputs[0]["text"])
    assert found["files"] == ["quiz.ipynb"], found  # the notebook, nothing else submitted
    assert found["cwd_on_path"] == [] and "SHADOW" not in json.dumps(notebook.cells[0].outputs)
    assert found["torch"].startswith(sys.prefix), found  # the venv's torch, read-only
    assert found["uid"] != 0 if os.geteuid() == 0 else True


def test_the_harness_runs_under_the_jails_limits(course):
    probe = "import json, resource as r\nraise SystemExit(json.dumps(r.getrlimit(r.RLIMIT_NPROC)))"
    sandbox = Sandbox(hidden=(course,), limits=Limits(processes=33))
    assert _reported(run_exercise(probe, "window_loop", 1, sandbox)) == [33, 33]


def test_both_sandboxes_hold_for_an_instructor_who_is_not_root(course):
    """The other path of the code (bwrap --unshare-user --disable-userns, no `nobody`).

    Run as root, the test plays a plain user (uid 1000) in a user namespace of its own.
    """
    probe = (
        "import json; from pathlib import Path; from gradacc_grader.sandbox import Sandbox; "
        "from gradacc_grader.selftest import self_test; "
        f"print(json.dumps(self_test(Sandbox(hidden=(Path({str(course)!r}),)))))"
    )
    command = [sys.executable, "-c", probe]
    if os.geteuid() == 0:
        command = ["unshare", "--user", "--map-user=1000", "--map-group=1000", "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    user = 1000 if os.geteuid() == 0 else os.getuid()
    assert [probe["uid"] for probe in found.values()] == [user, user], found
    assert all(not p["userns"] and p["sees"] == [] for p in found.values()), found


IN_KERNEL = """
import json, sys
from pathlib import Path
import nbformat
from gradacc_grader.kernel import SandboxKernelManager
from nbclient import NotebookClient
course, scratch = Path(sys.argv[1]), sys.argv[2]
notebook = nbformat.read(course / "submitted/eve/quiz/quiz.ipynb", 4)
manager = SandboxKernelManager(course_root=str(course), scratch_root=scratch)
folder = {"metadata": {"path": str(course / "autograded/eve/quiz")}}
NotebookClient(notebook, km=manager, resources=folder).execute(cleanup_kc=True)
print(json.dumps([o.get("text") or o.get("evalue") for o in notebook.cells[0].outputs]))
"""


@pytest.mark.slow  # a kernel writes 720 MiB
@pytest.mark.parametrize("user", ["root", "not root"])
def test_the_kernel_cannot_fill_the_graders_disk(course, tmp_path, user, fill_disk):
    """Its working folder is in memory, bounded; its sockets' folder takes no file."""
    submitted = course / "submitted" / "eve" / "quiz"
    submitted.mkdir(parents=True)
    (course / "autograded" / "eve" / "quiz").mkdir(parents=True)
    # its connection file: not in the folder removed under it (a slow kernel would write it
    # there again, and die), and read-only
    connection = """
app = IPKernelApp.instance()
found["beside"] = os.path.dirname(app.connection_file) == os.path.dirname(os.path.dirname(app.ip))
found["writable"] = os.access(app.connection_file, os.W_OK)
"""
    cell = nbformat.v4.new_code_cell(fill_disk + connection + "print(json.dumps(found))")
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), submitted / "quiz.ipynb")
    command = [sys.executable, "-c", IN_KERNEL, str(course), str(tmp_path)]
    if user == "not root":
        assert os.geteuid() == 0, "run as root, the test plays a plain user in a user namespace"
        command = ["unshare", "--user", "--map-user=1000", "--map-group=1000", "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(json.loads(done.stdout.strip().splitlines()[-1])[0])
    bound = Limits.tmpfs_bytes >> 20
    assert found["work_size"] == bound, found  # the home's tmpfs
    assert found["work"][0] <= bound and found["work"][1] == "No space left on device", found
    assert found["sockets"] == [0, "No such file or directory"], found
    assert found["beside"] is True and found["writable"] is False, found


def test_the_harness_cannot_fill_the_graders_disk(course, fill_disk):
    found = _reported(
        run_exercise(
            fill_disk + "raise SystemExit(json.dumps(found))", "window_loop", 1, Sandbox((course,))
        )
    )
    bound = Limits.tmpfs_bytes >> 20
    assert found["work_size"] == bound, found
    assert found["work"][0] <= bound and found["work"][1] == "No space left on device", found


@pytest.mark.slow  # it sleeps past the CPU limit
def test_the_harness_may_take_the_students_time_left_not_the_cpu_limit(course):
    """Cells that sleep cost time, not CPU: the harness runs them as the kernel did."""
    import time

    # 8 s of CPU: more than twice the 3 s that importing torch and running the loop's cases took
    # on the slower test machine before (on the faster one it passes with a limit of 3 s)
    sandbox = Sandbox((course,), Limits(cpu_seconds=8), deadline=time.monotonic() + 300)
    cells = ["import time\ntime.sleep(10)  # an experiment, as a student tries by hand", RIGHT_LOOP]
    outcome = run_exercise(cells, "window_loop", 3, sandbox)
    assert "error" not in outcome and len(outcome) == 3, outcome


@pytest.mark.slow  # it spends its CPU limit
def test_a_loop_that_computes_forever_is_stopped_by_the_cpu_limit(course):
    """RLIMIT_CPU (set by jail.py) kills a loop that no timeout has reached yet."""
    import time

    started = time.monotonic()
    outcome = run_exercise(
        "while True:\n    pass", "window_loop", 3, Sandbox((course,), Limits(cpu_seconds=3)), 300
    )
    assert outcome["error"].startswith("it sent no result"), outcome
    # 3 s of CPU take longer on a loaded machine, but nowhere near the 300 s it was given
    assert time.monotonic() - started < 150


@pytest.mark.slow  # it waits for the deadline
def test_the_harness_ends_before_the_students_deadline(course):
    import time

    sandbox = Sandbox((course,), deadline=time.monotonic() + RECORD_SECONDS + 10)
    outcome = run_exercise("import time\ntime.sleep(3600)", "window_loop", 3, sandbox)
    assert outcome["error"].startswith("it did not finish in 10 s"), outcome
    assert time.monotonic() < sandbox.deadline - RECORD_SECONDS + 5
