"""Deleting and archiving a run, as the functions the API's views call.

A run that has ended can be deleted with everything it owns: its rows (attempts, status
history, tokens, checkpoints, metrics, samples and their labels, logs, alerts; every
model with a foreign key to a run cascades from it) and its files (its checkpoint folder
and spool, studio.runs.run_files). The files go after the transaction commits, so a
refused or failed delete never leaves rows that point at removed files. What must
outlive the run refuses the delete and is named: a model registered from one of its
checkpoints (a PROTECT reference), an evaluation that evaluated them (its config names
them by reference), a live playground model server on one of them. The audit event
(`run.delete`, or `evaluation.delete`) names the run by id and name in its own columns,
so it outlives the run.

Archiving only hides a run from the runs list; it frees nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Model, ProtectedError, Q
from django.utils import timezone

from studio.model_registry.models import RegisteredModel
from studio.playground import store as playground
from studio.playground.liveness import alive
from studio.playground.targets import parse_server_id
from studio.projects.models import AuditEvent
from studio.references.reference import Reference
from studio.runs import run_files
from studio.runs.lifecycle import TransitionRefused
from studio.runs.models import TERMINAL_STATUSES, Checkpoint, Run, RunKind
from studio.runs.service import audit_action

MAX_NAMED = 5  # holders named in a refusal; the rest are counted


class RunHeld(Exception):
    """Something that must outlive the run refers to it (HTTP 409); the message names it
    and what to do."""


def _ended_or_refuse(run: Run, status: str, verb: str) -> None:
    if status not in TERMINAL_STATUSES:
        raise TransitionRefused(
            status,
            f"Run {run.pk} ({run.name!r}) is {status}; only a run that has ended can be "
            f"{verb}. Cancel it first and wait until it has stopped.",
        )


def _named(things: list[str]) -> str:
    shown = ", ".join(things[:MAX_NAMED])
    more = len(things) - MAX_NAMED
    return shown + (f" and {more} more" if more > 0 else "")


def _evaluations_of(run: Run) -> list[Run]:
    """Evaluations (other than the run itself) whose config names one of its checkpoints."""
    ids = list(Checkpoint.objects.filter(run=run).values_list("pk", flat=True))
    if not ids:
        return []
    names = Q()
    for pk in ids:
        path = Reference("checkpoint", pk).text
        names |= Q(config__evaluation__models__contains=[{"path": path}])
    found = Run.objects.filter(names, project_id=run.project_id, kind=RunKind.EVALUATION)
    return list(found.exclude(pk=run.pk).order_by("pk"))


def _served_steps(run: Run) -> list[int]:
    """Steps of the run's checkpoints a live playground model server holds loaded."""
    steps = dict(Checkpoint.objects.filter(run=run).values_list("pk", "step"))
    served: list[int] = []
    for server_id, record in playground.known_servers().items():
        parsed = parse_server_id(server_id)
        if parsed is None or parsed[1] != "checkpoint" or parsed[2] not in steps:
            continue
        if record.get("state") != "failed" and alive(record):
            served.append(steps[parsed[2]])
    return sorted(served)


def holders(run: Run) -> list[str]:
    """What keeps the run from being deleted, each in words with what to do; empty when
    nothing does."""
    held: list[str] = []
    models = RegisteredModel.objects.filter(checkpoint__run=run).select_related("checkpoint")
    named = [f"{m.name!r} (id {m.pk}, step {m.checkpoint.step})" for m in models if m.checkpoint]
    if named:
        held.append(f"models registered from its checkpoints: {_named(named)}; delete them first")
    evaluations = [f"{e.name!r} (id {e.pk})" for e in _evaluations_of(run)]
    if evaluations:
        held.append(f"evaluations of its checkpoints: {_named(evaluations)}; delete them first")
    served = [f"step {step}" for step in _served_steps(run)]
    if served:
        held.append(
            f"the playground chats with its checkpoint at {_named(served)}; its model server "
            "is released after RLSTUDIO_PLAYGROUND_IDLE_SECONDS without a message, try again then"
        )
    return held


def _protected(run: Run, objects: Iterable[Model]) -> RunHeld:
    """A refusal naming what a PROTECT reference found that `holders` did not look for
    (an app above this one: a sweep whose base the run is)."""
    names = [f"{o._meta.verbose_name} {str(o)!r} (id {o.pk})" for o in objects]
    return RunHeld(
        f"Run {run.pk} ({run.name!r}) can't be deleted: {_named(names)} uses it; delete that first."
    )


def delete_run(run: Run, user: User) -> int:
    """Delete `run` (which must have ended) with its rows and files, and return the bytes
    its files took, which are removed when the transaction commits (at once when the
    caller holds none). TransitionRefused for a live run, RunHeld when something must
    outlive it. Usable in a loop (a sweep deletes its trials one by one): a run deleted
    already frees 0."""
    status = Run.objects.values_list("status", flat=True).filter(pk=run.pk).first()
    if status is None:
        return 0
    _ended_or_refuse(run, status, "deleted")
    held = holders(run)
    if held:
        raise RunHeld(f"Run {run.pk} ({run.name!r}) can't be deleted: {'; '.join(held)}.")
    freed = run_files.run_bytes(run.pk)
    with transaction.atomic():
        # Locked, and ended still: a resume racing this waits, then finds no row.
        locked = Run.objects.select_for_update().filter(pk=run.pk).first()
        if locked is None:
            return 0  # deleted meanwhile: nothing left to free
        _ended_or_refuse(run, locked.status, "deleted")
        AuditEvent.record(
            audit_action(run, "delete"),
            run,
            run.project,
            user,
            name=run.name,
            status=locked.status,
            freed_bytes=freed,
        )
        try:
            locked.delete()
        except ProtectedError as exc:
            raise _protected(run, exc.protected_objects) from None
        run_id = run.pk
        transaction.on_commit(lambda: run_files.remove(run_id))
    return freed


def archive_run(run: Run, user: User) -> None:
    """Hide an ended run from the runs list (it stays readable by id). Twice is harmless."""
    status = Run.objects.values_list("status", flat=True).get(pk=run.pk)
    _ended_or_refuse(run, status, "archived")
    now = timezone.now()
    with transaction.atomic():
        changed = Run.objects.filter(pk=run.pk, archived_at__isnull=True).update(
            archived_at=now, updated_at=now
        )
        if changed:
            AuditEvent.record(audit_action(run, "archive"), run, run.project, user)


def unarchive_run(run: Run, user: User) -> None:
    """List the run again. Twice is harmless."""
    with transaction.atomic():
        changed = Run.objects.filter(pk=run.pk, archived_at__isnull=False).update(
            archived_at=None, updated_at=timezone.now()
        )
        if changed:
            AuditEvent.record(audit_action(run, "unarchive"), run, run.project, user)
