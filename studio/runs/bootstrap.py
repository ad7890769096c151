"""The one-time secret a trainer job starts with, exchanged for what it must keep private.

A Ray job's environment, entrypoint and metadata are readable by anyone who can reach
the cluster's dashboard or state API (every job's, by every other job). So a job carries
only the run's id and attempt and the path of a file holding its bootstrap secret (`rlb_`
+ an HMAC of the attempt under the studio's SECRET_KEY), written before the job is
submitted for the trainer account alone (studio.runs.handoff). The trainer's first
request redeems it, once, for the attempt's ingest token, its config (paths resolved by
the launcher) and its reward code (`POST /api/ingest/runs/<id>/bootstrap`); a second use
of the secret is refused.
"""

from __future__ import annotations

import hashlib
import hmac

from django.conf import settings
from django.utils import timezone

from studio.runs.folders import run_folder_name
from studio.runs.handoff import SecretHandoff
from studio.runs.models import RunAttempt, RunStatus

BOOTSTRAP_PREFIX = "rlb_"
REDEEMABLE = (RunStatus.STARTING, RunStatus.RUNNING)


def bootstrap_secret(attempt: RunAttempt) -> str:
    """The attempt's secret: an HMAC of the attempt under the studio's SECRET_KEY, so a
    launch submitted again (a redelivered task) carries the same secret as the job Ray
    already has, and nothing needs to be stored to check it."""
    message = f"rlstudio-bootstrap:{attempt.pk}:{attempt.submission_id}".encode()
    digest = hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()
    return BOOTSTRAP_PREFIX + digest


def attempt_handoff(attempt: RunAttempt) -> SecretHandoff:
    """The attempt's secret and its file, in the run's own folder (its checkpoints')."""
    return SecretHandoff(
        folders=(run_folder_name(attempt.run_id),),
        name=f".bootstrap-a{attempt.number}",
        secret=bootstrap_secret(attempt),
    )


def redeem(run_id: int, attempt_number: int, raw: str) -> RunAttempt | None:
    """The attempt, if `raw` is its secret, unused until now, and the run may still start;
    claimed atomically, so two requests with one secret can't both win."""
    attempt = RunAttempt.objects.filter(run_id=run_id, number=attempt_number).first()
    if attempt is None or not hmac.compare_digest(raw, bootstrap_secret(attempt)):
        return None
    claimed = RunAttempt.objects.filter(
        pk=attempt.pk, bootstrapped_at__isnull=True, run__status__in=REDEEMABLE
    ).update(bootstrapped_at=timezone.now())
    if claimed != 1:
        return None
    return RunAttempt.objects.select_related("run__project", "run__reward_version").get(
        pk=attempt.pk
    )
