"""Lesson 6, beyond one device: graded questions and the no_sync exercise (6 points)."""

from __future__ import annotations

from .core import Assignment, Choice, Drawn, Exercise, MultipleChoice, distinct, pick

PLACEMENTS = {
    "both": "forward **and** backward of every micro-batch but the last of a window run inside "
    "`with model.no_sync():`",
    "backward": "only `loss.backward()` of every micro-batch but the last runs inside "
    "`with model.no_sync():`; the forward pass runs outside it",
    "none": "the loop never uses `no_sync()`",
}


OTHER_PLACEMENT = {
    "both": "That is the count without no_sync(), or with only backward inside it. Forward and "
    "backward inside no_sync() skip the all-reduce of every micro-batch but the last.",
    "backward": "That is what no_sync() around forward *and* backward gives. DDP decides in the "
    "forward pass, so a backward alone inside no_sync() still all-reduces.",
    "none": "That is what no_sync() around forward and backward would give; this loop never "
    "uses it, so every backward all-reduces.",
}


def draw_allreduces(rng, lang="en") -> Drawn:
    """All-reduces of a DDP loop, given where no_sync() is."""
    while True:
        world = pick(rng, (2, 4, 8))
        accumulation_steps = pick(rng, (2, 4, 8))
        updates = pick(rng, (3, 5, 10, 20))
        buckets = pick(rng, (1, 2, 3))
        placement = pick(rng, PLACEMENTS)
        drawn = _allreduces(world, accumulation_steps, updates, buckets, placement)
        if distinct(drawn):
            return drawn


