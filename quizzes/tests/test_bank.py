"""The graded bank: sizes and kinds of the assignments, drawn releases, the secret.

No nbgrader run here: these tests draw releases in memory and read the bank.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest
from gradacc_grader.bank import ASSIGNMENTS
from gradacc_grader.bank.core import Exercise, MultipleChoice, Written
from gradacc_grader.bank.faq import GUIDE
from gradacc_grader.build import answer_key, notebook_text
from gradacc_grader.draw import Asked, draw_release
from gradacc_grader.secret import SECRET_FILE, ensure_secret, read_secret

SECRETS = [(f"{i:02x}" * 32).encode() for i in range(1, 41)]
LESSONS = {a.lesson: a for a in ASSIGNMENTS}


def test_a_short_assignment_per_lesson_and_the_faq_as_the_final():
    assert sorted(LESSONS) == ["1", "2", "3", "4", "5", "6", "final"]
    for lesson in "123456":
        assert 3 <= LESSONS[lesson].points <= 6, lesson
    coded = {a.lesson for a in ASSIGNMENTS if any(isinstance(i, Exercise) for i in a.items)}
    assert coded == {"2", "3", "4", "6", "final"}
    final = LESSONS["final"]
    assert final.name == "gradacc_faq" and "yo" in final.languages
    assert any(isinstance(i, Written) for i in final.items)


def test_at_least_half_of_the_points_ask_to_compute_rather_than_recall():
    items = [item for a in ASSIGNMENTS for item in a.items]
    points = {
        kind: sum(i.points for i in items if i.kind == kind)
        for kind in ("compute", "recall", "code", "written")
    }
    total = sum(points.values())
    # the choices alone, and the whole course with its coding exercises
    assert points["compute"] >= points["recall"] * 3, points
    assert points["compute"] + points["code"] >= total / 2, points
    assert all(i.kind in ("compute", "recall") for i in items if isinstance(i, MultipleChoice))


def test_ids_are_unique_and_fit_nbgrader():
    ids = [item.id for a in ASSIGNMENTS for item in a.items]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9_]+", i) for i in ids)


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=lambda a: a.name)
def test_the_same_secret_gives_the_same_release(assignment):
    for lang in assignment.languages:
        first = notebook_text(draw_release(assignment, SECRETS[0], lang))
        assert first == notebook_text(draw_release(assignment, SECRETS[0], lang))


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=lambda a: a.name)
def test_two_secrets_give_two_answer_keys(assignment):
    releases = [draw_release(assignment, secret) for secret in SECRETS[:2]]
    keys = [answer_key(r) for r in releases]
    questions = [[i for i in r.items if isinstance(i, Asked)] for r in releases]
    # the letters, or the numbers asked, or the hidden cases' seeds differ
    prompts = [[q.prompt for q in qs] for qs in questions]
    seeds = [[getattr(i, "seed", None) for i in r.items] for r in releases]
    assert keys[0] != keys[1] or prompts[0] != prompts[1] or seeds[0] != seeds[1]
    letters = ["".join(q.letter for q in qs) for qs in questions]
    if questions[0]:
        assert letters[0] != letters[1] or prompts[0] != prompts[1]


def test_every_question_draws_four_different_choices_each_explained():
    for assignment in ASSIGNMENTS:
        for secret in SECRETS:
            for item in draw_release(assignment, secret).items:
                if not isinstance(item, Asked):
                    continue
                texts = [c.text for c in item.choices]
                whys = [c.why for c in item.choices]
                assert len(set(texts)) == 4 and len(set(whys)) == 4, (item.item.id, texts)
                assert all(len(why) > 40 for why in whys), item.item.id


def test_the_yoruba_final_asks_the_guides_questions_word_for_word():
    release = draw_release(LESSONS["final"], SECRETS[0], "yo")
    text = notebook_text(release)
    for k in (1, 2, 4):
        assert GUIDE[k]["yo"] in text
        assert GUIDE[k]["en"] not in text
    for k in (3, 5):  # the guide asks these two in English; the Yorùbá final asks in Yorùbá
        assert GUIDE[k]["yo"] in text and GUIDE[k]["en"] != GUIDE[k]["yo"]
        assert GUIDE[k]["en"] not in text
    english = notebook_text(draw_release(LESSONS["final"], SECRETS[0], "en"))
    assert all(GUIDE[k]["yo"] not in english for k in (1, 2, 4))


def test_the_guides_questions_are_copied_exactly():
    # data/guide_faq.txt: the FAQ of the guide the course is built from, as published (the
    # student package's tests read it too); every FAQ heading of the final is one of its
    # lines, unchanged
    guide = Path(__file__).resolve().parent / "data" / "guide_faq.txt"
    lines = guide.read_text(encoding="utf-8").splitlines()
    for k, texts in GUIDE.items():
        if k in (3, 5):  # the guide asks these in English; the Yorùbá is the course's
            assert texts["en"] in lines and texts["yo"] not in lines, k
        else:
            assert texts["yo"] in lines, k


def test_both_editions_of_the_final_share_one_answer_key():
    keys = [answer_key(draw_release(LESSONS["final"], SECRETS[3], lang)) for lang in ("en", "yo")]
    # the same letters; the explanations of the choices in each edition's language
    whys = [[cell.pop("why", None) for cell in key["cells"]] for key in keys]
    assert keys[0]["cells"] == keys[1]["cells"]
    assert [w and sorted(w) for w in whys[0]] == [w and sorted(w) for w in whys[1]]
    assert whys[0] != whys[1]


def test_the_secret_is_made_once_readable_by_its_owner_only(tmp_path):
    secret = ensure_secret(tmp_path)
    path = tmp_path / SECRET_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ensure_secret(tmp_path) == secret == read_secret(tmp_path)
    (tmp_path / "other").mkdir()
    assert len(secret) == 64 and ensure_secret(tmp_path / "other") != secret


def test_a_secret_others_can_read_is_refused(tmp_path):
    ensure_secret(tmp_path)
    (tmp_path / SECRET_FILE).chmod(0o644)
    with pytest.raises(ValueError, match="chmod 600"):
        read_secret(tmp_path)


def test_a_missing_secret_says_how_to_make_one(tmp_path):
    with pytest.raises(ValueError, match="gradacc-build --course"):
        read_secret(tmp_path)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _longest_shared_run(a: list[str], b: list[str]) -> int:
    best, previous = 0, [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b, start=1):
            if x == y:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def test_graded_questions_are_not_the_self_check_questions():
    from gradacc_lessons.quiz.questions import QUESTIONS

    selfcheck = [_words(" ".join([q.prompt, *getattr(q, "choices", ())])) for q in QUESTIONS]
    headings = {GUIDE[k][lang] for k in GUIDE for lang in GUIDE[k]}
    for assignment in ASSIGNMENTS:
        for secret in SECRETS[:3]:
            for item in draw_release(assignment, secret).items:
                if not isinstance(item, Asked):
                    continue
                prompt = item.prompt
                for heading in headings:  # the guide's own FAQ questions head the final's items
                    prompt = prompt.replace(heading, "")
                graded = _words(" ".join([prompt, *(c.text for c in item.choices)]))
                for words in selfcheck:
                    # a shared run of 7 words is a copied clause, not a shared term
                    assert _longest_shared_run(graded, words) < 7, (item.item.id, " ".join(words))


def _tools_named(text: str) -> list[str]:
    return re.findall(r"`(gradacc_lessons(?:\.\w+)+)`", text)


def test_the_package_tools_a_prompt_names_exist():
    import importlib

    named = set()
    for assignment in ASSIGNMENTS:
        for secret in SECRETS[:5]:
            for item in draw_release(assignment, secret).items:
                if isinstance(item, Asked):
                    named.update(_tools_named(item.prompt))
    assert len(named) >= 3
    for path in named:
        module, _, name = path.rpartition(".")
        assert hasattr(importlib.import_module(module), name), path


def test_computed_answers_agree_with_the_lessons_tools():
    # the bank computes its answers by hand; the lessons' package is the independent reference
    import torch

    from gradacc_lessons.demos.distributed import effective_batch
    from gradacc_lessons.demos.sharding import sharded_bytes
    from gradacc_lessons.memory import estimate_training_memory

    optimizers = {
        "SGD(params, lr=0.1)": (torch.optim.SGD, {"lr": 0.1}),
        "momentum=0.9": (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
        "Adam(": (torch.optim.Adam, {"lr": 1e-3}),
    }
    checked = set()
    for secret in SECRETS[:12]:
        for assignment in (LESSONS["4"], LESSONS["6"]):
            for item in draw_release(assignment, secret).items:
                if not isinstance(item, Asked):
                    continue
                right, prompt = item.choices[item.answer].text, item.prompt
                if item.item.id == "l4_floor":
                    sizes = [int(n) for n in re.findall(r"(\d+) (?:→|units)", prompt)]
                    layers = [torch.nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])]
                    model = torch.nn.Sequential(*layers)
                    kind = next(
                        v
                        for k, v in optimizers.items()
                        if k in prompt and (k != "SGD(params, lr=0.1)" or "momentum" not in prompt)
                    )
                    report = estimate_training_memory(
                        model, kind[0](model.parameters(), **kind[1]), 1, 0.0
                    )
                    assert right == f"{report.floor_bytes / 2**20:.1f} MiB", prompt
                    checked.add("floor")
                elif item.item.id == "l6_sharding":
                    billions = int(re.search(r"\*\*(\d+) billion\*\*", prompt).group(1))
                    world = int(re.search(r"\*\*(\d+)\*\* processes", prompt).group(1))
                    stage = int(re.search(r"ZeRO stage (\d)", prompt).group(1))
                    parts = sharded_bytes(billions * 10**9, world, stage)
                    assert right == f"{sum(parts.values()) / 2**30:.1f} GiB", prompt
                    checked.add("sharding")
                elif item.item.id == "l6_accumulation_steps":
                    bold = [int(n) for n in re.findall(r"\*\*(\d+)\*\*", prompt)]
                    if "stand for?" in prompt:  # world, micro-batch and steps given
                        assert int(right) == effective_batch(*bold[:3]), prompt
                    else:  # the target, world and micro-batch given
                        target, world, micro = bold[:3]
                        assert effective_batch(world, micro, int(right)) == target, prompt
                    checked.add("effective batch")
    assert checked == {"floor", "sharding", "effective batch"}


def test_a_wrong_choice_is_explained_without_naming_the_right_one():
    """Issue 20: the feedback says what the chosen answer gets wrong, not which one is right.
    (A bare number may appear in an explanation by coincidence: "micro-batches of 16".)"""
    import random

    checked = 0
    for assignment in LESSONS.values():
        for item in (i for i in assignment.items if isinstance(i, MultipleChoice)):
            for lang in assignment.languages:
                for seed in range(30):
                    drawn = item.draw(random.Random(seed), lang)
                    right = drawn.right.text
                    if re.fullmatch(r"[\d.]+", right):
                        continue
                    for wrong in drawn.wrong:
                        assert right not in wrong.why, (item.id, lang, right, wrong.why)
                        checked += 1
    assert checked > 1000  # most answers are words, not bare numbers
