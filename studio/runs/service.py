"""What can be done to a run, as the functions the API's views call: each one creates or
changes the run, records its status history and audit event, and tells the queue, in one
transaction. The views keep only HTTP: parsing, permissions, status codes.

An evaluation is a run: the evaluations app composes it its own way and stores it through
`store_run`, and it is cancelled by `cancel_run`; its audit events are named
`evaluation.<verb>` (audit_action) so the audit log tells the two apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from studio.projects.models import AuditEvent, Project
from studio.references.run_inputs import RunInputs, input_fields
from studio.runs import dispatch, lifecycle, quota
from studio.runs.configs import InvalidConfig, Resolved, resources_of
from studio.runs.creation import compose
from studio.runs.models import Run, RunKind, RunStatus
from studio.runs.provenance import relaunch_refusal
from studio.runs.requests import CloneRun, CreateRun, RunChanges
from studio.runs.serializers import unique_tags

NO_CLONE = "An evaluation can't be cloned; create a new one (/api/evaluations/)."
NO_RESUME = "An evaluation can't be resumed; create a new one (/api/evaluations/)."


def refuse_provenance(run: Run) -> None:
    """InvalidConfig (a 400) for a provenance record: its request is fine, its inputs are
    what can't be had again (studio.runs.provenance)."""
    refusal = relaunch_refusal(run)
    if refusal is not None:
        raise InvalidConfig({"run": [refusal]})


@dataclass(frozen=True)
class NewRun:
    """A composed run for `store_run`: what a create path worked out (its inputs and
    resolved config, studio.runs.creation) and the columns the request sets."""

    name: str
    inputs: RunInputs
    resolved: Resolved
    priority: int
    resources: Mapping[str, float]
    kind: str = RunKind.TRAIN
    preset: str = ""
    tags: list[str] = field(default_factory=list)
    notes: str = ""
    parent: Run | None = None


def audit_action(run: Run, verb: str) -> str:
    """The audit event's action for `verb` done to `run`: `run.<verb>`, or
    `evaluation.<verb>` for an evaluation (what GET /api/audit/?action= filters on)."""
    return f"{'evaluation' if run.kind == RunKind.EVALUATION else 'run'}.{verb}"


def store_run(
    project: Project, new: NewRun, user: User, history: str, action: str, **audit: Any
) -> Run:
    """The one way a run comes to be (created, cloned, or an evaluation): stored queued
    with its first status-history row (`history` its reason), the verl overrides it
    ignores in its log, and its audit event (`action`, with `audit` as its detail); the
    queue decides when it starts. StorageQuotaExceeded (studio.runs.quota) when the
    project is at or over its storage quota."""
    quota.refuse_over_quota(project)
    with transaction.atomic():
        run = Run.objects.create(
            project=project,
            kind=new.kind,
            name=new.name,
            preset=new.preset,
            config=new.resolved.tree,
            **input_fields(new.inputs),
            priority=new.priority,
            resources=dict(new.resources),
            tags=unique_tags(new.tags),
            notes=new.notes,
            parent=new.parent,
            created_by=user,
        )
        lifecycle.record_creation(run, history, user)
        lifecycle.record_config_notes(run, new.resolved.ignored, new.resolved.renamed)
        AuditEvent.record(action, run, project, user, **audit)
        dispatch.reconcile_soon()  # the queue decides when it starts
    return run


def create_run(project: Project, request: CreateRun, user: User) -> Run:
    """A queued run from a create request (studio.runs.requests); raises
    InvalidConfig (studio.runs.configs) or InputError for a config or input it refuses."""
    inputs, resolved = compose(project, request, user)
    new = NewRun(
        name=request.name,
        inputs=inputs,
        resolved=resolved,
        priority=request.priority,
        resources={**resources_of(resolved.config), **request.resources},
        preset=request.preset,
        tags=request.tags,
        notes=request.notes,
    )
    return store_run(project, new, user, "created", "run.create", name=new.name, preset=new.preset)


def clone_run(parent: Run, request: CloneRun, user: User) -> Run:
    """A new queued run from `parent`'s config with the request's edits; its resources
    stay the parent's unless the edits change what the config asks for."""
    if parent.kind == RunKind.EVALUATION:
        raise lifecycle.TransitionRefused(parent.status, NO_CLONE)
    refuse_provenance(parent)
    inputs, resolved = compose(parent.project, request, user, parent=parent)
    same_request = resolved.tree["resources"] == parent.config.get("resources")
    resources = parent.resources if same_request else resources_of(resolved.config)
    new = NewRun(
        name=request.name or f"{parent.name} (clone)"[:200],
        inputs=inputs,
        resolved=resolved,
        priority=parent.priority if request.priority is None else request.priority,
        resources={**resources, **request.resources},
        preset=parent.preset,
        tags=parent.tags if request.tags is None else request.tags,
        notes=parent.notes if request.notes is None else request.notes,
        parent=parent,
    )
    history = f"cloned from run {parent.pk}"
    return store_run(
        parent.project, new, user, history, "run.clone", parent=parent.pk, name=new.name
    )


def update_run(run: Run, request: RunChanges, user: User) -> None:
    """Rename, re-tag, annotate or reprioritise (the config never changes: clone instead)."""
    changes = request.as_columns()
    if "tags" in changes:
        changes = {**changes, "tags": unique_tags(changes["tags"])}
    if not changes:
        return
    with transaction.atomic():
        Run.objects.filter(pk=run.pk).update(**changes, updated_at=timezone.now())
        AuditEvent.record("run.update", run, run.project, user, fields=sorted(changes))


def cancel_run(run: Run, user: User, reason: str) -> None:
    """Cancel at once when queued; else `cancelling` until its job has stopped (asked of
    Ray now). Twice is harmless; raises TransitionRefused for a run that has ended. An
    evaluation is cancelled here too (its event: `evaluation.cancel`)."""
    with transaction.atomic():
        after, changed = lifecycle.cancel(run.pk, user, reason)
        if changed:
            action = audit_action(run, "cancel")
            AuditEvent.record(action, run, run.project, user, previous=run.status, status=after)
        if changed and after == RunStatus.CANCELLING:
            dispatch.cancel_soon(run.pk)  # stop its Ray job now


def resume_run(run: Run, user: User, reason: str) -> None:
    """Queue a failed or cancelled run again, to continue from its latest checkpoint."""
    if run.kind == RunKind.EVALUATION:
        raise lifecycle.TransitionRefused(run.status, NO_RESUME)
    refuse_provenance(run)
    with transaction.atomic():
        lifecycle.resume(run.pk, user, reason)
        # Live again, so listed again (an archived run is only hidden while it has ended).
        Run.objects.filter(pk=run.pk).update(archived_at=None)
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
