"""Projects, members, personal API tokens, session login and the error format."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from studio.projects.models import ApiToken, AuditEvent


def test_lists_only_the_projects_you_belong_to(world):
    slugs = [p["slug"] for p in world.client("member").get("/api/projects/").json()["results"]]
    assert slugs == ["alpha"]
    assert world.client("outsider").get("/api/projects/alpha/").status_code == 404


def test_creating_a_project_makes_you_its_owner_and_is_audited(world):
    response = world.client("outsider").post("/api/projects/", {"name": "My Lab"}, format="json")
    assert response.status_code == 201
    assert response.json()["slug"] == "my-lab"
    assert response.json()["role"] == "owner"
    assert AuditEvent.objects.filter(action="project.create", actor=world.outsider).exists()


@pytest.mark.parametrize(("who", "status"), [("owner", 200), ("member", 403), ("viewer", 403)])
def test_only_owners_rename_a_project(world, who, status):
    response = world.client(who).patch("/api/projects/alpha/", {"name": "Beta"}, format="json")
    assert response.status_code == status


def test_owners_add_members_and_viewers_can_list_them(world):
    owner = world.client("owner")
    response = owner.post(
        "/api/projects/alpha/members/", {"username": "eve", "role": "viewer"}, format="json"
    )
    assert response.status_code == 200
    assert "eve" in [m["username"] for m in response.json()]
    listed = world.client("viewer").get("/api/projects/alpha/members/")
    assert listed.status_code == 200
    denied = world.client("member").post(
        "/api/projects/alpha/members/", {"username": "eve", "role": "owner"}, format="json"
    )
    assert denied.status_code == 403


def test_api_token_is_shown_once_stored_hashed_and_revocable(world):
    client = APIClient()
    client.force_authenticate(world.member)
    created = client.post("/api/tokens/", {"name": "ci"}, format="json").json()
    raw = created["token"]
    assert raw.startswith("rls_")
    stored = ApiToken.objects.get(pk=created["id"])
    assert raw not in (stored.token_hash, stored.prefix)
    listed = client.get("/api/tokens/").json()["results"]
    assert all("token" not in t or t["token"] is None for t in listed)

    bearer = APIClient()
    bearer.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert bearer.get("/api/auth/me").json()["username"] == "member"
    assert client.delete(f"/api/tokens/{created['id']}/").status_code == 204
    response = bearer.get("/api/auth/me")
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "Invalid, expired or revoked API token."


def test_anonymous_requests_are_rejected_with_the_error_format(world):
    response = APIClient().get("/api/projects/")
    assert response.status_code in (401, 403)
    assert response.json()["error"]["code"] == "not_authenticated"


def test_session_login_enforces_csrf(world):
    client = APIClient(enforce_csrf_checks=True)
    response = client.post(
        "/api/auth/login",
        {"username": "member", "password": "a-long-password-123"},
        format="json",
    )
    assert response.status_code == 403
    client.get("/")  # the app page sets the csrftoken cookie
    token = client.cookies["csrftoken"].value
    response = client.post(
        "/api/auth/login",
        {"username": "member", "password": "a-long-password-123"},
        format="json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert response.status_code == 200
    assert client.get("/api/auth/me").json()["username"] == "member"


def test_validation_errors_name_the_field(world):
    response = world.client("member").post("/api/projects/", {}, format="json")
    assert response.status_code == 400
    body = response.json()["error"]
    assert body["code"] == "validation_error"
    assert body["message"].startswith("name:")
    assert "name" in body["fields"]
