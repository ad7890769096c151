"""What a Hugging Face model folder holds, read without loading it (no torch): its
architecture, parameter count (from the safetensors headers), tokenizer and chat
template. Bounded reads only: a folder is untrusted until shown otherwise."""

from __future__ import annotations

import json
import struct
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

MAX_JSON_BYTES = 4 * 1024 * 1024  # config.json, tokenizer_config.json
MAX_HEADER_BYTES = 64 * 1024 * 1024  # a safetensors header (its JSON index of tensors)
MAX_TEMPLATE_CHARS = 20_000
DTYPE_BYTES = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
}


@dataclass(frozen=True)
class ModelInfo:
    architecture: str
    model_type: str
    parameters: int | None  # None: no safetensors weights to count from
    tokenizer: str  # the tokenizer class, "" when the folder has none
    chat_template: str  # "" when the tokenizer has none
    reward_model: bool  # a sequence classifier (scores), not a causal LM

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


class NotAModel(ValueError):
    """The folder is not a Hugging Face model folder; the message says what is missing."""


def _json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    if path.stat().st_size > MAX_JSON_BYTES:
        raise NotAModel(f"{path.name} is larger than {MAX_JSON_BYTES} bytes.")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise NotAModel(f"{path.name} is not valid JSON: {exc}") from None
    return data if isinstance(data, dict) else {}


def _safetensors_parameters(path: Path) -> int:
    with path.open("rb") as handle:
        raw = handle.read(8)
        if len(raw) != 8:
            raise NotAModel(f"{path.name} is too short to be a safetensors file.")
        (length,) = struct.unpack("<Q", raw)
        if length > MAX_HEADER_BYTES:
            raise NotAModel(f"{path.name} has a header of {length} bytes; too large.")
        header = json.loads(handle.read(length))
    total = 0
    for name, tensor in header.items():
        if name == "__metadata__" or not isinstance(tensor, dict):
            continue
        count = 1
        for dim in tensor.get("shape", []):
            count *= int(dim)
        total += count
    return total


def inspect_folder(folder: Path) -> ModelInfo:
    config = _json(folder / "config.json")
    if not config:
        raise NotAModel(f"No config.json in {folder.name}: not a Hugging Face model folder.")
    architectures = config.get("architectures") or []
    architecture = str(architectures[0]) if architectures else ""
    weights = sorted(folder.glob("*.safetensors"))
    parameters = sum(_safetensors_parameters(p) for p in weights) if weights else None
    tokenizer = _json(folder / "tokenizer_config.json")
    template = tokenizer.get("chat_template") or ""
    if not isinstance(template, str):  # a list of named templates
        template = json.dumps(template)
    return ModelInfo(
        architecture=architecture,
        model_type=str(config.get("model_type", "")),
        parameters=parameters,
        tokenizer=str(tokenizer.get("tokenizer_class", "")),
        chat_template=template[:MAX_TEMPLATE_CHARS],
        reward_model=architecture.endswith("ForSequenceClassification"),
    )
