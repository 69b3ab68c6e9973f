"""Built-in models and GPUs: dimensions typed from their published configs, nothing downloaded.

Each preset is the `config.json` of a released model, reduced to the fields that set its
shapes (the values are those of the files on the Hugging Face Hub, as published by their
authors: openai-community/gpt2, meta-llama/Llama-3.2-1B, meta-llama/Meta-Llama-3-8B,
meta-llama/Llama-3.1-8B, mistralai/Mistral-7B-v0.1, Qwen/Qwen2.5-0.5B, Qwen/Qwen2.5-7B,
google/gemma-2-2b).

A GPU's memory is what CUDA reports as the card's total (`torch.cuda.mem_get_info()[1]`,
nvidia-smi's `memory.total`), not the gigabytes of its name: an "80 GB" H100 reports
81,559 MiB (79.65 GiB), a "24 GB" L4 23,034 MiB (22.49 GiB). Of that total, a training
process cannot use all: the CUDA context (loaded when the process first touches the GPU;
PyTorch's caching allocator does not count it), cuBLAS's and cuDNN's workspaces and the
allocator's fragmentation take their share. `DEFAULT_RESERVE_GIB` is kept for them.
"""

from __future__ import annotations

import difflib
import re

GiB = 2**30
MiB = 2**20
PRECISIONS = ("32-true", "bf16-mixed", "bf16-true")  # Lightning's names for the recipes
OPTIMIZERS = ("adamw", "sgd")
# Kept free of the card's total for what the caching allocator's peak does not count. The
# CUDA context alone takes about 300 to 600 MiB (it depends on the card, the driver and
# CUDA's lazy loading of kernels; PyTorch 2.13's "CUDA semantics" notes, "Memory
# management": memory used by the context is not shown by memory_allocated or
# memory_reserved); cuBLAS keeps a workspace per stream (CUBLAS_WORKSPACE_CONFIG, 4 to
# 32 MiB), and a long run's blocks fragment. 1 GiB covers them on the cards above; measure
# yours: torch.cuda.mem_get_info() after one training window.
DEFAULT_RESERVE_GIB = 1.0

PRESETS = {
    "gpt2": {  # GPT-2 small, 124M parameters
        "model_type": "gpt2",
        "vocab_size": 50257,
        "n_positions": 1024,
        "n_embd": 768,
        "n_layer": 12,
        "n_head": 12,
    },
    "llama-3.2-1b": {  # 1.24B parameters, embeddings tied to the output layer
        "model_type": "llama",
        "vocab_size": 128256,
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "num_hidden_layers": 16,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "max_position_embeddings": 131072,
        "rope_theta": 500000.0,
        "tie_word_embeddings": True,
    },
    "llama-3.1-8b": {  # 8.03B parameters
        "model_type": "llama",
        "vocab_size": 128256,
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "max_position_embeddings": 131072,
        "rope_theta": 500000.0,
        "tie_word_embeddings": False,
    },
    "mistral-7b": {  # Mistral-7B-v0.1, 7.24B parameters
        "model_type": "mistral",
        "vocab_size": 32000,
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 32768,
        "rope_theta": 10000.0,
        "sliding_window": 4096,
        "tie_word_embeddings": False,
    },
    "llama-3-8b": {  # 8.03B parameters, 8,192 positions
        "model_type": "llama",
        "vocab_size": 128256,
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 8192,
        "rope_theta": 500000.0,
        "tie_word_embeddings": False,
    },
    "qwen2.5-7b": {  # 7.62B parameters
        "model_type": "qwen2",
        "vocab_size": 152064,
        "hidden_size": 3584,
        "intermediate_size": 18944,
        "num_hidden_layers": 28,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "max_position_embeddings": 131072,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": False,
    },
    "gemma-2-2b": {  # 2.61B parameters, embeddings tied
        "model_type": "gemma2",
        "vocab_size": 256000,
        "hidden_size": 2304,
        "intermediate_size": 9216,
        "num_hidden_layers": 26,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "max_position_embeddings": 8192,
        "sliding_window": 4096,
        "query_pre_attn_scalar": 256,
        "attn_logit_softcapping": 50.0,
        "final_logit_softcapping": 30.0,
        "tie_word_embeddings": True,
    },
    "qwen2.5-0.5b": {  # 494M parameters, embeddings tied
        "model_type": "qwen2",
        "vocab_size": 151936,
        "hidden_size": 896,
        "intermediate_size": 4864,
        "num_hidden_layers": 24,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": True,
    },
}

# name -> total memory as CUDA reports it, in MiB (nvidia-smi's memory.total on each card)
GPU_MIB = {
    "t4": 15_360,  # 15.0 GiB
    "v100-16gb": 16_160,  # 15.78 GiB (SXM2)
    "l4": 23_034,  # 22.49 GiB
    "a10g": 23_028,  # 22.49 GiB
    "rtx-3090": 24_576,  # 24.0 GiB
    "rtx-4090": 24_564,  # 23.99 GiB
    "a100-40gb": 40_448,  # 39.5 GiB
    "a100-80gb": 81_920,  # 80.0 GiB
    "h100-80gb": 81_559,  # 79.65 GiB
    "h200": 143_771,  # 140.4 GiB
}
GPUS = {name: mib * MiB / GiB for name, mib in GPU_MIB.items()}  # name -> GiB


def budget_bytes(budget: float | str) -> int:
    """A memory budget in bytes: a number of GiB, or a GPU's name from `GPUS` (its total).

    >>> budget_bytes(24) == budget_bytes("24 GiB") == 24 * 2**30
    True
    >>> budget_bytes("RTX 4090") == budget_bytes("rtx4090") == 24_564 * 2**20
    True
    """
    if isinstance(budget, str):
        return _named_budget(budget)
    if isinstance(budget, bool) or not isinstance(budget, int | float) or not budget > 0:
        raise ValueError(f"budget must be a positive number of GiB or a GPU name, got {budget!r}")
    return int(budget * GiB)


def _named_budget(text: str) -> int:
    """A budget spelled as text: '24', '24 GiB', or a GPU's name in any spelling."""
    number = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(gib|g)?\s*", text, re.IGNORECASE)
    if number:
        return budget_bytes(float(number[1]))
    if re.fullmatch(r"\s*[0-9.]+\s*(gb|mb|mib|tb)\s*", text, re.IGNORECASE):
        raise ValueError(
            f"budget {text!r}: give GiB as a number (24 for 24 GiB), or the card's name "
            f"({', '.join(GPUS)}) to plan with the memory CUDA reports for it"
        )
    key = _squeezed(text)
    for name, mib in GPU_MIB.items():
        if _squeezed(name) == key:
            return mib * MiB
    close = difflib.get_close_matches(text.strip().lower(), list(GPUS), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise ValueError(
        f"unknown GPU {text!r}: {hint}pass the budget in GiB (a number) or one of {', '.join(GPUS)}"
    )


def _squeezed(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())
