"""The one-time secret a trainer job starts with, exchanged for what it must keep private.

A Ray job's environment and entrypoint are readable by anyone who can reach the
cluster's dashboard or state API (every job's, by every other job). So a job carries
only the run's id, attempt and a bootstrap secret (`rlb_` + 256 random bits, only its
SHA-256 stored). The trainer's first request redeems it, once, for the attempt's ingest
token, its config (paths resolved by the launcher) and its reward code
(`POST /api/ingest/runs/<id>/bootstrap`); a second use of the secret is refused, so by
the time anyone reads it from Ray it opens nothing.
"""

from __future__ import annotations

import secrets

from django.utils import timezone

from studio.projects.models import hash_token
from studio.runs.models import RunAttempt, RunStatus

BOOTSTRAP_PREFIX = "rlb_"
REDEEMABLE = (RunStatus.STARTING, RunStatus.RUNNING)


def issue_bootstrap_secret(attempt: RunAttempt) -> str:
    """A new secret for `attempt` (replacing an unredeemed one); returned once."""
    raw = BOOTSTRAP_PREFIX + secrets.token_urlsafe(32)
    RunAttempt.objects.filter(pk=attempt.pk, bootstrapped_at__isnull=True).update(
        bootstrap_hash=hash_token(raw)
    )
    return raw


def redeem(run_id: int, attempt_number: int, raw: str) -> RunAttempt | None:
    """The attempt, if `raw` is its secret, unused until now, and the run may still start;
    claimed atomically, so two requests with one secret can't both win."""
    if not raw.startswith(BOOTSTRAP_PREFIX):
        return None
    claimed = RunAttempt.objects.filter(
        run_id=run_id,
        number=attempt_number,
        bootstrap_hash=hash_token(raw),
        bootstrapped_at__isnull=True,
        run__status__in=REDEEMABLE,
    ).update(bootstrapped_at=timezone.now())
    if claimed != 1:
        return None
    return RunAttempt.objects.select_related("run__project", "run__reward_version").get(
        run_id=run_id, number=attempt_number
    )
