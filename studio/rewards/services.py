"""Creating reward functions and pushing their versions, each with its audit event.

The request's checks (role, unique name, static code checks) are done by the API's
serializers before these run; numbering is taken under a lock on the function, so
concurrent pushes get consecutive numbers.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.db import transaction
from django.db.models import Max

from studio.projects.models import AuditEvent, Project
from studio.rewards.models import RewardFunction, RewardVersion


def code_hash(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", errors="surrogatepass")).hexdigest()


def push_version(
    function: RewardFunction, code: str, entrypoint: str, message: str, user: Any
) -> RewardVersion:
    """Store `code` as the function's next version."""
    with transaction.atomic():
        RewardFunction.objects.select_for_update().filter(pk=function.pk).get()
        last = function.versions.aggregate(last=Max("number"))["last"] or 0
        version = RewardVersion.objects.create(
            function=function,
            number=last + 1,
            code=code,
            code_hash=code_hash(code),
            entrypoint=entrypoint,
            message=message,
            author=user,
        )
        AuditEvent.record(
            "reward.push",
            version,
            function.project,
            user,
            number=version.number,
            code_hash=version.code_hash,
        )
    return version


def create_function(
    project: Project,
    name: str,
    description: str,
    user: Any,
    *,
    code: str | None = None,
    entrypoint: str = "compute_score",
    message: str = "",
    template: str = "",
) -> RewardFunction:
    """A new reward function; with `code`, its version 1 (`template` names the
    built-in the code came from, for the audit)."""
    with transaction.atomic():
        function = RewardFunction.objects.create(
            project=project, name=name, description=description, created_by=user
        )
        AuditEvent.record(
            "reward.create", function, project, user, name=function.name, template=template
        )
        if code is not None:
            push_version(function, code, entrypoint, message, user)
    return function
