"""The grader's half of FAQ 3's loop exercise (`train_with_accumulation`): hints, the reference,
the comparison.

Never in the sandbox: the student's kernel and the harness see only `inside/window_loop.py` (the
cases and how to run a function on one). The reference (each window concatenated into one batch,
one backward, one step) runs here, in the grader's process, on the same cases; the student's
outcomes come back as data.
"""

import torch

from gradacc_grader.exercises.full_batch import weights_after_full_batches
from gradacc_grader.inside.window_loop import MICRO_BATCH_SIZE, make_model

HINTS = {
    "en": {
        "whole windows": "one window must move the weights like one batch of all its samples: "
        "what does .grad hold when optimizer.step() runs, and how often does it run?",
        "a short last window": "the last window may hold fewer micro-batches than "
        "accumulation_steps; which batch does that window stand for?",
        "leftover gradients": "the model arrives with gradients already in .grad; backward() "
        "adds to whatever is there",
    },
    "yo": {
        "whole windows": "fèrèsé kan gbọ́dọ̀ yí weights padà bí batch kan tí ó ní gbogbo "
        "àpẹẹrẹ rẹ̀: kí ni .grad ní nígbà tí optimizer.step() bá ṣiṣẹ́, ìgbà mélòó ló sì ń ṣiṣẹ́?",
        "a short last window": "fèrèsé tó kẹ́yìn lè ní micro-batch tí kò tó accumulation_steps; "
        "batch wo ni fèrèsé yẹn dúró fún?",
        "leftover gradients": "model náà dé pẹ̀lú gradient tí ó ti wà nínú .grad tẹ́lẹ̀; "
        "backward() máa ń fi kún ohun tí ó bá wà níbẹ̀",
    },
}


def expected(case):
    """The reference: each window concatenated into one batch, one backward, one step."""
    weights = weights_after_full_batches(case, make_model, torch.nn.functional.mse_loss)
    return {"weights": weights, "largest_forward": MICRO_BATCH_SIZE}


def disagrees(outcome, reference):
    """None if the model saw one micro-batch at a time (scoring compares the weights)."""
    if outcome.get("largest_forward") != MICRO_BATCH_SIZE:
        return "the model must see one micro-batch at a time"
    return None
