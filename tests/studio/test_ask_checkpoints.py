"""Ask the checkpoints, over the API: a training run's sample becomes an evaluation of
its one prompt by the run's base model and every reachable checkpoint, served the rows the
sample came from and naming the prompt by its id; the question is kept with it."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient

from studio.api.trainer_ingest.endpoints import run_split
from studio.projects.models import AuditEvent
from studio.references.run_inputs import REF
from studio.runs.launch import claim, trainer_config
from studio.runs.models import Run, RunKind
from studio.telemetry.models import RolloutSample, SampleQuestion
from tests.studio.test_evaluations_api import evaluate_checkpoints

PROMPT = "<|im_start|>user\nCount to 3.<|im_end|>\n<|im_start|>assistant\n"


def sample_of(run: Run, split: str = "train", **fields: Any) -> RolloutSample:
    values: dict[str, Any] = {
        "run": run,
        "attempt": 1,
        "seq": RolloutSample.objects.filter(run=run).count(),
        "position": 0,
        "step": 3,
        "split": split,
        "group_id": "0:7",
        "data_source": "counting",
        "prompt": PROMPT,
        "response": "1 2 3",
        "score": 1.0,
    }
    return RolloutSample.objects.create(**(values | fields))


def ask(client: APIClient, sample: RolloutSample, **body: Any):
    return client.post("/api/evaluations/ask/", {"sample": sample.pk, **body}, format="json")


def test_a_training_sample_is_asked_of_the_base_model_and_every_checkpoint(member, trained):
    sample = sample_of(trained)
    response = ask(member, sample)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert [m["label"] for m in body["models"]] == ["demo-model", "demo @ step 2", "demo @ step 4"]
    assert body["question"] == {
        "sample": sample.pk,
        "run": trained.pk,
        "run_name": "demo",
        "step": 3,
        "split": "train",
        "group_id": "0:7",
        "prompt": PROMPT,
    }
    evaluation = Run.objects.get(pk=body["id"])
    assert evaluation.kind == RunKind.EVALUATION
    audited = AuditEvent.objects.get(action="evaluation.create", object_id=str(evaluation.pk))
    assert audited.detail == {"name": evaluation.name, "models": 3, "sample": sample.pk}
    assert evaluation.config["evaluation"]["prompt_ids"] == ["0:7"]
    assert evaluation.config["evaluation"]["greedy"] is True
    assert evaluation.config["reward"] == trained.config["reward"]
    # Its prompts are the rows the run trained on, served as they were served to the run.
    version = trained.dataset_version_id
    assert evaluation.config["data"]["val_files"] == [f"{REF}dataset-version/{version}/train"]
    assert evaluation.config["data"]["prompt_key"] == trained.config["data"]["prompt_key"]
    attempt = claim(evaluation.pk)
    assert attempt is not None
    tree = trainer_config(evaluation, attempt)
    assert tree["data"]["val_files"] == [
        f"http://127.0.0.1:8000/api/ingest/runs/{evaluation.pk}/dataset?split=train"
    ]
    assert run_split(evaluation, "train").content == run_split(trained, "train").content
    # The list shows it, with its question.
    listed = member.get("/api/evaluations/").json()["results"]
    assert listed[0]["question"]["sample"] == sample.pk


def test_a_validation_sample_is_asked_on_the_validation_rows(member, trained):
    response = ask(member, sample_of(trained, split="val", group_id="0:2"), k=2, greedy=False)
    assert response.status_code == 201, response.json()
    evaluation = Run.objects.get(pk=response.json()["id"])
    version = trained.dataset_version_id
    assert evaluation.config["data"]["val_files"] == [f"{REF}dataset-version/{version}/held-out"]
    assert evaluation.config["evaluation"]["k"] == 2
    assert run_split(evaluation, "val").content == run_split(trained, "val").content
    assert SampleQuestion.objects.get(evaluation=evaluation).split == "val"


def test_samples_whose_prompt_an_evaluation_would_not_see_are_refused(member, trained):
    evaluation = Run.objects.get(pk=evaluate_checkpoints(member, trained).json()["id"])
    refused = {
        "an evaluation's response": sample_of(evaluation, split="eval", group_id="0:1"),
        "multi-turn": sample_of(trained, turns=[{"role": "tool", "content": "4"}]),
        "no row": sample_of(trained, group_id="1:4"),
    }
    for why, sample in refused.items():
        response = ask(member, sample)
        assert response.status_code == 400, why
        assert response.json()["error"]["fields"]["sample"], why
    assert not SampleQuestion.objects.exists()


def test_viewers_may_not_ask_outsiders_see_nothing_and_no_checkpoint_is_said(
    world, member, trained
):
    sample = sample_of(trained)
    assert ask(world.client("viewer"), sample).status_code == 403
    assert ask(world.client("outsider"), sample).status_code == 404
    trained.checkpoints.all().delete()
    response = ask(member, sample)
    assert response.status_code == 400
    assert "no checkpoint" in response.json()["error"]["fields"]["sample"][0]
    assert not Run.objects.filter(kind=RunKind.EVALUATION).exists()
