"""Lesson 7's data and model: the Zen of Python as characters, and a tiny causal language model.

The text is cut into chunks (or padded lines) of character ids; `tiny_causal_lm` builds a
small Llama or GPT-2 from a `transformers` config, and `causal_loss` is its own next-token loss.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import math
import operator

import torch

from gradacc_lessons.accumulate import (
    IGNORE_INDEX,
    token_loss,
)
from gradacc_lessons.data import PAD
from gradacc_lessons.demos.frameworks.process import _quiet_and_restored

KINDS = ("llama", "gpt2")


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
