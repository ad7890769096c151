"""`studio.client` and the `rlstudio runs|datasets|rewards` commands against a live
server: real HTTP to pytest-django's live_server, personal tokens, the real database."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from studio.cli import remote
from studio.cli.main import main
from studio.client import ApiError, Client, ServerUnreachable
from studio.datasets.models import Dataset, DatasetVersion
from studio.projects.models import ApiToken, AuditEvent, Project
from studio.rewards.models import RewardFunction
from studio.runs.models import Run, RunStatus
from studio.telemetry.models import MetricPoint, RolloutSample
from tests.studio.test_runs_api import dataset_version
from tests.verl_data import counting_answers, verl_parquet

EXACT = (
    "def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):\n"
    "    return float(solution_str.strip() == str(ground_truth).strip())\n"
)


@pytest.fixture(autouse=True)
def storage(settings, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "uploading")
    (tmp_path / "uploading").mkdir()


@pytest.fixture
def server(live_server, world) -> str:
    return str(live_server.url)


def token(world, who: str) -> str:
    return ApiToken.issue(getattr(world, who), f"{who}-cli")[1]


def cli(server: str, key: str, *argv: str) -> list[str]:
    return [*argv, "--url", server, "--token", key]


def make_run(project: Project, name: str, status: str = RunStatus.QUEUED) -> Run:
    return Run.objects.create(
        project=project, name=name, config={}, status=status, created_by=project.created_by
    )


def verl_file(path: Path) -> Path:
    path.write_bytes(verl_parquet(counting_answers(3)))
    return path


def test_runs_list_shows_only_your_projects_runs(server, world, capsys):
    make_run(world.project, "alpha-run")
    make_run(world.other_project, "secret-run")
    assert main(cli(server, token(world, "viewer"), "runs", "list")) == 0
    out = capsys.readouterr().out
    assert "alpha-run" in out and "queued" in out
    assert "secret-run" not in out
    assert main(cli(server, token(world, "viewer"), "runs", "list", "--json")) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in listed] == ["alpha-run"]


def test_runs_create_from_a_preset_with_overrides_and_a_config_file(
    server, world, capsys, tmp_path
):
    config = tmp_path / "config.yaml"
    config.write_text("trainer:\n  total_steps: 7\n")
    version = dataset_version(world.project, world.owner)
    argv = cli(
        server,
        token(world, "member"),
        "runs",
        "create",
        "--project",
        "alpha",
        "--name",
        "tuned",
        "--preset",
        "grpo-tiny-arith",
        "--config",
        str(config),
        "--set",
        "actor.optim.lr=3e-5",
        "--dataset-version",
        str(version.pk),
        "--validation",
        "none",
        "--tag",
        "cli",
    )
    assert main(argv) == 0
    out = capsys.readouterr().out
    run = Run.objects.get(name="tuned")
    assert (run.dataset_version_id, run.validation) == (version.pk, "none")
    assert out.strip() == f"created run {run.pk} (queued): tuned"
    assert run.config["trainer"]["total_steps"] == 7
    assert run.config["actor"]["optim"]["lr"] == 3e-5
    assert run.tags == ["cli"] and run.preset == "grpo-tiny-arith"
    assert AuditEvent.objects.filter(action="run.create", actor=world.member).exists()


def test_a_bad_config_key_is_exit_1_with_the_field_named(server, world, capsys):
    argv = cli(server, token(world, "member"), "runs", "create", "--project", "alpha")
    argv += ["--name", "x", "--set", "actor.optim.nope=1"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("rlstudio runs create: 400 validation_error: ")
    assert "nope" in err
    assert not Run.objects.filter(name="x").exists()


def test_runs_cancel_then_resume_and_a_refused_transition_is_exit_1(server, world, capsys):
    run = make_run(world.project, "r")
    key = token(world, "member")
    assert main(cli(server, key, "runs", "cancel", str(run.pk), "--reason", "cli")) == 0
    assert capsys.readouterr().out.strip() == f"run {run.pk}: cancelled"
    assert main(cli(server, key, "runs", "cancel", str(run.pk))) == 1
    err = capsys.readouterr().err
    assert err.startswith("rlstudio runs cancel: 409 conflict: The run is already cancelled")
    assert main(cli(server, key, "runs", "resume", str(run.pk))) == 0
    assert capsys.readouterr().out.strip() == f"run {run.pk}: queued"
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED


def test_runs_archive_then_delete_frees_its_folder_and_a_live_run_is_exit_1(
    server, world, capsys, settings, tmp_path
):
    settings.RLSTUDIO_CHECKPOINT_ROOT = str(tmp_path / "checkpoints")
    run = make_run(world.project, "old", RunStatus.FAILED)
    folder = tmp_path / "checkpoints" / f"run-{run.pk}" / "step_1"
    folder.mkdir(parents=True)
    (folder / "actor.pt").write_bytes(b"w" * 3 * 1024**2)
    key = token(world, "member")
    assert main(cli(server, key, "runs", "archive", str(run.pk))) == 0
    assert capsys.readouterr().out.strip() == f"run {run.pk}: archived"
    assert Client(server, key).runs(world.project.slug) == []  # hidden from the list
    assert main(cli(server, key, "runs", "delete", str(run.pk))) == 0
    assert capsys.readouterr().out.strip() == f"deleted run {run.pk} (old): 3.0 MiB freed"
    assert not folder.parent.exists() and not Run.objects.filter(pk=run.pk).exists()
    live = make_run(world.project, "live", RunStatus.RUNNING)
    assert main(cli(server, key, "runs", "delete", str(live.pk))) == 1
    err = capsys.readouterr().err
    assert "409 conflict" in err and "Cancel it first" in err
    assert Client(server, key).project_storage(world.project.slug)["used_bytes"] == 0


def test_viewers_and_strangers_are_refused_with_the_apis_message(server, world, capsys):
    run = make_run(world.project, "r")
    assert main(cli(server, token(world, "viewer"), "runs", "cancel", str(run.pk))) == 1
    assert "403 permission_denied" in capsys.readouterr().err
    assert main(cli(server, token(world, "outsider"), "runs", "cancel", str(run.pk))) == 1
    assert "404 not_found" in capsys.readouterr().err
    assert main(cli(server, "rls_not-a-real-token", "runs", "list")) == 1
    assert "401 authentication_failed: Invalid, expired or revoked API token." in (
        capsys.readouterr().err
    )


def test_an_unreachable_server_is_exit_3(world, capsys, monkeypatch):
    monkeypatch.setenv("RLSTUDIO_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("RLSTUDIO_TOKEN", "rls_x")
    assert main(["runs", "list"]) == 3
    assert "can't reach http://127.0.0.1:9" in capsys.readouterr().err


def test_datasets_upload_creates_the_dataset_then_adds_versions(server, world, capsys, tmp_path):
    source = verl_file(tmp_path / "train.parquet")
    key = token(world, "member")
    argv = cli(server, key, "datasets", "upload", str(source), "--project", "alpha")
    assert main([*argv, "--name", "arith", "--message", "first"]) == 0
    dataset = Dataset.objects.get(project=world.project, name="arith")
    assert f"dataset {dataset.pk} version 1" in capsys.readouterr().out
    by_id = cli(server, key, "datasets", "upload", str(source), "--dataset", str(dataset.pk))
    assert main(by_id) == 0
    assert "version 2" in capsys.readouterr().out
    assert main([*argv, "--name", "arith"]) == 0  # found by name this time
    assert "version 3" in capsys.readouterr().out
    assert Dataset.objects.filter(project=world.project).count() == 1

    ragged = tmp_path / "ragged.csv"
    ragged.write_text("prompt,answer\nWhat is 1+1?,2\nWhat is 2+2?,4,extra\n")
    bad = cli(server, key, "datasets", "upload", str(ragged), "--dataset", str(dataset.pk))
    assert main(bad) == 1
    err = capsys.readouterr().err
    assert err.startswith("rlstudio datasets upload: 400 validation_error: file: ")
    assert "row" in err.lower()
    assert dataset.versions.count() == 3


def test_datasets_upload_of_a_missing_file_is_a_usage_error(server, world, capsys, tmp_path):
    argv = cli(server, token(world, "member"), "datasets", "upload", str(tmp_path / "nope.csv"))
    assert main([*argv, "--dataset", "1"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_rewards_push_creates_the_function_then_versions_and_rejects_bad_code(
    server, world, capsys, tmp_path
):
    source = tmp_path / "exact.py"
    source.write_text(EXACT)
    key = token(world, "member")
    argv = cli(server, key, "rewards", "push", str(source), "--project", "alpha")
    assert main([*argv, "--name", "exact", "--message", "v1"]) == 0
    function = RewardFunction.objects.get(project=world.project, name="exact")
    assert f"reward function {function.pk} version 1" in capsys.readouterr().out
    source.write_text(EXACT + "\n# stricter\n")
    assert main([*argv, "--name", "exact"]) == 0
    assert "version 2" in capsys.readouterr().out
    source.write_text("def compute_score(:\n")
    by_id = cli(server, key, "rewards", "push", str(source), "--function", str(function.pk))
    assert main(by_id) == 1
    err = capsys.readouterr().err
    assert "400 validation_error" in err and "line 1" in err
    assert function.versions.count() == 2


def test_rewards_test_scores_pasted_completions(server, world, capsys, tmp_path):
    function = Client(server, token(world, "member")).create_reward_function(
        "alpha", "exact", code=EXACT
    )
    completions = tmp_path / "completions.jsonl"
    lines = [
        {"solution_str": "5", "ground_truth": "5"},
        {"solution_str": "4", "ground_truth": "5"},
    ]
    completions.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    argv = cli(server, token(world, "member"), "rewards", "test", str(function["id"]))
    assert main([*argv, "--completions", str(completions)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["row 0: score 1", "row 1: score 0", "2 rows, 0 failed, mean score 0.5"]


def test_runs_watch_prints_status_changes_and_metrics_until_the_run_ends(server, world):
    run = make_run(world.project, "watched")
    script = [
        lambda: Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING),
        lambda: MetricPoint.objects.bulk_create(
            MetricPoint(run=run, attempt=1, seq=s, step=s, key=k, value=v)
            for s in (1, 2)
            for k, v in (("critic/score/mean", 0.25 * s), ("actor/pg_loss", -0.5))
        ),
        lambda: None,  # nothing new: nothing printed
        lambda: Run.objects.filter(pk=run.pk).update(status=RunStatus.SUCCEEDED),
    ]
    polls: list[float] = []

    def next_poll(seconds: float) -> None:
        polls.append(seconds)
        script[len(polls) - 1]()

    out = io.StringIO()
    args = argparse.Namespace(run=run.pk, interval=0.5, keys=None)
    client = Client(server, token(world, "viewer"))
    assert remote.runs_watch(args, client, out, sleep=next_poll) == 0
    lines = [line.split(" ", 1)[1] for line in out.getvalue().splitlines()]  # drop clock
    assert lines == [
        f"run {run.pk}: queued",
        f"run {run.pk}: queued -> running",
        "step 2: critic/score/mean=0.5 actor/pg_loss=-0.5",
        f"run {run.pk}: running -> succeeded",
    ]
    assert polls == [0.5, 0.5, 0.5, 0.5]


def test_runs_watch_exits_1_when_the_run_failed(server, world, capsys):
    run = make_run(world.project, "doomed", status=RunStatus.FAILED)
    Run.objects.filter(pk=run.pk).update(last_error="CUDA out of memory")
    assert main(cli(server, token(world, "viewer"), "runs", "watch", str(run.pk))) == 1
    out = capsys.readouterr().out
    assert f"run {run.pk}: failed" in out and "CUDA out of memory" in out


def test_the_documented_python_workflow_end_to_end(server, world, tmp_path):
    """docs/api.md's Python examples, in order, as the member."""
    studio = Client(server, token(world, "member"))
    assert studio.me()["username"] == "member"

    dataset = studio.create_dataset("alpha", "arith")
    version = studio.upload_dataset_version(
        dataset["id"], verl_file(tmp_path / "a.parquet"), message="v1"
    )
    assert version["row_count"] == 3
    saved = studio.download_dataset_version(dataset["id"], 1, tmp_path / "copy.parquet")
    assert pq.read_table(saved).num_rows == 3

    reward = studio.create_reward_function("alpha", "exact", from_template="exact_match")
    pushed = studio.push_reward_version(reward["id"], EXACT, message="mine")
    report = studio.test_reward_version(
        reward["id"], pushed["number"], completions=[{"solution_str": "2", "ground_truth": "2"}]
    )
    assert report["summary"]["mean"] == 1.0

    run = studio.create_run(
        "alpha",
        "baseline",
        preset="grpo-tiny-arith",
        overrides=["trainer.total_steps=5"],
        dataset_version=version["id"],
        reward_version=pushed["id"],
    )
    assert run["status"] == "queued" and run["config"]["trainer"]["total_steps"] == 5
    # Any registered run input by its request field: an adapter not in the project is refused.
    with pytest.raises(ApiError) as refused:
        studio.create_run(
            "alpha", "x", dataset_version=version["id"], inputs={"lora_adapter": 999_999}
        )
    assert refused.value.fields and "lora_adapter" in refused.value.fields
    assert studio.cancel_run(run["id"])["status"] == "cancelled"
    assert studio.resume_run(run["id"])["status"] == "queued"
    clone = studio.clone_run(run["id"], name="lr sweep", overrides=["actor.optim.lr=2e-5"])
    assert clone["parent"] == run["id"]
    assert studio.set_priority(clone["id"], 10)["priority"] == 10
    assert [r["name"] for r in studio.runs("alpha")] == ["lr sweep", "baseline"]

    MetricPoint.objects.bulk_create(
        MetricPoint(run_id=run["id"], attempt=1, seq=s, step=s, key="loss", value=1 / s)
        for s in range(1, 51)
    )
    assert studio.metric_keys(run["id"]) == ["loss"]
    series = studio.query_metrics([run["id"]], ["loss"], points=10)["series"][0]
    assert series["total"] == 50 and len(series["steps"]) <= 10
    assert studio.metrics_csv(run["id"]).splitlines()[:2] == ["step,key,value", "1,loss,1.0"]

    for i, text in enumerate(["the answer is 4", "I refuse to answer", "answer: 4"]):
        RolloutSample.objects.create(
            run_id=run["id"],
            attempt=1,
            seq=i,
            position=0,
            step=1,
            group_id="g0",
            data_source="arith",
            prompt="What is 2 + 2?",
            response=text,
            ground_truth="4",
            score=float(i != 1),
        )
    refused = list(studio.samples(run["id"], q="refuse"))
    assert [s["response"] for s in refused] == ["I refuse to answer"]
    assert len(list(studio.samples(run["id"], page_size=1))) == 3  # follows cursor pages
    assert studio.sample_group(run["id"], 1, "g0")["count"] == 3
    studio.label_sample(refused[0]["id"], "refusal", note="never answers")
    studio.label_sample(refused[0]["id"], "oops")
    studio.unlabel_sample(refused[0]["id"], "oops")
    assert [lb["label"] for lb in studio.sample(refused[0]["id"])["labels"]] == ["refusal"]
    exported = studio.export_labelled(run["id"], dataset["id"], label="refusal")
    assert exported["number"] == 2 and exported["row_count"] == 1
    assert DatasetVersion.objects.filter(dataset_id=dataset["id"]).count() == 2


def test_client_errors_carry_the_apis_code_message_and_fields(server, world):
    studio = Client(server, token(world, "member"))
    with pytest.raises(ApiError) as refused:
        studio.create_run("alpha", "x", overrides=["actor.optim.lr=fast"])
    error = refused.value
    assert error.status == 400 and error.code == "validation_error"
    assert "actor.optim.lr" in error.message
    # The run's missing training data is named in the same answer.
    assert error.fields and "dataset" in error.fields
    with pytest.raises(ServerUnreachable):
        Client("http://127.0.0.1:9", "rls_x", timeout_s=2).runs()
