"""`gradacc-plan`: plan a fine-tune for a memory budget from the command line.

    gradacc-plan llama-3.1-8b --sequence-length 2048 --effective-batch 256 --budget rtx-4090 \\
        --precision bf16-true --lora-rank 16 --checkpointing

Exit status: 0 when a micro-batch fits, 1 when none does, 2 for an argument the planner
refuses (below the floor included). The arguments are checked before torch and
transformers load (seconds), so a typo is answered at once.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from gradacc_lessons.planning.presets import (
    DEFAULT_RESERVE_GIB,
    GPUS,
    OPTIMIZERS,
    PRECISIONS,
    PRESETS,
    budget_bytes,
)

FACTORIES = ("unet",)  # models that are not Transformers configs
# Measuring runs each candidate window for real: on a CPU, GPT-2 small (124M) in bf16 took
# over 30 minutes here. Above this size --measure on a CPU asks for --measure-on-cpu.
CPU_MEASURE_LIMIT = 20_000_000
FITS, DOES_NOT_FIT, REFUSED = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gradacc-plan",
        description="The largest micro-batch that fits a memory budget, and the accumulation "
        "steps N for an effective batch, from one training step traced on fake tensors.",
        epilog="Exit status: 0 fits, 1 does not fit, 2 refused (a bad argument, or a budget "
        "below the floor of weights, gradients and optimizer state).",
    )
    p.add_argument(
        "model", help=f"a preset ({', '.join([*PRESETS, *FACTORIES])}) or a config.json path"
    )
    p.add_argument(
        "--budget",
        required=True,
        help="the GPU's memory in GiB (2**30 bytes), e.g. 24 or '24 GiB'; or a GPU's name, "
        f"for the total CUDA reports for it: {', '.join(GPUS)}",
    )
    p.add_argument(
        "--margin",
        type=float,
        help=f"GiB kept free for the CUDA context, cuBLAS/cuDNN workspaces and fragmentation "
        f"(default {DEFAULT_RESERVE_GIB} for a budget of 4 GiB or more, else 0)",
    )
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--effective-batch", type=int, help="samples per optimizer step")
    size.add_argument("--effective-tokens", type=int, help="tokens per optimizer step")
    p.add_argument("--sequence-length", type=int, help="tokens per sample (language models)")
    p.add_argument("--input-shape", help="one sample's shape for unet, e.g. 3,1024,1024")
    p.add_argument("--precision", choices=PRECISIONS, default="32-true")
    p.add_argument("--optimizer", choices=OPTIMIZERS, default="adamw")
    p.add_argument(
        "--fused",
        action="store_true",
        help="the optimizer's fused form (Transformers' Trainer's default, adamw_torch_fused)",
    )
    p.add_argument("--checkpointing", action="store_true", help="activation checkpointing")
    p.add_argument("--lora-rank", type=int, help="train LoRA adapters of this rank (peft)")
    p.add_argument("--measure", action="store_true", help="measure on this device instead")
    p.add_argument(
        "--measure-on-cpu",
        action="store_true",
        help=f"with --measure and no GPU: measure a model of over {CPU_MEASURE_LIMIT:,} "
        "parameters anyway (each window runs for real: many minutes)",
    )
    p.add_argument("--json", action="store_true", help="print the plan as JSON, for scripts")
    return p


def _checked(args) -> tuple[object, tuple | None]:
    """The model argument and one sample's shape, checked without importing torch."""
    from gradacc_lessons.planning.config_files import config_fields

    shape = None
    if args.input_shape:
        try:
            shape = tuple(int(n) for n in args.input_shape.split(","))
        except ValueError:
            raise ValueError(
                f"--input-shape {args.input_shape!r}: give integers separated by commas, "
                "e.g. 3,1024,1024"
            ) from None
    budget_bytes(args.budget)  # a misspelled GPU or unit is answered here
    if args.margin is not None and args.margin < 0:
        raise ValueError(f"--margin must be >= 0 GiB, got {args.margin}")
    if args.model in FACTORIES:
        return args.model, shape or (3, 1024, 1024)
    fields = config_fields(args.model)  # a missing file, broken JSON, an unknown preset
    if "model_type" not in fields:
        raise ValueError(f"{args.model}: a config.json names its model_type (llama, gpt2, ...)")
    if args.sequence_length is None:
        raise ValueError(f"{args.model} is a language model: give --sequence-length (tokens)")
    return args.model, shape


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        model, shape = _checked(args)
        result = _plan(args, model, shape)
    except ValueError as error:
        print(f"gradacc-plan: {_in_cli_words(str(error))}", file=sys.stderr)
        return REFUSED
    if args.json:
        print(json.dumps(_as_dict(result), indent=2))
    else:
        _print(result)
    return FITS if result.fits else DOES_NOT_FIT


