"""Cases of lesson 3's exercise: `compensate_momentum`, BatchNorm's running statistics.

A plain module (imports only torch): its cases and how to run a student's function on one, and
nothing more: the sandbox's harness runs it, the reference and hints are the grader's
(gradacc_grader/exercises/bn_momentum.py), never in the sandbox. A window of N micro-batches
updates a BatchNorm layer's running statistics N times. The student's function must set each
layer's momentum so that N updates put as much weight on the window's data as one update with
the old momentum. The check is that property, computed from the momentum the student set, not a
formula.
"""

import random

import torch

FUNCTION = "compensate_momentum"


def cases(seed):
    """[(case name, case)]: one layer, several layers, a layer with momentum None.

    >>> [name for name, _ in cases(0)]  # doctest: +NORMALIZE_WHITESPACE
    ['one BatchNorm layer', 'several BatchNorm layers', 'a cumulative average is left alone']
    """
    rng = random.Random(seed)

    def momentum():
        return round(rng.uniform(0.05, 0.3), 3)

    return [
        (
            "one BatchNorm layer",
            {"layers": [("1d", momentum())], "accumulation_steps": rng.randint(2, 8)},
        ),
        (
            "several BatchNorm layers",
            {
                "layers": [("1d", momentum()), ("2d", momentum()), ("1d", momentum())],
                "accumulation_steps": rng.randint(2, 8),
            },
        ),
        (
            "a cumulative average is left alone",
            {"layers": [("1d", None), ("1d", momentum())], "accumulation_steps": rng.randint(2, 8)},
        ),
    ]


def make_model(case):
    layers = [torch.nn.Linear(4, 4)]
    for kind, momentum in case["layers"]:
        norm = torch.nn.BatchNorm1d if kind == "1d" else torch.nn.BatchNorm2d
        layers.append(norm(4, momentum=momentum))
    return torch.nn.Sequential(*layers)


def _norms(model):
    return [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]


def run(function, case):
    """The momenta of the model's BatchNorm layers after the student's function."""
    model = make_model(case)
    function(model, case["accumulation_steps"])
    momenta = [m.momentum for m in _norms(model)]
    return {"momenta": [None if m is None else float(m) for m in momenta]}
