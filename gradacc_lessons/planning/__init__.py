"""Plan a real fine-tune: the peak memory of a real model at any micro-batch, without its GPU.

- `fake_step`: one training step on fake tensors, every storage counted while alive;
- `cpu_kernels`: the buffers some CPU kernels hold while they run, which no output shows;
- `predict`: the peak at any micro-batch and layer count from a few such traces;
- `setup`: the recipe (model, precision, optimizer, checkpointing, LoRA);
- `plan`: the largest micro-batch under a budget, N, and the alternatives;
- `presets`, `segmentation`, `plot`, `cli` (`gradacc-plan`).
"""

from gradacc_lessons.planning.plan import Alternative, Plan, plan
from gradacc_lessons.planning.presets import GPUS, PRESETS
from gradacc_lessons.planning.segmentation import UNet

__all__ = ["GPUS", "PRESETS", "Alternative", "Plan", "UNet", "plan"]
