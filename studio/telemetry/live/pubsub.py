"""Fan-out of live telemetry over Redis pub/sub: ingest publishes, SSE streams subscribe.

Messages are SSE frames rendered once by the publisher (studio.telemetry.live.sse_frames), each
prefixed by its ordering key, so a stream forwards them without decoding JSON:

    b"<key>\\n<frame>"     key: "attempt:seq:rank" of a record or alert; "-" for events
                           without one (run-status changes)

Pub/sub is fire-and-forget: a stream that misses a message (Redis restarted, the stream
was too slow) is closed, and its client's reconnect with Last-Event-ID backfills from
Postgres. Publishing never fails an ingest request: the records are committed by then.

A web process reads every channel its streams need over one Redis connection (`_Hub`),
so a message is parsed once however many browsers watch the run.

Channels are namespaced by the database name, because pub/sub ignores Redis database
numbers: two studios (or two test runs) sharing one Redis must not hear each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import cache

import redis
import redis.asyncio as aioredis
from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)

# Sync publishes happen inside an ingest request; don't let a dead Redis hold it up.
PUBLISH_TIMEOUT_S = 2.0
# How long a stream waits for Redis to confirm its subscription before giving up.
SUBSCRIBE_TIMEOUT_S = 5.0
# A stream this many events behind its channel is dropped (its client replays instead):
# memory stays bounded whatever a slow reader does.
SUBSCRIBER_BACKLOG = 10_000
# The shared reader wakes this often when idle (to notice cancellation).
HUB_POLL_S = 1.0
NO_KEY = b"-"


def namespace() -> str:
    return f"rls:{connection.settings_dict['NAME']}"


def run_channel(run_id: int) -> str:
    return f"{namespace()}:run:{run_id}"


def project_channel(project_id: int) -> str:
    return f"{namespace()}:project:{project_id}"


@cache
def _publisher() -> redis.Redis:
    return redis.Redis.from_url(
        settings.REDIS_URL,
        socket_timeout=PUBLISH_TIMEOUT_S,
        socket_connect_timeout=PUBLISH_TIMEOUT_S,
    )


def message(key: bytes | None, frame: bytes) -> bytes:
    return (key or NO_KEY) + b"\n" + frame


def publish(messages: Sequence[tuple[str, bytes]]) -> None:
    """Publish (channel, message) pairs in one round trip; log and drop on Redis errors."""
    if not messages:
        return
    try:
        pipe = _publisher().pipeline(transaction=False)
        for channel, payload in messages:
            pipe.publish(channel, payload)
        pipe.execute()
    except redis.RedisError as exc:
        logger.warning("live telemetry not published (%d messages): %s", len(messages), exc)


class SubscriptionLost(Exception):
    """The stream can't trust its live feed any more (Redis went away, or the stream fell
    too far behind); it must end so its client reconnects and replays."""


class Subscription:
    """One stream's view of one channel: (key, frame) pairs in publish order."""

    def __init__(self, channel: str) -> None:
        self.channel = channel
        self._frames: deque[tuple[bytes | None, bytes]] = deque()
        self._ready = asyncio.Event()
        self._lost: str | None = None

    def _deliver(self, payload: bytes) -> None:
        if len(self._frames) >= SUBSCRIBER_BACKLOG:
            self._lose(f"more than {SUBSCRIBER_BACKLOG} events behind")
            return
        key, _, frame = payload.partition(b"\n")
        self._frames.append((None if key == NO_KEY else key, frame))
        self._ready.set()

    def _lose(self, why: str) -> None:
        self._lost = why
        self._frames.clear()
        self._ready.set()

    async def next(self, timeout_s: float) -> tuple[bytes | None, bytes] | None:
        """The next message, or None when none came within `timeout_s`."""
        if not self._frames and self._lost is None:
            self._ready.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), timeout_s)
        if self._lost is not None:
            raise SubscriptionLost(self._lost)
        return self._frames.popleft() if self._frames else None


class _Hub:
    """Every live stream of one process (one event loop) shares one Redis connection:
    each message is read and parsed once, then handed to the streams of its channel."""

    def __init__(self) -> None:
        self.client = aioredis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=5)
        self.pubsub = self.client.pubsub()
        self.subscribers: dict[str, set[Subscription]] = {}
        self.pending: dict[str, asyncio.Event] = {}  # SUBSCRIBE sent, not yet confirmed
        self.lock = asyncio.Lock()
        self.reader: asyncio.Task[None] | None = None
        self.broken: str | None = None

    async def join(self, subscription: Subscription) -> None:
        channel = subscription.channel
        async with self.lock:
            members = self.subscribers.setdefault(channel, set())
            members.add(subscription)
            if len(members) == 1 and channel not in self.pending:
                self.pending[channel] = asyncio.Event()
                await self.pubsub.subscribe(channel)
                if self.reader is None:
                    self.reader = asyncio.create_task(self._read())
            confirmed = self.pending.get(channel)
        if confirmed is not None:
            try:
                await asyncio.wait_for(confirmed.wait(), SUBSCRIBE_TIMEOUT_S)
            except TimeoutError:
                raise TimeoutError(f"Redis did not confirm the subscription to {channel}") from None
        if self.broken is not None:
            raise SubscriptionLost(self.broken)

    async def leave(self, subscription: Subscription) -> bool:
        """Remove a subscriber; True when the hub has none left."""
        channel = subscription.channel
        async with self.lock:
            members = self.subscribers.get(channel, set())
            members.discard(subscription)
            # A subscription still waiting for its confirmation stays: an UNSUBSCRIBE now
            # could be confirmed as the SUBSCRIBE of the next stream of this channel.
            if not members and channel not in self.pending:
                del self.subscribers[channel]
                if self.broken is None:
                    with contextlib.suppress(redis.RedisError, OSError):
                        await self.pubsub.unsubscribe(channel)
            return not any(self.subscribers.values())

    async def _read(self) -> None:
        try:
            while True:
                message = await self.pubsub.get_message(timeout=HUB_POLL_S)
                if message is None:
                    continue
                channel = bytes(message["channel"]).decode()
                if message["type"] == "subscribe":
                    confirmed = self.pending.pop(channel, None)
                    if confirmed is not None:
                        confirmed.set()
                elif message["type"] == "message":
                    for subscription in tuple(self.subscribers.get(channel, ())):
                        subscription._deliver(bytes(message["data"]))
        except (redis.RedisError, OSError) as exc:
            self._break(f"Redis connection lost: {exc}")
        except asyncio.CancelledError:
            self._break("the live feed stopped")
            raise

    def _break(self, why: str) -> None:
        self.broken = why
        for members in self.subscribers.values():
            for subscription in members:
                subscription._lose(why)
        for confirmed in self.pending.values():
            confirmed.set()

    async def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, redis.RedisError, OSError):
                await self.reader
        with contextlib.suppress(redis.RedisError, OSError):
            await self.pubsub.aclose()
            await self.client.aclose()


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Hub] = weakref.WeakKeyDictionary()


@asynccontextmanager
async def subscribe(channel: str) -> AsyncIterator[Subscription]:
    """Subscribe, and return only once Redis has confirmed it: every message published
    after this returns is delivered (streams rely on it to replay without a gap)."""
    loop = asyncio.get_running_loop()
    hub = _hubs.get(loop)
    if hub is None or hub.broken is not None:
        hub = _hubs[loop] = _Hub()
    subscription = Subscription(channel)
    try:
        await hub.join(subscription)
        yield subscription
    finally:
        if await hub.leave(subscription):  # the last stream left: close the connection
            if _hubs.get(loop) is hub:
                del _hubs[loop]
            await hub.close()
