"""The login limits, one limiter for every way of signing in with a password (the API's
session login, the admin's login page, anything else that calls `authenticate()`: the
backend in studio.core.sign_in checks here).

- Per address: at most `RLSTUDIO_LOGIN_RATE` attempts (10 a minute), right or wrong. The
  address is the connection's, or with `RLSTUDIO_TRUSTED_PROXIES=N` the one the N proxies
  in front of the studio put in X-Forwarded-For: never a header a client sets for itself
  (it would pick its own key).
- Per account: at most FAILURES_ALLOWED wrong passwords within WINDOW_S, from any
  address, so guessing from many addresses is as slow as from one. The account's logins
  then wait until the oldest of them leaves the window: the right password works again
  within WINDOW_S at most (never a lockout for good). A right password clears the count.
  Accounts are keyed by a hash of the name as typed (existing or not, so the answer says
  nothing about which exist).

Each limit is a sliding log in Redis (a sorted set of attempt times), checked and added
to in one script, so every web process counts the same attempts and parallel requests
can't slip past the limit between a read and a write. An attempt takes its place in the
account's log before the password is checked and keeps it only if the password was wrong.
The logs live in the studio's cache (studio.core.cache) under this database's name, so
two studios sharing a Redis keep their accounts apart.
"""

from __future__ import annotations

import hashlib
import math
import time
import uuid
from dataclasses import dataclass

import redis
from django.conf import settings
from django.core.cache import caches
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.http import HttpRequest
from rest_framework import exceptions, status

from studio.core.cache import PrefixedRedisCache

FAILURES_ALLOWED = 10
WINDOW_S = 15 * 60  # the ceiling: the right password works again by then
PERIODS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}  # DRF's rate syntax: "10/min"

# KEYS[1]: a log (sorted set: attempt id -> time). ARGV: now, window (s), limit, attempt id.
# Returns nil when the attempt was added, else the time of the log's oldest attempt (the
# next place frees when it leaves the window).
_TAKE_PLACE = """
local now, window, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= limit then
  return redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('EXPIRE', KEYS[1], math.ceil(window))
return false
"""


class LoginLimited(exceptions.Throttled):
    """A sign-in refused by a limit: 429 with Retry-After (the API's error format in API
    views; studio.core.sign_in renders it for the others)."""


class SignInUnavailable(exceptions.APIException):
    """The limits can't be checked (Redis does not answer): sign-in is refused rather
    than left unlimited."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "sign_in_unavailable"
    default_detail = "Signing in is unavailable: the studio's Redis does not answer."


@dataclass(frozen=True)
class Rate:
    attempts: int
    period_s: int


def address_rate() -> Rate:
    """`RLSTUDIO_LOGIN_RATE` ("10/min": attempts per second, minute, hour or day)."""
    text = str(settings.RLSTUDIO_LOGIN_RATE)
    attempts, _, period = text.partition("/")
    try:
        return Rate(int(attempts), PERIODS_S[period.strip()[:1]])
    except (ValueError, KeyError):
        raise ImproperlyConfigured(
            f"RLSTUDIO_LOGIN_RATE={text!r} is not a rate such as '10/min' (per s, min, h, day)."
        ) from None


def client_address(request: HttpRequest) -> str:
    """The address a request came from (DRF's rule, so every limit keys alike)."""
    remote = str(request.META.get("REMOTE_ADDR", ""))
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    proxies = int(settings.RLSTUDIO_TRUSTED_PROXIES)
    if proxies == 0 or not forwarded:
        return remote
    addresses = str(forwarded).split(",")
    return addresses[-min(proxies, len(addresses))].strip()


def _store() -> PrefixedRedisCache:
    store = caches["default"]
    if not isinstance(store, PrefixedRedisCache):
        raise ImproperlyConfigured(
            "The login limits need CACHES['default'] to be studio.core.cache.PrefixedRedisCache "
            "(shared by every web process)."
        )
    return store


def _name(kind: str, ident: str) -> str:
    return f"{_namespace()}{kind}:{ident}"


def _namespace() -> str:
    return f"login-limit:{connection.settings_dict['NAME']}:"


def _address_log(address: str) -> str:
    return _store().make_key(_name("address", address))


def _account_log(username: str) -> str:
    digest = hashlib.sha256(username.strip().lower().encode()).hexdigest()
    return _store().make_key(_name("account", digest))


def _take_place(client: redis.Redis, log: str, now: float, window_s: float, limit: int) -> int:
    """Add an attempt to `log`; 0 if it fit, else the seconds until one would."""
    oldest = client.eval(_TAKE_PLACE, 1, log, now, window_s, limit, uuid.uuid4().hex)
    if oldest is None:
        return 0
    return max(1, math.ceil(float(oldest) + window_s - now))


def admit(address: str | None, username: str) -> None:
    """Admit one password check, or raise LoginLimited (SignInUnavailable without Redis).
    The attempt keeps its place in the account's log (a wrong password) unless
    `succeeded` follows. `address` None: a sign-in without a request (a test client, a
    shell), limited per account only."""
    now = time.time()
    try:
        client = _store().client()
        if address is not None:
            rate = address_rate()
            wait = _take_place(client, _address_log(address), now, rate.period_s, rate.attempts)
            if wait:
                raise LoginLimited(
                    wait=wait,
                    detail=f"Too many sign-in attempts from this address; try again in {wait} s.",
                )
        wait = _take_place(client, _account_log(username), now, WINDOW_S, FAILURES_ALLOWED)
    except redis.RedisError as exc:
        raise SignInUnavailable() from exc
    if wait:
        raise LoginLimited(
            wait=wait, detail=f"Too many wrong passwords for this account; try again in {wait} s."
        )


def succeeded(username: str) -> None:
    """The right password: the account's wrong ones are forgiven."""
    try:
        _store().client().delete(_account_log(username))
    except redis.RedisError as exc:
        raise SignInUnavailable() from exc


def forget_all() -> int:
    """Forget every attempt this studio's limits hold (every address and account of this
    database; nothing else in Redis); how many logs were deleted."""
    return _store().delete_matching(_namespace())
