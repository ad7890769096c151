"""verl's own command lines (tests/data/verl/*.sh), as the key=value overrides a verl
user types, with the paths turned into local tiny assets."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

VERL_DATA = Path(__file__).resolve().parent / "data" / "verl"

QUICKSTART = "quickstart_ppo_gsm8k.sh"  # PPO with GAE, Qwen2.5-0.5B-Instruct actor and critic
GRPO_GSM8K = "grpo_run_qwen2-7b.sh"  # examples/grpo_trainer/run_qwen2-7b.sh
PPO_GSM8K = "ppo_run_deepseek7b_llm.sh"  # examples/ppo_trainer/run_deepseek7b_llm.sh

# Keys whose value names a file or folder (what the studio refuses).
PATH_KEYS = (
    "data.train_files",
    "data.val_files",
    "actor_rollout_ref.model.path",
    "critic.model.path",
)


def verl_overrides(
    script: str, model: Path | str, train: Path | str, test: Path | str
) -> list[str]:
    """The overrides of `script`, verbatim but for its paths: GSM8K's parquet files become
    `train` and `test`, and the hub model (actor and critic) becomes `model`."""
    text = (VERL_DATA / script).read_text().replace("\\\n", " ")
    command = next(line for line in text.splitlines() if "verl.trainer.main_ppo" in line)
    words = shlex.split(command.replace("$HOME/data/gsm8k/", "GSM8K/"))
    start = words.index("verl.trainer.main_ppo") + 1
    out = []
    for word in words[start:]:
        if word in ("$@", "2>&1", "|"):
            break
        key, _, value = word.partition("=")
        if key in ("actor_rollout_ref.model.path", "critic.model.path"):
            value = str(model)
        value = value.replace("GSM8K/train.parquet", str(train))
        value = value.replace("GSM8K/test.parquet", str(test))
        out.append(f"{key}={value}")
    return out


def without_paths(overrides: list[str]) -> list[str]:
    return [o for o in overrides if o.partition("=")[0] not in PATH_KEYS]


# verl's example library (tests/data/verl/example_commands.json, written by
# tests/data/verl/extract_example_commands.py from verl's examples/ folder).
EXAMPLES = VERL_DATA / "example_commands.json"
OUTCOMES = VERL_DATA / "example_outcomes.json"
PREPROCESS_ROWS = VERL_DATA / "preprocess_rows.json"
DATA_KEYS = ("data.train_files", "data.val_files")
ADAPTER_KEY = "actor_rollout_ref.model.lora_adapter_path"
MODEL_KEYS = (
    "actor_rollout_ref.model.path",
    "critic.model.path",
    "reward_model.model.path",
    "reward.reward_model.model_path",
)


def example_lines() -> list[dict]:
    """Every command line of verl's examples: script, family, launch, args, unset."""
    return json.loads(EXAMPLES.read_text())["lines"]


def localized(
    args: list[str],
    model: Path | str,
    train: Path | str,
    test: Path | str,
    adapter: Path | str = "",
) -> list[str]:
    """`args` with its models, data files and saved LoRA adapter turned into local tiny
    assets (a list of files stays a list); everything else as typed."""
    out = []
    for arg in args:
        key, sep, value = arg.partition("=")
        bare = key.lstrip("+")
        if bare in MODEL_KEYS:
            value = str(model)
        elif bare == ADAPTER_KEY and adapter:
            value = str(adapter)
        elif bare in DATA_KEYS:
            local = str(train if bare == "data.train_files" else test)
            value = f"[{local}]" if value.lstrip().startswith("[") else local
        out.append(f"{key}{sep}{value}" if sep else arg)
    return out


def data_files(args: list[str]) -> list[str]:
    """The parquet files a command line's data keys name, as typed."""
    files: list[str] = []
    for arg in args:
        key, _, value = arg.partition("=")
        if key.lstrip("+") in DATA_KEYS:
            files += re.findall(r"[^\[\],'\" ]+\.parquet", value)
    return files
