"""Lesson 7's exercise: the arguments that give each framework the learner's effective batch."""

from __future__ import annotations

from gradacc_lessons.exercises.runner import Exercise, Failed, call_learner

# (effective batch, micro-batch per process, processes)
CASES = ((256, 8, 1), (256, 4, 2), (96, 6, 4))


def _diagnose_arguments(function) -> None:
    for batch, micro, processes in CASES:
        got = call_learner(function, batch, micro, processes)
        right = framework_arguments(batch, micro, processes)
        if not isinstance(got, dict):
            raise Failed("not_a_dict", got=type(got).__name__)
        for framework, arguments in right.items():
            theirs = got.get(framework)
            if not isinstance(theirs, dict):
                raise Failed("framework_missing", framework=framework)
            for name, value in arguments.items():
                said = dict(framework=framework, name=name, batch=batch, micro=micro)
                said.update(processes=processes, got=theirs.get(name), right=value)
                if name not in theirs:
                    other = next(iter(set(theirs) - set(arguments)), None)
                    raise Failed("argument_missing", **said, other=other)
                if theirs[name] == value:
                    continue
                if name != "per_device_train_batch_size" and theirs[name] == batch // micro:
                    raise Failed("processes_forgotten", **said)
                if name == "per_device_train_batch_size" and theirs[name] in (
                    batch,
                    batch // processes,
                ):
                    raise Failed("per_device_is_micro", **said)
                raise Failed("argument_differs", **said)


def framework_arguments(effective_batch, micro_batch_size, processes):
    steps = effective_batch // (micro_batch_size * processes)  # every process adds its own
    return {
        "TrainingArguments": {
            "per_device_train_batch_size": micro_batch_size,
            "gradient_accumulation_steps": steps,
        },
        "Accelerator": {"gradient_accumulation_steps": steps},
        "lightning.Trainer": {"accumulate_grad_batches": steps},
    }


FRAMEWORK_ARGUMENTS = Exercise(
    "l7_arguments", 7, _diagnose_arguments, framework_arguments, "hint_l7_arguments"
)
