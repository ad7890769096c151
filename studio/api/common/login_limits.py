"""Wrong passwords per account: after FAILURES_ALLOWED within WINDOW_S, the account's
logins wait until the oldest of them leaves the window, so guessing from many addresses
is as slow as from one, and the right password works again within WINDOW_S at most
(never a lockout for good). Kept in the cache, keyed by a hash of the username (any
username, existing or not, so the answer says nothing about which exist)."""

from __future__ import annotations

import hashlib
import time

from django.core.cache import cache
from rest_framework import exceptions

FAILURES_ALLOWED = 10
WINDOW_S = 15 * 60  # the ceiling: the right password works again by then


def _key(username: str) -> str:
    return "login-failures:" + hashlib.sha256(username.strip().lower().encode()).hexdigest()


def _recent(username: str, now: float) -> list[float]:
    stamps: list[float] = cache.get(_key(username), [])
    return [t for t in stamps if t > now - WINDOW_S]


def check(username: str) -> None:
    """Raise Throttled (429, with the wait) while the account has too many recent failures."""
    now = time.time()
    recent = _recent(username, now)
    if len(recent) >= FAILURES_ALLOWED:
        wait = int(min(recent) + WINDOW_S - now) + 1
        raise exceptions.Throttled(
            wait=wait,
            detail=f"Too many wrong passwords for this account; try again in {wait} s.",
        )


def failed(username: str) -> None:
    now = time.time()
    cache.set(_key(username), [*_recent(username, now), now][-FAILURES_ALLOWED:], WINDOW_S)


def succeeded(username: str) -> None:
    cache.delete(_key(username))
