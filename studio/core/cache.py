"""The studio's cache: Django's Redis cache on REDIS_URL, confined to its own key prefix.

The Celery broker, the live streams' slots and the run queue keep their keys in the same
Redis database, so Django's own `clear()` (FLUSHDB) would wipe them: here it deletes only
the keys under this cache's KEY_PREFIX. Every web process shares what is kept here (the
login limits, studio.core.login_limits), where a per-process cache would give each
replica limits of its own.
"""

from __future__ import annotations

import re
from typing import Any

import redis
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured

DELETE_BATCH = 500  # keys per UNLINK while clearing


def _glob_escape(text: str) -> str:
    """`text` matched literally by a Redis SCAN pattern."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


class PrefixedRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        if not self.key_prefix:
            raise ImproperlyConfigured(
                "PrefixedRedisCache needs a KEY_PREFIX: without one, clearing the cache "
                "would delete every key of its Redis database."
            )

    def client(self) -> redis.Redis:
        """The Redis client the cache writes with, for what the cache API can't say in one
        atomic step (studio.core.login_limits' scripts); build keys with `make_key`."""
        client: redis.Redis = self._cache.get_client(write=True)
        return client

    def delete_matching(self, name_start: str) -> int:
        """Delete this cache's entries whose names (as given to `make_key`, this version)
        start with `name_start`; how many were deleted."""
        return self._delete(_glob_escape(self.make_key(name_start)) + "*")

    def clear(self) -> None:
        """Delete every entry of this cache (any version), and nothing else."""
        self._delete(_glob_escape(f"{self.key_prefix}:") + "*")

    def _delete(self, pattern: str) -> int:
        client = self.client()
        deleted = 0
        batch: list[bytes] = []
        for key in client.scan_iter(match=pattern, count=DELETE_BATCH):
            batch.append(key)
            if len(batch) == DELETE_BATCH:
                deleted += int(client.unlink(*batch))
                batch = []
        if batch:
            deleted += int(client.unlink(*batch))
        return deleted
