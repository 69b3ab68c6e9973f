"""Lesson 7's ways of training, each on the same micro-batches, measured against the truth.

The truth (`train_full_batch`: each window as one batch, in float64), the course's loop,
the textbook's, Transformers' Trainer, Accelerate and Lightning each train a copy of the
model with plain SGD and return a `Run`; `measure` runs the chosen ways side by side.

Past 400 lines on purpose: the six ways are one idea, read side by side (each about 40
lines, on the same `Recipe`), so a reader can compare how each framework steps, scales and
schedules without leaving the file.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from tempfile import TemporaryDirectory

import torch

from gradacc_lessons.accumulate import (
    IGNORE_INDEX,
    count_tokens,
    merge_windows,
    train_accumulated,
    windows,
)
from gradacc_lessons.compare import relative_error
from gradacc_lessons.demos.frameworks.process import _quiet_and_restored
from gradacc_lessons.demos.frameworks.recipe import Recipe, Run, _check_way
from gradacc_lessons.demos.frameworks.tiny_lm import (  # make_*, tiny_causal_lm: the doctests
    causal_loss,
    make_chunks,  # noqa: F401
    make_padded_lines,  # noqa: F401
    next_token_targets,
    tiny_causal_lm,  # noqa: F401
)
from gradacc_lessons.display import Table

# --- the truth, the course's loop and the textbook's -----------------------------------


def train_full_batch(model, recipe: Recipe) -> Run:
    """The truth: each window as one batch, in float64 (the course's loop at N = 1).

    >>> recipe = Recipe(*make_chunks("abcdefgh", " abcdefgh", 4, 2), 1, 2)
    >>> train_full_batch(tiny_causal_lm(9), recipe)
    Run('float64 full batch', optimizer steps=2, scheduler steps=2)
    """
    _check_way(model, recipe)
    batches = merge_windows(_shifted(recipe), recipe.accumulation_steps)
    return _course_loop("float64 full batch", copy.deepcopy(model).double(), recipe, batches, 1)


def train_course(model, recipe: Recipe) -> Run:
    """The course's `train_accumulated`, in float32: micro-batches weighted by their samples.

    >>> recipe = Recipe(*make_chunks("abcdefgh", " abcdefgh", 4, 2), 1, 3)
    >>> train_course(tiny_causal_lm(9), recipe).learning_rates
    [1.0, 1.0]
    """
    _check_way(model, recipe)
    micro_batches = _shifted(recipe)
    n = recipe.accumulation_steps
    return _course_loop("train_accumulated", copy.deepcopy(model), recipe, micro_batches, n)


def _course_loop(way, model, recipe, micro_batches, accumulation_steps):
    optimizer, scheduler, rates = _sgd(model, recipe)
    seen = []  # every micro-batch's mean loss, in order

    def loss_fn(outputs, targets):
        loss = causal_loss(outputs, targets)
        seen.append(loss.item())
        return loss

    losses = train_accumulated(
        model, optimizer, loss_fn, micro_batches, accumulation_steps,
        scheduler=scheduler, max_grad_norm=recipe.max_grad_norm,
    )  # fmt: skip
    return Run(
        way, _parameters(model), logged_losses=losses, learning_rates=rates,
        scheduler_steps=scheduler.last_epoch, schedule_length=_schedule_length(recipe),
        last_micro_batch_losses=[w[-1] for w in windows(seen, accumulation_steps)],
    )  # fmt: skip


def train_textbook(model, recipe: Recipe) -> Run:
    """Lesson 1's `if (i + 1) % N == 0` loop: each loss / N, a step per full window.

    It has no scheduler and no clipping, so the recipe must ask for neither.

    >>> recipe = Recipe(*make_chunks("abcdefgh", " abcdefgh", 4, 2), 1, 3)
    >>> train_textbook(tiny_causal_lm(9), recipe)  # 4 micro-batches, N = 3: one full window
    Run('textbook loop', optimizer steps=1, scheduler steps=0)
    """
    _check_way(model, recipe)
    from gradacc_lessons.demos.loops import textbook_loop

    if recipe.schedule != "constant" or recipe.max_grad_norm is not None:
        raise ValueError(
            f"the textbook loop has no scheduler and no clipping: give it a recipe with "
            f'schedule="constant" and max_grad_norm=None, got schedule={recipe.schedule!r}, '
            f"max_grad_norm={recipe.max_grad_norm!r}"
        )
    model = copy.deepcopy(model)
    optimizer, _, rates = _sgd(model, recipe)
    textbook_loop(model, optimizer, causal_loss, _shifted(recipe), recipe.accumulation_steps)
    return Run("textbook loop", _parameters(model), learning_rates=rates)


def _shifted(recipe):
    # a plain PyTorch loop shifts the targets itself: (input_ids, next-token targets)
    return [(x, next_token_targets(y)) for x, y in recipe.micro_batches()]


def _sgd(model, recipe, counted_steps=None):
    """SGD at recipe.lr, its schedule, and the list of the lr of every step it really takes."""
    optimizer = torch.optim.SGD(model.parameters(), lr=recipe.lr)
    rates = []
    optimizer.register_step_pre_hook(lambda opt, *_: rates.append(opt.param_groups[0]["lr"]))
    if recipe.schedule == "constant":
        factor = _constant
    else:
        factor = functools.partial(_linear, steps=_schedule_length(recipe, counted_steps))
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, factor), rates


def _schedule_length(recipe, counted_steps=None):
    # recipe.schedule_steps if given, else the optimizer steps (as the framework counts them)
    return recipe.schedule_steps or counted_steps or recipe.optimizer_steps()


def _constant(step):
    return 1.0


def _linear(step, steps):
    return max(0.0, 1.0 - step / steps)  # the Trainer's "linear", without warm-up


def _parameters(model):
    return {name: p.detach().double().clone() for name, p in model.named_parameters()}


# --- Transformers' Trainer --------------------------------------------------------------


def train_hf_trainer(model, recipe: Recipe) -> Run:
    """Transformers' Trainer with `gradient_accumulation_steps` = N, on the model's own loss.

    The Trainer sizes its own schedule ("constant" or "linear") unless the recipe gives
    `schedule_steps`. Its default clipping (max_grad_norm=1.0) gives way to the recipe's.

    >>> recipe = Recipe(*make_padded_lines("ab\\nabcd\\nabc", " abcd", 3), 1, 2)
    >>> run = train_hf_trainer(tiny_causal_lm(5), recipe)
    >>> run.token_counts, recipe.window_tokens()  # it counts each window's targets first
    ([4, 2], [4, 2])
    """
    _check_way(model, recipe)
    model = copy.deepcopy(model)
    data = [{"input_ids": x, "labels": y} for x, y in zip(recipe.input_ids, recipe.labels)]
    optimizer, scheduler, rates = _sgd(model, recipe)
    with _quiet_and_restored("transformers") as [transformers], TemporaryDirectory() as folder:
        trainer = _counting_trainer(transformers)(
            model=model,
            args=_training_arguments(transformers, recipe, folder),
            train_dataset=data,
            optimizers=(optimizer, scheduler if recipe.schedule_steps else None),  # None: its own
        )
        trainer.remove_callback(transformers.trainer_callback.PrinterCallback)  # it prints logs
        trainer.train()
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    return Run(
        "Trainer", _parameters(model), logged_losses=[e["loss"] for e in logs],
        learning_rates=rates, scheduler_steps=trainer.lr_scheduler.last_epoch,
        schedule_length=_schedule_length(recipe, trainer.state.max_steps),
        token_counts=trainer.token_counts, grad_norms=[e["grad_norm"] for e in logs],
    )  # fmt: skip


def _training_arguments(transformers, recipe, folder):
    return transformers.TrainingArguments(
        output_dir=folder, per_device_train_batch_size=recipe.micro_batch_size,
        gradient_accumulation_steps=recipe.accumulation_steps, num_train_epochs=1,
        learning_rate=recipe.lr, lr_scheduler_type=recipe.schedule,
        max_grad_norm=recipe.max_grad_norm or 0.0,  # 0: no clipping
        train_sampling_strategy="sequential",  # the same micro-batches as every other way
        logging_steps=1, save_strategy="no", report_to=[], disable_tqdm=True, use_cpu=True,
    )  # fmt: skip


def _counting_trainer(transformers):
    class CountingTrainer(transformers.Trainer):
        """Records the token count the Trainer divides each window's loss by."""

        token_counts: list

        def get_batch_samples(self, epoch_iterator, num_batches, device):
            batches, count = super().get_batch_samples(epoch_iterator, num_batches, device)
            self.token_counts = [*getattr(self, "token_counts", []), count and int(count)]
            return batches, count

    return CountingTrainer


# --- Accelerate ---------------------------------------------------------------------------


def train_accelerate(
    model, recipe: Recipe, *, weigh_tokens: bool = False, clip_every_micro_batch: bool = False
) -> Run:
    """Accelerate's `accumulate()` loop, as its guide writes it.

    `weigh_tokens` is the fix: each micro-batch's loss times its share of the window's
    tokens, times N (`accelerator.backward` divides by N). `clip_every_micro_batch`
    clips after every backward instead of once per window (the mistake).

    >>> recipe = Recipe(*make_chunks("abcdefgh", " abcdefgh", 4, 2), 1, 3)
    >>> train_accelerate(tiny_causal_lm(9), recipe)  # it steps on the short last window
    Run('Accelerate', optimizer steps=2, scheduler steps=2)
    """
    _check_way(model, recipe)
    shares, held = _token_shares(recipe), []
    with _quiet_and_restored("accelerate") as [accelerate]:
        accelerator = accelerate.Accelerator(
            gradient_accumulation_steps=recipe.accumulation_steps, cpu=True
        )
        model = copy.deepcopy(model)
        optimizer, scheduler, rates = _sgd(model, recipe)
        model, optimizer, scheduler, loader = accelerator.prepare(
            model, optimizer, scheduler, _loader(recipe)
        )
        for i, (ids, labels) in enumerate(loader):
            with accelerator.accumulate(model):
                loss = causal_loss(model(ids), next_token_targets(labels))
                weight = shares[i] * recipe.accumulation_steps if weigh_tokens else 1.0
                accelerator.backward(loss * weight)  # divides by N
                if recipe.max_grad_norm and (accelerator.sync_gradients or clip_every_micro_batch):
                    accelerator.clip_grad_norm_(model.parameters(), recipe.max_grad_norm)
                if accelerator.sync_gradients:
                    held.append(loss.item())  # the loss the loop holds when the step comes
                optimizer.step()  # does nothing until the window is complete
                scheduler.step()
                optimizer.zero_grad()
    return Run(
        _name("Accelerate", weigh_tokens, clip_every_micro_batch),
        _parameters(accelerator.unwrap_model(model)), logged_losses=held, learning_rates=rates,
        scheduler_steps=scheduler.scheduler.last_epoch, schedule_length=_schedule_length(recipe),
    )  # fmt: skip


def _name(framework, weigh_tokens, clip_every_micro_batch=False):
    if weigh_tokens:
        return f"{framework} + token weights"
    return f"{framework}, clip every micro-batch" if clip_every_micro_batch else framework


def _loader(recipe):
    pairs = list(zip(recipe.input_ids, recipe.labels))
    return torch.utils.data.DataLoader(pairs, batch_size=recipe.micro_batch_size, shuffle=False)


def _token_shares(recipe):
    # each micro-batch's share of its window's next-token targets
    shares = []
    for index, window in enumerate(windows(recipe.micro_batches(), recipe.accumulation_steps)):
        counts = [count_tokens(next_token_targets(y)) for _, y in window]
        if sum(counts) == 0:
            raise ValueError(
                f"window {index} has no next-token target (its labels are all {IGNORE_INDEX}): "
                f"its mean loss is 0/0; leave padding-only sequences out of the recipe"
            )
        shares += [count / sum(counts) for count in counts]
    return shares


# --- Lightning ------------------------------------------------------------------------------


def train_lightning(model, recipe: Recipe, *, weigh_tokens: bool = False) -> Run:
    """Lightning's Trainer with `accumulate_grad_batches` = N; the module logs its loss.

    `weigh_tokens` is the fix: training_step returns its loss times its share of the
    window's tokens, times N (Lightning divides what training_step returns by N).

    >>> recipe = Recipe(*make_chunks("abcdefgh", " abcdefgh", 4, 2), 1, 3)
    >>> train_lightning(tiny_causal_lm(9), recipe, weigh_tokens=True)
    Run('Lightning + token weights', optimizer steps=2, scheduler steps=2)
    """
    _check_way(model, recipe)
    with _quiet_and_restored("lightning") as [lightning], TemporaryDirectory() as folder:
        module = _lightning_module(lightning, model, recipe, weigh_tokens)
        logger = _memory_logger(lightning)
        trainer = lightning.Trainer(
            accelerator="cpu", devices=1, max_epochs=1, default_root_dir=folder,
            accumulate_grad_batches=recipe.accumulation_steps,
            gradient_clip_val=recipe.max_grad_norm, logger=logger, log_every_n_steps=1,
            enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        )  # fmt: skip
        trainer.fit(module, train_dataloaders=_loader(recipe))
    return Run(
        _name("Lightning", weigh_tokens), _parameters(module.model),
        logged_losses=[metrics["loss"] for metrics in logger.history if "loss" in metrics],
        learning_rates=module.rates,
        scheduler_steps=trainer.lr_scheduler_configs[0].scheduler.last_epoch,
        schedule_length=_schedule_length(recipe, trainer.estimated_stepping_batches),
    )  # fmt: skip


def _lightning_module(lightning, model, recipe, weigh_tokens):
    shares = _token_shares(recipe)

    class CausalLM(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            self.model = copy.deepcopy(model)
            self.rates = []

        def training_step(self, batch, index):
            ids, labels = batch
            loss = causal_loss(self.model(ids), next_token_targets(labels))
            self.log("loss", loss)
            return loss * shares[index] * recipe.accumulation_steps if weigh_tokens else loss

        def configure_optimizers(self):  # Lightning counts the optimizer steps for the schedule
            optimizer, scheduler, self.rates = _sgd(
                self, recipe, self.trainer.estimated_stepping_batches
            )
            return {
                "optimizer": optimizer,
                "lr_scheduler": {"scheduler": scheduler, "interval": "step"},
            }

    return CausalLM()


def _memory_logger(lightning):
    class MemoryLogger(lightning.pytorch.loggers.Logger):
        """Keeps what Lightning logs in a list instead of writing files."""

        name, version = "memory", 0

        def __init__(self):
            super().__init__()
            self.history = []

        def log_metrics(self, metrics, step=None):
            self.history.append(dict(metrics))

        def log_hyperparams(self, params, *args, **kwargs):
            pass

    return MemoryLogger()


# --- every way, side by side ------------------------------------------------------------

WAYS = {
    "train_accumulated": train_course,
    "Trainer": train_hf_trainer,
    "Accelerate": train_accelerate,
    "Lightning": train_lightning,
    "textbook loop": train_textbook,
    "Accelerate + token weights": functools.partial(train_accelerate, weigh_tokens=True),
    "Lightning + token weights": functools.partial(train_lightning, weigh_tokens=True),
    "Accelerate, clip every micro-batch": functools.partial(
        train_accelerate, clip_every_micro_batch=True
    ),
}
FOUR_WAYS = ("train_accumulated", "Trainer", "Accelerate", "Lightning")


@dataclass
class Measurement:
    """Runs of one Recipe, each measured against the float64 full batch."""

    recipe: Recipe
    reference: Run
    runs: dict[str, Run]
    errors: dict[str, float]  # update error of each way against the reference

    def __repr__(self) -> str:
        return repr(self.table())

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()

    def table(self) -> Table:
        """Each way's optimizer steps and update error against the float64 full batch."""
        rows = [("float64 full batch", len(self.reference.learning_rates), 0.0)]
        rows += [(way, len(run.learning_rates), self.errors[way]) for way, run in self.runs.items()]
        return Table(("way", "optimizer steps", "update error vs full batch"), rows)


def measure(model, recipe: Recipe, ways=FOUR_WAYS) -> Measurement:
    """Train a copy of `model` each way in `ways` (names from WAYS) and against the truth.

    The update error is ‖update − true update‖ / ‖true update‖, the updates being the
    parameters after training minus before: a last step half too short shows plainly.
    Returns a Measurement, shown as a table.

    >>> recipe = Recipe(*make_chunks("abcdefgh", " abcdefgh", 4, 2), 1, 3)
    >>> measurement = measure(tiny_causal_lm(9), recipe, ["Trainer", "Accelerate"])
    >>> measurement.errors["Trainer"] < 1e-5 < 1e-2 < measurement.errors["Accelerate"]
    True
    """
    _check_way(model, recipe)
    unknown = [way for way in ways if way not in WAYS]
    if unknown or not ways:
        raise ValueError(f"ways must name some of {list(WAYS)}, got {list(ways)!r}")
    start = _parameters(model)
    reference = train_full_batch(model, recipe)
    truth = _update(start, reference)
    runs = {way: WAYS[way](model, recipe) for way in ways}
    errors = {way: relative_error(truth, _update(start, run)) for way, run in runs.items()}
    return Measurement(recipe, reference, runs, errors)


def _update(start, run):
    return {name: run.parameters[name] - start[name] for name in start}