def _allreduces(world, accumulation_steps, updates, buckets, placement) -> Drawn:
    prompt = (
        f"DistributedDataParallel trains on **{world}** processes, accumulating "
        f"**{accumulation_steps}** micro-batches per optimizer step, for **{updates}** optimizer "
        f"steps. The model's gradients travel in **{buckets}** bucket(s), each all-reduced on "
        f"its own. In the loop, {PLACEMENTS[placement]}. How many bucket all-reduces does each "
        "process take part in, in all?"
    )
    per_window = buckets if placement == "both" else buckets * accumulation_steps
    why = {
        "both": "no_sync() around forward and backward silences every micro-batch but the "
        "last: one all-reduce of each bucket per window.",
        "backward": "DDP decides in the forward pass whether the backward will sync; a forward "
        "outside no_sync() syncs, so every micro-batch all-reduces.",
        "none": "Without no_sync() every backward all-reduces every bucket, window or not.",
    }[placement]
    right = Choice(str(updates * per_window), why)
    other = buckets * accumulation_steps if placement == "both" else buckets
    wrong = (
        Choice(str(updates * other), OTHER_PLACEMENT[placement]),
        Choice(
            str(updates * per_window * world),
            "That multiplies by the processes: one all-reduce involves all of them at once, "
            "so each process takes part in it once.",
        ),
        Choice(
            str(updates * per_window // buckets),
            "That counts one all-reduce per synchronising backward; each of its buckets is "
            "all-reduced on its own.",
        )
        if buckets > 1
        else Choice(
            str(updates * (accumulation_steps - 1)),
            "That counts the micro-batches inside no_sync(): those are exactly the ones that "
            "(when placed right) make no all-reduce.",
        ),
    )
    return Drawn(prompt, right, wrong)


def draw_accumulation_steps(rng, lang="en") -> Drawn:
    """accumulation_steps for a target effective batch, or that batch, on many processes."""
    while True:
        world = pick(rng, (2, 4, 8, 16))
        micro_batch_size = pick(rng, (4, 8, 16, 32))
        accumulation_steps = pick(rng, (2, 3, 4, 6, 8))
        asks_accumulation_steps = rng.random() < 0.5
        drawn = (_accumulation_steps if asks_accumulation_steps else _effective_batch)(
            world, micro_batch_size, accumulation_steps
        )
        if distinct(drawn):
            return drawn


def _accumulation_steps(world, micro_batch_size, accumulation_steps) -> Drawn:
    target = world * micro_batch_size * accumulation_steps
    prompt = (
        f"You want optimizer steps that each stand for **{target}** samples. DDP runs "
        f"**{world}** processes, each with micro-batches of **{micro_batch_size}** samples. Which "
        "`accumulation_steps` must every process use? (Lesson 6's "
        "`gradacc_lessons.demos.distributed.effective_batch` checks a guess.)"
    )
    right = Choice(
        str(accumulation_steps),
        f"Effective batch = world size × micro-batch × accumulation steps: {world} × "
        f"{micro_batch_size} × {accumulation_steps} = {target}.",
    )
    wrong = (
        Choice(
            str(target // micro_batch_size),
            "That leaves out the other processes: each of them adds its own micro-batches to "
            "every step.",
        ),
        Choice(
            str(target // world),
            "That is how many samples each process contributes per step, not how many "
            "micro-batches.",
        ),
        Choice(
            str(world * micro_batch_size),
            "That is the number of samples one round of micro-batches brings across all "
            "processes, not a count of rounds.",
        ),
    )
    return Drawn(prompt, right, wrong)


def _effective_batch(world, micro_batch_size, accumulation_steps) -> Drawn:
    prompt = (
        f"DDP runs **{world}** processes. Each one runs micro-batches of **{micro_batch_size}** "
        f"samples and steps after **{accumulation_steps}** of them (`accumulation_steps = "
        f"{accumulation_steps}`). How many samples does one optimizer step stand for? (Lesson 6's "
        "`gradacc_lessons.demos.distributed.effective_batch` computes it.)"
    )
    right = Choice(
        str(world * micro_batch_size * accumulation_steps),
        "Every process adds its own micro-batches, and DDP averages the processes' sums: "
        "world size × micro-batch × accumulation steps.",
    )
    wrong = (
        Choice(
            str(micro_batch_size * accumulation_steps),
            "That is one process's share. DDP averages the gradients of all processes, so each "
            "step stands for all of their samples.",
        ),
        Choice(
            str(world * micro_batch_size),
            "That is one round of micro-batches across the processes; each process runs N of "
            "them before the step.",
        ),
        Choice(
            str(world * accumulation_steps),
            "That counts micro-batches, not samples: each micro-batch holds several samples.",
        ),
    )
    return Drawn(prompt, right, wrong)


STAGES = {
    0: "DDP keeps full parameters, gradients and optimizer state in every process",
    1: "ZeRO-1 shards the optimizer state only",
    2: "ZeRO-2 shards optimizer state and gradients",
    3: "ZeRO-3 (FSDP) shards parameters, gradients and optimizer state",
}


def _per_process(billions: int, world: int, stage: int) -> float:
    full = billions * 1e9 * 4  # float32 bytes
    shard = full / world
    parameters = shard if stage >= 3 else full
    gradients = shard if stage >= 2 else full
    state = 2 * (shard if stage >= 1 else full)  # Adam: two values per parameter
    return (parameters + gradients + state) / 2**30


def draw_sharding(rng, lang="en") -> Drawn:
    """GiB per process of parameters, gradients and Adam state under a ZeRO stage."""
    while True:
        billions, world, stage = (
            pick(rng, (1, 3, 7, 13)),
            pick(rng, (4, 8, 16)),
            pick(rng, (1, 2, 3)),
        )
        drawn = _sharding(billions, world, stage)
        if distinct(drawn):
            return drawn


def _sharding(billions, world, stage) -> Drawn:
    prompt = (
        f"A model of **{billions} billion** float32 parameters trains with Adam (two values of "
        f"state per parameter) on **{world}** processes under **ZeRO stage {stage}**, without "
        "`no_sync()`. What do parameters, gradients and optimizer state add up to in each "
        "process (1 GiB = 2³⁰ bytes)? Lesson 6's `gradacc_lessons.demos.sharding.sharded_bytes` "
        "computes it."
    )
    right = Choice(
        f"{_per_process(billions, world, stage):.1f} GiB",
        f"{STAGES[stage]}: the rest stays whole in every process.",
    )
    wrong = tuple(
        Choice(
            f"{_per_process(billions, world, other):.1f} GiB",
            f"That is stage {other}'s count: {STAGES[other]}.",
        )
        for other in sorted({0, 1, 2, 3} - {stage})
    )
    return Drawn(prompt, right, wrong)


NO_SYNC_PROMPT = """\
### Exercise: put `no_sync()` where it belongs ({points})

Write `train_with_no_sync(model, optimizer, loss_fn, micro_batches, accumulation_steps)`: the
accumulation loop of a DistributedDataParallel model that all-reduces its gradients **once per
window**. `model` has DDP's `no_sync()` context manager; `micro_batches` is a list of
`(inputs, targets)` pairs of equal size, `loss_fn` returns a mean. One optimizer step per window
(a last, shorter window steps too, weighted as a batch of its own samples), gradients cleared
before the first micro-batch and after each step, one micro-batch per forward pass. The hidden
test runs your loop on a stand-in for DDP that counts all-reduces on one process, and compares
the weights with one full-batch step per window; part of the points for each case."""

NO_SYNC_STARTER = '''\
import contextlib


def train_with_no_sync(model, optimizer, loss_fn, micro_batches, accumulation_steps):
    """One optimizer step and one all-reduce per window of accumulation_steps micro-batches."""'''

NO_SYNC_SOLUTION = """\
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        for index, (inputs, targets) in enumerate(window):
            last = index == len(window) - 1
            # DDP decides in the forward pass whether backward all-reduces: wrap both
            with contextlib.nullcontext() if last else model.no_sync():
                loss = loss_fn(model(inputs), targets) / len(window)
                loss.backward()
        optimizer.step()
        optimizer.zero_grad()"""

NO_SYNC_PARTIAL = """\
    optimizer.zero_grad()
    for start in range(0, len(micro_batches), accumulation_steps):
        window = micro_batches[start : start + accumulation_steps]
        for index, (inputs, targets) in enumerate(window):
            last = index == len(window) - 1
            loss = loss_fn(model(inputs), targets) / len(window)
            with contextlib.nullcontext() if last else model.no_sync():
                loss.backward()
        optimizer.step()
        optimizer.zero_grad()"""

NO_SYNC_CHECK = """\
import torch


class _CountingDDP(torch.nn.Module):  # one process; counts the all-reduces DDP would make
    def __init__(self, module):
        super().__init__()
        self.module, self.sync, self.allreduces = module, True, 0

    @contextlib.contextmanager
    def no_sync(self):
        self.sync = False
        try:
            yield
        finally:
            self.sync = True

    def forward(self, inputs):
        outputs = self.module(inputs)
        if self.sync:  # like DDP, the forward pass decides
            outputs.register_hook(lambda grad: setattr(self, "allreduces", self.allreduces + 1))
        return outputs


def _quick_check():
    model = _CountingDDP(torch.nn.Linear(3, 1))
    batches = [(torch.randn(2, 3), torch.randn(2, 1)) for _ in range(8)]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_with_no_sync(model, optimizer, torch.nn.MSELoss(), batches, 4)
    assert model.allreduces != 8, (
        "every micro-batch all-reduced: the forward pass decides, so no_sync() must wrap it too"
    )
    assert model.allreduces == 2, f"{model.allreduces} all-reduces for 2 windows, not 1 each"
    print("Quick check passed: 2 windows, 2 all-reduces. The grader also checks the weights.")


_quick_check()"""

NO_SYNC = Exercise(
    id="l6_no_sync",
    module="no_sync_window",
    goal="put no_sync() around forward and backward",
    prompt={"en": NO_SYNC_PROMPT},
    starter=NO_SYNC_STARTER,
    solution=NO_SYNC_SOLUTION,
    check={"en": NO_SYNC_CHECK},
    partial=NO_SYNC_PARTIAL,
    partial_fails=("one all-reduce per window", "a short last window"),
)

LESSON6 = Assignment(
    name="lesson6_distributed",
    lesson="6",
    title={"en": "Lesson 6 quiz: beyond one device"},
    intro={
        "en": "Three questions and one exercise on lesson 6: all-reduces under DDP, the "
        "effective batch of many processes, and what sharding leaves in each process."
    },
    items=(
        MultipleChoice("l6_allreduces", "compute", "all-reduces of a given loop", draw_allreduces),
        MultipleChoice(
            "l6_accumulation_steps",
            "compute",
            "accumulation steps on many processes",
            draw_accumulation_steps,
        ),
        MultipleChoice("l6_sharding", "compute", "memory per process under ZeRO", draw_sharding),
        NO_SYNC,
    ),
)
