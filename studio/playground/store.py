"""The playground's state, all of it in Redis: it lives as long as a warm model does.

- a model server's record (`server:<id>`, a hash): its state (starting, loading, ready,
  failed), the Ray submission id of its job, who started it, its token's hash, when it
  started and when it was last heard from;
- the ids of servers that may have a record (`servers`, a set), so live servers can be
  counted against the running-job caps without scanning Redis;
- its queue of chat requests (`queue:<id>`, a list the server long-polls);
- an exchange (one message sent to one or two models): its record (project, sender, how
  many replies, how many finished) and its events, a sorted set scored by event number.

An exchange's event is numbered, stored and published by one Lua script, so numbers are
published in order: a stream that subscribes, then reads the stored events, drops live
events up to the last one it read and misses none (as the run streams do,
studio/api/streams/streams.py). Every key expires: nothing is left behind by a lost server.
"""

from __future__ import annotations

import json
import time
from functools import cache
from typing import Any

import redis
from django.conf import settings

from studio.telemetry.live.pubsub import namespace

EXCHANGE_TTL_S = 3600  # an exchange's events outlive any reply (and a page reload)
STOP_TTL_S = 600

_EMIT = """
local n = redis.call('INCR', KEYS[1])
local frame = 'id: ' .. n .. '\\nevent: ' .. ARGV[1] .. '\\ndata: ' .. ARGV[2] .. '\\n\\n'
redis.call('ZADD', KEYS[2], n, frame)
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('PUBLISH', ARGV[4], n .. '\\n' .. frame)
return n
"""

# Released only when nothing waits and the record is still this job's.
_RELEASE = """
if redis.call('HGET', KEYS[1], 'submission_id') ~= ARGV[1] then return 1 end
if redis.call('LLEN', KEYS[2]) > 0 then return 0 end
redis.call('DEL', KEYS[1])
return 1
"""

# Forget the ids whose record lapsed; atomic, so a record written meanwhile keeps its id.
_PRUNE = """
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[1] .. id) == 0 then redis.call('SREM', KEYS[1], id) end
end
return 0
"""


@cache
def client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=5)


def server_key(server_id: str) -> str:
    return f"{namespace()}:pg:server:{server_id}"


def servers_key() -> str:
    return f"{namespace()}:pg:servers"


def start_lock_key() -> str:
    return f"{namespace()}:pg:start-lock"


def queue_key(server_id: str) -> str:
    return f"{namespace()}:pg:queue:{server_id}"


def exchange_key(exchange_id: str) -> str:
    return f"{namespace()}:pg:exchange:{exchange_id}"


def events_key(exchange_id: str) -> str:
    return f"{exchange_key(exchange_id)}:events"


def exchange_channel(exchange_id: str) -> str:
    return f"{exchange_key(exchange_id)}:live"


def stop_key(reply_id: str) -> str:
    return f"{namespace()}:pg:stop:{reply_id}"


def server_ttl_s() -> int:
    """A record outlives a server's longest silence (idle poll, start), then lapses."""
    return int(
        settings.RLSTUDIO_PLAYGROUND_IDLE_SECONDS + settings.RLSTUDIO_PLAYGROUND_START_TIMEOUT_S
    )


# --- model servers ----------------------------------------------------------------------
def _text(values: dict[bytes, bytes]) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in values.items()}


def read_server(server_id: str) -> dict[str, str]:
    return _text(client().hgetall(server_key(server_id)))  # type: ignore[arg-type]


def read_servers(server_ids: list[str]) -> dict[str, dict[str, str]]:
    pipe = client().pipeline(transaction=False)
    for server_id in server_ids:
        pipe.hgetall(server_key(server_id))
    return {sid: _text(v) for sid, v in zip(server_ids, pipe.execute(), strict=True) if v}


