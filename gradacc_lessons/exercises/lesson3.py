"""Lesson 3's exercise: make a BatchNorm network accumulation-safe, checked on the full batch."""

from __future__ import annotations

import torch
from torch import nn

from gradacc_lessons.accumulate import accumulated_gradients, full_batch_gradients
from gradacc_lessons.compare import relative_error
from gradacc_lessons.data import make_classification
from gradacc_lessons.device import seeded
from gradacc_lessons.exercises.lesson1 import EXACT
from gradacc_lessons.exercises.runner import Exercise, Failed, call_learner
from gradacc_lessons.models import MLP

NORMS = (
    nn.modules.batchnorm._BatchNorm,
    nn.LayerNorm,
    nn.GroupNorm,
    nn.modules.instancenorm._InstanceNorm,
)


def _batch_norms(model: nn.Module) -> list[str]:
    return [n for n, m in model.named_modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]


def _diagnose_safe(function) -> None:
    """Swap the norms of fresh BatchNorm MLPs with the learner's function; compare to full batch."""
    for seed, hidden, sizes in ((51, 32, (16, 16, 16, 8)), (52, 12, (10, 7, 3))):
        x, y = make_classification(
            samples=sum(sizes), features=20, classes=4, seed=seed, dtype=torch.float64
        )
        with seeded(seed):
            model = MLP(20, 4, hidden=hidden, norm="batch").double()
        norms = sum(isinstance(m, NORMS) for m in model.modules())
        safe = call_learner(function, model)
        if not isinstance(safe, nn.Module):
            raise Failed("not_a_model", got=type(safe).__name__)
        left = _batch_norms(safe)
        if left and not safe.training:
            raise Failed("eval_mode", name=left[0])
        if left:
            raise Failed(
                "batchnorm_left", name=left[0], kind=type(safe.get_submodule(left[0])).__name__
            )
        kept = sum(isinstance(m, NORMS) for m in safe.modules())
        if kept < norms:
            raise Failed("norm_removed", kept=kept, norms=norms)
        safe.train()
        try:  # a forward: a layer of the wrong width says so here
            safe(x[: sizes[-1]])
        except Exception as error:
            raise Failed("model_fails", error=f"{type(error).__name__}: {error}") from None
        loss_fn = nn.functional.cross_entropy
        full = full_batch_gradients(safe, loss_fn, x, y)
        accumulated = accumulated_gradients(safe, loss_fn, x, y, sizes=sizes)
        error = relative_error(full, accumulated)
        if error > EXACT:
            raise Failed("not_equivalent", error=f"{error:.2%}", sizes=", ".join(map(str, sizes)))


def make_accumulation_safe(model):
    for name, module in list(model.named_children()):
        if isinstance(module, nn.BatchNorm1d):  # statistics over the micro-batch's samples
            width = module.num_features
            layer_norm = nn.LayerNorm(width).to(module.weight.dtype)  # over each sample alone
            setattr(model, name, layer_norm)
    return model


ACCUMULATION_SAFE = Exercise("l3_safe", 3, _diagnose_safe, make_accumulation_safe, "hint_l3_safe")
