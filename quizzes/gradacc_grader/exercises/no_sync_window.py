"""The grader's half of lesson 6's exercise (`train_with_no_sync`): hints, the reference, the
comparison.

Never in the sandbox: the student's kernel and the harness see only `inside/no_sync_window.py`
(the cases and how to run a function on one). The reference (one full-batch step per window, one
all-reduce per window) runs here, in the grader's process, on the same cases; the student's
outcomes come back as data.
"""

import torch

from gradacc_grader.exercises.full_batch import weights_after_full_batches
from gradacc_grader.inside.no_sync_window import make_model

HINTS = {
    "en": {
        "one all-reduce per window": "DDP decides in the forward pass whether the backward "
        "will all-reduce; only the window's last micro-batch needs to",
        "a short last window": "the last window may be shorter: its own last micro-batch is "
        "the one that must synchronise",
        "no accumulation": "with accumulation_steps = 1 every micro-batch is the last of its "
        "window",
    },
    "yo": {
        "one all-reduce per window": "DDP ń pinnu nínú forward pass bóyá backward yóò ṣe "
        "all-reduce; micro-batch tó kẹ́yìn nínú fèrèsé nìkan ló nílò rẹ̀",
        "a short last window": "fèrèsé tó kẹ́yìn lè kúrú: micro-batch tó kẹ́yìn tirẹ̀ ni ó "
        "gbọ́dọ̀ ṣe ìmúṣiṣẹ́pọ̀",
        "no accumulation": "pẹ̀lú accumulation_steps = 1, micro-batch kọ̀ọ̀kan ni èyí tó kẹ́yìn "
        "nínú fèrèsé rẹ̀",
    },
}


def expected(case):
    """The reference: one full-batch step per window, and one all-reduce per window."""
    weights = weights_after_full_batches(case, make_model, torch.nn.functional.mse_loss)
    windows = -(-len(case["batches"]) // case["accumulation_steps"])
    return {"weights": weights, "allreduces": windows}


def disagrees(outcome, reference):
    """None if there was one all-reduce per window (scoring compares the weights)."""
    made, wanted = outcome.get("allreduces"), reference["allreduces"]
    if made != wanted:
        return f"{made} all-reduces for {wanted} windows"
    return None
