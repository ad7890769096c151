"""`model.config_overrides`: the model config keys a run may change at load (verl's
`actor_rollout_ref.model.override_config`).

The rule is whether a key changes the shape of a weight, or which weights there are.
A key that does not (a context length, a RoPE scaling, dropout, the KV cache switch)
loads the same checkpoint into the same modules and only changes what they compute, as
verl's override does. A key that does (hidden_size, layer and head counts, the
vocabulary, expert counts, tied embeddings) would load the checkpoint into modules it
does not fit, or leave weights freshly initialised, so it is refused. The list is of
keys known to leave every weight as loaded; anything else is refused naming the key,
rather than guessed at.
"""

from __future__ import annotations

from typing import Any

SHAPE_PRESERVING: dict[str, str] = {
    "max_position_embeddings": "the context length (RoPE tables are computed, not loaded)",
    "rope_scaling": "RoPE scaling (yarn, linear, dynamic, ...): computed frequencies",
    "rope_theta": "the RoPE base: computed frequencies",
    "sliding_window": "the attention window: a mask",
    "use_sliding_window": "the attention window: a mask",
    "max_window_layers": "which layers use the window: a mask",
    "attention_dropout": "dropout: no weights",
    "hidden_dropout": "dropout: no weights",
    "resid_pdrop": "dropout: no weights",
    "embd_pdrop": "dropout: no weights",
    "attn_pdrop": "dropout: no weights",
    "use_cache": "the KV cache switch: no weights",
    "rms_norm_eps": "the norm's epsilon: no weights",
    "layer_norm_eps": "the norm's epsilon: no weights",
    "bos_token_id": "a token id: no weights",
    "eos_token_id": "a token id: no weights",
    "pad_token_id": "a token id: no weights",
    "output_router_logits": "reports MoE router logits: no weights",
    "router_aux_loss_coef": "the MoE load-balancing loss weight: no weights",
}


def refused_override(key: str) -> str:
    """Why `key` may not be overridden ("" when it may)."""
    if key in SHAPE_PRESERVING:
        return ""
    return (
        f"{key!r} is not among the model config keys known to leave every weight's shape "
        f"as loaded ({', '.join(SHAPE_PRESERVING)}); a key such as hidden_size, "
        "num_hidden_layers or vocab_size would load the checkpoint into modules it does "
        "not fit"
    )


def check_overrides(overrides: dict[str, Any]) -> None:
    for key in overrides:
        if reason := refused_override(key):
            raise ValueError(reason)
