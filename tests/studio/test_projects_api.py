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


def test_owners_change_members_roles_and_viewers_can_list_them(world):
    owner = world.client("owner")
    response = owner.post(
        "/api/projects/alpha/members/", {"username": "viewer", "role": "member"}, format="json"
    )
    assert response.status_code == 200
    assert {"username": "viewer", "role": "member"}.items() <= next(
        m for m in response.json() if m["username"] == "viewer"
    ).items()
    assert AuditEvent.objects.filter(action="member.set", detail={"role": "member"}).exists()
    listed = world.client("viewer").get("/api/projects/alpha/members/")
    assert listed.status_code == 200
    denied = world.client("member").post(
        "/api/projects/alpha/members/", {"username": "viewer", "role": "owner"}, format="json"
    )
    assert denied.status_code == 403


def test_someone_who_is_not_a_member_is_invited_not_added(world):
    owner = world.client("owner")
    refused = owner.post(
        "/api/projects/alpha/members/", {"username": "eve", "role": "viewer"}, format="json"
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == (
        "username: 'eve' is not a member of this project; invite them instead."
    )

    invited = owner.post(
        "/api/projects/alpha/invitations/", {"username": "eve", "role": "viewer"}, format="json"
    )
    assert invited.status_code == 201, invited.content
    assert invited.json()["status"] == "pending"
    assert [i["username"] for i in owner.get("/api/projects/alpha/invitations/").json()] == ["eve"]
    eve = world.client("outsider")
    [mine] = eve.get("/api/invitations/").json()
    assert (mine["project"], mine["role"], mine["invited_by"]) == ("alpha", "viewer", "owner")
    accepted = eve.post(f"/api/invitations/{mine['id']}/accept/")
    assert accepted.status_code == 200, accepted.content
    assert accepted.json()["status"] == "accepted"
    assert "eve" in [m["username"] for m in owner.get("/api/projects/alpha/members/").json()]
    assert eve.get("/api/invitations/").json() == []
    actions = set(AuditEvent.objects.values_list("action", flat=True))
    assert {"invitation.create", "member.join"} <= actions


def test_inviting_again_refreshes_the_pending_invitation(world):
    owner = world.client("owner")
    first = owner.post(
        "/api/projects/alpha/invitations/", {"username": "Eve", "role": "viewer"}, format="json"
    ).json()
    again = owner.post(
        "/api/projects/alpha/invitations/", {"username": "eve", "role": "member"}, format="json"
    ).json()
    assert again["id"] == first["id"]
    assert again["role"] == "member"
    assert again["expires_at"] >= first["expires_at"]
    assert len(owner.get("/api/projects/alpha/invitations/").json()) == 1


def test_owners_revoke_invitations_and_declined_ones_close(world):
    owner = world.client("owner")
    made = owner.post("/api/projects/alpha/invitations/", {"username": "eve"}, format="json")
    invitation = made.json()["id"]
    assert (
        world.client("member").delete(f"/api/projects/alpha/invitations/{invitation}/").status_code
        == 403
    )
    assert owner.delete(f"/api/projects/alpha/invitations/{invitation}/").status_code == 204
    eve = world.client("outsider")
    assert eve.get("/api/invitations/").json() == []
    assert eve.post(f"/api/invitations/{invitation}/accept/").status_code == 404

    again = owner.post("/api/projects/alpha/invitations/", {"username": "eve"}, format="json")
    assert eve.post(f"/api/invitations/{again.json()['id']}/decline/").status_code == 204
    assert owner.get("/api/projects/alpha/invitations/").json() == []
    assert not world.project.memberships.filter(user=world.outsider).exists()
    actions = set(AuditEvent.objects.values_list("action", flat=True))
    assert {"invitation.revoke", "invitation.decline"} <= actions


def test_only_owners_see_a_projects_invitations(world):
    world.client("owner").post("/api/projects/alpha/invitations/", {"username": "x"}, format="json")
    assert world.client("member").get("/api/projects/alpha/invitations/").status_code == 403
    assert world.client("outsider").get("/api/projects/alpha/invitations/").status_code == 404


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
