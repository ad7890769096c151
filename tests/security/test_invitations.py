"""Membership needs the invited user's consent, and neither inviting nor changing a role
tells an owner (or anyone who stole an owner's session) which usernames exist."""

from __future__ import annotations

from typing import Any

from studio.projects.models import Invitation, Membership


def comparable(body: dict[str, Any]) -> dict[str, Any]:
    """An invitation as the owner sees it, less what differs by construction."""
    return {
        k: v for k, v in body.items() if k not in ("id", "username", "created_at", "expires_at")
    }


def test_inviting_a_username_nobody_has_answers_like_inviting_a_real_user(world):
    owner = world.client("owner")

    real = owner.post(
        "/api/projects/alpha/invitations/", {"username": "eve", "role": "member"}, format="json"
    )
    ghost = owner.post(
        "/api/projects/alpha/invitations/",
        {"username": "nobody-here", "role": "member"},
        format="json",
    )

    assert real.status_code == ghost.status_code == 201
    assert real.json().keys() == ghost.json().keys()
    assert comparable(real.json()) == comparable(ghost.json())
    assert real["Content-Type"] == ghost["Content-Type"]
    listed = owner.get("/api/projects/alpha/invitations/").json()
    assert {i["username"] for i in listed} == {"eve", "nobody-here"}
    assert {comparable(i)["status"] for i in listed} == {"pending"}


def test_an_unknown_username_and_a_known_non_member_get_the_same_refusal(world):
    owner = world.client("owner")

    known = owner.post(
        "/api/projects/alpha/members/", {"username": "eve", "role": "member"}, format="json"
    )
    unknown = owner.post(
        "/api/projects/alpha/members/", {"username": "nobody-here", "role": "member"}, format="json"
    )

    assert known.status_code == unknown.status_code == 400
    assert known.json()["error"]["code"] == unknown.json()["error"]["code"] == "validation_error"
    messages = [r.json()["error"]["message"] for r in (known, unknown)]
    assert [m.replace("'eve'", "NAME").replace("'nobody-here'", "NAME") for m in messages] == [
        "username: NAME is not a member of this project; invite them instead."
    ] * 2
    assert not Membership.objects.filter(project=world.project, user=world.outsider).exists()
    # Positive control: an existing member's role still changes.
    changed = owner.post(
        "/api/projects/alpha/members/", {"username": "viewer", "role": "member"}, format="json"
    )
    assert changed.status_code == 200


def test_an_owner_cannot_add_someone_without_their_acceptance(world):
    owner = world.client("owner")
    invitation = owner.post(
        "/api/projects/alpha/invitations/", {"username": "eve", "role": "owner"}, format="json"
    ).json()

    assert not Membership.objects.filter(project=world.project, user=world.outsider).exists()
    assert world.client("outsider").get("/api/projects/alpha/").status_code == 404

    accepted = world.client("outsider").post(f"/api/invitations/{invitation['id']}/accept/")
    assert accepted.status_code == 200
    assert Membership.objects.get(project=world.project, user=world.outsider).role == "owner"
    assert world.client("outsider").get("/api/projects/alpha/").status_code == 200


def test_another_user_cannot_accept_or_see_someones_invitation(world):
    owner = world.client("owner")
    invitation = owner.post(
        "/api/projects/alpha/invitations/", {"username": "eve", "role": "owner"}, format="json"
    ).json()
    intruder = world.client("viewer")  # a member already, hoping to become an owner

    assert intruder.get("/api/invitations/").json() == []
    for answer in ("accept", "decline"):
        response = intruder.post(f"/api/invitations/{invitation['id']}/{answer}/")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert Membership.objects.get(project=world.project, user=world.viewer).role == "viewer"
    assert Invitation.objects.get(pk=invitation["id"]).status == "pending"


def test_an_invitation_is_accepted_once(world):
    invitation = (
        world.client("owner")
        .post(
            "/api/projects/alpha/invitations/", {"username": "EVE", "role": "viewer"}, format="json"
        )
        .json()
    )
    eve = world.client("outsider")  # username "eve": invitations match case-insensitively

    assert eve.post(f"/api/invitations/{invitation['id']}/accept/").status_code == 200
    assert eve.post(f"/api/invitations/{invitation['id']}/accept/").status_code == 404
    assert eve.post(f"/api/invitations/{invitation['id']}/decline/").status_code == 404
    assert Membership.objects.filter(project=world.project, user=world.outsider).count() == 1


def test_an_expired_invitation_cannot_be_accepted(world):
    invitation = (
        world.client("owner")
        .post("/api/projects/alpha/invitations/", {"username": "eve"}, format="json")
        .json()
    )
    Invitation.objects.filter(pk=invitation["id"]).update(expires_at="2001-01-01T00:00:00Z")

    response = world.client("outsider").post(f"/api/invitations/{invitation['id']}/accept/")

    assert response.status_code == 404
    assert not Membership.objects.filter(project=world.project, user=world.outsider).exists()


def test_members_and_viewers_cannot_invite(world):
    for who in ("member", "viewer"):
        response = world.client(who).post(
            "/api/projects/alpha/invitations/", {"username": "eve"}, format="json"
        )
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "permission_denied"
    outsider = world.client("outsider").post(
        "/api/projects/alpha/invitations/", {"username": "friend"}, format="json"
    )
    assert outsider.status_code == 404
    assert not Invitation.objects.exists()
