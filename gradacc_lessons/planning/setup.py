"""What a plan is for: the model, its inputs, precision, optimizer, checkpointing and LoRA.

`TrainingSetup.build()` makes the model and its optimizer as a training script would,
and `batch(size)` a micro-batch of inputs and targets; the planner calls them under fake
tensors (nothing allocated) or, to measure, for real. A Transformers model is built from
its config (`AutoModelForCausalLM.from_config`, random weights, nothing downloaded) and
trained on next-token cross-entropy; any other model comes from a factory and is trained
on per-pixel (segmentation) or per-sample (classification) cross-entropy.

Precisions, named as Lightning names them:

- "32-true": float32 weights, gradients, optimizer state and activations;
- "bf16-mixed": float32 weights (the master copy the optimizer updates), forward under
  `torch.autocast(dtype=torch.bfloat16)`: the matrix products and their saved inputs
  are bfloat16;
- "bf16-true": everything in bfloat16, optimizer state included.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import inspect
import os
import unittest.mock
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from gradacc_lessons.checks import as_choice, as_count
from gradacc_lessons.planning.config_files import config_fields
from gradacc_lessons.planning.presets import OPTIMIZERS, PRECISIONS, PRESETS

# A GPU applies attention dropout inside flash attention (PyTorch's
# scaled_dot_product_attention on CUDA), which saves no attention matrix. On the CPU,
# whose kernels the fake trace runs, the fused kernel has no dropout: with p > 0 PyTorch
# takes the math path, which saves the whole matrix and its dropout mask (GPT-2's
# attn_pdrop=0.1 made its activations about 4.6 times a GPU's). So the planner traces
# attention without its dropout, and the plan says so (the rest of the dropout stays).
ATTENTION_DROPOUTS = ("attn_pdrop", "attention_dropout", "attention_probs_dropout_prob")
PEFT_VERSION = "0.21.2"
INSTALL_PEFT = (
    f"LoRA needs peft: pip install 'peft=={PEFT_VERSION}' "
    f"(or pip install 'gradacc-lessons[frameworks]')"
)


@dataclass(frozen=True)
class TrainingSetup:
    """One training recipe: what `plan` traces or measures."""

    model: object  # a preset name, a config.json path, a Transformers config, or a factory
    sequence_length: int | None = None  # tokens per sample (Transformers models)
    input_shape: tuple[int, ...] | None = None  # one sample's shape, e.g. (3, 1024, 1024)
    precision: str = "32-true"
    optimizer: str = "adamw"
    foreach: bool = True  # AdamW's and SGD's form on a GPU: one temporary of all weights
    fused: bool = False  # the fused form (the Trainer's adamw_torch_fused): no such temporary
    checkpointing: bool = False
    lora_rank: int | None = None  # None: full fine-tuning
    lora_targets: tuple[str, ...] | str = "all-linear"
    layers: int | None = None  # trace this many layers instead of the config's (extrapolation)

    def __post_init__(self):
        as_choice("precision", self.precision, PRECISIONS)
        as_choice("optimizer", self.optimizer, OPTIMIZERS)
        if self.lora_rank is not None:
            as_count("lora_rank", self.lora_rank)
            try:
                import peft  # noqa: F401
            except ImportError:
                raise ValueError(INSTALL_PEFT) from None
        if self.is_transformer:
            config = self.config()
            length = as_count("sequence_length", self.sequence_length, fix="tokens per sample")
            limit = _max_length(config)
            if limit is not None and length > limit:
                raise ValueError(
                    f"sequence_length={length} is longer than the model's maximum of {limit} "
                    f"positions: pass sequence_length <= {limit}"
                )
        elif callable(self.model):
            if not self.input_shape:
                raise ValueError(
                    "a model factory needs input_shape, one sample's shape: (3, 1024, 1024) "
                    "for 1024 × 1024 RGB images"
                )
        else:
            raise ValueError(
                f"model must be a preset ({', '.join(PRESETS)}), a config.json path, a "
                f"Transformers config or a function that returns an nn.Module; got {self.model!r}"
            )

    def replace(self, **changes) -> TrainingSetup:
        return dataclasses.replace(self, **changes)

    @property
    def is_transformer(self) -> bool:
        return not callable(self.model) or _is_config(self.model)

    @property
    def name(self) -> str:
        if isinstance(self.model, str):
            return os.path.basename(self.model)
        if _is_config(self.model):
            return self.model.model_type
        return getattr(self.model, "__name__", type(self.model).__name__)

    @property
    def attention_dropout(self) -> float:
        """The attention dropout the model's config asks for (0.0 when none, or no config)."""
        if not self.is_transformer:
            return 0.0
        config = _load_config(self.model)
        return max(float(getattr(config, name, 0) or 0) for name in ATTENTION_DROPOUTS)

    @property
    def layer_count(self) -> int | None:
        """The config's number of layers (None for a factory: no extrapolation)."""
        return self.config().num_hidden_layers if self.is_transformer else None

    def config(self):
        """The Transformers config, with `layers` layers when set, attention as on a GPU."""
        config = _load_config(self.model)
        config._attn_implementation = "sdpa"  # PyTorch's fused attention, as on a GPU
        for name in ATTENTION_DROPOUTS:
            if getattr(config, name, 0):
                setattr(config, name, 0.0)
        if self.layers is not None:
            config.num_hidden_layers = self.layers
        config.use_cache = False  # training keeps no cache (and checkpointing refuses one)
        return config

    def build(self) -> tuple[nn.Module, torch.optim.Optimizer]:
        """The model in train mode, with LoRA and checkpointing as asked, and its optimizer."""
        model = self.build_model()
        return model, self.optimizer_for(model)

    def build_model(self) -> nn.Module:
        """The model in train mode, with LoRA and checkpointing as asked."""
        if self.is_transformer:
            from transformers import AutoModelForCausalLM

            # float32 unless asked: from_config would take the config's dtype (a released
            # config.json says bfloat16) and silently change the precision planned
            model = AutoModelForCausalLM.from_config(self.config(), dtype=torch.float32)
        else:
            model = self.model()
            if not isinstance(model, nn.Module):
                raise ValueError(f"the model factory must return an nn.Module, got {model!r}")
        if self.precision == "bf16-true":
            model = model.to(torch.bfloat16)
        if self.checkpointing:
            _enable_checkpointing(model)
        if self.lora_rank is not None:
            model = _with_lora(model, self.lora_rank, self.lora_targets)
        return model.train()

    def optimizer_for(self, model: nn.Module) -> torch.optim.Optimizer:
        trainable = [p for p in model.parameters() if p.requires_grad]
        if self.optimizer == "adamw":
            return torch.optim.AdamW(trainable, lr=1e-4, **self._form())
        return torch.optim.SGD(trainable, lr=1e-2, momentum=0.9, **self._form())

    def _form(self) -> dict:
        return {"fused": True} if self.fused else {"foreach": self.foreach}

    def batch(self, size: int) -> tuple[torch.Tensor, torch.Tensor]:
        """`size` samples: token ids and next tokens, or images and per-pixel classes."""
        if self.is_transformer:
            tokens = torch.zeros(size, self.sequence_length, dtype=torch.long)
            return tokens, tokens.clone()
        dtype = torch.bfloat16 if self.precision == "bf16-true" else torch.float32
        images = torch.zeros(size, *self.input_shape, dtype=dtype)
        return images, torch.zeros(size, *self.input_shape[1:], dtype=torch.long)

    def tracing(self):
        """What a fake-tensor trace of this model needs to take the path a real run takes.

        Transformers looks for packed sequences in the position ids (several sequences
        in one row) by reading their values; a fake tensor has none, so it assumes packing
        and builds a full attention mask that a real run on unpacked batches never makes
        (transformers 5.24, `masking_utils.find_packed_sequence_indices`). Our batches are
        not packed: during the trace, the answer is the real one, "none".
        """
        if not self.is_transformer:
            return contextlib.nullcontext()
        return unittest.mock.patch(
            "transformers.masking_utils.find_packed_sequence_indices", lambda *a, **k: None
        )

    @property
    def loss_fn(self) -> Callable:
        return _language_model_loss if self.is_transformer else _class_loss

    @property
    def autocast_dtype(self) -> torch.dtype | None:
        return torch.bfloat16 if self.precision == "bf16-mixed" else None


