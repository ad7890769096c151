"""Personal API tokens for scripts: `Authorization: Bearer rls_...`."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions
from rest_framework.request import Request

from studio.projects.models import ApiToken, TokenScope, hash_token

SCOPE_NEEDED_FOR = {
    TokenScope.WRITE: "any POST, PUT, PATCH or DELETE",
    TokenScope.MEMBERS: "managing members, invitations and the project itself",
}


def require_token_scope(auth: Any, scope: TokenScope) -> None:
    """The one check of a personal token's scopes (a password session has every scope).

    Called for `write` on every unsafe request a token authenticates (below: every API
    view but the trainer's ingest authenticates here), and for `members` where an
    owner-level change is allowed (`studio.api.common.permissions.ProjectRolePermission`,
    `ProjectScopedViewSet.require_role`, answering an invitation).
    """
    token = auth  # a request's `auth`: an ApiToken, or None for a session
    if isinstance(token, ApiToken) and not token.allows(scope):
        raise exceptions.PermissionDenied(
            f"This API token lacks the {scope.value!r} scope, needed for "
            f"{SCOPE_NEEDED_FOR[scope]}; its scopes are {', '.join(token.scopes)}. "
            "Create a token with that scope on the API tokens page."
        )


# Touch last_used_at at most this often per token, so reads don't write on every call.
LAST_USED_RESOLUTION_S = 60


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """Authenticates `Bearer rls_...` and refuses (403) an unsafe method to a token without
    the `write` scope. That check lives here because every API view authenticates
    through this class, while views choose their own permission classes (a default
    permission class would miss every view that names its own)."""

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
        if request.method not in permissions.SAFE_METHODS:
            require_token_scope(token, TokenScope.WRITE)
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "studio.api.common.authentication.ApiTokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "Personal API token (rls_…)"}
