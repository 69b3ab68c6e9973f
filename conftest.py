"""Fixtures for every test, the package's doctests included."""

import gc
import sys

import pytest

# jsonschema (which nbformat imports) imports rfc3987_syntax when it is installed (an extra
# jupyter-events asks for), and rfc3987_syntax builds a Lark grammar as it is imported: 3 s
# of CPU in every test process, for the "iri" format check, which nbformat never asks for
# (it validates without a format checker). Left out of the test processes, before anything
# imports jsonschema.
sys.modules.setdefault("rfc3987_syntax", None)


# tests/test_quizzes_alone.py runs quizzes/tests' fast tests from a copy of quizzes/ alone (which
# shows the instructor's package needs nothing else of this repository). A run that includes it
# leaves those tests out here, so that each runs once: about 30 s of CPU in make test.
QUIZZES_ALONE = (
    "tests/test_quizzes_alone.py::test_the_instructors_tests_run_from_a_copy_of_quizzes_alone"
)


@pytest.hookimpl(trylast=True)  # after -k and -m have chosen
def pytest_collection_modifyitems(config, items):
    if not any(item.nodeid == QUIZZES_ALONE for item in items):
        return
    kept, twice = [], []
    for item in items:
        (twice if _runs_in_the_copy(item) else kept).append(item)
    if twice:
        config.hook.pytest_deselected(items=twice)
        items[:] = kept


def _runs_in_the_copy(item) -> bool:
    # the copy's selection: quizzes/tests -m "not slow and not browser"
    return item.nodeid.startswith("quizzes/tests/") and not any(
        item.get_closest_marker(name) for name in ("slow", "browser")
    )


def pytest_collection_finish(session):
    # Collection imported torch, nbgrader, matplotlib...: millions of objects that live as
    # long as the process. Frozen, the garbage collector stops walking them at each of its
    # full collections (and pytest's own at the end): seconds of CPU in make check.
    gc.freeze()


@pytest.fixture(autouse=True)
def _repeatable():
    # imported here, not at the top: make check's xdist controller loads this file but runs
    # no test, and importing torch would hold back its workers' start by seconds
    import torch

    from gradacc_lessons.device import make_repeatable

    # What every lesson does first (the course's one place for seeds and threads): 1 vs 2
    # threads changes float32 CNN gradients by up to 4e-7. The thread count is put back.
    threads = torch.get_num_threads()
    make_repeatable(seed=0)
    yield
    torch.set_num_threads(threads)