def _language_model_loss(outputs, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of every position's logits, in float32 as Transformers computes it."""
    logits = outputs.logits
    return nn.functional.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())


def _class_loss(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy per pixel (outputs (b, classes, H, W)) or per sample ((b, classes))."""
    if outputs.dim() == 2:
        targets = targets.reshape(len(targets), -1)[:, 0]
    return nn.functional.cross_entropy(outputs.float(), targets)


# Keys a released config.json carries that a config class does not list as its own fields:
# transformers reads them (dtype, rope) or records them (where the file came from).
_READ_ELSEWHERE = {"torch_dtype", "dtype", "rope_theta", "rope_scaling", "transformers_version",
                   "_name_or_path", "architectures", "auto_map"}  # fmt: skip


def _load_config(model):
    """A Transformers config from a preset name, a config.json path or a config object."""
    if _is_config(model):
        return model.__class__.from_dict(model.to_dict())  # a copy: the caller's stays as it is
    fields = config_fields(model)
    if "model_type" not in fields:
        raise ValueError(f"{model}: a config.json names its model_type (llama, gpt2, ...)")
    # imported here, after the checks: importing transformers takes seconds
    from transformers import CONFIG_MAPPING, AutoConfig

    kind = fields.pop("model_type")
    if kind not in CONFIG_MAPPING:
        close = difflib.get_close_matches(str(kind), list(CONFIG_MAPPING), n=3)
        raise ValueError(
            f"{model}: model_type {kind!r} is not one transformers knows"
            + (f"; did you mean {' or '.join(map(repr, close))}?" if close else "")
        )
    _refuse_unknown_keys(model, fields, CONFIG_MAPPING[kind])
    fields.pop("torch_dtype", None), fields.pop("dtype", None)  # --precision decides
    return AutoConfig.for_model(kind, **fields)


def _refuse_unknown_keys(model, fields: dict, config_class) -> None:
    """A misspelled key would silently plan another model (the class's default takes over)."""
    known = set(config_class().to_dict()) | set(getattr(config_class, "attribute_map", {}))
    for cls in config_class.__mro__:
        if "__init__" in vars(cls):
            known |= set(inspect.signature(cls.__init__).parameters)
    known |= _READ_ELSEWHERE
    for key in fields:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"{model}: {key!r} is not a field of {config_class.__name__}{hint} "
                f"(remove or correct it)"
            )


def _max_length(config) -> int | None:
    for name in ("max_position_embeddings", "n_positions"):
        if getattr(config, name, None):
            return int(getattr(config, name))
    return None


def _is_config(model) -> bool:
    return hasattr(model, "to_dict") and hasattr(model, "model_type")


def _enable_checkpointing(model: nn.Module) -> None:
    if hasattr(model, "activation_checkpointing_enable"):  # transformers >= 5.?
        model.activation_checkpointing_enable({"use_reentrant": False})
    elif hasattr(model, "gradient_checkpointing_enable"):
        model.gradient_checkpointing_enable()
    else:
        raise ValueError(
            f"{type(model).__name__} has no gradient_checkpointing_enable(): give it one "
            f"(wrap blocks in torch.utils.checkpoint.checkpoint) or plan without checkpointing"
        )


def _with_lora(model: nn.Module, rank: int, targets) -> nn.Module:
    from peft import LoraConfig, get_peft_model

    targets = targets if isinstance(targets, str) else list(targets)
    config = LoraConfig(
        r=rank,
        lora_alpha=2 * rank,
        target_modules=targets,
        lora_dropout=0.0,
        fan_in_fan_out=_has_conv1d(model),  # GPT-2 stores its linear weights transposed
    )
    with warnings.catch_warnings():
        # peft 0.21.2 reads `model.is_gradient_checkpointing` (PeftModel.__init__,
        # peft/peft_model.py), a name transformers 5.24 deprecates with a FutureWarning in
        # favour of `is_activation_checkpointing`: peft's call, not ours, so only it is hushed.
        warnings.filterwarnings(
            "ignore", "`is_gradient_checkpointing` is deprecated", category=FutureWarning
        )
        return get_peft_model(model, config)


def _has_conv1d(model: nn.Module) -> bool:
    """Whether the model has Transformers' Conv1D layers (GPT-2's transposed linears)."""
    try:
        from transformers.pytorch_utils import Conv1D
    except ImportError:
        return False
    return any(isinstance(module, Conv1D) for module in model.modules())
