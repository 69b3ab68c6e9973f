"""Lesson 7: accumulation in Transformers' Trainer, Accelerate and Lightning, measured.

One tiny causal language model, built from a `transformers` config, learns the Zen of
Python character by character. Each way of training (`WAYS`) trains a copy of it on the
same micro-batches, in order, with plain SGD, and returns a `Run`: the parameters it
ends with and what it logged on the way. The truth every way is measured against is
`train_full_batch`: each window as one batch, in float64. `measure` does both and
shows the table.

The frameworks are an optional extra (`pip install "gradacc-lessons[frameworks]"`,
Python >= 3.11). They are imported inside the functions that use them, so the rest of
the course works without them. A run leaves the process as it found it: the global
random generators, the thread count, the environment and the frameworks' log levels
are restored, and nothing is written outside a temporary folder.
"""

from __future__ import annotations

import codecs
import contextlib
import copy
import functools
import gc
import html
import importlib
import inspect
import io
import logging
import math
import operator
import os
import random
import warnings
from dataclasses import dataclass, field
from tempfile import TemporaryDirectory

import numpy as np
import torch

from gradacc_lessons.accumulate import (
    IGNORE_INDEX,
    count_tokens,
    merge_windows,
    token_loss,
    train_accumulated,
    windows,
)
from gradacc_lessons.compare import relative_error
from gradacc_lessons.data import PAD

KINDS = ("llama", "gpt2")
SCHEDULES = ("constant", "linear")
FRAMEWORKS = ("transformers", "accelerate", "lightning")
LOGGERS = ("transformers", "accelerate", "lightning.pytorch", "lightning.fabric")

# --- the text and the model ------------------------------------------------------------


def zen_of_python() -> str:
    """The Zen of Python: the text every Python ships, as `import this`.

    >>> zen_of_python().splitlines()[0]
    'The Zen of Python, by Tim Peters'
    """
    with contextlib.redirect_stdout(io.StringIO()):  # `import this` prints it the first time
        import this
    return codecs.decode(this.s, "rot13")  # the module keeps it ROT13-encoded, as a joke


def make_vocabulary(text: str) -> str:
    """The characters of `text` and a space, sorted: character i is token i (PAD is 0).

    >>> make_vocabulary("hello")
    ' ehlo'
    """
    if not isinstance(text, str) or not text:
        raise ValueError(f"text must be a non-empty string, got {text!r}")
    return "".join(sorted(set(text) | {" "}))


def encode(text: str, vocabulary: str) -> torch.Tensor:
    """The token ids of `text`, one per character.

    >>> encode("hole", " ehlo").tolist()
    [2, 4, 3, 1]
    """
    unknown = sorted(set(text) - set(vocabulary))
    if unknown:
        raise ValueError(
            f"text has characters {unknown!r} that are not in the vocabulary; "
            f"build the vocabulary with make_vocabulary(text)"
        )
    return torch.tensor([vocabulary.index(c) for c in text], dtype=torch.long)


def make_chunks(text: str, vocabulary: str, count: int, length: int):
    """`count` sequences of `length` characters cut from `text`, as (input_ids, labels).

    All have the same length, so there is no padding; the labels are the input ids
    (the model shifts them itself: position t learns to predict character t + 1).

    >>> ids, labels = make_chunks("abcdefgh", " abcdefgh", 2, 3)
    >>> ids.tolist(), bool((ids == labels).all())
    ([[1, 2, 3], [4, 5, 6]], True)
    """
    count, length = _positive("count", count), _positive("length", length)
    ids = encode(" ".join(text.split()), vocabulary)
    if count * length > len(ids):
        raise ValueError(
            f"count * length must be at most the text's {len(ids)} characters, "
            f"got {count} * {length}; ask for fewer or shorter sequences"
        )
    ids = ids[: count * length].view(count, length)
    return ids, ids.clone()


