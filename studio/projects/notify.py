"""Notifications outside the browser: a run that finished or failed, and critical
alerts, sent to the project's webhook (owners choose the events) and by email to each
member who chose that event.

`announce` is called where the event happens (studio.runs.lifecycle, the alert ingest):
it enqueues one Celery task once the transaction commits, and only when someone wants
the event. The worker's `deliver` posts and mails; a failure is logged, never retried
into a storm, and never touches the run.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction

from studio.projects.models import Membership, NotificationEvent, Project, ProjectWebhook
from studio.projects.webhooks import WebhookRefused, post_json

logger = logging.getLogger(__name__)

TASK_NAME = "workers.send_notification"


@dataclass(frozen=True)
class Notice:
    project_id: int
    event: str  # a NotificationEvent value
    title: str  # one line: the chat message's text and the email's subject
    detail: str  # more lines (the email's body)
    path: str  # the studio page it is about, e.g. /p/<slug>/runs/<id>


def _wanted(project_id: int, event: str) -> bool:
    hooked = ProjectWebhook.objects.filter(project_id=project_id, events__contains=[event]).exclude(
        url=""
    )
    mailed = Membership.objects.filter(project_id=project_id, email_events__contains=[event])
    return hooked.exists() or (bool(settings.EMAIL_HOST) and mailed.exists())


def announce(notice: Notice) -> None:
    """Send `notice` (in a worker) once the current transaction commits, if anyone wants it."""
    if not _wanted(notice.project_id, notice.event):
        return

    def enqueue() -> None:
        from kombu.exceptions import OperationalError

        from workers.celery_app import app

        try:
            app.send_task(TASK_NAME, args=[asdict(notice)], retry=False, expires=3600)
        except OperationalError as exc:
            logger.warning("notification %s not enqueued: %s", notice.title, exc)

    transaction.on_commit(enqueue, robust=True)


@dataclass(frozen=True)
class RunSubject:
    """The run a notice is about, as its title and link name it (the runs app, above
    this one, reads it: studio.runs.lifecycle.notice_subject)."""

    pk: int
    name: str
    project_id: int
    project_slug: str


def run_finished(run: RunSubject, status: str, reason: str) -> None:
    event = (
        NotificationEvent.RUN_SUCCEEDED if status == "succeeded" else NotificationEvent.RUN_FAILED
    )
    announce(
        Notice(
            project_id=run.project_id,
            event=event,
            title=f"Run #{run.pk} {run.name!r} {status} ({run.project_slug})",
            detail=reason[:2000],
            path=f"/p/{run.project_slug}/runs/{run.pk}",
        )
    )


def critical_alert(run: RunSubject, kind: str, step: int, message: str) -> None:
    announce(
        Notice(
            project_id=run.project_id,
            event=NotificationEvent.CRITICAL_ALERT,
            title=f"Critical alert on run #{run.pk} {run.name!r} at step {step}: {kind}",
            detail=message[:2000],
            path=f"/p/{run.project_slug}/runs/{run.pk}?tab=alerts",
        )
    )


def chat_body(notice: Notice) -> dict[str, Any]:
    """JSON that Slack, Mattermost (`text`) and Discord (`content`) webhooks accept, with
    the event's fields for anything else. A run's name is user text: it can neither
    format a link nor mention anyone (escaped for Slack, mentions off for Discord)."""
    link = f"{settings.RLSTUDIO_URL.rstrip('/')}{notice.path}"
    escaped = notice.title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return {
        "text": f"{escaped}\n{link}",
        "content": f"{notice.title}\n{link}",
        "allowed_mentions": {"parse": []},
        "event": notice.event,
        "link": link,
        **asdict(notice),
    }


def deliver(data: dict[str, Any]) -> dict[str, Any]:
    """Post and mail one notice (in a worker); what was done, for the task's result."""
    notice = Notice(**data)
    done: dict[str, Any] = {"webhook": None, "emails": 0}
    project = Project.objects.filter(pk=notice.project_id).first()
    if project is None:
        return done
    hook = ProjectWebhook.objects.filter(project=project).exclude(url="").first()
    if hook is not None and notice.event in hook.events:
        try:
            done["webhook"] = post_json(hook.url, chat_body(notice))
        except WebhookRefused as exc:
            done["webhook"] = f"refused: {exc}"
        except Exception as exc:  # a dead chat server must not fail the task loop
            done["webhook"] = f"failed: {type(exc).__name__}"
            logger.warning("webhook of project %s failed: %s", project.slug, exc)
    if settings.EMAIL_HOST:
        members = Membership.objects.filter(
            project=project, email_events__contains=[notice.event]
        ).select_related("user")
        link = f"{settings.RLSTUDIO_URL.rstrip('/')}{notice.path}"
        # One message each: members' addresses are not shown to one another.
        for address in sorted({m.user.email for m in members if m.user.email}):
            done["emails"] += send_mail(
                notice.title[:200],
                f"{notice.title}\n\n{notice.detail}\n\n{link}\n",
                settings.DEFAULT_FROM_EMAIL,
                [address],
            )
    return done
