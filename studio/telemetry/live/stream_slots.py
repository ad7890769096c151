"""How many live streams each user holds open, counted across every web process.

A user's open streams are a Redis sorted set of slot ids scored by when each lapses. A
stream claims a slot before it starts (refused at `RLSTUDIO_SSE_MAX_STREAMS_PER_USER`),
pushes its lapse time forward while it lives, and removes the slot when it ends. A web
process that dies leaves its slots to lapse after `SLOT_TTL_HEARTBEATS` heartbeats, so
no user is locked out for longer than that by a crash.

The claim is one Lua script: two tabs opening at the same moment can't both take the
last slot.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from functools import cache

import redis
from django.conf import settings

from studio.telemetry.live.pubsub import namespace

logger = logging.getLogger(__name__)

SLOT_TTL_HEARTBEATS = 3

_CLAIM = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""


def max_streams_per_user() -> int:
    return int(settings.RLSTUDIO_SSE_MAX_STREAMS_PER_USER)


@cache
def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


def _key(user_id: int) -> str:
    return f"{namespace()}:sse-slots:{user_id}"


@dataclass(frozen=True)
class StreamSlot:
    user_id: int
    slot: str
    ttl_s: float

    def refresh(self) -> None:
        try:
            _client().zadd(_key(self.user_id), {self.slot: time.time() + self.ttl_s}, xx=True)
        except redis.RedisError as exc:  # the stream ends by itself if Redis is gone
            logger.warning("could not refresh a stream slot: %s", exc)

    def release(self) -> None:
        try:
            _client().zrem(_key(self.user_id), self.slot)
        except redis.RedisError as exc:  # it lapses by itself
            logger.warning("could not release a stream slot: %s", exc)


def claim(user_id: int, heartbeat_s: float) -> StreamSlot | None:
    """A slot for one more stream of `user_id`, or None when they hold the limit.
    Without Redis the stream could not run anyway: the claim is granted and the stream
    ends on its own subscription error."""
    ttl = heartbeat_s * SLOT_TTL_HEARTBEATS
    slot = StreamSlot(user_id, uuid.uuid4().hex, ttl)
    now = time.time()
    try:
        granted = _client().eval(
            _CLAIM,
            1,
            _key(user_id),
            now,
            max_streams_per_user(),
            now + ttl,
            slot.slot,
            int(ttl) + 1,
        )
    except redis.RedisError as exc:
        logger.warning("could not count live streams: %s", exc)
        return slot
    return slot if granted else None
