"""Login attempts are limited on every sign-in path (the API's session login and the
admin's login page) by one limiter: per address (the connection's, not a header the
client sets) and per account (from any address), with a ceiling: the right password
works again within 15 minutes. The counts live in Redis, so every web process shares
them (two uvicorn servers here, as behind a load balancer)."""

from __future__ import annotations

import re
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User
from django.test import Client, override_settings
from rest_framework.test import APIClient

from studio.core import login_limits
from studio.core.cache import PrefixedRedisCache
from tests.live import free_port, start_web_server
from tests.studio.conftest import PASSWORD

ADMIN = "/admin/login/"


@pytest.fixture(autouse=True)
def fresh_limits(django_db_setup: None):
    """Only the limiter's keys of this test database (the cache's other keys, the broker's
    and the streams' stay). After django_db_setup: the keys carry the database's name."""
    login_limits.forget_all()
    yield
    login_limits.forget_all()


def attempt(
    password: str,
    address: str = "198.51.100.7",
    forwarded: str | None = None,
    username: str = "member",
):
    headers: dict[str, Any] = {"REMOTE_ADDR": address}
    if forwarded is not None:
        headers["HTTP_X_FORWARDED_FOR"] = forwarded
    return APIClient().post(
        "/api/auth/login", {"username": username, "password": password}, format="json", **headers
    )


def admin_attempt(password: str, address: str, client: Client | None = None, username="member"):
    client = client or Client()
    body = {"username": username, "password": password, "next": "/admin/"}
    return client.post(ADMIN, body, REMOTE_ADDR=address)


def refused_for(response: Any, reason: str) -> bool:
    """A refusal by the limits (a test client's response or a live server's)."""
    return (
        response.status_code == 429
        and 0 < int(response.headers["Retry-After"]) <= login_limits.WINDOW_S
        and reason in response.content.decode()
    )


@pytest.fixture
def staff(world):
    """The admin page signs in staff only: the member is staff here."""
    world.member.is_staff = True
    world.member.save()
    return world.member


def test_a_changing_forwarded_for_header_does_not_dodge_the_address_throttle(world):
    # A new account name each time: only the per-address throttle can stop these.
    codes = [
        attempt("wrong", forwarded=f"203.0.113.{i}", username=f"user{i}").status_code
        for i in range(30)
    ]
    assert codes[:10] == [401] * 10
    assert set(codes[10:]) == {429}


def test_guessing_one_account_from_many_addresses_is_slowed_down(world):
    codes = [attempt("wrong", address=f"192.0.2.{i}").status_code for i in range(12)]
    assert codes[:10] == [401] * 10
    assert codes[10:] == [429, 429]
    refused = attempt(PASSWORD, address="192.0.2.200")
    assert refused.status_code == 429
    assert "Too many wrong passwords for this account" in refused.json()["error"]["message"]


def test_the_right_password_works_again_within_the_ceiling(world, monkeypatch):
    assert attempt(PASSWORD).status_code == 200  # the positive control
    for i in range(10):
        attempt("wrong", address=f"192.0.2.{i}")
    assert attempt(PASSWORD, address="192.0.2.99").status_code == 429
    later = time.time() + login_limits.WINDOW_S + 1
    monkeypatch.setattr(login_limits.time, "time", lambda: later)
    assert attempt(PASSWORD, address="192.0.2.98").status_code == 200


def test_the_admin_login_is_limited_per_address(staff):
    # The positive control: the right password signs in, and the session works on the API.
    client = Client()
    signed_in = admin_attempt(PASSWORD, "198.51.100.1", client)
    assert signed_in.status_code == 302 and signed_in["Location"] == "/admin/"
    assert client.get("/api/auth/me").json()["username"] == "member"

    guesser = Client()
    for i in range(10):
        wrong = admin_attempt(f"guess-{i}", "198.51.100.2", guesser)
        assert wrong.status_code == 200, f"attempt {i + 1}: {wrong.status_code}"
        assert "correct username and password" in wrong.content.decode()
    refused = admin_attempt(PASSWORD, "198.51.100.2", guesser)
    assert refused_for(refused, "Too many sign-in attempts from this address")
    assert guesser.get("/api/auth/me").status_code == 401  # no session


def test_the_admin_login_and_the_api_login_share_the_account_limit(staff):
    for i in range(10):  # wrong passwords on both paths, each from an address of its own
        if i % 2:
            assert attempt("wrong", address=f"192.0.2.{i}").status_code == 401
        else:
            assert admin_attempt("wrong", f"192.0.2.{i}").status_code == 200
    refused = admin_attempt(PASSWORD, "192.0.2.100")
    assert refused_for(refused, "Too many wrong passwords for this account")
    refused = attempt(PASSWORD, address="192.0.2.101")
    assert refused_for(refused, "Too many wrong passwords for this account")


