"""An API token cannot make API tokens: whoever stole one would otherwise keep access
after it is revoked. A password session (the browser) makes them."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from rest_framework.test import APIClient

from studio.projects.models import ALL_SCOPES, ApiToken, TokenScope
from tests.studio.conftest import PASSWORD


def test_a_stolen_token_cannot_mint_a_spare_that_survives_its_revocation(world):
    _, raw = ApiToken.issue(world.member, "laptop")
    thief = APIClient()
    thief.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

    response = thief.post("/api/tokens/", {"name": "spare"}, format="json")

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"
    assert "cannot create API tokens" in response.json()["error"]["message"]
    assert list(ApiToken.objects.filter(user=world.member).values_list("name", flat=True)) == [
        "laptop"
    ]


def test_a_password_session_creates_tokens(world):
    browser = APIClient(enforce_csrf_checks=False)
    signed_in = browser.post(
        "/api/auth/login", {"username": "member", "password": PASSWORD}, format="json"
    )
    assert signed_in.status_code == 200, signed_in.content
    created = browser.post("/api/tokens/", {"name": "ci"}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["token"].startswith("rls_")


def bearer(user, *scopes: TokenScope, expires_at=None) -> APIClient:
    _, raw = ApiToken.issue(user, "script", expires_at=expires_at, scopes=scopes)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def assert_lacks_scope(response, scope: str) -> None:
    assert response.status_code == 403, response.content
    error = response.json()["error"]
    assert error["code"] == "permission_denied"
    assert f"lacks the {scope!r} scope" in error["message"]


def test_a_read_only_token_reads_but_cannot_write(world):
    reader = bearer(world.member, TokenScope.READ)

    assert reader.get("/api/projects/alpha/").status_code == 200
    assert reader.get("/api/datasets/", {"project": "alpha"}).status_code == 200
    assert_lacks_scope(
        reader.post("/api/datasets/", {"project": "alpha", "name": "x"}, format="json"), "write"
    )
    assert_lacks_scope(reader.post("/api/projects/", {"name": "Mine"}, format="json"), "write")
    assert_lacks_scope(reader.delete("/api/projects/alpha/"), "write")

    writer = bearer(world.member, TokenScope.READ, TokenScope.WRITE)
    made = writer.post("/api/datasets/", {"project": "alpha", "name": "x"}, format="json")
    assert made.status_code == 201, made.content


def test_a_write_token_cannot_manage_members_or_the_project(world):
    writer = bearer(world.owner, TokenScope.READ, TokenScope.WRITE)

    assert_lacks_scope(
        writer.post(
            "/api/projects/alpha/invitations/", {"username": "eve", "role": "owner"}, format="json"
        ),
        "members",
    )
    assert_lacks_scope(
        writer.post(
            "/api/projects/alpha/members/", {"username": "member", "role": "owner"}, format="json"
        ),
        "members",
    )
    assert_lacks_scope(
        writer.patch("/api/projects/alpha/", {"name": "B"}, format="json"), "members"
    )
    assert_lacks_scope(writer.delete("/api/projects/alpha/"), "members")
    assert writer.get("/api/projects/alpha/invitations/").status_code == 200  # reads stay open
    assert world.project.memberships.get(user=world.member).role == "member"

    manager = bearer(world.owner, TokenScope.READ, TokenScope.WRITE, TokenScope.MEMBERS)
    promoted = manager.post(
        "/api/projects/alpha/members/", {"username": "member", "role": "owner"}, format="json"
    )
    assert promoted.status_code == 200, promoted.content
    invited = manager.post("/api/projects/alpha/invitations/", {"username": "eve"}, format="json")
    assert invited.status_code == 201, invited.content


def test_an_expired_token_is_refused(world):
    expired = bearer(world.member, *ALL_SCOPES, expires_at=timezone.now() - timedelta(seconds=1))
    response = expired.get("/api/projects/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"

    current = bearer(world.member, *ALL_SCOPES, expires_at=timezone.now() + timedelta(days=1))
    assert current.get("/api/projects/").status_code == 200


def test_new_tokens_default_to_read_and_write_and_members_needs_write(world):
    browser = APIClient()
    browser.force_login(world.member)
    default = browser.post("/api/tokens/", {"name": "ci"}, format="json")
    assert default.status_code == 201
    assert default.json()["scopes"] == ["read", "write"]
    narrow = browser.post("/api/tokens/", {"name": "dash", "scopes": []}, format="json")
    assert narrow.json()["scopes"] == ["read"]  # read is always granted
    refused = browser.post(
        "/api/tokens/", {"name": "odd", "scopes": ["read", "members"]}, format="json"
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["fields"]["scopes"]
    past = browser.post(
        "/api/tokens/", {"name": "old", "expires_at": "2001-01-01T00:00:00Z"}, format="json"
    )
    assert past.status_code == 400
    assert "expires_at" in past.json()["error"]["fields"]


def test_tokens_made_before_scopes_keep_every_scope(world):
    """Upgrading gives tokens made before scopes read, write and members, so no script
    breaks; tokens made afterwards default to read and write."""
    executor = MigrationExecutor(connection)
    # In one transaction Postgres refuses ALTER TABLE with checks pending: the fixture's
    # rows are checked before any table changes.
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    executor.migrate([("projects", "0001_initial")])  # in the test's transaction: undone
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO projects_apitoken (user_id, name, prefix, token_hash, created_at) "
            "VALUES (%s, 'old script', 'abcdefgh', %s, now())",
            [world.member.pk, "f" * 64],
        )
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE refuses pending checks
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes("projects"))

    assert ApiToken.objects.get(name="old script").scopes == ["read", "write", "members"]
    assert ApiToken.issue(world.member, "new")[0].scopes == ["read", "write", "members"]
    assert ApiToken.objects.create(user=world.member, name="bare", token_hash="e" * 64).scopes == [
        "read",
        "write",
    ]
