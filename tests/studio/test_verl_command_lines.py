"""verl's quickstart and GSM8K example command lines in the studio's config check: the
path keys get the server-path refusal, the rest validates with the ignored keys listed."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from studio.runs.models import Run
from tests.studio.conftest import World
from tests.verl_commands import (
    GRPO_GSM8K,
    PATH_KEYS,
    PPO_GSM8K,
    QUICKSTART,
    verl_overrides,
    without_paths,
)


@pytest.fixture
def member(world: World) -> APIClient:
    return world.client("member")


def validate(client: APIClient, overrides: list[str]) -> dict:
    response = client.post("/api/config/validate", {"overrides": overrides}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize("script", [QUICKSTART, GRPO_GSM8K, PPO_GSM8K])
def test_verls_command_lines_validate_without_their_paths(member, script):
    overrides = verl_overrides(script, "/srv/model", "/srv/train.parquet", "/srv/test.parquet")
    answer = validate(member, without_paths(overrides))
    assert answer["valid"] is True, answer
    ignored = {item["key"]: item["reason"] for item in answer["ignored"]}
    assert "actor_rollout_ref.rollout.gpu_memory_utilization" in ignored
    assert "actor_rollout_ref.rollout.tensor_model_parallel_size" in ignored
    assert all(ignored.values())
    assert len(answer["ignored"]) == len(ignored)  # each once
    config = answer["config"]
    assert config["rollout"]["engine"] == "vllm"
    assert config["logging"]["console"] is True
    assert config["actor"]["optim"]["lr"] == pytest.approx(1e-6)
    assert not Run.objects.exists()


def test_the_quickstart_resolves_field_by_field(member):
    overrides = verl_overrides(QUICKSTART, "/srv/m", "/srv/train.parquet", "/srv/test.parquet")
    answer = validate(member, ["algorithm.adv_estimator=gae", *without_paths(overrides)])
    config = answer["config"]
    assert config["algorithm"]["adv_estimator"] == "gae"
    assert (config["data"]["train_batch_size"], config["data"]["max_prompt_length"]) == (256, 512)
    assert (config["actor"]["ppo_mini_batch_size"], config["actor"]["micro_batch_size"]) == (64, 4)
    assert config["critic"]["optim"]["lr"] == pytest.approx(1e-5)
    assert config["algorithm"]["kl_ctrl"]["kl_coef"] == pytest.approx(0.001)
    assert config["trainer"]["val_before_train"] is False
    assert (config["checkpoint"]["save_every"], config["trainer"]["val_every"]) == (10, 10)
    assert config["trainer"]["total_epochs"] == 15
    assert {i["key"] for i in answer["ignored"]} >= {
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu",
        "critic.ppo_micro_batch_size_per_gpu",
        "trainer.n_gpus_per_node",
    }


@pytest.mark.parametrize("path_key", PATH_KEYS)
def test_each_path_key_of_verls_command_lines_gets_the_server_path_refusal(member, path_key):
    overrides = verl_overrides(PPO_GSM8K, "/srv/model", "/srv/train.parquet", "/srv/test.parquet")
    [given] = [o for o in overrides if o.startswith(f"{path_key}=")]
    answer = validate(member, [*without_paths(overrides), given])
    assert answer["valid"] is False
    messages = [m for ms in answer["errors"].values() for m in ms]
    assert any("a request may not do" in m for m in messages), answer["errors"]


def test_an_ignored_verl_key_that_names_a_folder_is_refused_in_the_studio(member):
    answer = validate(member, ["trainer.default_hdfs_dir=/srv/hdfs"])
    assert answer["valid"] is False
    [message] = answer["errors"]["overrides"]
    assert "trainer.default_hdfs_dir" in message and "a request may not do" in message
    assert validate(member, ["trainer.default_hdfs_dir=null"])["valid"] is True