def _plan(args, model, shape):
    from gradacc_lessons.planning.search import plan  # torch and transformers load here
    from gradacc_lessons.planning.segmentation import UNet

    if args.measure:
        _guard_cpu_measurement(args, UNet if model == "unet" else model, shape)
    return plan(
        UNet if model == "unet" else model,
        args.effective_batch,
        args.budget,
        effective_tokens=args.effective_tokens,
        sequence_length=args.sequence_length,
        input_shape=shape,
        precision=args.precision,
        optimizer=args.optimizer,
        checkpointing=args.checkpointing,
        fused=args.fused,
        lora_rank=args.lora_rank,
        measure=args.measure,
        reserve=args.margin,
        on_measure=_say_measured if args.measure else None,
    )


def _guard_cpu_measurement(args, model, shape) -> None:
    import torch

    from gradacc_lessons.planning.setup import TrainingSetup

    if torch.cuda.is_available() or args.measure_on_cpu:
        return
    setup = TrainingSetup(model, sequence_length=args.sequence_length, input_shape=shape)
    with torch.device("meta"):
        size = sum(p.numel() for p in setup.build_model().parameters())
    if size > CPU_MEASURE_LIMIT:
        raise ValueError(
            f"--measure on this CPU runs each candidate window of a {size / 1e6:,.0f}M-parameter "
            f"model for real: expect many minutes per window (GPT-2 small took over 30 minutes "
            f"in all). Plan without --measure (seconds), or add --measure-on-cpu"
        )
    print(f"measuring on the CPU: {size / 1e6:,.1f}M parameters", file=sys.stderr)


def _say_measured(micro_batch_size: int, accumulation_steps: int, peak_bytes: int) -> None:
    print(
        f"measured: micro-batch {micro_batch_size}, {accumulation_steps} in a window: "
        f"peak {peak_bytes / 2**30:.3f} GiB",
        file=sys.stderr,
        flush=True,
    )


def _print(result) -> None:
    for note in result.notes:
        print(f"note: {note}")
    print(_in_cli_words(repr(result)))
    gib = 2**30
    print(f"  {'budget:':<30} {result.budget_bytes / gib:8.3f} GiB")
    print(f"  {'reserve (--margin):':<30} {result.reserve_bytes / gib:8.3f} GiB")
    print(f"  {'left for training:':<30} {result.usable_bytes / gib:8.3f} GiB")
    for part, size in result.at_peak.items():
        print(f"  {part + ' at the peak:':<30} {size / gib:8.3f} GiB")


def _in_cli_words(text: str) -> str:
    """The planner's advice in this command's flags instead of the Python API's arguments.

    >>> _in_cli_words('Try: lora_rank=16, checkpointing=True, precision="bf16-true"')
    'Try: --lora-rank 16 --checkpointing --precision bf16-true'
    """
    text = re.sub(r"lora_rank=(\d+)", r"--lora-rank \1", text)
    text = re.sub(r"checkpointing=True", "--checkpointing", text)
    text = re.sub(r"fused=True", "--fused", text)
    text = re.sub(r"precision=[\"']([\w-]+)[\"']", r"--precision \1", text)
    text = re.sub(r"(--[\w-]+(?: [\w.-]+)?), (?=--)", r"\1 ", text)
    return text.replace("plan(..., alternatives=True)", "the default (alternatives shown)")


def _as_dict(result) -> dict:
    return {
        "model": result.model,
        "fits": result.fits,
        "micro_batch_size": result.micro_batch_size,
        "accumulation_steps": result.accumulation_steps,
        "effective_batch": result.effective_batch,
        "budget_bytes": result.budget_bytes,
        "reserve_bytes": result.reserve_bytes,
        "usable_bytes": result.usable_bytes,
        "peak_bytes": result.peak_bytes,
        "peak_phase": result.peak_phase,
        "floor_bytes": result.floor_bytes,
        "no_accumulation_bytes": result.no_accumulation_bytes,
        "at_peak": dict(result.at_peak),
        "alternatives": [
            {
                "change": _in_cli_words(a.change),
                "micro_batch_size": a.micro_batch_size,
                "accumulation_steps": a.accumulation_steps,
                "smallest_peak_bytes": a.smallest_peak_bytes,
            }
            for a in result.alternatives
        ],
        "notes": list(result.notes),
        "method": result.method,
    }


if __name__ == "__main__":
    sys.exit(main())
