"""The grader's half of lesson 4's exercise (`plan_micro_batches`): hints, the reference, the
comparison.

Never in the sandbox: the student's kernel and the harness see only `inside/micro_batch_plan.py`
(the cases and how to run a function on one). The reference (the largest micro-batch dividing
the effective batch that fits) runs here, in the grader's process, on the same cases; the
student's outcomes come back as data.
"""

HINTS = {
    "en": {
        "the whole batch fits": "if the effective batch itself fits, no accumulation is needed",
        "a split is needed": "only sizes that divide the effective batch make equal windows; "
        "among those that fit, the largest wastes the least time",
        "an exact fit": "a plan whose peak equals the budget still fits",
        "a budget below the floor": "when not even one sample fits, no plan exists: say so "
        "with a ValueError instead of returning one",
    },
    "yo": {
        "the whole batch fits": "tí batch àpapọ̀ fúnra rẹ̀ bá wọ inú memory, kò sí ìkójọpọ̀ tí ó yẹ",
        "a split is needed": "ìwọ̀n tí ó pín batch àpapọ̀ dọ́gba nìkan ló ń ṣe fèrèsé tí ó "
        "dọ́gba; nínú àwọn tí ó wọ inú memory, èyí tí ó tóbi jù ló ń ṣòfò àkókò díẹ̀ jù",
        "an exact fit": "ètò tí peak rẹ̀ dọ́gba pẹ̀lú memory tí ó wà ṣì wọ inú memory",
        "a budget below the floor": "tí àpẹẹrẹ kan ṣoṣo pàápàá kò bá wọ inú memory, kò sí ètò "
        "kankan: sọ bẹ́ẹ̀ pẹ̀lú ValueError dípò kí o dá ètò kan padà",
    },
}


def expected(case):
    """The largest micro-batch dividing the effective batch whose peak fits, and N."""
    batch = case["effective_batch"]
    for size in range(batch, 0, -1):
        peak = case["floor_bytes"] + size * case["bytes_per_sample"]
        if batch % size == 0 and peak <= case["budget_bytes"]:
            return {"plan": [size, batch // size]}
    return {"raised": "ValueError"}


def disagrees(outcome, reference):
    """None if the student's plan (or refusal) is the reference's."""
    if outcome == reference:
        return None
    if "raised" in reference:
        return f"this budget cannot fit one sample, yet the function returned {outcome.get('plan')}"
    if "raised" in outcome:
        return "the function raised ValueError, though a plan fits"
    plan = outcome.get("plan")
    return f"the plan (micro_batch_size, accumulation_steps) is {plan}, not the best one"
