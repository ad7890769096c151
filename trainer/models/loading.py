"""Loading policies, tokenizers and the critic from a local Hugging Face folder.

Nothing is ever downloaded: every `from_pretrained` is `local_files_only`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, cast

import torch
from safetensors.torch import load_file, save_file
from torch import nn
from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForCausalLM,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

DevicePref = Literal["auto", "cpu", "cuda"]
VALUE_HEAD_FILE = "value_head.safetensors"

_DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}


def resolve_device(pref: str = "auto") -> torch.device:
    """`auto` -> CUDA when available, else CPU; `cuda` without a GPU is an error."""
    if pref == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if pref == "cpu":
        return torch.device("cpu")
    if pref == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(
                "resources.device='cuda' but no CUDA device is available; "
                "use resources.device='auto' or 'cpu'"
            )
        return torch.device("cuda")
    raise ValueError(f"unknown device {pref!r}; allowed: 'auto', 'cpu', 'cuda'")


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype not in _DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; allowed: {sorted(_DTYPES)}")
    return _DTYPES[dtype]


def _check_folder(path: str | Path) -> str:
    folder = Path(path)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(
            f"{folder} is not a model folder (no config.json); set model.path to a local "
            "Hugging Face folder, e.g. one built by `rlstudio make-demo-model`"
        )
    return str(folder)


def load_tokenizer(path: str | Path) -> PreTrainedTokenizerBase:
    """The folder's tokenizer with left padding and a pad token (EOS if it has none)."""
    tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise ValueError(f"the tokenizer in {path} has neither a pad nor an EOS token")
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def check_same_tokenizer(actor: PreTrainedTokenizerBase, path: str | Path, key: str) -> None:
    """The model at `path` (set by `key`) reads the actor's token ids: the same vocabulary,
    id for id. A critic with another vocabulary would value tokens it reads as others."""
    other = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    if other.get_vocab() != actor.get_vocab():
        raise ValueError(
            f"{key}={path} has another tokenizer than model.path ({len(other)} tokens against "
            f"{len(actor)}, or the same count with other ids): the critic reads the actor's "
            "token ids, so it must start from a model with the actor's tokenizer"
        )


def load_policy(
    path: str | Path,
    dtype: str | torch.dtype = "float32",
    device: str | torch.device = "cpu",
    *,
    stage_on_cpu: bool = False,
    config_overrides: dict[str, Any] | None = None,
) -> PreTrainedModel:
    """A causal LM from a local folder, in `dtype`, to run on `device` (the run's
    `speed` converters apply where the trainer builds it: trainer.models.converters). With
    `stage_on_cpu` it is returned on the CPU still, for FSDP to move each rank's shard.
    `config_overrides` (model.config_overrides, checked to leave every weight's shape as
    loaded) are set on the folder's config before the weights load."""
    folder = _check_folder(path)
    extra: dict[str, Any] = {}
    if config_overrides:
        extra["config"] = overridden_config(folder, config_overrides)
    model = AutoModelForCausalLM.from_pretrained(
        folder, dtype=resolve_dtype(dtype), local_files_only=True, **extra
    )
    # transformers types `to` through a decorator that mypy cannot call; it returns self.
    moved: PreTrainedModel = cast(Any, model).to(torch.device("cpu" if stage_on_cpu else device))
    return moved


def overridden_config(folder: str | Path, overrides: dict[str, Any]) -> Any:
    """The folder's model config with `overrides` set; a mapping (rope_scaling) updates the
    folder's mapping key by key, as verl's override merges it."""
    config = AutoConfig.from_pretrained(str(folder), local_files_only=True)
    for key, value in overrides.items():
        current = getattr(config, key, None)
        if isinstance(value, dict) and isinstance(current, dict):
            value = {**current, **value}
        setattr(config, key, value)
    return config


class ValueModel(nn.Module):
    """The PPO critic: a causal-LM backbone plus a linear value head, one value per token."""

    def __init__(self, backbone: PreTrainedModel) -> None:
        super().__init__()
        self.backbone = backbone
        hidden = int(backbone.config.hidden_size)
        self.value_head = nn.Linear(hidden, 1, dtype=backbone.dtype)
        # Small init so the first values are near 0 and don't swamp the first advantages.
        nn.init.normal_(self.value_head.weight, std=1.0 / (hidden + 1) ** 0.5)
        nn.init.zeros_(self.value_head.bias)

    @property
    def config(self) -> Any:
        return self.backbone.config

    def forward(
        self,
        input_ids: torch.Tensor,  # (B, T)
        attention_mask: torch.Tensor,  # (B, T)
        position_ids: torch.Tensor | None = None,  # (B, T)
    ) -> torch.Tensor:
        out = self.backbone(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            use_cache=False,
        )
        values: torch.Tensor = self.value_head(out.last_hidden_state).squeeze(-1)  # (B, T)
        # A tensor of its own, never a view (`.float()` of fp32 values returns the squeezed
        # view itself): FSDP2 hangs its pre-backward hook on a sharded module's output, and
        # an in-place op on a view of it would drop that hook silently (torch warns
        # "returned a view tensor" at every forward). One (B, T) copy.
        return values.to(torch.float32, copy=True)

    @classmethod
    def from_pretrained(
        cls,
        path: str | Path,
        dtype: str | torch.dtype = "float32",
        device: str | torch.device = "cpu",
        *,
        stage_on_cpu: bool = False,
    ) -> ValueModel:
        """Backbone from a policy (or critic) folder; the value head too when one was saved.
        Devices as `load_policy`."""
        backbone = AutoModel.from_pretrained(
            _check_folder(path), dtype=resolve_dtype(dtype), local_files_only=True
        )
        model = cls(backbone)
        head = Path(path) / VALUE_HEAD_FILE
        if head.is_file():
            model.value_head.load_state_dict(load_file(head))
        return model.to(torch.device("cpu" if stage_on_cpu else device))

    def save_pretrained(self, path: str | Path) -> None:
        """Backbone as a HF folder, value head beside it (`from_pretrained` reads both)."""
        self.backbone.save_pretrained(str(path))
        head = {k: v.contiguous() for k, v in self.value_head.state_dict().items()}
        save_file(head, Path(path) / VALUE_HEAD_FILE)
