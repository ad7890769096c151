"""Redis pub/sub fan-out: delivery after a confirmed subscription, and publishing that
never fails the caller."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest

from studio.telemetry.live import pubsub
from tests.live import free_port


@pytest.fixture
def fresh_publisher() -> Iterator[None]:
    pubsub._publisher.cache_clear()
    yield
    pubsub._publisher.cache_clear()


def test_a_subscription_receives_what_is_published_once_it_is_confirmed(
    db: None, fresh_publisher: None
) -> None:
    channel = pubsub.run_channel(424242)

    async def scenario() -> list[tuple[bytes | None, bytes]]:
        async with pubsub.subscribe(channel) as subscription:
            # Published right after subscribe() returned: must not be missed.
            pubsub.publish([(channel, pubsub.message(b"1:0:0", b"first")), (channel, b"-\nsecond")])
            got = [await subscription.next(5), await subscription.next(5)]
            assert await subscription.next(0.2) is None  # nothing else: times out
            return [m for m in got if m is not None]

    assert asyncio.run(scenario()) == [(b"1:0:0", b"first"), (None, b"second")]


def test_channels_are_named_by_database_so_studios_sharing_a_redis_do_not_mix(db: None) -> None:
    from django.db import connection

    assert pubsub.run_channel(7) == f"rls:{connection.settings_dict['NAME']}:run:7"
    assert pubsub.project_channel(7).endswith(":project:7")


def test_publishing_to_a_dead_redis_logs_and_returns(
    settings, fresh_publisher: None, caplog: pytest.LogCaptureFixture
) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    with caplog.at_level(logging.WARNING, logger="studio.telemetry.live.pubsub"):
        pubsub.publish([("rls:x:run:1", b"-\nframe")])
    assert "not published (1 messages)" in caplog.text


def test_streams_of_one_process_share_one_connection_and_a_laggard_is_cut_off(
    db: None, fresh_publisher: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pubsub, "SUBSCRIBER_BACKLOG", 3)
    channel = pubsub.run_channel(434343)

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        async with pubsub.subscribe(channel) as reader, pubsub.subscribe(channel) as laggard:
            assert len(pubsub._hubs) == 1 and len(pubsub._hubs[loop].subscribers) == 1
            for i in range(4):
                pubsub.publish([(channel, pubsub.message(b"1:%d:0" % i, b"frame"))])
                assert await reader.next(5) == (b"1:%d:0" % i, b"frame")
            with pytest.raises(pubsub.SubscriptionLost, match="behind"):
                await laggard.next(5)  # never read while 4 events arrived
        assert loop not in pubsub._hubs  # the last stream left: connection closed

    asyncio.run(scenario())
