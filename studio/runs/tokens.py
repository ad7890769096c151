"""Ingest tokens: how one trainer attempt proves it may write its own run's telemetry.

A token is `rli_` + 256 random bits, shown once (to the launcher, which hands it to the
trainer in `RLSTUDIO_RUN_TOKEN`); only its SHA-256 is stored. It is valid only for the run
and attempt it was issued for, and only until the run reaches a terminal state
(`studio.runs.lifecycle.transition` revokes it) or a later attempt of the run gets a
token (a stale trainer of an older attempt must not keep writing). See docs/telemetry.md.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from studio.projects.models import hash_token
from studio.runs.models import TERMINAL_STATUSES, IngestToken, RunAttempt
from studio.telemetry.ingest.superseding import supersede_earlier_attempts

INGEST_TOKEN_PREFIX = "rli_"


def issue_ingest_token(attempt: RunAttempt) -> str:
    """A new token for `attempt`; the raw value is returned once and never stored.

    Tokens of the run's earlier attempts are revoked. When the attempt resumes from a
    known step, the earlier attempts' records past that step are marked superseded now,
    so charts drop the abandoned tail before the new attempt reports anything.
    """
    raw = INGEST_TOKEN_PREFIX + secrets.token_urlsafe(32)  # 32 bytes = 256 bits
    IngestToken.objects.filter(
        run_id=attempt.run_id, attempt__number__lt=attempt.number, revoked_at__isnull=True
    ).update(revoked_at=timezone.now())
    IngestToken.objects.create(run_id=attempt.run_id, attempt=attempt, token_hash=hash_token(raw))
    if attempt.number > 1 and attempt.resume_from_step is not None:
        supersede_earlier_attempts(attempt.run_id, attempt.number, attempt.resume_from_step)
    return raw


def revoke_ingest_tokens(run_id: int) -> int:
    """Revoke every live token of the run (it ended); returns how many were live."""
    return IngestToken.objects.filter(run_id=run_id, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )


def find_ingest_token(raw: str) -> IngestToken | None:
    """The stored token for a raw `rli_...` value (revoked ones too), with its run and
    attempt; None when no such token was ever issued."""
    if not raw.startswith(INGEST_TOKEN_PREFIX):
        return None
    return (
        IngestToken.objects.select_related("run", "attempt")
        .filter(token_hash=hash_token(raw))
        .first()
    )


class IngestTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer rli_...` on the ingest endpoints only.

    A valid token authenticates no user (request.user stays anonymous, so no other
    endpoint accepts it); `request.auth` is the IngestToken, which the ingest views'
    permission checks against the run in the URL. Revoked tokens and tokens of runs
    that ended get 401.
    """

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[AnonymousUser, IngestToken] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        scheme, _, raw = header.partition(" ")
        if scheme != self.keyword or not raw.startswith(INGEST_TOKEN_PREFIX):
            return None
        token = find_ingest_token(raw.strip())
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid ingest token.")
        if token.revoked_at is not None or token.run.status in TERMINAL_STATUSES:
            raise exceptions.AuthenticationFailed(
                f"This ingest token was revoked: run {token.run_id} is {token.run.status} "
                "or a later attempt replaced this one."
            )
        return AnonymousUser(), token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


class IngestTokenScheme(OpenApiAuthenticationExtension):
    target_class = "studio.runs.tokens.IngestTokenAuthentication"
    name = "ingestToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A trainer attempt's ingest token (rli_…), valid for its run only",
        }
