"""A run's storage in the browser: the runs page's meter, archiving a run out of the list
and back, and deleting one, which says what it frees and frees it; a live run is told to
cancel first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import expect

from tests.browser.harness import LiveStudio, StudioUser, sign_in

pytestmark = pytest.mark.browser

MiB = 1024 * 1024
NEVER_FITS = {"cpus": 512.0}  # larger than any cluster: the run stays queued, never launched


def queued_run(studio: LiveStudio, user: StudioUser, version: int, name: str) -> int:
    response = studio.api(user).post(
        f"{studio.url}/api/runs/",
        json={
            "project": user.project_slug,
            "name": name,
            "dataset_version": version,
            "resources": NEVER_FITS,
        },
        timeout=30,
    )
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def ended(run_id: int) -> None:
    """As a trainer that failed leaves it (the queue never started it), its files not
    measured yet: the storage endpoint measures them (on the servers' checkpoint root)."""
    from django.utils import timezone

    from studio.runs.models import Run, RunStatus

    Run.objects.filter(pk=run_id).update(
        status=RunStatus.FAILED, finished_at=timezone.now(), storage_bytes=None
    )
    connections.close_all()  # the ORM's connection must not outlive the test


def checkpoint_files(studio: LiveStudio, run_id: int, size: int) -> Path:
    folder = Path(studio.env["RLSTUDIO_CHECKPOINT_ROOT"]) / f"run-{run_id}"
    (folder / "step_2").mkdir(parents=True)
    (folder / "step_2" / "actor.pt").write_bytes(b"w" * size)
    return folder


def test_the_runs_page_meters_storage_and_a_deleted_run_frees_it(
    studio: LiveStudio, page: Any, studio_orm: None
) -> None:
    user = studio.new_user("storage")
    version = studio.demo_dataset(user)
    old = queued_run(studio, user, version, "old sweep trial")
    kept = queued_run(studio, user, version, "baseline")
    live = queued_run(studio, user, version, "still queued")
    folder = checkpoint_files(studio, old, 5 * MiB)
    for run_id in (old, kept):
        ended(run_id)

    sign_in(page, studio, user)
    page.goto(f"{studio.url}/p/{user.project_slug}/runs")
    meter = page.get_by_test_id("storage-meter")
    expect(meter).to_contain_text("of 20.0 GiB")
    expect(meter).to_contain_text("Storage 5.0 MiB")  # the run's 5 MiB, the dataset's KiB
    expect(page.get_by_role("progressbar", name="Project storage used")).to_be_visible()
    page.shot("runs-storage-meter")
    page.shot("runs-storage-meter", narrow=True)

    # Archive: out of the list, back with the filter, and listed again when unarchived.
    page.goto(f"{studio.url}/p/{user.project_slug}/runs/{kept}")
    page.get_by_role("button", name="Archive").click()
    expect(page.get_by_text("Archiving frees no storage")).to_be_visible()
    page.goto(f"{studio.url}/p/{user.project_slug}/runs")
    runs = page.get_by_role("table", name="Runs")
    expect(runs.get_by_role("link", name="old sweep trial")).to_be_visible()
    expect(runs.get_by_role("link", name="baseline")).to_have_count(0)
    page.get_by_label("Archived").select_option("true")
    expect(runs.get_by_role("link", name="baseline")).to_be_visible()
    expect(runs.get_by_text("archived")).to_be_visible()
    page.shot("runs-archived-filter")

    # A live run is not deleted: cancel it first.
    page.goto(f"{studio.url}/p/{user.project_slug}/runs/{live}")
    page.get_by_role("button", name="Delete").click()
    dialog = page.get_by_role("alertdialog")
    expect(dialog).to_contain_text(f"Run #{live} is queued")
    expect(dialog).to_contain_text("Cancel “still queued” first")
    page.shot("run-delete-live")
    dialog.get_by_role("button", name="Keep it").click()

    # Delete: the dialog says what it frees; the folder goes; the meter drops.
    page.goto(f"{studio.url}/p/{user.project_slug}/runs/{old}")
    page.get_by_role("button", name="Delete").click()
    dialog = page.get_by_role("alertdialog", name=f"Delete run #{old}?")
    expect(dialog).to_contain_text("frees 5.0 MiB of checkpoints and files")
    page.shot("run-delete-confirm")
    page.shot("run-delete-confirm", narrow=True)
    dialog.get_by_role("button", name="Delete run").click()
    expect(page).to_have_url(f"{studio.url}/p/{user.project_slug}/runs")
    expect(page.get_by_text("Deleted “old sweep trial”: 5.0 MiB freed.")).to_be_visible()
    expect(meter).not_to_contain_text("5.0 MiB")
    page.shot("runs-after-delete")
    assert not folder.exists()
