"""What a Hugging Face model folder holds, read without loading it (no torch): its
architecture, parameter count (from the safetensors headers), tokenizer and chat
template. Bounded reads only: a folder is untrusted until shown otherwise.

A folder is a path (a server root's, the hub cache's, a demo asset: links in them are
the operator's or the studio's, and a hub snapshot is all links) or a run's export held
open by studio.runs.trainer_files, through which no link is followed."""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO

from studio.runs.trainer_files import TrainerFolder

ModelFolder = Path | TrainerFolder

MAX_JSON_BYTES = 4 * 1024 * 1024  # config.json, tokenizer_config.json
MAX_TOKENIZER_BYTES = 64 * 1024 * 1024  # tokenizer.json (a large vocabulary's is ~10 MB)
ADAPTER_CONFIG = "adapter_config.json"  # peft's adapter folder (trainer.models.lora)
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
    # A fingerprint of the token -> id map (tokenizer.json's vocabulary and added tokens):
    # two models read the same token ids when theirs are equal; "" when the folder has
    # no tokenizer.json, so nothing can be said without loading its tokenizer.
    vocabulary: str = ""
    # A peft LoRA adapter folder: its rank (`r`), `lora_alpha` and `target_modules`; None
    # for a model folder.
    adapter: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


class NotAModel(ValueError):
    """The folder is not a Hugging Face model folder; the message says what is missing."""


def _open(folder: ModelFolder, name: str) -> BinaryIO | None:
    """`name` in `folder` opened for reading; None when there is no such file."""
    if isinstance(folder, Path):
        path = folder / name
        return path.open("rb") if path.is_file() else None
    try:
        return folder.open_file(name)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a link or a fifo a trainer put there
        raise NotAModel(f"{name} in {folder.path.name} can't be read: {exc.strerror}.") from None


def _names(folder: ModelFolder) -> list[str]:
    return (
        folder.names() if isinstance(folder, TrainerFolder) else [p.name for p in folder.iterdir()]
    )


def _folder_name(folder: ModelFolder) -> str:
    return folder.name if isinstance(folder, Path) else folder.path.name


def _json(folder: ModelFolder, name: str, limit: int = MAX_JSON_BYTES) -> dict[str, Any]:
    handle = _open(folder, name)
    if handle is None:
        return {}
    with handle:
        raw = handle.read(limit + 1)
    if len(raw) > limit:
        raise NotAModel(f"{name} is larger than {limit} bytes.")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise NotAModel(f"{name} is not valid JSON: {exc}") from None
    return data if isinstance(data, dict) else {}


def _safetensors_parameters(folder: ModelFolder, name: str) -> int:
    handle = _open(folder, name)
    if handle is None:
        return 0  # a folder with a safetensors name holds no weights
    with handle:
        raw = handle.read(8)
        if len(raw) != 8:
            raise NotAModel(f"{name} is too short to be a safetensors file.")
        (length,) = struct.unpack("<Q", raw)
        if length > MAX_HEADER_BYTES:
            raise NotAModel(f"{name} has a header of {length} bytes; too large.")
        header = json.loads(handle.read(length))
    total = 0
    for key, tensor in header.items():
        if key == "__metadata__" or not isinstance(tensor, dict):
            continue
        count = 1
        for dim in tensor.get("shape", []):
            count *= int(dim)
        total += count
    return total


def vocabulary_fingerprint(tokenizer_json: dict[str, Any]) -> str:
    """SHA-256 of the sorted (id, token) pairs of a tokenizer.json: its model's vocabulary
    (a token -> id map for BPE and WordPiece, a list of [token, score] for Unigram) and its
    added tokens; "" when it has no vocabulary."""
    model = tokenizer_json.get("model") or {}
    vocab = model.get("vocab") if isinstance(model, dict) else None
    pairs: dict[int, str] = {}
    if isinstance(vocab, dict):
        pairs = {int(i): str(t) for t, i in vocab.items() if isinstance(i, int)}
    elif isinstance(vocab, list):
        pairs = {i: str(e[0]) for i, e in enumerate(vocab) if isinstance(e, list) and e}
    for added in tokenizer_json.get("added_tokens") or []:
        if isinstance(added, dict) and isinstance(added.get("id"), int):
            pairs[added["id"]] = str(added.get("content", ""))
    if not pairs:
        return ""
    digest = hashlib.sha256(json.dumps(sorted(pairs.items())).encode("utf-8"))
    return digest.hexdigest()


def _adapter(folder: ModelFolder) -> dict[str, Any] | None:
    config = _json(folder, ADAPTER_CONFIG)
    if not config:
        return None
    targets = config.get("target_modules")
    return {
        "r": config.get("r"),
        "lora_alpha": config.get("lora_alpha"),
        "target_modules": sorted(targets) if isinstance(targets, list) else targets,
    }


def inspect_folder(folder: ModelFolder) -> ModelInfo:
    config = _json(folder, "config.json")
    adapter = None if config else _adapter(folder)
    if not config and adapter is None:
        raise NotAModel(
            f"No config.json in {_folder_name(folder)}: not a Hugging Face model folder "
            f"(nor a peft adapter folder: no {ADAPTER_CONFIG})."
        )
    architectures = config.get("architectures") or []
    architecture = str(architectures[0]) if architectures else ""
    weights = sorted(
        n for n in _names(folder) if n.endswith(".safetensors") and not n.startswith(".")
    )
    parameters = sum(_safetensors_parameters(folder, n) for n in weights) if weights else None
    tokenizer = _json(folder, "tokenizer_config.json")
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
        vocabulary=vocabulary_fingerprint(_json(folder, "tokenizer.json", MAX_TOKENIZER_BYTES)),
        adapter=adapter,
    )
