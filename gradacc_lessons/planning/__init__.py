"""Plan a real fine-tune: the peak memory of a real model at any micro-batch, without its GPU.

- `fake_step`: one training step on fake tensors, every storage counted while alive;
- `cpu_kernels`: the buffers some CPU kernels hold while they run, which no output shows;
- `predict`: the peak at any micro-batch and layer count from a few such traces;
- `setup`: the recipe (model, precision, optimizer, checkpointing, LoRA);
- `search`: `plan`, the largest micro-batch under a budget, N, and the alternatives;
- `presets`, `segmentation`, `plot`, `cli` (`gradacc-plan`).
"""

import importlib

# Imported when first used (PEP 562): the command line checks its arguments before torch loads.
_HOMES = {
    "Alternative": "gradacc_lessons.planning.search",
    "Plan": "gradacc_lessons.planning.search",
    "plan": "gradacc_lessons.planning.search",
    "GPUS": "gradacc_lessons.planning.presets",
    "PRESETS": "gradacc_lessons.planning.presets",
    "UNet": "gradacc_lessons.planning.segmentation",
}

__all__ = ["GPUS", "PRESETS", "Alternative", "Plan", "UNet", "plan"]


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'gradacc_lessons.planning' has no attribute {name!r}")
