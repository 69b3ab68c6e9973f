"""Every public function of the student package: bad input raises a ValueError naming the
argument, and a call leaves global state (random streams, threads, BatchNorm buffers) alone.

The public functions are discovered, not listed: a new function without bad-input cases
and a side-effect call here makes `test_every_public_function_is_covered` fail.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import random
import tempfile
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import gradacc_lessons
from gradacc_lessons import (
    accumulate,
    checks,
    compare,
    data,
    device,
    display,
    exercises,
    memory,
    planner,
    precision,
    timing,
)
from gradacc_lessons import lessons as lesson_list
from gradacc_lessons.demos import (
    batchnorm,
    bf16_updates,
    checkpointing,
    distributed,
    dropout,
    frameworks,
    loops,
    loss_scale,
    loss_weighting,
    pipeline,
    pitfalls,
    same_training,
    sharding,
    token_pitfalls,
    training,
)
from gradacc_lessons.demos.distributed import ddp_buffers
from gradacc_lessons.demos.frameworks import two_processes
from gradacc_lessons.figures import explorers, plots
from gradacc_lessons.planning import (
    config_files,
    cpu_kernels,
    fake_step,
    formulas,
    plot,
    predict,
    presets,
)
from gradacc_lessons.planning.segmentation import UNet
from gradacc_lessons.planning.setup import TrainingSetup
from gradacc_lessons.quiz import attempts, language, questions, selfcheck

matplotlib.use("Agg")
search = importlib.import_module("gradacc_lessons.planning.search")


def public_functions() -> dict[str, object]:
    """{"module.function": function} for every public function the package defines."""
    found = {}
    for info in pkgutil.walk_packages(gradacc_lessons.__path__, "gradacc_lessons."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            public = inspect.isfunction(value) and not name.startswith("_")
            if public and value.__module__ == module.__name__:
                found[f"{info.name.removeprefix('gradacc_lessons.')}.{name}"] = value
    return found


def home(package, name: str) -> str:
    """The key of a name that `package` re-exports: the module that defines it, then the name."""
    return f"{getattr(package, name).__module__.removeprefix('gradacc_lessons.')}.{name}"


# --- small, valid arguments ------------------------------------------------------------

X, Y = torch.randn(8, 4, generator=torch.Generator().manual_seed(1)), torch.arange(8) % 3
Q = questions.question("l1_scale")  # a multiple-choice question
P = questions.question("l1_predict_steps")  # a prediction (a number)
EN = language.words_for("en")
A = attempts.Attempt()


def recipe(**changes) -> frameworks.Recipe:
    ids, labels = frameworks.make_chunks("abcdefgh" * 4, " abcdefgh", 4, 6)
    return frameworks.Recipe(
        ids, labels, **{"micro_batch_size": 2, "accumulation_steps": 2, **changes}
    )


def bn_model() -> nn.Module:
    """A model whose BatchNorm buffers show whether a function trained it on the side."""
    return nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 3))


def sgd(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.1)


def pairs(count: int = 4) -> list:
    return accumulate.split_batch(X, Y, count)


def within(context, call):
    with context:
        return call()


def tiny_unet() -> nn.Module:
    return UNet(classes=2, width=4, depth=1)


UNET_SETUP = TrainingSetup(tiny_unet, input_shape=(3, 16, 16), optimizer="sgd")
# A config.json as released models ship it: their dtype beside the shapes
CONFIG_JSON = Path(tempfile.mkdtemp()) / "config.json"
CONFIG_JSON.write_text('{"model_type": "gpt2", "n_layer": 1, "torch_dtype": "bfloat16"}')


def linear_batch(size: int):
    return torch.zeros(size, 4), torch.zeros(size, 3)


def plain() -> nn.Module:
    with device.seeded(0):
        return nn.Linear(4, 3)


NO_ARGUMENTS = {  # nothing a learner could pass wrongly
    "exercises.progress.progress_file",
    "exercises.progress.load",
    "device.pick_device",
    "demos.batchnorm.single_sample.single_sample_error",
    "quiz.questions.faq_questions",
    "quiz.questions.lesson_questions",
    "quiz.questions.self_study_questions",
    "quiz.selfcheck.widgets_can_render",
    "demos.frameworks.tiny_lm.zen_of_python",
    "demos.frameworks.tables.framework_defaults",
    "demos.frameworks.process.versions",
    "quiz.attempts.is_question",  # a predicate: any object is a fair question to it
    "planning.cli.main",  # a command: argparse and exit code 2 answer bad input (test_planning)
    "planning.cpu_kernels.without_onednn",
    "demos.distributed.workers.counting_collectives",
}

# name -> [(argument the message must name, a call with a bad value of it)]
BAD = {
    "exercises.runner.static_html": [("exercise", lambda: exercises.runner.static_html("l1"))],
    "exercises.progress.record": [("passed", lambda: exercises.progress.record("l1_loop", 1))],
    "exercises.progress.exercise_score": [
        ("lang", lambda: exercises.progress.exercise_score("fr")),
    ],
    "exercises.runner.is_unwritten": [("function", lambda: exercises.runner.is_unwritten(3))],
    "exercises.runner.call_learner": [
        ("limit_s", lambda: exercises.runner.call_learner(max, 1, 2, limit_s=0)),
    ],
    "exercises.words.say": [
        ("lang", lambda: exercises.words.say("right", "fr")),
        ("key", lambda: exercises.words.say("wrong key")),
    ],
    "planning.fake_step.fake_step": [
        ("micro_batch_size", lambda: fake_step.fake_step(
            lambda: nn.Linear(4, 3), sgd, linear_batch, F.mse_loss, 0)),
        ("loss_fn", lambda: fake_step.fake_step(
            lambda: nn.Linear(4, 3), sgd, linear_batch, "mse", 2)),
    ],
    "planning.predict.trace": [
        ("setup", lambda: predict.trace("gpt2", 1, 1, "cpu")),
        ("allocator", lambda: predict.trace(UNET_SETUP, 1, 1, "tpu")),
    ],
    "planning.predict.traced_peak": [("allocator", lambda: predict.traced_peak(
        UNET_SETUP, 1, 1, "gpu"))],
    "planning.config_files.read_config_file": [
        ("path", lambda: config_files.read_config_file("/no/such/config.json")),
    ],
    "planning.config_files.config_fields": [
        ("model", lambda: config_files.config_fields("gpt-5")),
    ],
    "planning.config_files.requested_dtype": [
        ("model", lambda: config_files.requested_dtype("gpt-5")),
    ],
    "planning.search.measured_peak": [
        ("setup", lambda: search.measured_peak(None, 1, 1)),
        ("micro_batch_size", lambda: search.measured_peak(UNET_SETUP, 0, 1)),
    ],
    "planning.search.plan": [
        ("effective_batch", lambda: search.plan(tiny_unet, 0, 1, input_shape=(3, 16, 16))),
        ("budget", lambda: search.plan(tiny_unet, 4, -1, input_shape=(3, 16, 16))),
        ("model", lambda: search.plan("gpt-5", 4, 1, sequence_length=8)),
        ("input_shape", lambda: search.plan(tiny_unet, 4, 1)),
        ("sequence_length", lambda: search.plan("gpt2", 4, 1, sequence_length=2048)),
        ("allocator", lambda: search.plan(tiny_unet, 4, 1, input_shape=(3, 8, 8), allocator="x")),
    ],
    "planning.presets.budget_bytes": [
        ("budget", lambda: presets.budget_bytes(0)),
        ("GPU", lambda: presets.budget_bytes("rtx-9090")),
    ],
    "planning.plot.plot_plan": [("plan", lambda: plot.plot_plan({"micro_batch_size": 2}))],
    "planning.cpu_kernels.knows": [("func", lambda: cpu_kernels.knows("add"))],
    "planning.cpu_kernels.workspace_bytes": [
        ("func", lambda: cpu_kernels.workspace_bytes(torch.add, (X, X), {}))
    ],
    "planning.formulas.accelerate_peak_bytes": [
        ("parameters", lambda: formulas.accelerate_peak_bytes(0)),
        ("precision", lambda: formulas.accelerate_peak_bytes(10, "fp8")),
    ],
    "planning.formulas.transformer_math_bytes": [
        ("heads", lambda: formulas.transformer_math_bytes(10, 2, 8, 0, 4, 1)),
    ],
    "accumulate.split_batch": [
        ("accumulation_steps", lambda: accumulate.split_batch(X, Y, True)),
        ("accumulation_steps", lambda: accumulate.split_batch(X, Y, 0)),
        ("accumulation_steps", lambda: accumulate.split_batch(X, Y, 9)),
        ("sizes", lambda: accumulate.split_batch(X, Y, sizes=[])),
        ("sizes", lambda: accumulate.split_batch(X, Y, sizes=[8, 0])),
        ("targets", lambda: accumulate.split_batch(X, Y[:3], 2)),
    ],
    "accumulate.full_batch_gradients": [
        ("targets", lambda: accumulate.full_batch_gradients(plain(), F.cross_entropy, X, Y[:2])),
        ("loss_fn", lambda: accumulate.full_batch_gradients(plain(), "mse", X, Y)),
    ],
    "accumulate.accumulated_gradients": [
        ("normalize", lambda: accumulate.accumulated_gradients(
            plain(), F.cross_entropy, X, Y, 2, normalize="mean")),
        ("accumulation_steps", lambda: accumulate.accumulated_gradients(
            plain(), F.cross_entropy, X, Y, False)),
        ("ignore_index", lambda: accumulate.accumulated_gradients(
            plain(), F.cross_entropy, X, Y, 2, normalize="tokens", ignore_index=None)),
    ],
    "accumulate.count_tokens": [
        ("ignore_index", lambda: accumulate.count_tokens(Y, ignore_index=True)),
        ("targets", lambda: accumulate.count_tokens([1, 2])),
    ],
    "accumulate.token_loss": [("logits", lambda: accumulate.token_loss(X, Y))],
    "accumulate.train_accumulated": [
        ("max_grad_norm", lambda: accumulate.train_accumulated(
            plain(), sgd(plain()), F.cross_entropy, pairs(), 2, max_grad_norm=-1.0)),
        ("max_grad_norm", lambda: accumulate.train_accumulated(
            plain(), sgd(plain()), F.cross_entropy, pairs(), 2, max_grad_norm=0)),
        ("accumulation_steps", lambda: accumulate.train_accumulated(
            plain(), sgd(plain()), F.cross_entropy, pairs(), True)),
        ("micro_batches", lambda: accumulate.train_accumulated(
            plain(), sgd(plain()), F.cross_entropy, [], 2)),
        ("dtype", lambda: accumulate.train_accumulated(
            plain(), sgd(plain()), F.cross_entropy, pairs(), 2, dtype=torch.float64)),
        ("scaler", lambda: accumulate.train_accumulated(
            plain(), sgd(plain()), F.cross_entropy, pairs(), 2, scaler="yes")),
    ],
    "accumulate.forward_loss": [
        ("dtype", lambda: accumulate.forward_loss(plain(), F.cross_entropy, X, Y, torch.int8)),
        ("loss_fn", lambda: accumulate.forward_loss(plain(), "mse", X, Y)),
    ],
    "accumulate.check_autocast_dtype": [
        ("dtype", lambda: accumulate.check_autocast_dtype(None)),
    ],
    "accumulate.windows": [("accumulation_steps", lambda: accumulate.windows(range(4), 0))],
    "accumulate.merge_windows": [
        ("micro_batches", lambda: accumulate.merge_windows([], 2)),
        ("accumulation_steps", lambda: accumulate.merge_windows(pairs(), 2.5)),
    ],
    "accumulate.check_batch": [("inputs", lambda: accumulate.check_batch([1, 2], Y))],
    "accumulate.buffers_kept": [("model", lambda: accumulate.buffers_kept("model").__enter__())],
    "accumulate.scalar_loss": [
        ("loss_fn", lambda: accumulate.scalar_loss(None, X, Y)),
        ("loss_fn", lambda: accumulate.scalar_loss(nn.MSELoss(reduction="none"), X, X)),
    ],
    "checks.as_count": [("steps", lambda: checks.as_count("steps", True))],
    "checks.as_positive": [("norm", lambda: checks.as_positive("norm", float("nan")))],
    "checks.as_fraction": [("spread", lambda: checks.as_fraction("spread", -0.1))],
    "checks.as_counts": [("sizes", lambda: checks.as_counts("sizes", "12"))],
    "checks.as_choice": [("kind", lambda: checks.as_choice("kind", "rnn", ("mlp", "cnn")))],
    "compare.relative_error": [
        ("reference", lambda: compare.relative_error([X], {"w": X})),
        ("both sides", lambda: compare.relative_error({"w": X}, {"v": X})),
        ("nothing to compare", lambda: compare.relative_error({}, {})),
    ],
    "compare.compare_tensors": [("shape", lambda: compare.compare_tensors({"w": X}, {"w": Y}))],
    "compare.parameters_of": [("model", lambda: compare.parameters_of({"w": X}))],
    "compare.accumulation_errors": [
        ("accumulation_steps", lambda: compare.accumulation_errors(
            plain(), F.cross_entropy, X, Y, [])),
        ("accumulation_steps", lambda: compare.accumulation_errors(
            plain(), F.cross_entropy, X, Y, [1, True])),
        ("normalize", lambda: compare.accumulation_errors(
            plain(), F.cross_entropy, X, Y, [1], normalize="tokenz")),
    ],
    "data.load_digits": [("dtype", lambda: data.load_digits(dtype=torch.int64))],
    "data.make_classification": [
        ("samples", lambda: data.make_classification(samples=0)),
        ("classes", lambda: data.make_classification(classes=True)),
        ("seed", lambda: data.make_classification(seed=-1)),
    ],
    "data.make_lengths": [
        ("spread", lambda: data.make_lengths(4, 10, spread=2.0)),
        ("mean_length", lambda: data.make_lengths(4, 0, spread=0.5)),
        ("samples", lambda: data.make_lengths(-4, 10, spread=0.5)),
    ],
    "data.make_sequences": [
        ("vocab", lambda: data.make_sequences(torch.tensor([3, 2]), vocab=1)),
        ("lengths", lambda: data.make_sequences(torch.tensor([3, 0]))),
        ("lengths", lambda: data.make_sequences([3, 2])),
    ],
    "demos.batchnorm.gradients.digits_problem": [
        ("kind", lambda: batchnorm.digits_problem("rnn")),
        ("samples", lambda: batchnorm.digits_problem(samples=0)),
    ],
    "demos.batchnorm.gradients.biases_before_batchnorm": [
        ("model", lambda: batchnorm.biases_before_batchnorm("mlp"))
    ],
    "demos.batchnorm.gradients.gradient_error": [
        ("accumulation_steps", lambda: batchnorm.gradient_error("mlp", "layer", 0)),
        ("norm", lambda: batchnorm.gradient_error("mlp", "instance", 2)),
    ],
    "demos.batchnorm.gradients.compute_batchnorm_errors": [
        ("accumulation_steps", lambda: batchnorm.compute_batchnorm_errors(accumulation_steps=())),
        ("samples", lambda: batchnorm.compute_batchnorm_errors((1,), samples=True)),
    ],
    "demos.batchnorm.gradients.compute_fixes": [
        ("accumulation_steps", lambda: batchnorm.compute_fixes(accumulation_steps=-2)),
    ],
    "demos.batchnorm.gradients.forward_difference": [
        ("accumulation_steps", lambda: batchnorm.forward_difference("mlp", "batch", 0)),
    ],
    "demos.batchnorm.running_stats.compensating_momentum": [
        ("momentum", lambda: batchnorm.compensating_momentum(1.5, 2)),
        ("accumulation_steps", lambda: batchnorm.compensating_momentum(0.1, 0)),
    ],
    "demos.batchnorm.running_stats.running_stats_error": [
        ("accumulation_steps", lambda: batchnorm.running_stats_error(0)),
        ("momentum", lambda: batchnorm.running_stats_error(2, momentum=0.0)),
    ],
    "demos.batchnorm.running_stats.compute_running_stats": [
        ("accumulation_steps", lambda: batchnorm.compute_running_stats(accumulation_steps=[])),
    ],
    "demos.checkpointing.block_forwards_per_step": [
        ("model", lambda: checkpointing.block_forwards_per_step(plain(), X, Y)),
    ],
    "demos.checkpointing.compare_memory_levers": [
        ("accumulation_steps", lambda: checkpointing.compare_memory_levers(X, Y, ())),
        ("depth", lambda: checkpointing.compare_memory_levers(X, Y, (1,), depth=0)),
    ],
    "demos.checkpointing.levers_table": [("rows", lambda: checkpointing.levers_table([]))],
    "demos.distributed.arithmetic.effective_batch": [
        ("world_size", lambda: distributed.effective_batch(0, 4, 2)),
        ("accumulation_steps", lambda: distributed.effective_batch(2, 4, True)),
    ],
    "demos.distributed.arithmetic.make_model": [("config", lambda: distributed.make_model({}))],
    "demos.distributed.arithmetic.make_data": [("config", lambda: distributed.make_data(None))],
    "demos.distributed.arithmetic.rank_micro_batches": [
        ("rank", lambda: distributed.rank_micro_batches(X, Y, 0, 5, distributed.DDPConfig())),
        ("window", lambda: distributed.rank_micro_batches(X, Y, -1, 0, distributed.DDPConfig())),
    ],
    "demos.distributed.arithmetic.train_full_batch": [
        ("config", lambda: distributed.train_full_batch(2)),
    ],
    "demos.distributed.arithmetic.token_mean_gradients": [
        ("config", lambda: distributed.token_mean_gradients("config"))
    ],
    "demos.distributed.workers.counting_allreduce_hook": [
        ("counter", lambda: distributed.counting_allreduce_hook(None, None))
    ],
    "demos.distributed.workers.micro_batch_step": [
        ("mode", lambda: distributed.micro_batch_step(None, X, Y, 1.0, "sometimes", False))
    ],
    "demos.distributed.workers.train_ddp": [
        ("mode", lambda: distributed.train_ddp(distributed.DDPConfig(), 0, "often")),
        ("rank", lambda: distributed.train_ddp(distributed.DDPConfig(), 7, "no_sync")),
    ],
    "demos.distributed.workers.global_token_count": [
        ("valid_tokens", lambda: distributed.global_token_count(-3))
    ],
    "demos.distributed.arithmetic.make_token_data": [
        ("rank", lambda: distributed.make_token_data(distributed.DDPConfig(), True))
    ],
    "demos.distributed.workers.token_gradients": [
        ("recipe", lambda: distributed.token_gradients(distributed.DDPConfig(), 0, "mean"))
    ],
    "demos.distributed.launch.run_processes": [
        ("function", lambda: distributed.run_processes(lambda rank: rank)),
        ("world_size", lambda: distributed.run_processes(print, world_size=1)),
        ("timeout_s", lambda: distributed.run_processes(print, timeout_s=0)),
    ],
    "demos.distributed.sharded.run_fsdp_window": [
        ("config", lambda: distributed.run_fsdp_window({"world_size": 2})),
    ],
    "demos.distributed.sharded.run_sharded_clipping": [
        ("config", lambda: distributed.run_sharded_clipping({"world_size": 2})),
        ("max_fraction", lambda: distributed.run_sharded_clipping(max_fraction=2.0)),
    ],
    "demos.distributed.sharded_precision.run_sharded_accumulation": [
        ("accumulation_steps", lambda: distributed.run_sharded_accumulation([1, 4])),
        ("accumulation_steps", lambda: distributed.run_sharded_accumulation([3])),
        ("samples_per_process", lambda: distributed.run_sharded_accumulation(
            samples_per_process=0)),
        ("timeout_s", lambda: distributed.run_sharded_accumulation(timeout_s=-1)),
    ],
    "demos.distributed.sharded_precision.exact_window_gradient": [
        ("accumulation_steps", lambda: distributed.exact_window_gradient(5, 8)),
        ("world_size", lambda: distributed.exact_window_gradient(2, 8, world_size=0)),
        ("seed", lambda: distributed.exact_window_gradient(2, 8, seed=-1)),
    ],
    "demos.frameworks.two_processes.run_accelerate_processes": [
        ("config", lambda: frameworks.run_accelerate_processes({"world_size": 2})),
        ("samples", lambda: frameworks.run_accelerate_processes(samples=0)),
        ("micro_batch_size", lambda: frameworks.run_accelerate_processes(micro_batch_size=3)),
    ],
    "demos.frameworks.two_processes.token_window": [
        ("count", lambda: two_processes.token_window(None, distributed.DDPConfig(), "mine")),
    ],
    "demos.distributed.ddp_buffers.ddp_buffers_vs_accumulation": [
        ("world_size", lambda: ddp_buffers.ddp_buffers_vs_accumulation(world_size=1)),
        ("steps", lambda: ddp_buffers.ddp_buffers_vs_accumulation(steps=0)),
        ("micro_batch_size", lambda: ddp_buffers.ddp_buffers_vs_accumulation(micro_batch_size=1)),
    ],
    "demos.distributed.launch.run_ddp": [
        ("config", lambda: distributed.run_ddp({"world_size": 2})),
        ("timeout_s", lambda: distributed.run_ddp(timeout_s=0)),
    ],
    "demos.dropout.with_masks": [
        ("model", lambda: dropout.with_masks(X, plain(), seed=0)),
        ("seed", lambda: dropout.with_masks(X, dropout.DropoutMLP(4, 3), seed=-1)),
    ],
    "demos.dropout.compute_dropout_comparison": [
        ("seeds", lambda: dropout.compute_dropout_comparison(seeds=0)),
    ],
    **{
        f"demos.loops.{name}": [
            ("accumulation_steps", lambda loop=loop, extra=extra: loop(
                plain(), sgd(plain()), F.cross_entropy, pairs(), 0, *extra)),
            ("micro_batches", lambda loop=loop, extra=extra: loop(
                plain(), sgd(plain()), F.cross_entropy, [], 2, *extra)),
        ]
        for name, loop, extra in [
            ("textbook_loop", loops.textbook_loop, ()),
            ("off_by_one_loop", loops.off_by_one_loop, ()),
            ("divide_by_n_loop", loops.divide_by_n_loop, ()),
            ("weight_by_samples_loop", loops.weight_by_samples_loop, ()),
            ("weight_by_tokens_loop", loops.weight_by_tokens_loop, ()),
            ("last_window_loop", loops.last_window_loop, ()),
            ("scheduler_per_micro_batch_loop", loops.scheduler_per_micro_batch_loop, (None,)),
            ("scheduler_per_step_loop", loops.scheduler_per_step_loop, (None,)),
            ("clip_per_micro_batch_loop", loops.clip_per_micro_batch_loop, (1.0,)),
            ("clip_once_loop", loops.clip_once_loop, (1.0,)),
            ("log_last_micro_batch_loop", loops.log_last_micro_batch_loop, ()),
            ("log_window_loss_loop", loops.log_window_loss_loop, ()),
        ]
    },
    "demos.loops.full_batch_loop": [
        ("batches", lambda: loops.full_batch_loop(plain(), sgd(plain()), F.cross_entropy, [])),
    ],
    "demos.loops.count_steps": [("train", lambda: loops.count_steps(sgd(plain()), None))],
    "demos.same_training.compare_loops": [
        ("accumulation_steps", lambda: same_training.compare_loops(
            plain(), F.cross_entropy, pairs(), 0)),
        ("model", lambda: same_training.compare_loops("mlp", F.cross_entropy, pairs(), 2)),
    ],
    "demos.same_training.same_training": [
        ("micro_batches", lambda: same_training.same_training(
            plain(), F.cross_entropy, X, Y, 0, 2)),
        ("optimizers", lambda: same_training.same_training(
            plain(), F.cross_entropy, X, Y, 4, 2, optimizers=[])),
    ],
    "memory.instruments.peak_bytes_of": [
        ("step", lambda: memory.peak_bytes_of(None, "cpu")),
        ("device", lambda: memory.peak_bytes_of(lambda: None, "meta")),
    ],
    "demos.pitfalls.uneven_sizes": [
        ("accumulation_steps", lambda: pitfalls.uneven_sizes(8, True, 0.5)),
        ("spread", lambda: pitfalls.uneven_sizes(8, 2, 1.0)),
        ("batch", lambda: pitfalls.uneven_sizes(0, 2, 0.5)),
    ],
    "demos.pitfalls.classification_problem": [
        ("samples", lambda: pitfalls.classification_problem(samples=0)),
    ],
    "demos.pitfalls.record": [
        ("accumulation_steps", lambda: pitfalls.record(
            loops.textbook_loop, plain(), F.cross_entropy, pairs(), 0)),
    ],
    "demos.pitfalls.window_errors": [
        ("references", lambda: pitfalls.window_errors(pitfalls.StepRecorder(plain()), [])),
    ],
    "demos.pitfalls.compute_uneven_damage": [
        ("sizes", lambda: pitfalls.compute_uneven_damage(sizes=(24, 0))),
    ],
    "demos.pitfalls.compute_last_window_damage": [
        ("micro_batch_count", lambda: pitfalls.compute_last_window_damage(micro_batch_count=0)),
    ],
    "demos.pitfalls.compute_clipping_damage": [
        ("max_norm_fraction", lambda: pitfalls.compute_clipping_damage(max_norm_fraction=-0.2)),
    ],
    "demos.pitfalls.compute_logging_damage": [
        ("size", lambda: pitfalls.compute_logging_damage(size=0)),
    ],
    "demos.pitfalls.warmup": [("warmup_steps", lambda: pitfalls.warmup(0))],
    "demos.pitfalls.compute_schedules": [
        ("windows", lambda: pitfalls.compute_schedules(windows=0)),
    ],
    "demos.pitfalls.schedule_damage": [("schedules", lambda: pitfalls.schedule_damage({}))],
    "demos.pitfalls.damage_table": [("damages", lambda: pitfalls.damage_table([]))],
    "demos.token_pitfalls.two_rule_table": [
        ("models", lambda: token_pitfalls.two_rule_table([{"test_loss": 1.0}])),
    ],
    "demos.loss_weighting.compute_reduction_errors": [
        ("accumulation_steps", lambda: loss_weighting.compute_reduction_errors(
            accumulation_steps=0)),
    ],
    "demos.loss_weighting.uneven_errors": [("sizes", lambda: loss_weighting.uneven_errors([]))],
    "demos.loss_weighting.compute_uneven_curves": [
        ("accumulation_steps", lambda: loss_weighting.compute_uneven_curves(accumulation_steps=())),
        ("spreads", lambda: loss_weighting.compute_uneven_curves(spreads=(1.5,))),
    ],
    "demos.token_pitfalls.compute_token_errors": [
        ("spread", lambda: token_pitfalls.compute_token_errors(spread=-1.0)),
        ("samples", lambda: token_pitfalls.compute_token_errors(0.5, samples=True)),
    ],
    "demos.token_pitfalls.token_errors_for_lengths": [
        ("accumulation_steps", lambda: token_pitfalls.token_errors_for_lengths(
            torch.tensor([2, 3]), accumulation_steps=0)),
    ],
    "demos.sharding.sharded_bytes": [
        ("parameters", lambda: sharding.sharded_bytes(-10, 2, 1)),
        ("world_size", lambda: sharding.sharded_bytes(10, True, 1)),
        ("stage", lambda: sharding.sharded_bytes(10, 2, 4)),
    ],
    "demos.sharding.sharding_table": [
        ("bytes_per_value", lambda: sharding.sharding_table(10, 2, bytes_per_value=0)),
    ],
    "demos.training.split_digits": [("train_samples", lambda: training.split_digits(0))],
    "demos.training.lr_factor": [
        ("total_steps", lambda: training.lr_factor(1, 0)),
        ("warmup", lambda: training.lr_factor(1, 10, warmup=1.5)),
        ("step", lambda: training.lr_factor(-1, 10)),
    ],
    "demos.training.run_shape": [
        ("name", lambda: training.run_shape("huge batch", training.TrainingConfig())),
        ("config", lambda: training.run_shape("accumulated", {})),
    ],
    "demos.training.train_run": [("name", lambda: training.train_run("tiny batch"))],
    "demos.training.evaluate": [("y", lambda: training.evaluate(plain(), X, Y[:2]))],
    "demos.training.run_difference": [("a", lambda: training.run_difference(None, None))],
    "device.make_repeatable": [
        ("seed", lambda: device.make_repeatable(seed=-1)),
        ("threads", lambda: device.make_repeatable(threads=0)),
    ],
    "device.seeded": [("seed", lambda: device.seeded(1.5).__enter__())],
    "display.widget_bundle": [
        ("fallback_html", lambda: display.widget_bundle(None, "")),
        ("widget", lambda: display.widget_bundle("widget", "<p>x</p>")),
    ],
    "display.show_widget": [("fallback_html", lambda: display.show_widget(None, "  "))],
    "figures.explorers.accumulation_explorer": [
        ("max_n", lambda: explorers.accumulation_explorer(plain(), F.cross_entropy, X, Y, 0)),
        ("max_n", lambda: explorers.accumulation_explorer(plain(), F.cross_entropy, X, Y, 9)),
    ],
    "figures.explorers.spread_report": [
        ("spread", lambda: explorers.spread_report(3.0, {})),
        ("errors", lambda: explorers.spread_report(0.5, {})),
    ],
    "figures.explorers.spread_explorer": [
        ("accumulation_steps", lambda: explorers.spread_explorer(accumulation_steps=0)),
    ],
    "figures.explorers.describe_plan": [
        ("budget_mib", lambda: explorers.describe_plan(
            plain(), sgd(plain()), F.cross_entropy, X, Y, 8, -1.0)),
        ("effective_batch", lambda: explorers.describe_plan(
            plain(), sgd(plain()), F.cross_entropy, X, Y, 0, 1.0)),
    ],
    "figures.explorers.static_view": [
        ("text", lambda: explorers.static_view(None)),
        ("png", lambda: explorers.static_view("N = 4", png="not bytes")),
    ],
    "figures.explorers.budget_slider": [
        ("budgets_mib", lambda: explorers.budget_slider(
            plain(), sgd(plain()), F.cross_entropy, X, Y, 8, [], 1.0)),
        ("value_mib", lambda: explorers.budget_slider(
            plain(), sgd(plain()), F.cross_entropy, X, Y, 8, (0.5, 2.0, 0.5), -1.0)),
    ],
    "figures.plots.axes_for": [("size", lambda: plots.axes_for(None, size=(0, 3)))],
    "figures.plots.plot_timeline": [("events", lambda: plots.plot_timeline([]))],
    "figures.plots.plot_errors": [
        ("series", lambda: plots.plot_errors([1, 2], {}, "N")),
        ("x", lambda: plots.plot_errors([], {"a": []}, "N")),
    ],
    "figures.plots.plot_lr_schedules": [
        ("schedules", lambda: plots.plot_lr_schedules({})),
        ("samples_seen", lambda: plots.plot_lr_schedules({"a": [0.1, 0.2]})),
    ],
    "figures.plots.plot_memory_breakdown": [
        ("measured", lambda: plots.plot_memory_breakdown([]))
    ],
    "figures.plots.plot_peak_vs_steps": [("reports", lambda: plots.plot_peak_vs_steps([]))],
    "figures.plots.plot_time_vs_steps": [("result", lambda: plots.plot_time_vs_steps([1.0]))],
    "figures.plots.plot_curves": [
        ("runs", lambda: plots.plot_curves([])),
        ("metric", lambda: plots.plot_curves([training.Curves("a")], metric="speed")),
    ],
    "memory.measured.measure_training_memory": [
        ("accumulation_steps", lambda: memory.measure_training_memory(
            plain(), sgd(plain()), F.cross_entropy, X, Y, 0)),
        ("optimizer", lambda: memory.measure_training_memory(
            plain(), "adam", F.cross_entropy, X, Y)),
    ],
    "memory.measured.activation_bytes_per_sample": [
        ("sample_targets", lambda: memory.activation_bytes_per_sample(
            plain(), F.cross_entropy, X, Y[:1])),
    ],
    "memory.analytic.estimate_training_memory": [
        ("micro_batch_size", lambda: memory.estimate_training_memory(
            plain(), sgd(plain()), True, 8.0)),
        ("activation_bytes_per_sample", lambda: memory.estimate_training_memory(
            plain(), sgd(plain()), 4, -8.0)),
    ],
    "memory.analytic.optimizer_state_multiplier": [
        ("optimizer", lambda: memory.optimizer_state_multiplier("sgd")),
    ],
    "memory.measured.optimizer_state_bytes": [
        ("optimizer", lambda: memory.optimizer_state_bytes(None)),
    ],
    "memory.measured.repeat_samples": [
        ("size", lambda: memory.repeat_samples(X, 0)),
        ("samples", lambda: memory.repeat_samples(X[:0], 3)),
    ],
    "memory.measured.format_bytes": [
        ("size", lambda: memory.format_bytes(-512)),
        ("size", lambda: memory.format_bytes("512")),
    ],
    "memory.analytic.memory_by_micro_batch_size": [
        ("sizes", lambda: memory.memory_by_micro_batch_size(
            plain(), sgd(plain()), F.cross_entropy, X, Y, [])),
        ("sizes", lambda: memory.memory_by_micro_batch_size(
            plain(), sgd(plain()), F.cross_entropy, X, Y, [2, 99])),
    ],
    "memory.measured.memory_by_accumulation_steps": [
        ("accumulation_steps", lambda: memory.memory_by_accumulation_steps(
            plain(), sgd(plain()), F.cross_entropy, X, Y, [0])),
    ],
    "planner.plan_accumulation": [
        ("memory_budget", lambda: planner.plan_accumulation(
            plain(), sgd(plain()), F.cross_entropy, X, Y, 8, -1)),
        ("effective_batch", lambda: planner.plan_accumulation(
            plain(), sgd(plain()), F.cross_entropy, X, Y, np.float64(8), 10**6)),
    ],
    "precision.precision_for": [("device", lambda: precision.precision_for("tpu9"))],
    "precision.mixed_precision_gradients": [
        ("dtype", lambda: precision.mixed_precision_gradients(
            plain(), F.cross_entropy, X, Y, 2, dtype=torch.float64)),
        ("accumulation_steps", lambda: precision.mixed_precision_gradients(
            plain(), F.cross_entropy, X, Y, 0)),
    ],
    "precision.train_mixed_precision": [
        ("max_grad_norm", lambda: precision.train_mixed_precision(
            plain(), sgd(plain()), F.cross_entropy, pairs(), 2, max_grad_norm=-1.0)),
        ("micro_batches", lambda: precision.train_mixed_precision(
            plain(), sgd(plain()), F.cross_entropy, [], 2)),
    ],
    "lessons.lesson": [("lesson", lambda: lesson_list.lesson(42))],
    "quiz.questions.questions_for": [
        ("lesson", lambda: questions.questions_for(True)),
        ("lesson", lambda: questions.questions_for(99)),
    ],
    "quiz.questions.question": [("id", lambda: questions.question("no-such-question"))],
    "quiz.attempts.is_right": [("answer", lambda: attempts.is_right(Q, 99))],
    "quiz.attempts.check": [("attempt", lambda: attempts.check(Q, None, 0))],
    "quiz.attempts.show_answer": [("attempt", lambda: attempts.show_answer("tried"))],
    "quiz.attempts.score_text": [("total", lambda: attempts.score_text([A], -1, EN))],
    "quiz.attempts.feedback": [("kind", lambda: attempts.feedback(Q, A, "maybe", 0, EN))],
    "quiz.attempts.tolerance_text": [("question", lambda: attempts.tolerance_text(Q, EN))],
    "quiz.attempts.format_number": [("value", lambda: attempts.format_number("12"))],
    "quiz.attempts.parse_answer": [("text", lambda: attempts.parse_answer(Q, 3, EN))],
    # the learner's typed text: the message, in the quiz's language, quotes it
    "quiz.attempts.parse_number": [("twelve", lambda: attempts.parse_number("twelve", EN))],
    "quiz.language.words_for": [("lang", lambda: language.words_for("fr"))],
    "quiz.language.translated": [("lang", lambda: language.translated(Q, "de"))],
    "quiz.language.languages_of": [("questions", lambda: language.languages_of(["l1_scale"]))],
    "quiz.terminal.draw": [("seed", lambda: selfcheck.draw([Q], seed=True))],
    "quiz.terminal.quiz_text": [("questions", lambda: selfcheck.quiz_text([]))],
    "quiz.terminal.run_text_quiz": [("questions", lambda: selfcheck.run_text_quiz([]))],
    "quiz.selfcheck.build_quiz": [("questions", lambda: selfcheck.build_quiz([]))],
    "quiz.selfcheck.language_switch": [("lang", lambda: selfcheck.language_switch({}, "en"))],
    "quiz.selfcheck.quiz_html": [("lang", lambda: selfcheck.quiz_html([Q], lang="xx"))],
    "quiz.selfcheck.self_check": [("questions", lambda: selfcheck.self_check([]))],
    "demos.frameworks.tiny_lm.make_vocabulary": [("text", lambda: frameworks.make_vocabulary(""))],
    "demos.frameworks.tiny_lm.encode": [("text", lambda: frameworks.encode("xyz", " ab"))],
    "demos.frameworks.tiny_lm.make_chunks": [
        ("count", lambda: frameworks.make_chunks("abc", " abc", True, 1)),
        ("length", lambda: frameworks.make_chunks("abc", " abc", 1, 0)),
    ],
    "demos.frameworks.tiny_lm.make_padded_lines": [
        ("count", lambda: frameworks.make_padded_lines("ab", " ab", 0)),
    ],
    "demos.frameworks.tiny_lm.tiny_causal_lm": [
        ("vocab_size", lambda: frameworks.tiny_causal_lm(0)),
        ("kind", lambda: frameworks.tiny_causal_lm(9, kind="rnn")),
    ],
    "demos.frameworks.tiny_lm.describe": [("model", lambda: frameworks.describe("gpt2"))],
    "demos.frameworks.tiny_lm.next_token_targets": [
        ("labels", lambda: frameworks.next_token_targets([1, 2]))
    ],
    "demos.frameworks.tiny_lm.causal_loss": [("targets", lambda: frameworks.causal_loss(X, [1]))],
    **{
        home(frameworks, name): [("recipe", lambda name=name: getattr(frameworks, name)(
            plain(), {"micro_batch_size": 2}))]
        for name in ["train_full_batch", "train_course", "train_textbook", "train_hf_trainer",
                     "train_accelerate", "train_lightning", "measure"]
    },
    "demos.frameworks.tables.token_count_table": [
        ("recipe", lambda: frameworks.token_count_table(None, {})),
    ],
    "demos.frameworks.tables.logged_loss_table": [
        ("measurement", lambda: frameworks.logged_loss_table({})),
    ],
    "demos.frameworks.tables.schedule_table": [("runs", lambda: frameworks.schedule_table())],
    "timing.time_effective_batch": [
        ("repeats", lambda: timing.time_effective_batch(
            plain(), sgd(plain()), F.cross_entropy, X, Y, [1, 2], repeats=0)),
        ("accumulation_steps", lambda: timing.time_effective_batch(
            plain(), sgd(plain()), F.cross_entropy, X, Y, [])),
    ],
    # lessons' additions (issue 14)
    "precision.float32_gradients": [
        ("model", lambda: precision.float32_gradients("model").__enter__())
    ],
    "precision.accumulation_dtype_errors": [
        ("accumulation_steps", lambda: precision.accumulation_dtype_errors(
            plain(), F.cross_entropy, X, Y, [])),
        ("dtype", lambda: precision.accumulation_dtype_errors(
            plain(), F.cross_entropy, X, Y, [2], dtype=torch.float64)),
    ],
    "precision.compute_skipped_steps": [
        ("init_scale", lambda: precision.compute_skipped_steps(
            plain(), F.cross_entropy, pairs(), 2, init_scale=-1.0)),
        ("micro_batches", lambda: precision.compute_skipped_steps(plain(), F.cross_entropy, [], 2)),
    ],
    "memory.phases.measure_phase_peaks": [
        ("accumulation_steps", lambda: memory.measure_phase_peaks(
            plain(), sgd(plain()), F.cross_entropy, X, Y, 0)),
        ("optimizer", lambda: memory.measure_phase_peaks(plain(), "sgd", F.cross_entropy, X, Y)),
    ],
    "memory.analytic.estimate_temporaries": [
        ("accumulation_steps", lambda: memory.estimate_temporaries(plain(), sgd(plain()), True)),
        ("optimizer", lambda: memory.estimate_temporaries(plain(), None, 2)),
    ],
    "memory.analytic.floor_for": [
        ("parameters", lambda: memory.floor_for(0)),
        ("recipe", lambda: memory.floor_for(10, "bfloat16, Lion")),
    ],
    "memory.analytic.transformer_activation_bytes": [
        ("tokens", lambda: memory.transformer_activation_bytes(0, 8, 2)),
        ("layers", lambda: memory.transformer_activation_bytes(4, 8, 1.5)),
    ],
    "demos.sharding.collectives_per_window": [
        ("strategy", lambda: sharding.collectives_per_window("ZeRO-4", 2, True)),
        ("accumulation_steps", lambda: sharding.collectives_per_window("DDP", 0, True)),
    ],
    "demos.sharding.communication_volumes": [
        ("accumulation_steps", lambda: sharding.communication_volumes("DDP", True, True)),
    ],
    "demos.sharding.communication_table": [
        ("accumulation_steps", lambda: sharding.communication_table(0)),
    ],
    "demos.pipeline.gpipe_schedule": [
        ("stages", lambda: pipeline.gpipe_schedule(0, 4)),
        ("micro_batches", lambda: pipeline.gpipe_schedule(4, 2.5)),
    ],
    "demos.pipeline.bubble_fraction": [("micro_batches", lambda: pipeline.bubble_fraction(4, 0))],
    "demos.distributed.arithmetic.accumulation_steps_for": [
        ("effective_batch", lambda: distributed.accumulation_steps_for(1000, 8, 16)),
        ("world_size", lambda: distributed.accumulation_steps_for(512, 0, 16)),
    ],
    "demos.distributed.arithmetic.sampler_shares": [
        ("dataset_size", lambda: distributed.sampler_shares(0, 2)),
        ("world_size", lambda: distributed.sampler_shares(10, True)),
    ],
    **{
        home(distributed, name): [("weight", lambda name=name: getattr(distributed, name)(
            plain(), X, Y, -1.0, True))]
        for name in ["no_sync_step", "backward_only_no_sync_step", "always_sync_step", "flag_step"]
    },
    "demos.distributed.workers.time_sync_modes": [
        ("modes", lambda: distributed.time_sync_modes(0, modes=("sometimes",))),
        ("repeats", lambda: distributed.time_sync_modes(0, repeats=0)),
    ],
    "demos.distributed.workers.fsdp_collectives": [
        ("accumulation_steps", lambda: distributed.fsdp_collectives(0)),
    ],
    "demos.distributed.workers.batchnorm_gradients": [
        ("rank", lambda: distributed.batchnorm_gradients(distributed.DDPConfig(), 5)),
    ],
    "demos.distributed.workers.unequal_micro_batches": [
        ("timeout_s", lambda: distributed.unequal_micro_batches(0, timeout_s=0)),
    ],
    "demos.distributed.workers.run_experiments": [
        ("config", lambda: distributed.run_experiments({}, 0)),
    ],
    "demos.loss_scale.update_difference": [
        ("scale", lambda: loss_scale.update_difference(
            sgd, plain(), F.cross_entropy, pairs(), 2, scale=-4.0)),
        ("make_optimizer", lambda: loss_scale.update_difference(
            None, plain(), F.cross_entropy, pairs(), 2, 4.0)),
    ],
    "demos.loss_scale.compute_loss_scale_effects": [
        ("clip_factor", lambda: loss_scale.compute_loss_scale_effects(clip_factor=0)),
        ("accumulation_steps", lambda: loss_scale.compute_loss_scale_effects(0)),
    ],
    "demos.token_pitfalls.make_two_rule_sequences": [
        ("lengths", lambda: token_pitfalls.make_two_rule_sequences(lengths=(5, 2))),
        ("vocab", lambda: token_pitfalls.make_two_rule_sequences(vocab=2)),
    ],
    "demos.token_pitfalls.train_two_rule_model": [
        ("normalize", lambda: token_pitfalls.train_two_rule_model("samples", True)),
        ("steps", lambda: token_pitfalls.train_two_rule_model("tokens", True, steps=0)),
    ],
    "demos.batchnorm.running_stats.set_batchnorm_momentum": [
        ("momentum", lambda: batchnorm.set_batchnorm_momentum(bn_model(), 1.5)),
        ("model", lambda: batchnorm.set_batchnorm_momentum("mlp", 0.1)),
    ],
    "demos.bf16_updates.stochastic_round": [
        ("x", lambda: bf16_updates.stochastic_round(torch.ones(2).double(), torch.Generator())),
    ],
    "demos.bf16_updates.update_rounding_errors": [
        ("steps", lambda: bf16_updates.update_rounding_errors(steps=0)),
        ("lr", lambda: bf16_updates.update_rounding_errors(lr=-1.0)),
        ("size", lambda: bf16_updates.update_rounding_errors(size=0)),
    ],
    "demos.batchnorm.single_sample.single_sample_facts": [
        ("length", lambda: batchnorm.single_sample_facts(length=1)),
    ],
    "demos.batchnorm.replicas.replicas_vs_accumulation": [
        ("micro_batch_size", lambda: batchnorm.replicas_vs_accumulation(micro_batch_size=1)),
        ("kind", lambda: batchnorm.replicas_vs_accumulation(2, 4, kind="rnn")),
    ],
    "demos.training.schedule_lengths": [
        ("accumulation_steps", lambda: training.schedule_lengths(8, 0, 5)),
        ("warmup", lambda: training.schedule_lengths(8, 4, 5, warmup=2.0)),
    ],
    "demos.training.compile_from_scratch": [
        ("micro_batches", lambda: training.compile_from_scratch(plain(), [])),
        ("model", lambda: training.compile_from_scratch("mlp", pairs())),
    ],
    "figures.plots.plot_phase_peaks": [("phases", lambda: plots.plot_phase_peaks([]))],
}  # fmt: skip


# The exercises' reference solutions: the learner's code, which test_exercises runs through
# each exercise's check; solution() shows them.
SOLUTIONS = {
    f"{e.reference.__module__.removeprefix('gradacc_lessons.')}.{e.reference.__name__}"
    for e in exercises.EXERCISES.values()
}


def test_every_public_function_is_covered():
    found = set(public_functions()) - SOLUTIONS
    assert found - set(BAD) - NO_ARGUMENTS == set(), "public functions without bad-input cases"
    assert found - set(CALLS) - NOT_CALLED.keys() == set(), "public functions without a call"
    assert set(BAD) | set(CALLS) <= found, "cases for functions that are gone"


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_raises_a_value_error_naming_the_argument(name):
    for argument, call in BAD[name]:
        with pytest.raises(ValueError) as raised:
            call()
        assert argument in str(raised.value), f"{name}: {raised.value}"


# --- a valid call of each function leaves global state alone --------------------------

NOT_CALLED = {  # name -> why no test calls it here (where else it is exercised)
    "exercises.progress.record": "writes the learner's file: test_exercises, in a tmp folder",
    "device.make_repeatable": "it changes the seeds and the threads: its name says so",
    "demos.distributed.workers.counting_allreduce_hook": "needs a process group (test_distributed)",
    "demos.distributed.workers.micro_batch_step": "needs a DDP model (test_distributed)",
    "demos.distributed.workers.train_ddp": "needs a process group (test_distributed)",
    "demos.distributed.workers.global_token_count": "needs a process group (test_distributed)",
    "demos.distributed.workers.token_gradients": "needs a process group (test_distributed)",
    "demos.distributed.ddp_buffers.ddp_buffers_vs_accumulation": "starts processes "
    "(test_two_processes, marker distributed)",
    "demos.distributed.launch.run_ddp": "starts processes (test_distributed, marker distributed)",
    "demos.distributed.launch.run_processes": "starts processes (test_sharded, marker distributed)",
    "demos.distributed.sharded.run_fsdp_window": "starts processes (test_sharded)",
    "demos.frameworks.two_processes.run_accelerate_processes": "starts processes "
    "(test_two_processes)",
    "demos.frameworks.two_processes.token_window": "runs in the processes of "
    "run_accelerate_processes (test_two_processes)",
    "demos.distributed.sharded.run_sharded_clipping": "starts processes (test_sharded)",
    "demos.distributed.sharded_precision.run_sharded_accumulation": "starts processes "
    "(test_sharded_precision)",
    "quiz.terminal.run_text_quiz": "reads answers from input() (test_selfcheck)",
    "planning.cli.main": "a command line; test_planning runs it",
    **{
        home(frameworks, name): "trains for seconds, most with a framework (test_frameworks)"
        for name in [
            "train_full_batch",
            "train_course",
            "train_textbook",
            "train_hf_trainer",
            "train_accelerate",
            "train_lightning",
            "measure",
            "token_count_table",
            "logged_loss_table",
            "schedule_table",
            "framework_defaults",
            "versions",
        ]
    },
    "demos.training.train_run": "trains for seconds (test_training)",
    "demos.distributed.workers.time_sync_modes": "needs a process group (test_distributed)",
    "demos.distributed.workers.fsdp_collectives": "needs a process group (test_distributed)",
    "demos.distributed.workers.batchnorm_gradients": "needs a process group (test_distributed)",
    "demos.distributed.workers.unequal_micro_batches": "needs a process group (test_distributed)",
    "demos.distributed.workers.run_experiments": "needs a process group (test_distributed)",
    "demos.loss_scale.compute_loss_scale_effects": "trains 8 copies for seconds (test_pitfalls)",
    "demos.token_pitfalls.train_two_rule_model": "trains for seconds (test_pitfalls)",
}

BN = bn_model()  # every call below that takes a model gets this one, in train mode
LOOP_EXTRAS = {"clip_per_micro_batch_loop": (1.0,), "clip_once_loop": (1.0,)}


def run_inside(context_manager) -> None:
    with context_manager:
        pass


def with_scheduler(loop):
    model = plain()
    optimizer = sgd(model)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    return loop(model, optimizer, F.cross_entropy, pairs(), 2, scheduler)


CALLS = {
    "exercises.runner.static_html": lambda: exercises.runner.static_html(
        exercises.EXERCISES["l1_loop"], "yo"),
    "exercises.progress.progress_file": exercises.progress.progress_file,
    "exercises.progress.load": exercises.progress.load,
    "exercises.progress.exercise_score": exercises.progress.exercise_score,
    "exercises.runner.is_unwritten": lambda: exercises.runner.is_unwritten(max),
    "exercises.runner.call_learner": lambda: exercises.runner.call_learner(max, 1, 2),
    "exercises.words.say": lambda: exercises.words.say("right", "yo"),
    "demos.bf16_updates.stochastic_round": lambda: bf16_updates.stochastic_round(
        torch.ones(3), torch.Generator().manual_seed(0)),
    "demos.bf16_updates.update_rounding_errors": lambda: bf16_updates.update_rounding_errors(
        steps=3, size=4),
    "planning.fake_step.fake_step": lambda: fake_step.fake_step(
        lambda: nn.Linear(4, 3), sgd, linear_batch, F.mse_loss, 2),
    "planning.predict.trace": lambda: predict.trace(UNET_SETUP, 2, 2, "cpu"),
    "planning.predict.traced_peak": lambda: predict.traced_peak(UNET_SETUP, 2, 1, "cuda"),
    "planning.config_files.read_config_file": lambda: config_files.read_config_file(CONFIG_JSON),
    "planning.config_files.config_fields": lambda: config_files.config_fields("gpt2"),
    "planning.config_files.requested_dtype": lambda: config_files.requested_dtype(CONFIG_JSON),
    "planning.search.measured_peak": lambda: search.measured_peak(UNET_SETUP, 2, 1),
    "planning.search.plan": lambda: search.plan(
        tiny_unet, 8, 0.002, input_shape=(3, 16, 16), optimizer="sgd"),
    "planning.presets.budget_bytes": lambda: presets.budget_bytes("T4"),
    "planning.plot.plot_plan": lambda: plot.plot_plan(search.Plan(
        "m", 8, 2**30, 2, 4, 2**29, "backward", {}, 2**28, 2**31,
        ((1, 2**28), (2, 2**29), (8, 2**31)), (), "a test")),
    "planning.cpu_kernels.knows": lambda: cpu_kernels.knows(torch.ops.aten.add.Tensor),
    "planning.cpu_kernels.without_onednn": lambda: run_inside(cpu_kernels.without_onednn()),
    "planning.cpu_kernels.workspace_bytes": lambda: cpu_kernels.workspace_bytes(
        torch.ops.aten.add.Tensor, (X, X.bfloat16()), {}
    ),
    "planning.formulas.accelerate_peak_bytes": lambda: formulas.accelerate_peak_bytes(10),
    "planning.formulas.transformer_math_bytes": lambda: formulas.transformer_math_bytes(
        10, 2, 8, 2, 4, 1),
    "accumulate.split_batch": lambda: accumulate.split_batch(X, Y, np.int64(2)),
    "accumulate.full_batch_gradients": lambda: accumulate.full_batch_gradients(
        BN, F.cross_entropy, X, Y),
    "accumulate.accumulated_gradients": lambda: accumulate.accumulated_gradients(
        BN, F.cross_entropy, X, Y, 4),
    "accumulate.count_tokens": lambda: accumulate.count_tokens(Y),
    "accumulate.token_loss": lambda: accumulate.token_loss(torch.zeros(2, 3, 4), Y[:6].view(2, 3)),
    "accumulate.train_accumulated": lambda: accumulate.train_accumulated(
        plain(), sgd(plain()), F.cross_entropy, pairs(), 2, max_grad_norm=1.0),
    "accumulate.forward_loss": lambda: accumulate.forward_loss(
        plain(), F.cross_entropy, X, Y, torch.bfloat16),
    "accumulate.check_autocast_dtype": lambda: accumulate.check_autocast_dtype(torch.float16),
    "accumulate.windows": lambda: list(accumulate.windows(range(5), 2)),
    "accumulate.merge_windows": lambda: accumulate.merge_windows(pairs(), 2),
    "accumulate.check_batch": lambda: accumulate.check_batch(X, Y),
    "accumulate.buffers_kept": lambda: within(accumulate.buffers_kept(BN), lambda: BN(X)),
    "accumulate.scalar_loss": lambda: accumulate.scalar_loss(F.cross_entropy, plain()(X), Y),
    "checks.as_count": lambda: checks.as_count("n", 3),
    "checks.as_positive": lambda: checks.as_positive("x", 0.5),
    "checks.as_fraction": lambda: checks.as_fraction("x", 0.5),
    "checks.as_counts": lambda: checks.as_counts("n", [1, 2]),
    "checks.as_choice": lambda: checks.as_choice("n", "a", "ab"),
    "compare.relative_error": lambda: compare.relative_error({"w": X}, {"w": X}),
    "compare.compare_tensors": lambda: compare.compare_tensors({"w": X}, {"w": X}),
    "compare.parameters_of": lambda: compare.parameters_of(BN),
    "compare.accumulation_errors": lambda: compare.accumulation_errors(
        BN, F.cross_entropy, X, Y, [2, 4]),
    "data.load_digits": lambda: data.load_digits(),
    "data.make_classification": lambda: data.make_classification(samples=np.int32(10)),
    "data.make_lengths": lambda: data.make_lengths(4, 10, spread=0.5),
    "data.make_sequences": lambda: data.make_sequences(torch.tensor([3, 1])),
    "demos.batchnorm.gradients.digits_problem": lambda: batchnorm.digits_problem(samples=8),
    "demos.batchnorm.gradients.biases_before_batchnorm": lambda: batchnorm.biases_before_batchnorm(
        BN),
    "demos.batchnorm.gradients.gradient_error": lambda: batchnorm.gradient_error(
        "mlp", "batch", 2, 8),
    "demos.batchnorm.gradients.compute_batchnorm_errors": lambda: (
        batchnorm.compute_batchnorm_errors((1, 2), 8)),
    "demos.batchnorm.gradients.compute_fixes": lambda: batchnorm.compute_fixes(2, 8),
    "demos.batchnorm.gradients.forward_difference": lambda: batchnorm.forward_difference(
        "cnn", "batch", 2, 8),
    "demos.batchnorm.running_stats.compensating_momentum": lambda: batchnorm.compensating_momentum(
        0.1, 4),
    "demos.batchnorm.running_stats.running_stats_error": lambda: batchnorm.running_stats_error(
        2, samples=8),
    "demos.batchnorm.running_stats.compute_running_stats": lambda: batchnorm.compute_running_stats(
        (2,)),
    "demos.batchnorm.single_sample.single_sample_error": batchnorm.single_sample_error,
    "demos.checkpointing.block_forwards_per_step": lambda: checkpointing.block_forwards_per_step(
        within(device.seeded(0), lambda: checkpointing.DeepMLP(4, 3, width=8, depth=1)), X, Y),
    "demos.checkpointing.compare_memory_levers": lambda: checkpointing.compare_memory_levers(
        X, Y, (2,), width=8, depth=1),
    "demos.checkpointing.levers_table": lambda: checkpointing.levers_table(
        [checkpointing.LeverRow(True, 2, 10, 5, 2.0)]),
    "demos.distributed.arithmetic.effective_batch": lambda: distributed.effective_batch(2, 4, 2),
    "demos.distributed.sharded_precision.exact_window_gradient": lambda: (
        distributed.exact_window_gradient(2, samples_per_process=4)),
    "demos.distributed.arithmetic.make_model": lambda: distributed.make_model(
        distributed.DDPConfig()),
    "demos.distributed.arithmetic.make_data": lambda: distributed.make_data(
        distributed.DDPConfig()),
    "demos.distributed.arithmetic.rank_micro_batches": lambda: distributed.rank_micro_batches(
        *distributed.make_data(distributed.DDPConfig()), 0, 1, distributed.DDPConfig()),
    "demos.distributed.arithmetic.train_full_batch": lambda: distributed.train_full_batch(
        distributed.DDPConfig(windows=1)),
    "demos.distributed.arithmetic.token_mean_gradients": lambda: distributed.token_mean_gradients(
        distributed.DDPConfig()),
    "demos.distributed.arithmetic.make_token_data": lambda: distributed.make_token_data(
        distributed.DDPConfig(), 1),
    "demos.dropout.with_masks": lambda: dropout.with_masks(
        X, within(device.seeded(0), lambda: dropout.DropoutMLP(4, 3)), 0),
    "demos.dropout.compute_dropout_comparison": lambda: dropout.compute_dropout_comparison(2),
    **{
        f"demos.loops.{name}": lambda name=name: getattr(loops, name)(
            plain(), sgd(plain()), F.cross_entropy, pairs(), 2, *LOOP_EXTRAS.get(name, ()))
        for name in [
            "textbook_loop", "off_by_one_loop", "divide_by_n_loop", "weight_by_samples_loop",
            "last_window_loop", "clip_per_micro_batch_loop", "clip_once_loop",
            "log_last_micro_batch_loop", "log_window_loss_loop",
        ]
    },
    "demos.loops.scheduler_per_micro_batch_loop": lambda: with_scheduler(
        loops.scheduler_per_micro_batch_loop),
    "demos.loops.scheduler_per_step_loop": lambda: with_scheduler(loops.scheduler_per_step_loop),
    "demos.loops.weight_by_tokens_loop": lambda: loops.weight_by_tokens_loop(
        plain(), sgd(plain()), F.cross_entropy, pairs(), 2),
    "demos.loops.full_batch_loop": lambda: loops.full_batch_loop(
        plain(), sgd(plain()), F.cross_entropy, pairs(2)),
    "demos.loops.count_steps": lambda: loops.count_steps(sgd(plain()), lambda: None),
    "demos.same_training.compare_loops": lambda: same_training.compare_loops(
        BN, F.cross_entropy, pairs(), 2),
    "demos.same_training.same_training": lambda: same_training.same_training(
        BN, F.cross_entropy, X, Y, 4, 2),
    "memory.instruments.peak_bytes_of": lambda: memory.peak_bytes_of(lambda: X.sum(), "cpu"),
    "demos.pitfalls.uneven_sizes": lambda: pitfalls.uneven_sizes(16, 4, 0.5),
    "demos.pitfalls.classification_problem": lambda: pitfalls.classification_problem(16),
    "demos.pitfalls.record": lambda: pitfalls.record(
        loops.textbook_loop, plain(), F.cross_entropy, pairs(), 2),
    "demos.pitfalls.window_errors": lambda: pitfalls.window_errors(
        pitfalls.record(loops.textbook_loop, plain(), F.cross_entropy, pairs(), 4),
        [accumulate.full_batch_gradients(plain(), F.cross_entropy, X, Y)]),
    "demos.pitfalls.compute_uneven_damage": lambda: pitfalls.compute_uneven_damage((6, 2)),
    "demos.pitfalls.compute_last_window_damage": lambda: pitfalls.compute_last_window_damage(
        5, 2, 4),
    "demos.pitfalls.compute_clipping_damage": lambda: pitfalls.compute_clipping_damage(size=4),
    "demos.pitfalls.compute_logging_damage": lambda: pitfalls.compute_logging_damage(4, 2, 4),
    "demos.pitfalls.warmup": lambda: pitfalls.warmup(4)(2),
    "demos.pitfalls.compute_schedules": lambda: pitfalls.compute_schedules(2, 2, 4, 2),
    "demos.pitfalls.schedule_damage": lambda: pitfalls.schedule_damage(
        pitfalls.compute_schedules(2, 2, 4, 2)),
    "demos.loss_weighting.compute_reduction_errors": lambda: (
        loss_weighting.compute_reduction_errors(2, 8)),
    "demos.pitfalls.damage_table": lambda: pitfalls.damage_table([pitfalls.Damage("x", 0.1, 0.0)]),
    "demos.token_pitfalls.two_rule_table": lambda: token_pitfalls.two_rule_table(
        [token_pitfalls.TwoRuleModel("tokens", True, 0.2, 1.0, 0.5)]),
    "demos.loss_weighting.uneven_errors": lambda: loss_weighting.uneven_errors([6, 2]),
    "demos.loss_weighting.compute_uneven_curves": lambda: loss_weighting.compute_uneven_curves(
        (2,), (0.0,), 0.5, 2, 8),
    "demos.token_pitfalls.compute_token_errors": lambda: token_pitfalls.compute_token_errors(
        0.5, 2, samples=4, mean_length=3),
    "demos.token_pitfalls.token_errors_for_lengths": lambda: (
        token_pitfalls.token_errors_for_lengths(torch.tensor([1, 3]), 2)),
    "demos.sharding.sharded_bytes": lambda: sharding.sharded_bytes(10, 2, 1),
    "demos.sharding.sharding_table": lambda: sharding.sharding_table(10, 2),
    "demos.training.split_digits": lambda: training.split_digits(64),
    "demos.training.lr_factor": lambda: training.lr_factor(1, 10),
    "demos.training.run_shape": lambda: training.run_shape(
        "accumulated", training.TrainingConfig()),
    "demos.training.evaluate": lambda: training.evaluate(BN.eval(), X, Y) and BN.train(),
    "demos.training.run_difference": lambda: training.run_difference(
        training.Curves("a", [1.0], [1.0], [0.1], [1], [1.0], [1.0], {"w": X}),
        training.Curves("b", [1.0], [1.0], [0.1], [1], [1.0], [1.0], {"w": X})),
    "device.pick_device": device.pick_device,
    "device.seeded": lambda: within(device.seeded(2), lambda: torch.rand(3)),
    "display.widget_bundle": lambda: display.widget_bundle(
        explorers.widgets.Label("x"), "<p>x</p>"),
    "display.show_widget": lambda: display.show_widget(explorers.widgets.Label("x"), "<p>x</p>"),
    "figures.explorers.accumulation_explorer": lambda: explorers.accumulation_explorer(
        BN, F.cross_entropy, X, Y, 4),
    "figures.explorers.spread_report": lambda: explorers.spread_report(
        0.5, token_pitfalls.TokenErrors([3, 4], broken=0.1, fixed=1e-16, max_abs_fixed=0.0)),
    "figures.explorers.spread_explorer": lambda: explorers.spread_explorer(2),
    "figures.explorers.static_view": lambda: explorers.static_view("N = 4", png=b"png"),
    "figures.explorers.describe_plan": lambda: explorers.describe_plan(
        BN, sgd(BN), F.cross_entropy, X, Y, 8, 1.0),
    "figures.explorers.budget_slider": lambda: explorers.budget_slider(
        BN, sgd(BN), F.cross_entropy, X, Y, 8, (0.5, 1.0, 0.25), 1.0),
    "figures.plots.axes_for": lambda: plots.axes_for(None),
    "figures.plots.plot_timeline": lambda: plots.plot_timeline([accumulate.Event("step", 0)]),
    "figures.plots.plot_errors": lambda: plots.plot_errors([1, 2], {"a": [1e-3, 1e-2]}, "N"),
    "figures.plots.plot_lr_schedules": lambda: plots.plot_lr_schedules(
        {"samples_seen": [32, 64], "full": [0.1, 0.2]}),
    "figures.plots.plot_memory_breakdown": lambda: plots.plot_memory_breakdown(
        [memory.measure_training_memory(BN, sgd(BN), F.cross_entropy, X, Y)]),
    "figures.plots.plot_peak_vs_steps": lambda: plots.plot_peak_vs_steps(
        memory.memory_by_accumulation_steps(BN, sgd(BN), F.cross_entropy, X, Y, [1, 2])),
    "figures.plots.plot_time_vs_steps": lambda: plots.plot_time_vs_steps(
        timing.time_effective_batch(BN, sgd(BN), F.cross_entropy, X, Y, [1, 2], 1)),
    "figures.plots.plot_curves": lambda: plots.plot_curves(
        [training.Curves("a", [1.0], [1.0], [0.1], [1], [1.0], [1.0], {"w": X})]),
    "memory.measured.measure_training_memory": lambda: memory.measure_training_memory(
        BN, sgd(BN), F.cross_entropy, X, Y, 2),
    "memory.measured.activation_bytes_per_sample": lambda: memory.activation_bytes_per_sample(
        BN, F.cross_entropy, X[:2], Y[:2]),
    "memory.analytic.estimate_training_memory": lambda: memory.estimate_training_memory(
        BN, sgd(BN), 4, 8.0),
    "memory.analytic.optimizer_state_multiplier": lambda: memory.optimizer_state_multiplier(
        sgd(BN)),
    "memory.measured.optimizer_state_bytes": lambda: memory.optimizer_state_bytes(sgd(BN)),
    "memory.measured.repeat_samples": lambda: memory.repeat_samples(X, 10),
    "memory.measured.format_bytes": lambda: memory.format_bytes(3584),
    "memory.analytic.memory_by_micro_batch_size": lambda: memory.memory_by_micro_batch_size(
        BN, sgd(BN), F.cross_entropy, X, Y, [2, 8]),
    "memory.measured.memory_by_accumulation_steps": lambda: memory.memory_by_accumulation_steps(
        BN, sgd(BN), F.cross_entropy, X, Y, [1, 2]),
    "planner.plan_accumulation": lambda: planner.plan_accumulation(  # measures 1 sample: no BN
        plain(), sgd(plain()), F.cross_entropy, X, Y, 8, 10**6),
    "precision.precision_for": lambda: precision.precision_for("cpu"),
    "precision.mixed_precision_gradients": lambda: precision.mixed_precision_gradients(
        BN, F.cross_entropy, X, Y, 2),
    "precision.train_mixed_precision": lambda: precision.train_mixed_precision(
        plain(), sgd(plain()), F.cross_entropy, pairs(), 2, max_grad_norm=1.0),
    "lessons.lesson": lambda: lesson_list.lesson(1),
    "quiz.questions.questions_for": lambda: questions.questions_for(np.int64(1)),
    "quiz.questions.faq_questions": questions.faq_questions,
    "quiz.questions.lesson_questions": questions.lesson_questions,
    "quiz.questions.self_study_questions": questions.self_study_questions,
    "quiz.questions.question": lambda: questions.question(Q.id),
    "quiz.attempts.is_right": lambda: attempts.is_right(Q, Q.answer),
    "quiz.attempts.check": lambda: attempts.check(Q, A, 0),
    "quiz.attempts.show_answer": lambda: attempts.show_answer(A),
    "quiz.attempts.score_text": lambda: attempts.score_text([A], 3, EN),
    "quiz.attempts.feedback": lambda: attempts.feedback(Q, A, "right", Q.answer, EN),
    "quiz.attempts.tolerance_text": lambda: attempts.tolerance_text(P, EN),
    "quiz.attempts.format_number": lambda: attempts.format_number(0.25),
    "quiz.attempts.parse_answer": lambda: attempts.parse_answer(Q, "b", EN),
    "quiz.attempts.parse_number": lambda: attempts.parse_number("12.5", EN),
    "quiz.attempts.is_question": lambda: attempts.is_question(Q),
    "quiz.language.words_for": lambda: language.words_for("yo"),
    "quiz.language.translated": lambda: language.translated(Q, "en"),
    "quiz.language.languages_of": lambda: language.languages_of([Q, P]),
    "quiz.terminal.draw": lambda: selfcheck.draw([Q, P]),  # a fresh order: its own generator
    "quiz.terminal.quiz_text": lambda: selfcheck.quiz_text([Q, P]),
    "quiz.selfcheck.build_quiz": lambda: selfcheck.build_quiz([Q, P]),
    "quiz.selfcheck.language_switch": lambda: selfcheck.language_switch(
        {"en": selfcheck.build_quiz([Q]), "yo": selfcheck.build_quiz([Q], "yo")}, "en"),
    "quiz.selfcheck.quiz_html": lambda: selfcheck.quiz_html([Q, P]),
    "quiz.selfcheck.widgets_can_render": selfcheck.widgets_can_render,
    "quiz.selfcheck.self_check": lambda: selfcheck.self_check([Q]),
    "demos.frameworks.tiny_lm.zen_of_python": frameworks.zen_of_python,
    "demos.frameworks.tiny_lm.make_vocabulary": lambda: frameworks.make_vocabulary("hello"),
    "demos.frameworks.tiny_lm.encode": lambda: frameworks.encode("hole", " ehlo"),
    "demos.frameworks.tiny_lm.make_chunks": lambda: frameworks.make_chunks(
        "abcdefgh", " abcdefgh", 2, 3),
    "demos.frameworks.tiny_lm.make_padded_lines": lambda: frameworks.make_padded_lines(
        "ab\nabcd", " abcd", 2),
    "demos.frameworks.tiny_lm.tiny_causal_lm": lambda: frameworks.tiny_causal_lm(9),
    "demos.frameworks.tiny_lm.describe": lambda: frameworks.describe(frameworks.tiny_causal_lm(9)),
    "demos.frameworks.tiny_lm.next_token_targets": lambda: frameworks.next_token_targets(
        torch.tensor([[1, 2, 3]])),
    "demos.frameworks.tiny_lm.causal_loss": lambda: frameworks.causal_loss(
        frameworks.tiny_causal_lm(9)(torch.tensor([[1, 2, 3]])), torch.tensor([[2, 3, -100]])),
    "timing.time_effective_batch": lambda: timing.time_effective_batch(
        BN, sgd(BN), F.cross_entropy, X, Y, [1, 2], 1),
    # lessons' additions (issue 14)
    "precision.float32_gradients": lambda: within(
        precision.float32_gradients(plain()), lambda: plain()(X).sum().backward()),
    "precision.accumulation_dtype_errors": lambda: precision.accumulation_dtype_errors(
        BN, F.cross_entropy, X, Y, [1, 2]),
    "precision.compute_skipped_steps": lambda: precision.compute_skipped_steps(
        plain(), F.cross_entropy, pairs(), 2, 2.0**20, 2),
    "memory.phases.measure_phase_peaks": lambda: memory.measure_phase_peaks(
        BN, sgd(BN), F.cross_entropy, X, Y, 2),
    "memory.analytic.estimate_temporaries": lambda: memory.estimate_temporaries(BN, sgd(BN), 2),
    "memory.analytic.floor_for": lambda: memory.floor_for(np.int64(10**6)),
    "memory.analytic.transformer_activation_bytes": lambda: memory.transformer_activation_bytes(
        4, 8, 2),
    "demos.sharding.collectives_per_window": lambda: sharding.collectives_per_window(
        "FULL_SHARD", 4, False),
    "demos.sharding.communication_volumes": lambda: sharding.communication_volumes("DDP", 4, True),
    "demos.sharding.communication_table": lambda: sharding.communication_table(4),
    "demos.pipeline.gpipe_schedule": lambda: pipeline.gpipe_schedule(3, 4),
    "demos.pipeline.bubble_fraction": lambda: pipeline.bubble_fraction(3, 4),
    "demos.distributed.arithmetic.accumulation_steps_for": lambda: (
        distributed.accumulation_steps_for(512, 4, 16)),
    "demos.distributed.arithmetic.sampler_shares": lambda: distributed.sampler_shares(10, 4),
    **{
        home(distributed, name): lambda name=name: getattr(distributed, name)(
            plain(), X, Y, 0.5, True)  # outside DDP, the last micro-batch is a plain step
        for name in ["no_sync_step", "backward_only_no_sync_step", "always_sync_step", "flag_step"]
    },
    "demos.distributed.workers.counting_collectives": lambda: within(
        distributed.counting_collectives(), lambda: None),
    "demos.loss_scale.update_difference": lambda: loss_scale.update_difference(
        lambda p: torch.optim.SGD(p, lr=0.1), plain(), F.cross_entropy, pairs(), 2, 4.0),
    "demos.token_pitfalls.make_two_rule_sequences": lambda: token_pitfalls.make_two_rule_sequences(
        4, 2),
    "demos.batchnorm.running_stats.set_batchnorm_momentum": lambda: (
        batchnorm.set_batchnorm_momentum(within(device.seeded(0), bn_model), 0.05)),
    "demos.batchnorm.single_sample.single_sample_facts": lambda: batchnorm.single_sample_facts(),
    "demos.batchnorm.replicas.replicas_vs_accumulation": lambda: batchnorm.replicas_vs_accumulation(
        2, 4),
    "demos.training.schedule_lengths": lambda: training.schedule_lengths(8, 4, 2),
    "demos.training.compile_from_scratch": lambda: training.compile_from_scratch(plain(), pairs()),
    "figures.plots.plot_phase_peaks": lambda: plots.plot_phase_peaks(
        memory.measure_phase_peaks(BN, sgd(BN), F.cross_entropy, X, Y, 2)),
}  # fmt: skip


def global_state() -> dict:
    """What a package function must leave as it found it."""
    return {
        "torch random stream": torch.random.get_rng_state(),
        "numpy random stream": np.random.get_state()[1].copy(),
        "python random stream": random.getstate(),
        "torch threads": torch.get_num_threads(),
        "oneDNN on": torch.backends.mkldnn.enabled,
        "BatchNorm buffers": [b.clone() for b in BN.buffers()],
        "BatchNorm train mode": BN.training,
    }  # fmt: skip


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    if isinstance(a, list) and a and isinstance(a[0], torch.Tensor):
        return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def no_redirection(*args):
    raise AssertionError(f"a package function redirected a file descriptor: os.dup2{args}")


# torch.compile from empty caches takes seconds: this call runs in make test only
# (test_training compiles in make check too).
SLOW_CALLS = {"demos.training.compile_from_scratch"}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_CALLS else n for n in sorted(CALLS)],
)
def test_a_call_leaves_global_state_alone(name, monkeypatch):
    torch.manual_seed(123)  # a state that no function resets to by chance
    before = global_state()
    monkeypatch.setattr(os, "dup2", no_redirection)  # stdout and stderr are the process's
    result = CALLS[name]()
    monkeypatch.undo()
    after = global_state()
    changed = [what for what in before if not same(before[what], after[what])]
    assert changed == [], f"{name} changed {changed}"
    del result
    matplotlib.pyplot.close("all")
