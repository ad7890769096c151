"""What can be done to a run, as the functions the API's views call: each one creates or
changes the run, records its status history and audit event, and tells the queue, in one
transaction. The views keep only HTTP: parsing, permissions, status codes.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from studio.projects.models import AuditEvent, Project
from studio.references.run_inputs import input_fields
from studio.runs import dispatch, lifecycle
from studio.runs.configs import InvalidConfig, resources_of
from studio.runs.creation import compose
from studio.runs.models import Run, RunKind, RunStatus
from studio.runs.provenance import relaunch_refusal
from studio.runs.serializers import unique_tags

NO_CLONE = "An evaluation can't be cloned; create a new one (/api/evaluations/)."
NO_RESUME = "An evaluation can't be resumed; create a new one (/api/evaluations/)."


def refuse_provenance(run: Run) -> None:
    """InvalidConfig (a 400) for a provenance record: its request is fine, its inputs are
    what can't be had again (studio.runs.provenance)."""
    refusal = relaunch_refusal(run)
    if refusal is not None:
        raise InvalidConfig({"run": [refusal]})


def create_run(project: Project, request: dict[str, Any], user: User) -> Run:
    """A queued run from a validated create request (studio.runs.serializers); raises
    InvalidConfig (studio.runs.configs) or InputError for a config or input it refuses."""
    inputs, resolved = compose(project, request, user)
    with transaction.atomic():
        run = Run.objects.create(
            project=project,
            name=request["name"],
            preset=request.get("preset") or "",
            config=resolved.tree,
            **input_fields(inputs),
            priority=request.get("priority", 0),
            resources={**resources_of(resolved.config), **request.get("resources", {})},
            tags=unique_tags(request.get("tags", [])),
            notes=request.get("notes", ""),
            created_by=user,
        )
        lifecycle.record_creation(run, "created", user)
        lifecycle.record_config_notes(run, resolved.ignored, resolved.renamed)
        AuditEvent.record("run.create", run, project, user, name=run.name, preset=run.preset)
        dispatch.reconcile_soon()  # the queue decides when it starts
    return run


def clone_run(parent: Run, request: dict[str, Any], user: User) -> Run:
    """A new queued run from `parent`'s config with the request's edits; its resources
    stay the parent's unless the edits change what the config asks for."""
    if parent.kind == RunKind.EVALUATION:
        raise lifecycle.TransitionRefused(parent.status, NO_CLONE)
    refuse_provenance(parent)
    inputs, resolved = compose(parent.project, request, user, parent=parent)
    same_request = resolved.tree["resources"] == parent.config.get("resources")
    resources = parent.resources if same_request else resources_of(resolved.config)
    with transaction.atomic():
        run = Run.objects.create(
            project=parent.project,
            name=request.get("name") or f"{parent.name} (clone)"[:200],
            preset=parent.preset,
            config=resolved.tree,
            **input_fields(inputs),
            priority=request.get("priority", parent.priority),
            resources={**resources, **request.get("resources", {})},
            tags=unique_tags(request.get("tags", parent.tags)),
            notes=request.get("notes", parent.notes),
            parent=parent,
            created_by=user,
        )
        lifecycle.record_creation(run, f"cloned from run {parent.pk}", user)
        lifecycle.record_config_notes(run, resolved.ignored, resolved.renamed)
        AuditEvent.record("run.clone", run, parent.project, user, parent=parent.pk, name=run.name)
        dispatch.reconcile_soon()
    return run


def update_run(run: Run, changes: dict[str, Any], user: User) -> None:
    """Rename, re-tag, annotate or reprioritise (the config never changes: clone instead)."""
    if "tags" in changes:
        changes = {**changes, "tags": unique_tags(changes["tags"])}
    if not changes:
        return
    with transaction.atomic():
        Run.objects.filter(pk=run.pk).update(**changes, updated_at=timezone.now())
        AuditEvent.record("run.update", run, run.project, user, fields=sorted(changes))


def cancel_run(run: Run, user: User, reason: str) -> None:
    """Cancel at once when queued; else `cancelling` until its job has stopped (asked of
    Ray now). Twice is harmless; raises TransitionRefused for a run that has ended."""
    with transaction.atomic():
        after, changed = lifecycle.cancel(run.pk, user, reason)
        if changed:
            AuditEvent.record(
                "run.cancel", run, run.project, user, previous=run.status, status=after
            )
        if changed and after == RunStatus.CANCELLING:
            dispatch.cancel_soon(run.pk)  # stop its Ray job now


def resume_run(run: Run, user: User, reason: str) -> None:
    """Queue a failed or cancelled run again, to continue from its latest checkpoint."""
    if run.kind == RunKind.EVALUATION:
        raise lifecycle.TransitionRefused(run.status, NO_RESUME)
    refuse_provenance(run)
    with transaction.atomic():
        lifecycle.resume(run.pk, user, reason)
        AuditEvent.record("run.resume", run, run.project, user, previous=run.status)
        dispatch.reconcile_soon()  # a new attempt, from the latest checkpoint


def set_priority(run: Run, priority: int, user: User) -> None:
    """The run's place in the queue (higher starts first); it may start now."""
    with transaction.atomic():
        Run.objects.filter(pk=run.pk).update(priority=priority, updated_at=timezone.now())
        AuditEvent.record(
            "run.priority", run, run.project, user, previous=run.priority, priority=priority
        )
        dispatch.reconcile_soon()
