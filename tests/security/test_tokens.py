"""An API token cannot make API tokens: whoever stole one would otherwise keep access
after it is revoked. A password session (the browser) makes them."""

from __future__ import annotations

from rest_framework.test import APIClient

from studio.projects.models import ApiToken
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
