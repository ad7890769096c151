"""`rlstudio sweeps create|list|watch|pause|resume|stop` and the client's sweep methods
against a live server; trials are moved on by the driver's passes, never trained."""

from __future__ import annotations

import argparse
import io
from typing import Any

import pytest

from studio.cli.input_files import UsageError
from studio.cli.main import main
from studio.cli.sweep_space import build_space, parse_param
from studio.cli.sweeps import sweeps_watch
from studio.client import Client
from studio.runs.models import Run, RunStatus
from studio.sweeps.driver import advance
from studio.sweeps.models import Sweep, SweepTrial, TrialState
from tests.studio.test_client_cli import cli, storage, token  # noqa: F401  a fixture
from tests.studio.test_runs_api import dataset_version
from tests.sweeps.test_sweeps_api import REWARD, end, report


@pytest.fixture
def server(live_server, world) -> str:
    return str(live_server.url)


def reward_versions(client: Client) -> list[int]:
    made = client.create_reward_function("alpha", "exact", code=REWARD)
    second = client.push_reward_version(made["id"], REWARD.replace("{}", "0.5"))
    return [made["latest_version"]["id"], second["id"]]


def make_sweep(client: Client, version_id: int, **changes: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "preset": "grpo-tiny-arith",
        "inputs": {"dataset_version": version_id},
        "overrides": ["trainer.total_steps=8"],
        "max_trials": 2,
        "parallelism": 2,
        "seed": 3,
    }
    space = [{"name": "actor.optim.lr", "type": "float", "low": 1e-5, "high": 1e-3, "log": True}]
    return client.create_sweep("alpha", "lr", space, **(settings | changes))


def clockless(text: str) -> list[str]:
    """Output lines without the watch's clock column."""
    return [line[10:] if line[:2].isdigit() else line for line in text.splitlines()]


def test_sweeps_create_takes_a_param_of_each_type_and_prints_the_sweep_and_its_url(
    server, world, capsys
):
    key = token(world, "member")
    versions = reward_versions(Client(server, key))
    version = dataset_version(world.project, world.owner)
    argv = cli(server, key, "sweeps", "create", "--project", "alpha", "--name", "four kinds")
    argv += ["--preset", "grpo-tiny-arith", "--dataset-version", str(version.pk)]
    argv += ["--set", "trainer.total_steps=8", "--set", "trainer.val_every=2"]
    argv += [
        "--param", "actor.optim.lr=float:1e-5:1e-3:log",
        "--param", "rollout.n=int:2:8:2",
        "--param", "rollout.temperature=choice:0.7,1.0",
        "--param", f"reward_version=input:{versions[0]},{versions[1]}",
        "--method", "tpe", "--max-trials", "6", "--parallelism", "2", "--seed", "5",
        "--metric-reward", "exact_match", "--direction", "maximize",
        "--pruner", "asha", "--min-steps", "2", "--no-stop-on-critical-alert",
    ]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    sweep = Sweep.objects.get(name="four kinds")
    assert capsys.readouterr().out.splitlines() == [
        f"created sweep {sweep.pk} (running): four kinds",
        f"{server}/p/alpha/sweeps/{sweep.pk}",
    ]
    assert sweep.space == [
        {"name": "actor.optim.lr", "type": "float", "low": 1e-5, "high": 1e-3, "log": True},
        {"name": "rollout.n", "type": "int", "low": 2, "high": 8, "step": 2},
        {"name": "rollout.temperature", "type": "choice", "values": [0.7, 1.0]},
        {"name": "reward_version", "type": "input", "values": versions},
    ]
    assert (sweep.method, sweep.max_trials, sweep.parallelism, sweep.seed) == ("tpe", 6, 2, 5)
    assert sweep.pruner == {"kind": "asha", "min_steps": 2, "reduction_factor": 2}
    assert sweep.metric_reward == "exact_match" and not sweep.stop_on_critical_alert
    assert sweep.base_request["inputs"] == {"dataset_version": version.pk}
    assert sweep.base_request["overrides"] == ["trainer.total_steps=8", "trainer.val_every=2"]


