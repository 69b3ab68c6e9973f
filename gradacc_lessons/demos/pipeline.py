"""Pipeline parallelism (GPipe): accumulation across devices, in a timetable.

When a model does not fit on one device, pipeline parallelism cuts it into stages,
one per device, and sends activations from stage to stage. A whole batch at once
would keep all but one device idle; GPipe (Huang et al., 2019) splits the batch into
micro-batches that follow each other through the stages, adds up their gradients, and
updates once per batch: gradient accumulation, with the micro-batches overlapping on
different devices. The devices still idle while the pipeline fills and drains: the
"bubble", a share (S - 1) / (M + S - 1) of the time for S stages and M micro-batches.
"""

from __future__ import annotations

from gradacc_lessons.checks import as_count


def gpipe_schedule(stages: int, micro_batches: int) -> list[list[str]]:
    """What each stage does in each time slot: "F3" = forward of micro-batch 3, "--" = idle.

    All forwards first (micro-batch m reaches stage s at slot s + m), then all
    backwards in reverse; one optimizer step after the last backward.

    >>> for row in gpipe_schedule(2, 2):
    ...     print(" ".join(row))
    F1 F2 -- -- B2 B1
    -- F1 F2 B2 B1 --
    """
    stages = as_count("stages", stages, fix="one per device the model is cut over")
    micro_batches = as_count("micro_batches", micro_batches, fix="the micro-batches of a batch")
    forward_slots = micro_batches + stages - 1
    rows = []
    for stage in range(stages):
        row = ["--"] * (2 * forward_slots)
        for m in range(micro_batches):
            row[stage + m] = f"F{m + 1}"
            # Backwards run from the last stage to the first, last micro-batch first.
            row[forward_slots + (stages - 1 - stage) + m] = f"B{micro_batches - m}"
        rows.append(row)
    return rows


def bubble_fraction(stages: int, micro_batches: int) -> float:
    """The share of device time spent idle in `gpipe_schedule`, counted slot by slot.

    >>> bubble_fraction(4, 1), bubble_fraction(4, 8)
    (0.75, 0.2727272727272727)
    """
    slots = [slot for row in gpipe_schedule(stages, micro_batches) for slot in row]
    return sum(slot == "--" for slot in slots) / len(slots)
