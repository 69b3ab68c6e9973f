"""Cases of lesson 3's exercise: `compensate_momentum`, BatchNorm's running statistics.

A plain module (imports only torch): pasted into the hidden test, imported by the sandbox's
harness and by the grader's re-check. A window of N micro-batches updates a BatchNorm layer's
running statistics N times. The student's function must set each layer's momentum so that N
updates put as much weight on the window's data as one update with the old momentum. The
check is that property, computed from the momentum the student set, not a formula.
"""

import random

import torch

FUNCTION = "compensate_momentum"
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
        "one BatchNorm layer": "lẹ́yìn ìmúdójúìwọ̀n N pẹ̀lú momentum m', iye àtijọ́ ní ìwọ̀n "
        "(1 - m')^N; ìmúdójúìwọ̀n kan pẹ̀lú m ní 1 - m",
        "several BatchNorm layers": "gbogbo Layer BatchNorm (1d àti 2d) nílò momentum tuntun "
        "tirẹ̀, láti inú èyí àtijọ́ tirẹ̀",
        "a cumulative average is left alone": "momentum=None túmọ̀ sí àròpín gbogbo ipele tó ti "
        "kọjá; fi irú Layer bẹ́ẹ̀ sílẹ̀ bí ó ṣe wà",
    },
}


def cases(seed):
    """[(case name, case)]: one layer, several layers, a layer with momentum None.

    >>> [name for name, _ in cases(0)]  # doctest: +NORMALIZE_WHITESPACE
    ['one BatchNorm layer', 'several BatchNorm layers', 'a cumulative average is left alone']
    """
    rng = random.Random(seed)

    def momentum():
        return round(rng.uniform(0.05, 0.3), 3)

    return [
        ("one BatchNorm layer", {"layers": [("1d", momentum())], "steps": rng.randint(2, 8)}),
        (
            "several BatchNorm layers",
            {
                "layers": [("1d", momentum()), ("2d", momentum()), ("1d", momentum())],
                "steps": rng.randint(2, 8),
            },
        ),
        (
            "a cumulative average is left alone",
            {"layers": [("1d", None), ("1d", momentum())], "steps": rng.randint(2, 8)},
        ),
    ]


def _model(case):
    layers = [torch.nn.Linear(4, 4)]
    for kind, momentum in case["layers"]:
        norm = torch.nn.BatchNorm1d if kind == "1d" else torch.nn.BatchNorm2d
        layers.append(norm(4, momentum=momentum))
    return torch.nn.Sequential(*layers)


def _norms(model):
    return [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]


def run(function, case):
    """The momenta of the model's BatchNorm layers after the student's function."""
    model = _model(case)
    function(model, case["steps"])
    momenta = [m.momentum for m in _norms(model)]
    return {"momenta": [None if m is None else float(m) for m in momenta]}


def expected(case):
    """The old momenta and N: what the new momenta must make of N updates."""
    return {"before": [momentum for _, momentum in case["layers"]], "steps": case["steps"]}


def disagrees(outcome, reference):
    """None if N updates with each new momentum weigh new data like one update with the old."""
    momenta, steps = outcome.get("momenta"), reference["steps"]
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
        share = 1 - (1 - new) ** steps
        if abs(share - old) > 1e-9:
            return (
                f"{steps} updates with momentum {new:.4g} weigh new data {share:.3g}, not {old:g}"
            )
    return None
