"""Login attempts are limited per address (the connection's, not a header the client
sets) and per account (from any address), with a ceiling: the right password works again
within 15 minutes."""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from studio.api.common import login_limits
from tests.studio.conftest import PASSWORD


@pytest.fixture(autouse=True)
def fresh_limits():
    cache.clear()
    yield
    cache.clear()


def attempt(
    password: str,
    address: str = "198.51.100.7",
    forwarded: str | None = None,
    username: str = "member",
):
    headers = {"REMOTE_ADDR": address}
    if forwarded is not None:
        headers["HTTP_X_FORWARDED_FOR"] = forwarded
    return APIClient().post(
        "/api/auth/login", {"username": username, "password": password}, format="json", **headers
    )


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