def test_a_space_the_server_refuses_is_exit_1_with_the_field_named(server, world, capsys):
    version = dataset_version(world.project, world.owner)
    argv = cli(server, token(world, "member"), "sweeps", "create", "--project", "alpha")
    argv += ["--name", "x", "--preset", "grpo-tiny-arith", "--dataset-version", str(version.pk)]
    assert main([*argv, "--param", "actor.optim.nope=float:0:1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rlstudio sweeps create: 400 validation_error: ")
    assert "space: " in err and "actor.optim.nope: not a key of the run config" in err
    assert not Sweep.objects.exists()


@pytest.mark.parametrize(
    ("param", "words"),
    [
        ("actor.optim.lr", "expected NAME=TYPE:..."),
        ("actor.optim.lr=float:1e-5", "expected actor.optim.lr=float:LOW:HIGH[:log]"),
        ("actor.optim.lr=float:1e-5:1e-3:ln", "the scale is log or linear, not 'ln'"),
        ("actor.optim.lr=float:small:1e-3", "'small' is not a number"),
        ("actor.optim.lr=float:1e-3:1e-5", "LOW is above HIGH"),
        ("rollout.n=int:2:8.5", "'8.5' is not an integer"),
        ("rollout.n=range:2:8", "the type is one of float, int, choice, input"),
        ("rollout.temperature=choice:", "expected rollout.temperature=choice:V1,V2,..."),
        ("rollout.temperature=choice:0.7,,1.0", "none of them empty"),
        ("reward_version=input:7,latest", "'latest' is not an integer"),
    ],
)
def test_a_malformed_param_is_a_usage_error_that_names_it(param, words, capsys):
    argv = ["sweeps", "create", "--project", "alpha", "--name", "x", "--preset", "p"]
    argv += ["--param", param, "--url", "http://127.0.0.1:9", "--token", "rls_x"]
    assert main(argv) == 2  # refused before any request: the URL answers nothing
    err = capsys.readouterr().err
    assert err.startswith(f"rlstudio sweeps create: --param {param!r}: ")
    assert words in err, err


def test_params_parse_to_the_apis_parameters_and_a_space_file_comes_first(tmp_path):
    assert parse_param("a.b=float:0:0.1") == {"name": "a.b", "type": "float", "low": 0, "high": 0.1}
    assert parse_param("a.b=int:1:4") == {"name": "a.b", "type": "int", "low": 1, "high": 4}
    assert parse_param('a.b=choice:1,2.5,true,null,adam,"7"')["values"] == [
        1, 2.5, True, None, "adam", "7",
    ]  # fmt: skip
    space = tmp_path / "space.yaml"
    space.write_text("space:\n  - {name: rollout.n, type: int, low: 2, high: 4}\n")
    built = build_space(["a.b=input:3"], space)
    assert [p["name"] for p in built] == ["rollout.n", "a.b"]
    with pytest.raises(UsageError, match="given twice: rollout.n"):
        build_space(["rollout.n=int:1:2"], space)
    with pytest.raises(UsageError, match="give the space"):
        build_space([], None)


def test_sweeps_list_watch_once_pause_resume_and_stop(server, world, capsys):
    member = Client(server, token(world, "member"))
    version = dataset_version(world.project, world.owner)
    sweep = make_sweep(member, version.pk)
    advance(sweep["id"])
    first = SweepTrial.objects.get(sweep_id=sweep["id"], number=0)
    assert first.run is not None
    report(first.run, {2: 0.5, 8: 0.75})
    end(first.run)
    advance(sweep["id"])
    viewer = token(world, "viewer")

    assert main(cli(server, viewer, "sweeps", "list")) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "NAME", "STATUS", "METHOD", "BEST", "TRIALS"]
    assert lines[1].split() == [
        str(sweep["id"]), "lr", "running", "random", "#0", "0.75", "2/2:", "1", "running,",
        "1", "complete",
    ]  # fmt: skip

    assert main(cli(server, viewer, "sweeps", "watch", str(sweep["id"]), "--once")) == 0
    out = clockless(capsys.readouterr().out)
    lr = SweepTrial.objects.get(sweep_id=sweep["id"], number=1).params["actor.optim.lr"]
    second_run = Run.objects.get(sweep_trial__sweep_id=sweep["id"], sweep_trial__number=1)
    assert out[1] == f"sweep {sweep['id']}: running"
    assert out[2].split()[:5] == ["0", "complete", "0.75", "8", f"#{first.run.pk}"]
    assert f"#{first.run.pk} {first.run.name}" in out[2]
    assert out[2].endswith(f"actor.optim.lr={first.params['actor.optim.lr']:.4g}")
    assert out[3].split()[:5] == ["1", "running", "-", "0", f"#{second_run.pk}"]
    assert out[3].endswith(f"actor.optim.lr={lr:.4g}")
    assert out[4].startswith(f"sweep {sweep['id']} lr: running; random, maximize validation")
    assert out[4].endswith("trials 2/2: 1 running, 1 complete; best #0 0.75")

    member_key = token(world, "member")
    for verb, status in (("pause", "paused"), ("resume", "running"), ("stop", "stopped")):
        assert main(cli(server, member_key, "sweeps", verb, str(sweep["id"]))) == 0
        assert f": {status}" in capsys.readouterr().out
    assert main(cli(server, member_key, "sweeps", "resume", str(sweep["id"]))) == 1
    assert "rlstudio sweeps resume: 409" in capsys.readouterr().err
    assert main(cli(server, viewer, "sweeps", "stop", str(sweep["id"]))) == 1
    assert "403 permission_denied" in capsys.readouterr().err
    # A stopped sweep: watch prints it and exits 1 at once.
    assert main(cli(server, viewer, "sweeps", "watch", str(sweep["id"]))) == 1
    out = clockless(capsys.readouterr().out)
    assert out[1] == f"sweep {sweep['id']}: stopped"
    assert "1  stopped" in out[3] and out[-1].startswith(f"sweep {sweep['id']} lr: stopped")


