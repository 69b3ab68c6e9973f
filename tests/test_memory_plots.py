"""Lesson 4's sweeps, timing, figures and budget slider, without a browser."""

import matplotlib.pyplot as plt
import pytest
import torch
from torch import nn

from gradacc_lessons.accumulate import Event
from gradacc_lessons.figures.explorers import budget_slider, describe_plan
from gradacc_lessons.figures.plots import (
    FLOOR,
    plot_errors,
    plot_memory_breakdown,
    plot_peak_vs_steps,
    plot_phase_peaks,
    plot_time_vs_steps,
    plot_timeline,
)
from gradacc_lessons.memory import (
    MemoryReport,
    Phase,
    measure_training_memory,
    memory_by_accumulation_steps,
    memory_by_micro_batch_size,
)
from gradacc_lessons.timing import TimingResult, time_effective_batch


def tiny_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 6, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(6 * 6 * 6, 3)
    )


def cnn_data(samples):
    return torch.randn(samples, 1, 6, 6), torch.randint(3, (samples,))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --- sweeps --------------------------------------------------------------------------------


def test_the_micro_batch_sweep_measures_each_size_and_models_it():
    model = tiny_cnn()
    opt = torch.optim.Adam(model.parameters())
    x, y = cnn_data(32)
    measured, modelled = memory_by_micro_batch_size(
        model, opt, nn.CrossEntropyLoss(), x, y, [1, 8, 32]
    )
    assert [r.micro_batch_size for r in measured] == [1, 8, 32]
    assert [r.micro_batch_size for r in modelled] == [1, 8, 32]
    alone = measure_training_memory(model, opt, nn.CrossEntropyLoss(), x[:8], y[:8])
    assert measured[1] == alone  # the sweep is the measurement, size by size
    for m, e in zip(measured, modelled):
        assert e.floor_bytes == m.floor_bytes
        # measured: the model is 0.996 (1 sample), 0.9995 (8) and 0.9999 (32) of the
        # measurement; 2 % is 5x the worst, and a model off by one tensor per sample misses it
        assert e.activation_bytes == pytest.approx(m.activation_bytes, rel=0.02)
    with pytest.raises(ValueError, match="between 1 and 32"):
        memory_by_micro_batch_size(model, opt, nn.CrossEntropyLoss(), x, y, [64])


def test_the_steps_sweep_keeps_the_effective_batch():
    model = tiny_cnn()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = cnn_data(24)
    reports = memory_by_accumulation_steps(model, opt, nn.CrossEntropyLoss(), x, y, [1, 2, 3, 8])
    assert [(r.accumulation_steps, r.micro_batch_size) for r in reports] == [
        (1, 24),
        (2, 12),
        (3, 8),
        (8, 3),
    ]
    activations = [r.activation_bytes for r in reports]
    assert activations == sorted(activations, reverse=True)


# --- timing --------------------------------------------------------------------------------


def test_timing_reports_medians_and_ratios_and_leaves_the_model_alone():
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
    opt = torch.optim.Adam(model.parameters())
    before = {k: v.clone() for k, v in model.state_dict().items()}
    x, y = torch.randn(64, 16), torch.randint(4, (64,))
    result = time_effective_batch(model, opt, nn.CrossEntropyLoss(), x, y, [1, 4, 64], repeats=3)
    assert result.accumulation_steps == (1, 4, 64)
    assert all(t > 0 for t in result.accumulated_seconds + result.small_batch_seconds)
    assert result.slowdown[0] == 1.0
    # how the times compare (N=64 slower than N=1) is a benchmark: tests/test_benchmarks.py
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())
    assert not opt.state
    assert "N=64" in repr(result)


def test_timing_ratios_by_hand():
    result = TimingResult((1, 4), (2.0, 3.0), (2.0, 6.0), effective_batch=64, repeats=1)
    assert result.slowdown == [1.0, 1.5]
    assert result.saving_over_small_batches == [1.0, 2.0]
    assert result.samples_per_second == [32.0, pytest.approx(64 / 3)]


def test_timing_rejects_bad_arguments():
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randint(2, (8,))
    with pytest.raises(ValueError, match="repeats"):
        time_effective_batch(model, opt, nn.CrossEntropyLoss(), x, y, [1], repeats=0)
    with pytest.raises(ValueError, match="accumulation_steps must be"):
        time_effective_batch(model, opt, nn.CrossEntropyLoss(), x, y, [16])


# --- figures -------------------------------------------------------------------------------


def report(peak, parts, size, steps=1):
    return MemoryReport(
        peak, *parts, "cpu", "test", micro_batch_size=size, accumulation_steps=steps
    )


def test_the_breakdown_stacks_the_parts_and_the_temporaries():
    measured = [report(3000, (100, 100, 200, 1000), 4), report(9000, (100, 100, 200, 4000), 16)]
    fig, ax = plot_memory_breakdown(measured, measured)
    bars = [p for p in ax.patches]
    assert len(bars) == 5 * 2  # four parts + temporaries, for each size
    tops = [max(b.get_y() + b.get_height() for b in bars if b.get_x() < i < b.get_x() + 1)
            for i in (0.1, 1.1)]  # fmt: skip
    # The stack reaches the measured peak (in KiB) when the peak exceeds the parts.
    assert tops == pytest.approx([3000 / 1024, 9000 / 1024])
    labels = ax.get_legend_handles_labels()[1]
    assert {"parameters", "gradients", "optimizer state", "activations", "temporaries"} <= set(
        labels
    )
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4", "16"]
    assert ax.get_ylabel() == "memory (KiB)"