def make_padded_lines(text: str, vocabulary: str, count: int):
    """The first `count` non-empty lines of `text`, one a row, padded on the right.

    Inputs are padded with PAD, labels with IGNORE_INDEX, so the loss skips padding.
    Padding on the right leaves a causal model's outputs on the real characters as
    they are: each position sees only what comes before it.

    >>> ids, labels = make_padded_lines("ab\\n\\nabcd", " abcd", 2)
    >>> labels.tolist()
    [[1, 2, -100, -100], [1, 2, 3, 4]]
    """
    lines = [line for line in text.splitlines() if line]
    count = _positive("count", count)
    if count > len(lines):
        raise ValueError(f"count must be at most the text's {len(lines)} lines, got {count}")
    lines = lines[:count]
    width = max(len(line) for line in lines)
    ids = torch.full((count, width), PAD, dtype=torch.long)
    labels = torch.full((count, width), IGNORE_INDEX, dtype=torch.long)
    for row, line in enumerate(lines):
        ids[row, : len(line)] = labels[row, : len(line)] = encode(line, vocabulary)
    return ids, labels


def tiny_causal_lm(
    vocab_size: int, kind: str = "llama", seed: int = 0, *, layers: int = 2, width: int = 16
):
    """A small causal language model built from a config (2 heads): nothing downloads.

    `kind` is "llama" (LlamaForCausalLM) or "gpt2" (GPT2LMHeadModel, with its dropout off
    so that runs repeat). The weights come from `seed`; the global generator is left alone.

    >>> model = tiny_causal_lm(40)
    >>> type(model).__name__, sum(p.numel() for p in model.parameters())
    ('LlamaForCausalLM', 6480)
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    vocab_size, layers = _positive("vocab_size", vocab_size), _positive("layers", layers)
    if _positive("width", width) % 4:
        raise ValueError(f"width must be a multiple of 4 (2 heads of an even size), got {width}")
    with _quiet_and_restored("transformers") as [transformers]:
        torch.manual_seed(seed)  # the context restores the global generator afterwards
        if kind == "gpt2":
            return transformers.GPT2LMHeadModel(
                transformers.GPT2Config(
                    vocab_size=vocab_size,
                    n_embd=width,
                    n_layer=layers,
                    n_head=2,
                    n_positions=128,
                    resid_pdrop=0.0,
                    embd_pdrop=0.0,
                    attn_pdrop=0.0,
                    bos_token_id=0,
                    eos_token_id=0,
                )
            )
        return transformers.LlamaForCausalLM(
            transformers.LlamaConfig(
                vocab_size=vocab_size,
                hidden_size=width,
                intermediate_size=2 * width,
                num_hidden_layers=layers,
                num_attention_heads=2,
                num_key_value_heads=2,
                max_position_embeddings=128,
                bos_token_id=0,
                eos_token_id=0,
            )
        )


def describe(model) -> str:
    """One line about a model: its class, layers, width, vocabulary and parameters.

    >>> describe(tiny_causal_lm(40))
    'LlamaForCausalLM: 2 layers, 16 wide, 40 tokens, 6,480 parameters'
    """
    if not hasattr(model, "config") or not isinstance(model, torch.nn.Module):
        raise ValueError(f"model must be a Transformers model (tiny_causal_lm), got {model!r}")
    config, layers = model.config, model.config.num_hidden_layers
    parameters = sum(p.numel() for p in model.parameters())
    return (
        f"{type(model).__name__}: {layers} layer{'s' if layers != 1 else ''}, "
        f"{config.hidden_size} wide, {config.vocab_size} tokens, {parameters:,} parameters"
    )


def next_token_targets(labels: torch.Tensor) -> torch.Tensor:
    """The label each position predicts: the next one (IGNORE_INDEX after the last).

    A causal model makes this shift inside its loss. A plain PyTorch loop makes it on
    the targets, so that counting tokens sees exactly what the loss averages over:
    a line of n characters has n - 1 targets.

    >>> next_token_targets(torch.tensor([[5, 6, 7, -100]])).tolist()
    [[6, 7, -100, -100]]
    """
    if not isinstance(labels, torch.Tensor) or labels.dim() != 2:
        raise ValueError(f"labels must be a 2-d tensor (sequences, positions), got {labels!r}")
    end = torch.full_like(labels[:, :1], IGNORE_INDEX)
    return torch.cat([labels[:, 1:], end], dim=1)


def causal_loss(outputs, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of a model's outputs over the real next-token targets.

    >>> model, ids = tiny_causal_lm(8), torch.tensor([[1, 2, 3]])
    >>> mine = causal_loss(model(ids), next_token_targets(ids))
    >>> bool(torch.isclose(mine, model(ids, labels=ids).loss))
    True
    """
    if not isinstance(targets, torch.Tensor) or not hasattr(outputs, "logits"):
        raise ValueError("causal_loss needs a model's outputs (with .logits) and targets, a tensor")
    return token_loss(outputs.logits, targets)


