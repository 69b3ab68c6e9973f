"""What a CPU kernel allocates inside itself and frees before it returns: no output shows it.

A fake-tensor trace sees every tensor an operation returns, not the buffers its kernel
makes for itself. On a GPU these are few (cuDNN's workspace); on the CPU three kinds of
kernel make buffers as large as an activation, and the CPU measurement (the profiler's
allocation events) counts them. Each rule below was read in PyTorch's sources and is
checked, operation by operation, against the profiler by tests/test_planning.py:

- a pointwise operation on tensors of different dtypes (a bfloat16 activation plus a
  float32 LoRA output): TensorIterator makes a copy of each input in the common dtype
  (`TensorIteratorBase::compute_types`, "Creates temporaries for CPU operations",
  aten/src/ATen/TensorIterator.cpp);
- a convolution that PyTorch runs on its "slow" path (`torch._C._select_conv_backend`
  says which path the real kernel takes: most 2-D convolutions once oneDNN is off, see
  below): the input unfolded into columns, micro-batch × (in channels × kernel area) ×
  output positions, in the forward and again for the weight's gradient
  (`compute_columns2d`, ConvolutionMM2d.cpp; the transposed form unfolds the output
  channels over the input positions);
- BatchNorm's backward allocates its input gradient twice and keeps the second
  (`batch_norm_backward_cpu_template`, aten/src/ATen/native/Normalization.cpp).

Not modelled: oneDNN's kernels, a few KiB inside the fused attention. oneDNN (the fast
CPU kernels PyTorch picks on most Intel and AMD CPUs) reorders its inputs into layouts of
its own and keeps a scratchpad, and their size depends on the CPU: on a Xeon with AVX-512
and AMX (PyTorch 2.13, oneDNN 3.12) the profiler measured a U-Net's step 5 % above the
trace (its convolutions) and a bfloat16 GPT-2's 2 % above (its matrix products). So a CPU
trace and a CPU measurement both run PyTorch's own kernels, `without_onednn()`: the 16
steps of tests/test_planning.py then agree within 0.6 % there.
"""

from __future__ import annotations

import contextlib
import functools
import math

import torch

aten = torch.ops.aten
_SLOW = {torch._C._ConvBackend.Slow2d: False, torch._C._ConvBackend.SlowTranspose2d: True}


@contextlib.contextmanager
def without_onednn():
    """Run the block on PyTorch's own CPU kernels, whose buffers the rules below count.

    Turns oneDNN off (`torch.backends.mkldnn.enabled`) and back to what it was on leaving.

    >>> with without_onednn():
    ...     torch.backends.mkldnn.enabled
    False
    """
    before = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = before


def knows(func) -> bool:
    """Whether a rule below may apply to `func`, an ATen operation (whatever the sizes).

    >>> knows(torch.ops.aten.add.Tensor), knows(torch.ops.aten.mm.default)
    (True, False)
    """
    _check_operation(func)
    return func in (aten.convolution.default, aten.convolution_backward.default) or (
        func is aten.native_batch_norm_backward.default or torch.Tag.pointwise in func.tags
    )


def workspace_bytes(func, args: tuple, kwargs: dict) -> int:
    """Bytes the CPU kernel of `func` holds inside itself beside its outputs, at most.

    >>> a, b = torch.zeros(1000), torch.zeros(1000, dtype=torch.bfloat16)
    >>> workspace_bytes(torch.ops.aten.add.Tensor, (a, b), {})  # b copied to float32
    4000
    """
    _check_operation(func)
    if func is aten.convolution.default:
        return _columns(*args[:9])
    if func is aten.convolution_backward.default:
        grad_output, inputs, weight, bias_sizes, *params, output_mask = args
        return _columns(inputs, weight, None, *params) if output_mask[1] else 0
    if func is aten.native_batch_norm_backward.default:
        grad_input_wanted = args[-1][0]
        return _nbytes(args[1]) if grad_input_wanted else 0
    if torch.Tag.pointwise in func.tags:
        return _promoted_copies([*args, *kwargs.values()])
    return 0


def _check_operation(func) -> None:
    if not isinstance(func, torch._ops.OpOverload):
        raise ValueError(
            f"func must be an ATen operation such as torch.ops.aten.add.Tensor, got {func!r}"
        )


def _columns(inputs, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """The unfolded input of a convolution on PyTorch's slow CPU path; 0 on other paths."""
    if inputs.dim() != 4:
        return 0
    backend = torch._C._select_conv_backend(
        inputs, weight, bias, stride, padding, dilation, transposed, output_padding, groups, None
    )
    if backend not in _SLOW:
        return 0
    kernel_area = weight.shape[2] * weight.shape[3]
    if not _SLOW[backend]:
        if kernel_area == 1 and tuple(stride) == (1, 1) and tuple(padding) == (0, 0):
            return 0  # a 1 × 1 kernel reads its input as it is
        height, width = _output_size(inputs.shape[2:], weight.shape[2:], stride, padding)
        rows = inputs.shape[1] * kernel_area
    else:  # transposed: each input position spreads over the kernel's area of outputs
        height, width = inputs.shape[2:]
        rows = weight.shape[1] * kernel_area
    return inputs.shape[0] * rows * height * width * inputs.element_size()


def _output_size(size, kernel, stride, padding) -> tuple[int, int]:
    return tuple((n + 2 * p - k) // s + 1 for n, k, s, p in zip(size, kernel, stride, padding))


def _promoted_copies(operands: list) -> int:
    """TensorIterator's copies of the inputs whose dtype is not the common one (CPU only)."""
    tensors = [t for t in operands if isinstance(t, torch.Tensor) and t.dim() > 0]
    floating = [t for t in tensors if t.dtype.is_floating_point]
    if len({t.dtype for t in floating}) < 2:
        return 0
    common = functools.reduce(torch.promote_types, (t.dtype for t in floating))
    return sum(t.numel() * common.itemsize for t in floating if t.dtype != common)


def _nbytes(tensor: torch.Tensor) -> int:
    return math.prod(tensor.shape) * tensor.dtype.itemsize
