"""A model's config.json, read and checked without importing torch or transformers.

`gradacc-plan` answers a missing file, broken JSON or an unknown preset at once with these;
`planning.setup` builds the Transformers config from the fields.
"""

from __future__ import annotations

import difflib
import json
import os

from gradacc_lessons.planning.presets import PRESETS


def read_config_file(path: str | os.PathLike) -> dict:
    """A config.json's fields; a missing file or broken JSON is a ValueError naming the file."""
    if not os.path.isfile(path):
        raise ValueError(f"no config file {os.fspath(path)!r}: check the path")
    with open(path, encoding="utf-8") as file:
        try:
            fields = json.load(file)
        except json.JSONDecodeError as error:
            raise ValueError(
                f"{os.fspath(path)}, line {error.lineno}, column {error.colno}: not valid JSON "
                f"({error.msg})"
            ) from None
    if not isinstance(fields, dict):
        raise ValueError(f"{os.fspath(path)}: a config.json holds one JSON object {{...}}")
    return fields


def config_fields(model) -> dict:
    """The fields of a preset name or a config.json path (no Transformers import)."""
    if isinstance(model, str) and model in PRESETS:
        return dict(PRESETS[model])
    if isinstance(model, os.PathLike) or (
        isinstance(model, str)
        and (model.endswith(".json") or os.sep in model or os.path.exists(model))
    ):
        return read_config_file(model)
    close = difflib.get_close_matches(str(model), list(PRESETS), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ValueError(
        f"unknown model {model!r}{hint}: pass a preset ({', '.join(PRESETS)}), the path of a "
        f"config.json file, a Transformers config or a function that returns an nn.Module"
    )


def requested_dtype(model) -> str | None:
    """The weights' dtype a config.json asks for (`torch_dtype` or `dtype`), if any."""
    if hasattr(model, "to_dict") and hasattr(model, "model_type"):  # a Transformers config
        dtype = getattr(model, "dtype", None)
    elif callable(model):
        return None
    else:
        fields = config_fields(model)
        dtype = fields.get("dtype", fields.get("torch_dtype"))
    return None if dtype is None else str(dtype).removeprefix("torch.")