def write_server(server_id: str, **fields: Any) -> None:
    key = server_key(server_id)
    pipe = client().pipeline()
    pipe.hset(key, mapping={k: str(v) for k, v in fields.items()})
    pipe.expire(key, server_ttl_s())
    pipe.execute()


def remember_server(server_id: str) -> None:
    """List the server among those `known_servers` reads (after its record is written)."""
    client().sadd(servers_key(), server_id)


def known_servers() -> dict[str, dict[str, str]]:
    """Every server with a record, by id (the ids of lapsed records are forgotten)."""
    client().eval(_PRUNE, 1, servers_key(), server_key(""))
    members = client().smembers(servers_key())
    return read_servers(sorted(m.decode() for m in members))  # type: ignore[union-attr]


def set_token_once(server_id: str, token_hash: str) -> bool:
    """The server's token, set by the first bootstrap only."""
    return bool(client().hsetnx(server_key(server_id), "token_hash", token_hash))


def release(server_id: str, submission_id: str) -> bool:
    keys = [server_key(server_id), queue_key(server_id)]
    return bool(client().eval(_RELEASE, 2, *keys, submission_id))


def enqueue(server_id: str, request: dict[str, Any]) -> None:
    key = queue_key(server_id)
    pipe = client().pipeline()
    pipe.rpush(key, json.dumps(request))
    pipe.expire(key, server_ttl_s())
    pipe.execute()


def drain(server_id: str) -> list[dict[str, Any]]:
    """Every request waiting for the server, removed."""
    key = queue_key(server_id)
    pipe = client().pipeline()
    pipe.lrange(key, 0, -1)
    pipe.delete(key)
    waiting, _ = pipe.execute()
    return [json.loads(item) for item in waiting]


# --- exchanges --------------------------------------------------------------------------
def create_exchange(exchange_id: str, project_id: int, user_id: int, replies: list[str]) -> None:
    key = exchange_key(exchange_id)
    pipe = client().pipeline()
    record = {
        "project": project_id,
        "user": user_id,
        "replies": len(replies),
        "reply_ids": ",".join(replies),
        "finished": 0,
    }
    pipe.hset(key, mapping={k: str(v) for k, v in record.items()})
    pipe.hset(key, "created", str(time.time()))
    pipe.expire(key, EXCHANGE_TTL_S)
    pipe.execute()


def read_exchange(exchange_id: str) -> dict[str, str]:
    return _text(client().hgetall(exchange_key(exchange_id)))  # type: ignore[arg-type]


def emit(exchange_id: str, event: str, data: dict[str, Any]) -> int:
    """Number, store and publish one event of the exchange; its number."""
    body = json.dumps(data, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    keys = [f"{events_key(exchange_id)}:n", events_key(exchange_id)]
    channel = exchange_channel(exchange_id)
    return int(client().eval(_EMIT, 2, *keys, event, body, EXCHANGE_TTL_S, channel))


def finish_reply(exchange_id: str) -> bool:
    """Count one reply finished; True when it was the exchange's last."""
    record = exchange_key(exchange_id)
    finished = int(client().hincrby(record, "finished", 1))
    replies = client().hget(record, "replies")
    return replies is not None and finished >= int(replies)


def events_after(exchange_id: str, after: int, limit: int) -> list[tuple[int, bytes]]:
    rows = client().zrangebyscore(
        events_key(exchange_id), f"({after}", "+inf", start=0, num=limit, withscores=True
    )
    return [(int(score), bytes(frame)) for frame, score in rows]  # type: ignore[str-unpack,arg-type]


def last_event(exchange_id: str) -> int:
    value = client().get(f"{events_key(exchange_id)}:n")
    return int(value) if value is not None else 0


def ask_stop(reply_ids: list[str]) -> None:
    pipe = client().pipeline()
    for reply in reply_ids:
        pipe.set(stop_key(reply), "1", ex=STOP_TTL_S)
    pipe.execute()


def stop_asked(reply_id: str) -> bool:
    return bool(client().exists(stop_key(reply_id)))
