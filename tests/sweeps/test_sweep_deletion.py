"""Deleting a sweep: every trial's run goes with its rows and files (studio.runs.deletion),
the sweep's own rows too, and nothing of either is left; a live trial refuses it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rest_framework.test import APIClient

from studio.runs.models import Run, RunStatus
from studio.sweeps.driver import advance
from studio.sweeps.models import PrunerDecision, Sweep, SweepTrial
from tests.studio.test_run_deletion import (
    MiB,
    add_records,
    owned_rows,
    rows_pointing_at,
    tree_bytes,
    write_files,
)
from tests.sweeps.test_sweeps_api import end, report, sweep_body


def test_deleting_a_sweep_frees_its_trials_files_and_leaves_no_rows_or_files(
    world: Any,
    member: APIClient,
    version: Any,
    versions: list[int],
    media: Path,
    spool: Path,
    commit: Any,
) -> None:
    sweep_id = member.post("/api/sweeps/", sweep_body(version, versions), format="json").json()[
        "id"
    ]
    advance(sweep_id)
    trials = list(SweepTrial.objects.filter(sweep_id=sweep_id).select_related("run"))
    runs = [t.run for t in trials if t.run is not None]
    assert len(runs) == 2
    for run in runs:
        add_records(run, world.member)
        write_files(run, media, spool)
        report(run, {2: 0.5})
    advance(sweep_id)
    assert PrunerDecision.objects.filter(trial__sweep_id=sweep_id).exists()
    assert member.delete(f"/api/sweeps/{sweep_id}/").status_code == 409  # trials are live
    for run in runs:
        end(run, RunStatus.CANCELLED)
    rows = {run.pk: owned_rows(run.pk) for run in runs}
    folders = (media / "checkpoints", spool)
    before = tree_bytes(*folders)

    with commit():
        response = member.delete(f"/api/sweeps/{sweep_id}/")

    assert response.status_code == 200, response.json()
    freed = before - tree_bytes(*folders)
    assert response.json()["freed_bytes"] == freed > 2 * 3 * MiB
    assert not Sweep.objects.filter(pk=sweep_id).exists()
    assert not SweepTrial.objects.filter(sweep_id=sweep_id).exists()
    assert not PrunerDecision.objects.filter(trial__sweep_id=sweep_id).exists()
    for run in runs:
        assert not Run.objects.filter(pk=run.pk).exists()
        assert not (media / "checkpoints" / f"run-{run.pk}").exists()
        assert not list(spool.glob(f"run-{run.pk}-*"))
        for model, pks in rows[run.pk].items():
            assert not model._default_manager.filter(pk__in=pks).exists(), model.__name__
        assert owned_rows(run.pk) == {} and rows_pointing_at(run.pk) == []
    assert world.client("viewer").delete(f"/api/sweeps/{sweep_id}/").status_code == 404


def test_a_viewer_may_not_delete_a_sweep(world: Any, version: Any, versions: list[int]) -> None:
    sweep_id = (
        world.client("member")
        .post("/api/sweeps/", sweep_body(version, versions), format="json")
        .json()["id"]
    )
    assert world.client("viewer").delete(f"/api/sweeps/{sweep_id}/").status_code == 403
    assert Sweep.objects.filter(pk=sweep_id).exists()
