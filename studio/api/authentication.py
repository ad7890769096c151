"""Personal API tokens for scripts: `Authorization: Bearer rls_...`."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from studio.projects.models import ApiToken, hash_token

# Touch last_used_at at most this often per token, so reads don't write on every call.
LAST_USED_RESOLUTION_S = 60


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, ApiToken] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, raw = header.partition(" ")
        if scheme != self.keyword or not raw.startswith("rls_"):
            return None  # not ours (e.g. a trainer ingest token); let others try
        token = (
            ApiToken.objects.select_related("user")
            .filter(token_hash=hash_token(raw.strip()))
            .first()
        )
        if token is None or not token.is_active or not token.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid, expired or revoked API token.")
        now = timezone.now()
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > (
            LAST_USED_RESOLUTION_S
        ):
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "studio.api.authentication.ApiTokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "Personal API token (rls_…)"}