def test_the_steps_plot_draws_the_floor():
    reports = [
        report(4 * 2**20 // n, (2**19, 2**19, 2**20, 2**21 // n), 64 // n, n) for n in (1, 4)
    ]
    fig, ax = plot_peak_vs_steps(reports)
    floor = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert len(floor) == 1 and floor[0].get_ydata()[0] == pytest.approx(2.0)  # MiB
    assert ax.get_ylabel() == "memory (MiB)"
    assert "64 samples" in ax.get_title()
    assert len({line.get_linestyle() for line in ax.get_lines()}) == 3  # dashes differ


def test_the_time_plot_shows_both_ways_relative_to_n_1():
    result = TimingResult((1, 4, 16), (1.0, 1.5, 4.0), (1.0, 2.0, 8.0), 64, 3)
    fig, ax = plot_time_vs_steps(result)
    accumulated, separate = ax.get_lines()[:2]
    assert list(accumulated.get_ydata()) == [1.0, 1.5, 4.0]
    assert list(separate.get_ydata()) == [1.0, 2.0, 8.0]
    assert accumulated.get_linestyle() != separate.get_linestyle()


def test_the_time_plot_takes_both_timings_of_n_1_as_its_baseline():
    # At N = 1 both ways are one computation timed twice: the plot divides by their mean.
    result = TimingResult((1, 4), (1.0, 3.0), (3.0, 6.0), 64, 3)
    fig, ax = plot_time_vs_steps(result)
    accumulated, separate = ax.get_lines()[:2]
    assert list(accumulated.get_ydata()) == [0.5, 1.5]
    assert list(separate.get_ydata()) == [1.5, 3.0]


def test_error_plots_on_a_linear_axis_show_the_values_themselves():
    series = {"BatchNorm": [0.0, 0.22, 6.44], "GroupNorm": [0.0, 2e-16, 3e-16],
              "LayerNorm": [0.0, 2e-16, 3e-16]}  # fmt: skip
    fig, ax = plot_errors([1, 2, 32], series, "N", log2_x=True, yscale="linear")
    lines = ax.get_lines()
    assert ax.get_yscale() == "linear" and list(lines[0].get_ydata()) == [0.0, 0.22, 6.44]
    # Two lines on the same values both show: one filled and small, the next hollow and large.
    assert lines[1].get_markerfacecolor() == "none" and lines[2].get_markerfacecolor() != "none"
    assert lines[1].get_markersize() > lines[2].get_markersize()
    fig, ax = plot_errors([1, 2], {"exact": [0.0, 1e-3]}, "N")
    assert list(ax.get_lines()[0].get_ydata())[0] == FLOOR  # a log axis cannot draw 0
    with pytest.raises(ValueError, match="yscale"):
        plot_errors([1], {"a": [1.0]}, "N", yscale="symlog")


def test_the_phase_plot_marks_the_highest_phase():
    phases = [Phase("forward 1", 100), Phase("backward 1", 300), Phase("optimizer step", 200)]
    fig, ax = plot_phase_peaks(phases, floor_bytes=50)
    colours = [bar.get_facecolor() for bar in ax.patches]
    assert colours[1] != colours[0] == colours[2]
    assert [round(bar.get_height() * 1024) for bar in ax.patches] == [100, 300, 200]


def test_the_timeline_counts_micro_batches_from_one():
    events = [Event("zero_grad", 0), Event("forward", 0, 0), Event("backward", 0, 0),
              Event("forward", 0, 1), Event("backward", 0, 1), Event("step", 0)]  # fmt: skip
    fig, ax = plot_timeline(events)
    assert [text.get_text() for text in ax.texts if text.get_text().isdigit()] == ["1", "2"]


def test_plots_draw_on_a_given_axis():
    fig, ax = plt.subplots()
    result = TimingResult((1, 2), (1.0, 1.5), (1.0, 2.0), 8, 3)
    assert plot_time_vs_steps(result, ax=ax) == (fig, ax)


# --- the budget slider ---------------------------------------------------------------------


def slider_setup():
    model = tiny_cnn()
    opt = torch.optim.Adam(model.parameters())
    x, y = cnn_data(2)
    return model, opt, nn.CrossEntropyLoss(), x, y


def test_describe_plan_reports_the_plan_or_why_none_fits():
    model, opt, loss, x, y = slider_setup()
    roomy = describe_plan(model, opt, loss, x, y, 64, 64.0)
    assert "micro-batches of 64 samples, 1 step " in roomy
    tight = describe_plan(model, opt, loss, x, y, 64, 0.01)
    assert "no plan" in tight and "too small" in tight
    middle = measure_training_memory(model, opt, loss, *cnn_data(64)).peak_bytes / 2**20 / 2
    text = describe_plan(model, opt, loss, x, y, 64, middle)
    assert "steps of accumulation" in text


def test_the_slider_shows_the_plan_of_its_latest_value():
    model, opt, loss, x, y = slider_setup()
    box = budget_slider(model, opt, loss, x, y, 64, (0.01, 4.0, 0.01), value_mib=2.0)
    slider, output = box.children
    assert "gradacc-budget-slider" in slider._dom_classes
    assert "gradacc-budget-output" in output._dom_classes
    assert output.value == describe_plan(model, opt, loss, x, y, 64, 2.0)
    for value in (0.5, 3.0, 0.01, 1.0):  # quick moves: the text follows the last one
        slider.value = value
    assert output.value == describe_plan(model, opt, loss, x, y, 64, 1.0)
    slider.value = 0.01
    assert "no plan" in output.value