# --- what every way is given, and what it returns ---------------------------------------


@dataclass(frozen=True)
class Recipe:
    """What every way of training is given: the data, the micro-batch, N, the optimizer.

    `input_ids` and `labels` are (sequences, length) tensors in the Trainer's
    convention: labels unshifted, IGNORE_INDEX on padding. A micro-batch is
    `micro_batch` consecutive sequences (the last may be shorter); a window is
    `accumulation_steps` consecutive micro-batches (the last may be shorter). The
    optimizer is SGD at `lr`; `schedule` "linear" decays it to 0 over `schedule_steps`
    scheduler steps (None: as many as there are windows). `max_grad_norm` clips each
    window's gradient (None: no clipping).
    """

    input_ids: torch.Tensor
    labels: torch.Tensor
    micro_batch: int
    accumulation_steps: int
    lr: float = 1.0
    schedule: str = "constant"
    schedule_steps: int | None = None
    max_grad_norm: float | None = None

    def __post_init__(self):
        _check_token_tensors(self.input_ids, self.labels)
        for name in ("micro_batch", "accumulation_steps"):
            object.__setattr__(self, name, _positive(name, getattr(self, name)))
        if self.schedule_steps is not None:
            object.__setattr__(
                self, "schedule_steps", _positive("schedule_steps", self.schedule_steps)
            )
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        for name in ("lr", "max_grad_norm"):
            value = getattr(self, name)
            if (value is not None or name == "lr") and not (_is_real(value) and value > 0):
                raise ValueError(f"{name} must be a positive number, got {value!r}")

    def micro_batches(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The (input_ids, labels) micro-batches, in order.

        >>> recipe = Recipe(*make_chunks("abcdefghij", " abcdefghij", 5, 2), 2, 2)
        >>> [len(ids) for ids, labels in recipe.micro_batches()], recipe.window_sizes()
        ([2, 2, 1], [2, 1])
        """
        return list(
            zip(self.input_ids.split(self.micro_batch), self.labels.split(self.micro_batch))
        )

    def optimizer_steps(self) -> int:
        """How many windows, so optimizer steps, one epoch takes: ceil(micro-batches / N)."""
        return math.ceil(len(self.micro_batches()) / self.accumulation_steps)

    def window_sizes(self) -> list[int]:
        """How many micro-batches each window holds; the last may hold fewer than N."""
        return [len(window) for window in windows(self.micro_batches(), self.accumulation_steps)]

    def micro_batch_tokens(self) -> list[int]:
        """How many next-token targets each micro-batch holds."""
        return [count_tokens(next_token_targets(y)) for _, y in self.micro_batches()]

    def window_tokens(self) -> list[int]:
        """How many next-token targets each window holds: what a token mean divides by.

        >>> Recipe(*make_chunks("abcdefghij", " abcdefghij", 5, 2), 2, 2).window_tokens()
        [4, 1]
        """
        return self._per_window(lambda labels: count_tokens(next_token_targets(labels)))

    def window_labels(self) -> list[int]:
        """How many labels each window holds before the shift: one a sequence too many.

        >>> Recipe(*make_chunks("abcdefghij", " abcdefghij", 5, 2), 2, 2).window_labels()
        [8, 2]
        """
        return self._per_window(count_tokens)

    def _per_window(self, count):
        return [
            sum(count(labels) for _, labels in window)
            for window in windows(self.micro_batches(), self.accumulation_steps)
        ]


@dataclass
class Run:
    """What one way of training did with a Recipe."""

    way: str
    parameters: dict[str, torch.Tensor]  # after training, as float64 copies
    logged_losses: list[float] = field(default_factory=list)  # the loss it reports each step
    learning_rates: list[float] = field(default_factory=list)  # the lr of each optimizer step
    scheduler_steps: int = 0  # how often the scheduler really advanced
    schedule_length: int = 0  # the scheduler steps its schedule was sized for
    token_counts: list[int] = field(default_factory=list)  # Trainer: what it divided by
    grad_norms: list[float] = field(default_factory=list)  # Trainer: each window's norm
    last_micro_batch_losses: list[float] = field(default_factory=list)  # the course's loops

    def __repr__(self) -> str:
        return (
            f"Run({self.way!r}, optimizer steps={len(self.learning_rates)}, "
            f"scheduler steps={self.scheduler_steps})"
        )


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
        output_dir=folder, per_device_train_batch_size=recipe.micro_batch,
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


DEFAULTS = {  # the settings of this lesson, by the class whose signature sets their default
    "Trainer": (
        "gradient_accumulation_steps", "max_grad_norm", "lr_scheduler_type", "logging_steps",
        "average_tokens_across_devices", "train_sampling_strategy",
    ),
    "Accelerator": ("gradient_accumulation_steps",),
    "Lightning Trainer": ("accumulate_grad_batches", "gradient_clip_val", "log_every_n_steps"),
}  # fmt: skip


def framework_defaults() -> Table:
    """What a run inherits unless it says otherwise, read from the frameworks' signatures.

    >>> ("Trainer", "max_grad_norm", 1.0) in framework_defaults().rows
    True
    """
    with _quiet_and_restored(*FRAMEWORKS) as [transformers, accelerate, lightning]:
        classes = {
            "Trainer": transformers.TrainingArguments,
            "Accelerator": accelerate.Accelerator,
            "Lightning Trainer": lightning.Trainer,
        }
        rows = [
            (name, setting, _default(classes[name], setting))
            for name, settings in DEFAULTS.items()
            for setting in settings
        ]
    return Table(("class", "setting", "default"), rows)


def _default(cls, setting):
    value = inspect.signature(cls).parameters[setting].default
    return getattr(value, "value", value)  # an enum member shows as its value


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
    return torch.utils.data.DataLoader(pairs, batch_size=recipe.micro_batch, shuffle=False)


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


# --- tables a lesson shows ----------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """Rows of values with a header: plain text in a terminal, an HTML table in a notebook."""

    headers: tuple
    rows: list

    def __repr__(self) -> str:
        cells = [list(self.headers)] + [[_cell(v) for v in row] for row in self.rows]
        widths = [max(len(row[i]) for row in cells) for i in range(len(self.headers))]
        return "\n".join(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))
            )
            for row in cells
        )

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(str(h))}</th>" for h in self.headers)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>"
            for row in self.rows
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value):
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e4:
        return f"{value:.1f}"
    if isinstance(value, float):
        return f"{value:.4g}" if 1e-3 <= abs(value) < 1e4 else f"{value:.2e}"
    return str(value)


def token_count_table(recipe: Recipe, runs: dict[str, Run]) -> Table:
    """Per window: its labels, its next-token targets, and the count each run divided by."""
    _check_way(torch.nn.Module(), recipe)
    _check_runs("runs", list(runs.values()) if isinstance(runs, dict) else runs)
    headers = ("window", "labels", "next-token targets", *(f"{name} counted" for name in runs))
    counts = [run.token_counts for run in runs.values()]
    columns = [recipe.window_labels(), recipe.window_tokens(), *counts]
    return Table(headers, [(i + 1, *row) for i, row in enumerate(zip(*columns))])


def logged_loss_table(measurement: Measurement) -> Table:
    """Per optimizer step: the window's loss, its last micro-batch's, and what each way logged.

    The window's loss is the float64 full batch's; the last micro-batch's comes from
    the course's loop, `train_accumulated`, which must be among the measured ways.
    """
    if not isinstance(measurement, Measurement):
        raise ValueError(f"measurement must be what measure() returns, got {measurement!r}")
    if "train_accumulated" not in measurement.runs:
        raise ValueError(
            "logged_loss_table needs a measurement of train_accumulated among its ways"
        )
    course = measurement.runs["train_accumulated"]
    runs = [run for run in measurement.runs.values() if run.logged_losses]
    headers = ("step", "window loss", "its last micro-batch", *(run.way for run in runs))
    columns = [measurement.reference.logged_losses, course.last_micro_batch_losses]
    columns += [run.logged_losses for run in runs]
    return Table(headers, [(i + 1, *row) for i, row in enumerate(zip(*columns))])


def schedule_table(*runs: Run) -> Table:
    """Per run: its schedule's length, the scheduler steps it took, the lr of its last step."""
    _check_runs("runs", runs)
    rows = [(r.way, r.schedule_length, r.scheduler_steps, r.learning_rates[-1]) for r in runs]
    headers = ("way", "schedule length", "scheduler steps taken", "lr of the last step")
    return Table(headers, rows)


# --- leaving the process as it was --------------------------------------------------------


def versions() -> str:
    """The versions of torch and of the three frameworks this lesson runs.

    >>> versions().startswith("torch ")
    True
    """
    with _quiet_and_restored(*FRAMEWORKS) as modules:
        found = [f"{module.__name__} {module.__version__}" for module in modules]
    return ", ".join([f"torch {torch.__version__}", *found])


def _framework(name):
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise ImportError(
            f"lesson 7 needs {name}: pip install 'gradacc-lessons[frameworks]' "
            f"(or `make lab`), with Python 3.11 or newer"
        ) from error


@contextlib.contextmanager
def _quiet_and_restored(*names):
    """Import the named frameworks, hide their chatter, and restore what they change.

    Importing Lightning draws from Python's random generator and sets an environment
    variable; the Trainer seeds every global generator. The Trainer also ends with a full
    garbage collection, which walks every object the frameworks created on import (most
    of a second here): frozen objects are skipped.
    """
    generators = random.getstate(), np.random.get_state(), torch.random.get_rng_state()
    gpus = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    threads, environment = torch.get_num_threads(), dict(os.environ)
    gc.freeze()
    try:
        modules = [_framework(name) for name in names]
        loggers = [logging.getLogger(name) for name in LOGGERS]  # after the imports set them
        levels = [logger.level for logger in loggers]
        for logger in loggers:
            logger.setLevel(logging.ERROR)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield modules
        finally:
            for logger, level in zip(loggers, levels):
                logger.setLevel(level)
    finally:
        gc.unfreeze()
        random.setstate(generators[0])
        np.random.set_state(generators[1])
        torch.random.set_rng_state(generators[2])
        if gpus is not None:  # the Trainer seeds the GPUs' generators too
            torch.cuda.set_rng_state_all(gpus)
        torch.set_num_threads(threads)
        os.environ.clear()
        os.environ.update(environment)


def _check_token_tensors(input_ids, labels):
    shapes = [tuple(getattr(t, "shape", ())) for t in (input_ids, labels)]
    if not all(isinstance(t, torch.Tensor) and t.dim() == 2 for t in (input_ids, labels)) or (
        shapes[0] != shapes[1] or shapes[0][0] == 0
    ):
        raise ValueError(
            f"input_ids and labels must be (sequences, length) tensors of one shape, with at "
            f"least one sequence; got shapes {shapes[0]} and {shapes[1]}"
        )
    if input_ids.is_floating_point() or labels.is_floating_point():
        raise ValueError(
            f"input_ids and labels must hold token ids (integers), "
            f"got {input_ids.dtype} and {labels.dtype}"
        )


def _positive(name, value):
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a positive integer (a count), got the boolean {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be a positive integer, got {value!r}") from None
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def _is_real(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_way(model, recipe) -> None:
    """What every way of training is given: a model and a Recipe."""
    if not isinstance(recipe, Recipe):
        raise ValueError(f"recipe must be a Recipe (the data and settings), got {recipe!r}")
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"model must be a torch model (tiny_causal_lm), got {model!r}")


def _check_runs(name: str, runs) -> None:
    if not runs or not all(isinstance(run, Run) for run in runs):
        raise ValueError(f"{name} must be one or more Run of the train_* functions, got {runs!r}")
