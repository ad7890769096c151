"""A throwaway studio for the web-app benches: a database of its own on DATABASE_URL's
server (migrated, with one user who owns one project), dropped at the end, and uvicorn
serving the API and the built frontend (frontend/dist) on it.

    with throwaway_studio("rlstudio_bench_web") as studio:
        ...  # load data with the ORM or COPY (bench/api_queries.py)
        with served(studio.database_url) as url:
            ...  # drive Chromium against url
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.api_queries import database_urls, recreate
from bench.telemetry import start_server

USERNAME = "bench"
PASSWORD = "a-long-password-123"
PROJECT = "bench"  # the project's slug (and name)


@dataclass(frozen=True)
class BenchStudio:
    database_url: str
    user: Any  # django.contrib.auth.models.User (Django is set up inside the context)
    project: Any  # studio.projects.models.Project


@contextmanager
def throwaway_studio(database: str) -> Iterator[BenchStudio]:
    """Creates `database` (dropping one left over), sets Django up on it, migrates it and
    adds the owner of the project; drops it on the way out, whatever happened."""
    admin, bench_url = database_urls(database)
    recreate(admin, name=database)
    os.environ["DATABASE_URL"] = bench_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
    # Playwright's sync API runs an event loop in this thread; the ORM calls here are
    # plain blocking ones in the same thread (as in tests/browser/conftest.py).
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connections

    from studio.projects.models import Membership, Project, Role

    try:
        call_command("migrate", verbosity=0)
        user = User.objects.create_user(USERNAME, password=PASSWORD)
        project = Project.objects.create(name="Bench", slug=PROJECT, created_by=user)
        Membership.objects.create(project=project, user=user, role=Role.OWNER)
        yield BenchStudio(database_url=bench_url, user=user, project=project)
    finally:
        connections.close_all()
        recreate(admin, drop_only=True, name=database)


@contextmanager
def served(database_url: str) -> Iterator[str]:
    """uvicorn on `database_url` (a free port; its log in a temporary folder); its URL."""
    server, url = start_server(database_url, Path(tempfile.mkdtemp()) / "uvicorn.log")
    try:
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
