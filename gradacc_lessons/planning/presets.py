"""Built-in models and GPUs: dimensions typed from their published configs, nothing downloaded.

Each preset is the `config.json` of a released model, reduced to the fields that set its
shapes (the values are those of the files on the Hugging Face Hub, as published by their
authors: openai-community/gpt2, meta-llama/Llama-3.2-1B, meta-llama/Llama-3.1-8B,
mistralai/Mistral-7B-v0.1, Qwen/Qwen2.5-0.5B). GPU memory is in GiB as the cards report
it: an "80 GB" A100 holds 80 GiB, and a "24 GB" RTX 4090 24 GiB.
"""

from __future__ import annotations

GiB = 2**30

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

GPUS = {  # name -> memory in GiB
    "rtx-3090": 24,
    "rtx-4090": 24,
    "l4": 24,
    "a10g": 24,
    "t4": 15,
    "v100-16gb": 16,
    "a100-40gb": 40,
    "a100-80gb": 80,
    "h100-80gb": 80,
    "h200": 141,
}


def budget_bytes(budget: float | str) -> int:
    """A memory budget in bytes: a number of GiB, or a GPU's name from `GPUS`.

    >>> budget_bytes(24) == budget_bytes("RTX-4090") == 24 * 2**30
    True
    """
    if isinstance(budget, str):
        name = budget.strip().lower().replace(" ", "-")
        if name not in GPUS:
            raise ValueError(
                f"unknown GPU {budget!r}: pass the budget in GiB (a number) or one of "
                f"{', '.join(GPUS)}"
            )
        return GPUS[name] * GiB
    if isinstance(budget, bool) or not isinstance(budget, int | float) or not budget > 0:
        raise ValueError(f"budget must be a positive number of GiB or a GPU name, got {budget!r}")
    return int(budget * GiB)