def test_parallel_attempts_do_not_slip_past_the_account_limit(django_db_setup):
    def admitted(i: int) -> bool:
        try:
            login_limits.admit(f"192.0.2.{i}", "target")
        except login_limits.LoginLimited:
            return False
        return True

    with ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = list(pool.map(admitted, range(40)))
    assert outcomes.count(True) == login_limits.FAILURES_ALLOWED


def test_without_redis_signing_in_is_refused_not_unlimited(staff):
    dead = {
        "default": {
            **settings.CACHES["default"],
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",
        }
    }
    with override_settings(CACHES=dead):
        refused = attempt(PASSWORD)
        assert refused.status_code == 503
        assert refused.json()["error"]["code"] == "sign_in_unavailable"
        page = admin_attempt(PASSWORD, "198.51.100.3")
        assert page.status_code == 503 and "Redis does not answer" in page.content.decode()


def test_clearing_the_cache_deletes_its_keys_and_nothing_else_in_redis():
    # A cache of this test's own prefix, on the studio's Redis database; the prefix holds
    # a glob character, so a pattern that did not escape it would reach the neighbour.
    own = f"rlstudio-test:{uuid.uuid4().hex}"
    store = PrefixedRedisCache(settings.REDIS_URL, {"KEY_PREFIX": own + "*"})
    client = store.client()
    outside = [f"{own}-neighbour:1:kept", f"{own}:1:kept"]
    try:
        store.set("a", 1)
        store.set("b", 2, version=2)
        for key in outside:
            client.set(key, "x", ex=60)
        store.clear()
        assert (store.get("a"), store.get("b", version=2)) == (None, None)
        assert all(client.get(key) == b"x" for key in outside)
    finally:
        client.delete(*outside)


class AdminPage:
    """The admin's login form on one live server, as a browser fills it in: the page, its
    CSRF token, the post. X-Forwarded-For names the client (the servers trust one proxy)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def sign_in(self, username: str, password: str, address: str) -> requests.Response:
        return self.sign_in_with(requests.Session(), username, password, address)

    def sign_in_with(
        self, session: requests.Session, username: str, password: str, address: str
    ) -> requests.Response:
        session.headers["X-Forwarded-For"] = address
        page = session.get(self.url + ADMIN, timeout=30)
        found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert found, page.text[:500]
        body = {
            "csrfmiddlewaretoken": found.group(1),
            "username": username,
            "password": password,
            "next": "/admin/",
        }
        return session.post(self.url + ADMIN, data=body, allow_redirects=False, timeout=60)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_web_processes_share_the_admin_login_limits(tmp_path: Path) -> None:
    # The servers keep the real password hashers (this process hashes with MD5).
    User.objects.create(
        username="keeper", is_staff=True, password=make_password(PASSWORD, hasher="pbkdf2_sha256")
    )
    folders = [tmp_path / f"web{i}" for i in range(2)]
    for folder in folders:
        folder.mkdir()
    servers = [
        start_web_server(folder, RLSTUDIO_TRUSTED_PROXIES="1", LOG_LEVEL="WARNING")
        for folder in folders
    ]
    try:
        pages = [AdminPage(server.info["url"]) for server in servers]
        for i, page in enumerate(pages):  # the positive control, on each server
            browser = requests.Session()
            signed_in = page.sign_in_with(browser, "keeper", PASSWORD, f"198.51.100.{i + 1}")
            assert signed_in.status_code == 302, signed_in.text[:500]
            me = browser.get(page.url + "/api/auth/me", timeout=30)
            assert me.status_code == 200 and me.json()["username"] == "keeper"

        # Per account: ten wrong passwords from ten addresses, spread over both servers.
        for i in range(10):
            wrong = pages[i % 2].sign_in("keeper", "wrong", f"192.0.2.{i}")
            assert wrong.status_code == 200, f"attempt {i + 1}: {wrong.status_code}"
        for page in pages:  # the next, on either server, is refused: the right password too
            refused = page.sign_in("keeper", PASSWORD, "203.0.113.9")
            assert refused_for(refused, "Too many wrong passwords for this account")

        # Per address: ten attempts from one address (at other accounts), over both servers.
        for i in range(10):
            wrong = pages[i % 2].sign_in(f"nobody{i}", "wrong", "198.51.100.77")
            assert wrong.status_code == 200, f"attempt {i + 1}: {wrong.status_code}"
        for page in pages:
            refused = page.sign_in("someone", "wrong", "198.51.100.77")
            assert refused_for(refused, "Too many sign-in attempts from this address")
    finally:
        for server in servers:
            server.stop()