def test_sweeps_watch_prints_changed_trials_until_the_sweep_finishes(server, world):
    member = Client(server, token(world, "member"))
    sweep = make_sweep(member, dataset_version(world.project, world.owner).pk)
    advance(sweep["id"])
    trials = list(SweepTrial.objects.filter(sweep_id=sweep["id"]).order_by("number"))
    runs = [t.run for t in trials]
    assert all(runs)

    def finish(i: int, value: float) -> None:
        report(runs[i], {8: value})  # type: ignore[arg-type]
        end(runs[i])  # type: ignore[arg-type]
        advance(sweep["id"])

    script = [lambda: None, lambda: finish(0, 0.5), lambda: finish(1, 0.9)]
    polls: list[float] = []

    def next_poll(seconds: float) -> None:
        polls.append(seconds)
        script[len(polls) - 1]()

    out = io.StringIO()
    args = argparse.Namespace(sweep=sweep["id"], interval=2.0, once=False)
    assert sweeps_watch(args, Client(server, token(world, "viewer")), out, sleep=next_poll) == 0
    lines = clockless(out.getvalue())
    states = [(line.split()[0], line.split()[1]) for line in lines[2:-2]]
    assert states == [("0", "running"), ("1", "running"), ("0", "complete"), ("1", "complete")]
    assert lines[-2] == f"sweep {sweep['id']}: running -> finished"
    assert lines[-1].endswith("best #1 0.9")
    assert polls == [2.0, 2.0, 2.0]
    assert SweepTrial.objects.filter(sweep_id=sweep["id"], state=TrialState.COMPLETE).count() == 2
    assert Run.objects.filter(status=RunStatus.SUCCEEDED).count() == 2
