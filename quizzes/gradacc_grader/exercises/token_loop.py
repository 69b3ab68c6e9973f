"""The grader's half of lesson 2's exercise (`train_token_weighted`): hints, the reference, the
comparison.

Never in the sandbox: the student's kernel and the harness see only `inside/token_loop.py` (the
cases and how to run a function on one). The reference (each window as one batch, the mean over
all its real tokens) runs here, in the grader's process, on the same cases; the student's
outcomes come back as data.
"""

import torch

from gradacc_grader.exercises.full_batch import weights_after_full_batches
from gradacc_grader.inside.token_loop import IGNORE_INDEX, SEQUENCES, make_model

HINTS = {
    "en": {
        "uneven real tokens": "the window's batch averages over all of its real tokens; a "
        "micro-batch's own mean gives its tokens a weight that depends on how few it has",
        "a short last window": "the last window may hold fewer micro-batches, and other "
        "tokens: count them for that window",
        "leftover gradients": "the model arrives with gradients already in .grad; backward() "
        "adds to whatever is there",
    },
    "yo": {
        "uneven real tokens": "batch fèrèsé náà ń ṣe àròpín lórí gbogbo token gidi rẹ̀; mean "
        "micro-batch kan ń fún àwọn token rẹ̀ ní ipa tí ó gbára lé bí wọ́n ṣe díẹ̀ tó",
        "a short last window": "fèrèsé tó kẹ́yìn lè ní micro-batch díẹ̀, àti token mìíràn: ka "
        "token fún fèrèsé yẹn",
        "leftover gradients": "model náà dé pẹ̀lú gradient tí ó ti wà nínú .grad tẹ́lẹ̀; "
        "backward() máa ń fi kún ohun tí ó bá wà níbẹ̀",
    },
}


def expected(case):
    """The reference: each window as one batch, the mean over all its real tokens."""

    def token_mean(logits, targets):  # the mean over every real token of the window
        return torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX
        )

    weights = weights_after_full_batches(case, make_model, token_mean)
    return {"weights": weights, "largest_forward": SEQUENCES}


def disagrees(outcome, reference):
    """None if the model saw one micro-batch at a time (scoring compares the weights)."""
    if outcome.get("largest_forward") != SEQUENCES:
        return "the model must see one micro-batch at a time"
    return None
