"""The built-in input kinds, in the order they are chosen (validation reads the training
data chosen before it; the critic model and the LoRA adapter are checked against the
model), and the references only a launch resolves."""

from studio.references.kinds import (
    critic_model,
    folders,
    lora_adapter,
    model,
    reward,
    reward_models,
    training_data,
    validation,
)
from studio.references.registry import register, register_resolver

BUILT_IN = (
    model.KIND,
    training_data.KIND,
    validation.KIND,
    reward.KIND,
    reward_models.KIND,
    critic_model.KIND,
    lora_adapter.KIND,
)

for _kind in BUILT_IN:
    register(_kind)
register_resolver(folders.RUN_FOLDER, folders.resolve_run_folder)
register_resolver("checkpoint", folders.resolve_checkpoint)
