"""Membership and tokens in a real browser: an owner invites someone, who joins only by
accepting the invitation the app shows them; an owner makes a scoped, expiring API token.

Screenshots (wide and narrow) of the members page, the invitation notice and the tokens
page land in var/test-artifacts/browser/<test>/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import expect

from tests.browser.harness import sign_in

pytestmark = pytest.mark.browser


def test_an_invited_user_joins_by_accepting_and_an_owner_makes_a_scoped_token(
    studio: Any, page: Any, studio_orm: None
) -> None:
    owner = studio.new_user("owner")
    guest = studio.new_user("guest")
    connections.close_all()  # the ORM's connection must not outlive the test (see others)

    # The owner invites the guest as a viewer: an invitation, not a membership.
    sign_in(page, studio, owner)
    page.goto(f"{studio.url}/p/{owner.project_slug}/members")
    expect(page.get_by_text("No open invitations.")).to_be_visible()
    invite = page.get_by_role("form", name="Invite someone")
    invite.get_by_label("Username").fill(guest.username)
    invite.get_by_label("Role").select_option("viewer")
    invite.get_by_label("Username").press("Enter")  # the keyboard submits
    invitations = page.get_by_role("table", name="Open invitations")
    expect(invitations).to_contain_text(guest.username)
    members = page.get_by_role("table", name="Members")
    expect(members).not_to_contain_text(guest.username)
    page.shot("members-with-invitation")
    page.shot("members-with-invitation", narrow=True)

    # A token that reads, writes and manages members, expiring at the end of a day.
    page.goto(f"{studio.url}/tokens")
    expect(page.get_by_role("region", name="No tokens yet")).to_be_visible()
    page.shot("tokens-empty")
    form = page.get_by_role("form", name="New token")
    form.get_by_label("Token name").fill("ci")
    form.get_by_role("checkbox", name=re.compile("^Manage members")).check()
    form.get_by_label("Expires (optional)").fill("2030-06-01")
    form.get_by_role("button", name="Create token").click()
    expect(page.get_by_test_id("new-token")).to_contain_text("rls_")
    row = page.get_by_role("table", name="API tokens").get_by_role("row").nth(1)
    expect(row).to_contain_text("readwritemembers")
    expect(row).to_contain_text("never")  # not used yet
    page.shot("tokens")
    page.shot("tokens", narrow=True)

    # The guest sees the invitation on their first page, accepts, and is in the project.
    page.context.clear_cookies()
    sign_in(page, studio, guest)
    page.goto(f"{studio.url}/")
    notice = page.get_by_role("region", name="Invitations to you")
    expect(notice).to_contain_text(f"{owner.username} invited you to {owner.username} project")
    page.shot("invitation-notice")
    page.shot("invitation-notice", narrow=True)
    notice.get_by_role("button", name=re.compile("^Accept")).click()
    page.wait_for_url(f"**/p/{owner.project_slug}/runs")
    expect(page.get_by_role("region", name="Invitations to you")).to_have_count(0)
    page.goto(f"{studio.url}/p/{owner.project_slug}/members")
    expect(page.get_by_role("table", name="Members")).to_contain_text(guest.username)
    expect(page.get_by_text("Only the project's owners can invite people")).to_be_visible()
    page.shot("members-as-viewer")


def test_an_owner_points_notifications_at_a_chat_webhook_and_picks_emails(
    studio: Any, page: Any, studio_orm: None
) -> None:
    owner = studio.new_user("notifier")
    connections.close_all()
    sign_in(page, studio, owner)
    page.goto(f"{studio.url}/p/{owner.project_slug}/members")
    card = page.get_by_role("form", name="Notifications")
    url = card.get_by_label("Webhook URL")
    url.fill("http://10.0.0.7/hooks/studio")  # the studio's own network: refused
    card.get_by_role("button", name="Save").click()
    expect(card.get_by_text(re.compile("is a private address"))).to_be_visible()
    page.shot("notifications-refused")
    url.fill("http://127.0.0.1:9/hooks/studio")  # the operator allows this host
    card.get_by_role("group", name="Post to the webhook").get_by_label("A run failed").check()
    card.get_by_role("group", name="Email me when").get_by_label("A critical alert").check()
    card.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Notification settings saved.")).to_be_visible()
    saved = studio.api(owner).get(
        f"{studio.url}/api/projects/{owner.project_slug}/notifications/", timeout=30
    )
    body = saved.json()
    assert body["webhook_url"] == "http://127.0.0.1:9/hooks/studio", body
    assert (body["webhook_events"], body["email_events"]) == (["run_failed"], ["critical_alert"])
    page.shot("notifications")
    page.shot("notifications", narrow=True)
