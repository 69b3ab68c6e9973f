"""What learners use today instead of a trace: two published rules, to compare with the planner.

- Accelerate's `accelerate estimate-memory` (accelerate 1.15.0,
  `accelerate/commands/estimate.py`, `estimate_training_usage` and the `max` over its
  entries in `estimate_command_parser`'s table): training with Adam at a batch of 1 needs,
  in float32, weights + gradients + two moments = 4 x the float32 size of the weights;
  in bfloat16, the largest of its entries, 2 x the float32 size. No activation at all.
- The transformer-math formula (EleutherAI's "Transformer Math 101", activations from
  Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
  Models", eq. 1): 16 bytes per parameter for AdamW (weights, gradients, two moments,
  and with mixed precision the float32 master copy), plus, per layer, s·b·h·(34 + 5·a·s/h)
  bytes of 16-bit activations (s tokens, b sequences, h hidden size, a heads); with
  full recomputation (checkpointing) 2·s·b·h per layer.
"""

from __future__ import annotations

from gradacc_lessons.checks import as_choice, as_count


def accelerate_peak_bytes(parameters: int, precision: str = "32-true") -> int:
    """Accelerate's estimate of training with Adam at a batch of 1.

    >>> accelerate_peak_bytes(1_000, "32-true"), accelerate_peak_bytes(1_000, "bf16-mixed")
    (16000, 8000)
    """
    parameters = as_count("parameters", parameters)
    as_choice("precision", precision, ("32-true", "bf16-mixed", "bf16-true"))
    float32_size = 4 * parameters
    return 4 * float32_size if precision == "32-true" else 2 * float32_size


def transformer_math_bytes(
    parameters: int,
    layers: int,
    hidden: int,
    heads: int,
    sequence: int,
    micro_batch_size: int,
    checkpointing: bool = False,
) -> int:
    """16 bytes per parameter plus the layers' activations, as the formula counts them.

    >>> transformer_math_bytes(100, layers=2, hidden=8, heads=2, sequence=4, micro_batch_size=1)
    4096
    """
    values = (parameters, layers, hidden, heads, sequence, micro_batch_size)
    names = ("parameters", "layers", "hidden", "heads", "sequence", "micro_batch_size")
    p, layer_count, h, a, s, b = (as_count(n, v) for n, v in zip(names, values))
    per_layer = 2 * s * b * h if checkpointing else s * b * h * 34 + 5 * a * s * s * b
    return 16 * p + layer_count * per_layer
