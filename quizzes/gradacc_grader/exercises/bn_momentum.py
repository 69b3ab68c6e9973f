"""The grader's half of lesson 3's exercise (`compensate_momentum`): hints, the reference, the
comparison.

Never in the sandbox: the student's kernel and the harness see only `inside/bn_momentum.py` (the
cases and how to run a function on one). The reference (the old momenta and N (the check is a
property, not a formula)) runs here, in the grader's process, on the same cases; the student's
outcomes come back as data.
"""

HINTS = {
    "en": {
        "one BatchNorm layer": "after N updates with momentum m', the old running value keeps "
        "the weight (1 - m')^N; one update with m keeps 1 - m",
        "several BatchNorm layers": "every BatchNorm layer (1d and 2d alike) needs its own new "
        "momentum, from its own old one",
        "a cumulative average is left alone": "momentum=None means a plain average of every "
        "batch seen so far, which no momentum compensates: leave such a layer as it is",
    },
    "yo": {
        "one BatchNorm layer": "lẹ́yìn ìmúdójúìwọ̀n N pẹ̀lú momentum m', iye àtijọ́ ṣì ní ipa "
        "(1 - m')^N; ìmúdójúìwọ̀n kan pẹ̀lú m fi 1 - m sílẹ̀",
        "several BatchNorm layers": "gbogbo layer BatchNorm (1d àti 2d bákan náà) nílò momentum "
        "tuntun tirẹ̀, láti inú momentum àtijọ́ tirẹ̀",
        "a cumulative average is left alone": "momentum=None túmọ̀ sí àròpín gbogbo batch tí ó "
        "ti kọjá, èyí tí momentum kankan kò lè dípò: fi irú layer bẹ́ẹ̀ sílẹ̀ bí ó ṣe wà",
    },
}


def expected(case):
    """The old momenta and N: what the new momenta must make of N updates."""
    return {
        "before": [momentum for _, momentum in case["layers"]],
        "accumulation_steps": case["accumulation_steps"],
    }


def disagrees(outcome, reference):
    """None if N updates with each new momentum weigh new data like one update with the old."""
    momenta, accumulation_steps = outcome.get("momenta"), reference["accumulation_steps"]
    if not isinstance(momenta, list) or len(momenta) != len(reference["before"]):
        return "the BatchNorm layers are not all there"
    for new, old in zip(momenta, reference["before"]):
        if old is None:
            if new is not None:
                return "a layer with momentum=None got a momentum"
            continue
        if not isinstance(new, float) or not 0 < new < 1:
            return f"a momentum of {new!r} is not a number between 0 and 1"
        # weight on the window's data after N updates with `new`, against one update with `old`
        share = 1 - (1 - new) ** accumulation_steps
        if abs(share - old) > 1e-9:
            return (
                f"{accumulation_steps} updates with momentum {new:.4g} weigh new data "
                f"{share:.3g}, not {old:g}"
            )
    return None
