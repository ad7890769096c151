"""Notifications outside the browser: owners point the project's webhook at a chat tool
and choose its events, each member chooses the events they are emailed about; a run that
finished or failed and a critical alert reach both, through sinks on loopback. A webhook
may not reach a private address unless the operator allows its host."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from studio.projects import notify
from studio.projects.models import Membership, NotificationEvent, ProjectWebhook
from studio.runs import lifecycle
from studio.runs.models import Run, RunStatus
from tests.notification_sinks import mail_sink, webhook_sink

URL = "/api/projects/alpha/notifications/"


@pytest.fixture
def loopback_allowed(settings):
    settings.RLSTUDIO_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]


def test_owners_set_the_webhook_and_every_member_their_own_emails(world, loopback_allowed):
    owner, member, viewer = (world.client(w) for w in ("owner", "member", "viewer"))
    body = {"webhook_url": "http://127.0.0.1:9/hook", "webhook_events": ["run_failed"]}
    assert owner.put(URL, body, format="json").status_code == 200
    assert member.put(URL, body, format="json").status_code == 403
    seen = member.get(URL).json()
    assert (seen["webhook_url"], seen["webhook_set"]) == (None, True)  # not its address
    assert seen["webhook_events"] == ["run_failed"]
    chosen = viewer.put(URL, {"email_events": ["critical_alert", "run_failed"]}, format="json")
    assert chosen.status_code == 200 and chosen.json()["email_events"] == [
        "critical_alert",
        "run_failed",
    ]
    assert Membership.objects.get(user=world.viewer).email_events == [
        "critical_alert",
        "run_failed",
    ]
    assert Membership.objects.get(user=world.member).email_events == []  # only their own
    assert owner.get(URL).json()["webhook_url"] == "http://127.0.0.1:9/hook"
    assert world.client("outsider").get(URL).status_code == 404
    bad = viewer.put(URL, {"email_events": ["everything"]}, format="json")
    assert "email_events" in bad.json()["error"]["fields"]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:6379/", "private address"),
        ("http://localhost/hook", "private address"),
        ("http://10.1.2.3/hook", "private address"),
        ("http://[::1]/hook", "private address"),
        ("http://169.254.169.254/latest/meta-data", "private address"),
        ("file:///etc/passwd", "starts with http"),
        ("gopher://example.com/", "starts with http"),
        ("http://user:secret@example.com/", "user name or password"),
    ],
)
def test_a_webhook_may_not_reach_the_studios_own_network(world, url, why):
    response = world.client("owner").put(URL, {"webhook_url": url}, format="json")
    assert response.status_code == 400
    assert why in response.json()["error"]["fields"]["webhook_url"][0]
    assert not ProjectWebhook.objects.exists()


def test_a_failed_run_posts_to_the_webhook_and_mails_the_members_who_chose_it(
    world, settings, loopback_allowed, django_capture_on_commit_callbacks
):
    world.member.email, world.viewer.email = "member@example.com", "viewer@example.com"
    world.member.save()
    world.viewer.save()
    run = Run.objects.create(
        project=world.project, name="<!channel> big run", config={}, created_by=world.owner,
        status=RunStatus.RUNNING,
    )  # fmt: skip
    with webhook_sink() as hook, mail_sink() as mail:
        # Through a real SMTP conversation (Django's tests keep mail in memory otherwise).
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", mail.port
        ProjectWebhook.objects.create(
            project=world.project, url=hook.url, events=[NotificationEvent.RUN_FAILED]
        )
        Membership.objects.filter(user=world.member).update(email_events=["run_failed"])
        Membership.objects.filter(user=world.viewer).update(email_events=["run_succeeded"])
        sent: list[dict] = []
        with django_capture_on_commit_callbacks() as callbacks:
            lifecycle.transition(run.pk, [RunStatus.RUNNING], RunStatus.FAILED, "ValueError: x")
        # The status stream's publish, the run's storage measure, and the notification.
        assert len(callbacks) == 3
        notice = notify.Notice(
            project_id=world.project.pk,
            event="run_failed",
            title=f"Run #{run.pk} '<!channel> big run' failed (alpha)",
            detail="ValueError: x",
            path=f"/p/alpha/runs/{run.pk}",
        )
        sent.append(notify.deliver(asdict(notice)))
        assert sent == [{"webhook": 204, "emails": 1}]
        [posted] = hook.received
        assert posted["text"].startswith(f"Run #{run.pk} '&lt;!channel&gt; big run' failed")
        assert posted["link"].endswith(f"/p/alpha/runs/{run.pk}")
        assert posted["allowed_mentions"] == {"parse": []} and posted["event"] == "run_failed"
        [message] = mail.received
        assert message["to"] == ["member@example.com"]  # the viewer chose finished runs only
        assert "ValueError: x" in message["data"] and "Subject: Run #" in message["data"]


def test_nothing_is_enqueued_when_nobody_wants_the_event(world, django_capture_on_commit_callbacks):
    run = Run.objects.create(
        project=world.project, name="quiet", config={}, created_by=world.owner,
        status=RunStatus.RUNNING,
    )  # fmt: skip
    with django_capture_on_commit_callbacks() as callbacks:
        lifecycle.transition(run.pk, [RunStatus.RUNNING], RunStatus.SUCCEEDED, "done")
    assert len(callbacks) == 2  # the status stream's publish, the storage measure; no notice


def test_a_webhook_host_that_turned_private_is_refused_when_posting(world, settings):
    settings.RLSTUDIO_WEBHOOK_ALLOWED_HOSTS = []
    ProjectWebhook.objects.create(
        project=world.project, url="http://127.0.0.1:9/hook", events=["run_failed"]
    )
    notice = notify.Notice(world.project.pk, "run_failed", "Run #1 failed", "", "/p/alpha")
    done = notify.deliver(asdict(notice))
    assert str(done["webhook"]).startswith("refused: ") and done["emails"] == 0
