"""`gradacc-plan`: plan a fine-tune for a memory budget from the command line.

    gradacc-plan llama-3.1-8b --sequence-length 2048 --effective-batch 256 --budget rtx-4090 \\
        --precision bf16-true --lora-rank 16 --checkpointing
"""

from __future__ import annotations

import argparse
import sys

from gradacc_lessons.planning.plan import plan
from gradacc_lessons.planning.presets import GPUS, PRESETS
from gradacc_lessons.planning.segmentation import UNet
from gradacc_lessons.planning.setup import OPTIMIZERS, PRECISIONS

FACTORIES = {"unet": UNet}  # models that are not Transformers configs


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gradacc-plan",
        description="The largest micro-batch that fits a memory budget, and the accumulation "
        "steps N for an effective batch, from one training step traced on fake tensors.",
    )
    p.add_argument(
        "model", help=f"a preset ({', '.join([*PRESETS, *FACTORIES])}) or a config.json path"
    )
    p.add_argument("--budget", required=True, help=f"GiB, or a GPU: {', '.join(GPUS)}")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--effective-batch", type=int, help="samples per optimizer step")
    size.add_argument("--effective-tokens", type=int, help="tokens per optimizer step")
    p.add_argument("--sequence-length", type=int, help="tokens per sample (language models)")
    p.add_argument("--input-shape", help="one sample's shape for unet, e.g. 3,1024,1024")
    p.add_argument("--precision", choices=PRECISIONS, default="32-true")
    p.add_argument("--optimizer", choices=OPTIMIZERS, default="adamw")
    p.add_argument("--checkpointing", action="store_true", help="activation checkpointing")
    p.add_argument("--lora-rank", type=int, help="train LoRA adapters of this rank (peft)")
    p.add_argument("--measure", action="store_true", help="measure on this device instead")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    model = FACTORIES.get(args.model, args.model)
    shape = tuple(int(n) for n in args.input_shape.split(",")) if args.input_shape else None
    if model is UNet and shape is None:
        shape = (3, 1024, 1024)
    budget = float(args.budget) if _is_number(args.budget) else args.budget
    try:
        result = plan(
            model,
            args.effective_batch,
            budget,
            effective_tokens=args.effective_tokens,
            sequence_length=args.sequence_length,
            input_shape=shape,
            precision=args.precision,
            optimizer=args.optimizer,
            checkpointing=args.checkpointing,
            lora_rank=args.lora_rank,
            measure=args.measure,
        )
    except ValueError as error:
        print(f"gradacc-plan: {error}", file=sys.stderr)
        return 2
    print(result)
    for part, size in result.at_peak.items():
        print(f"  {part + ' at the peak:':<30} {size / 2**30:8.3f} GiB")
    return 0


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
