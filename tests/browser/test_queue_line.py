"""The runs page says where the project stands in the queue: its running jobs against its
cap, how many runs are queued and what the next one waits for."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import expect

from tests.browser.harness import LiveStudio, sign_in

pytestmark = pytest.mark.browser


def test_the_runs_page_shows_the_projects_queue(
    studio: LiveStudio, page: Any, studio_orm: None
) -> None:
    from django.contrib.auth.models import User

    from studio.projects.models import Project
    from studio.runs.models import Run

    user = studio.new_user("queue")
    project = Project.objects.get(slug=user.project_slug)
    owner = User.objects.get(pk=user.id)
    # Larger than any cluster: they stay queued and say so (nothing is launched).
    for name in ("huge-1", "huge-2"):
        Run.objects.create(
            project=project,
            name=name,
            config={},
            resources={"cpus": 512.0, "memory_gb": 1.0},
            created_by=owner,
        )
    connections.close_all()  # the ORM's connection must not outlive the test

    sign_in(page, studio, user)
    page.goto(f"{studio.url}/p/{user.project_slug}/runs")
    line = page.get_by_role("status", name="Queue")
    expect(line).to_contain_text("0 of 4 jobs running")
    expect(line).to_contain_text("2 queued")
    expect(line).to_contain_text("next, huge-1, waits for 512 CPUs")
    page.shot("runs-queue")
    page.shot("runs-queue", narrow=True)
