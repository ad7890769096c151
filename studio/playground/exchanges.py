"""An exchange: one message sent to one or two models, and their replies as they come.

`send` queues a request per model for its server (started if need be) and writes a
`reply-status` event per reply: `loading` while the model is not loaded yet (the page
says "loading model…"), `queued` when it is warm. `record_report` turns what a server
posts into the exchange's events: `reply-status` `generating` when it starts a reply,
`chunk` (text from `offset`) as it writes, then `done` or `error`, and `end` after the
last reply of the exchange. The browser reads them over SSE
(studio/api/playground/playground.py, `ExchangeEventsView`).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from asgiref.sync import sync_to_async
from django.conf import settings

from studio.playground import servers, store
from studio.playground.targets import Target
from studio.telemetry.live.pubsub import namespace

REQUEST_GRACE_S = 60.0  # a request waits this much longer than a server's start for one


@dataclass(frozen=True)
class Chat:
    """One column of the page: a model and its conversation so far (ending with the
    user's new message)."""

    target: Target
    messages: list[dict[str, str]]


@dataclass(frozen=True)
class Reply:
    id: str
    target: Target
    state: str  # loading | queued | failed


def _owner_key(reply_id: str) -> str:
    return f"{namespace()}:pg:reply:{reply_id}"


def send(
    project_id: int, user_id: int, chats: list[Chat], system: str, sampling: dict[str, Any]
) -> tuple[str, list[Reply]]:
    exchange_id = uuid.uuid4().hex
    reply_ids = [uuid.uuid4().hex for _ in chats]
    store.create_exchange(exchange_id, project_id, user_id, reply_ids)
    expires = time.time() + settings.RLSTUDIO_PLAYGROUND_START_TIMEOUT_S + REQUEST_GRACE_S
    replies: list[Reply] = []
    for chat, reply_id in zip(chats, reply_ids, strict=True):
        try:
            record = servers.ensure_server(chat.target, user_id)
        except servers.ServerRefused as exc:  # a cap, or a model that is gone: nothing started
            servers.fail_reply(exchange_id, reply_id, str(exc))
            replies.append(Reply(reply_id, chat.target, "failed"))
            continue
        if record.get("state") == "failed":
            message = f"The model could not load: {record.get('message', '')}"
            servers.fail_reply(exchange_id, reply_id, message)
            replies.append(Reply(reply_id, chat.target, "failed"))
            continue
        server_id = chat.target.server_id
        store.client().set(_owner_key(reply_id), server_id, ex=store.EXCHANGE_TTL_S)
        request = {
            "exchange": exchange_id,
            "reply": reply_id,
            "system": system,
            "messages": chat.messages,
            "sampling": sampling,
            "expires_at": expires,
        }
        store.enqueue(server_id, request)
        state = "queued" if record.get("state") == "ready" else "loading"
        store.emit(exchange_id, "reply-status", {"reply": reply_id, "state": state})
        replies.append(Reply(reply_id, chat.target, state))
    return exchange_id, replies


class NotThisServers(Exception):
    """A report about a reply the server was never given."""


def record_report(server_id: str, record: dict[str, str], event: dict[str, Any]) -> dict[str, Any]:
    """Apply one report of a server (validated by its serializer); the answer it gets."""
    kind = event["kind"]
    now = time.time()
    if kind in ("loading", "ready"):
        store.write_server(server_id, state=kind, seen_at=now)
        return {}
    if kind == "failed":
        servers.mark_failed(server_id, event.get("message") or "the model server failed")
        return {}
    if kind == "released":
        return {"released": store.release(server_id, record.get("submission_id", ""))}
    store.write_server(server_id, seen_at=now)
    exchange, reply = event["exchange"], event["reply"]
    if store.client().get(_owner_key(reply)) != server_id.encode():
        raise NotThisServers(f"Reply {reply} was not given to this server.")
    if kind == "start":
        status = {"reply": reply, "state": "generating", "prompt_tokens": event["prompt_tokens"]}
        store.emit(exchange, "reply-status", status)
        return {}
    if event.get("text") or kind == "done":  # done: the last text, or where the reply ends
        chunk = {"reply": reply, "offset": event["offset"], "text": event["text"]}
        store.emit(exchange, "chunk", chunk)
    if kind == "chunk":
        return {"stop": store.stop_asked(reply)}
    if kind == "error":
        servers.fail_reply(exchange, reply, event.get("message") or "the reply failed")
        return {}
    done = {k: event[k] for k in ("finish_reason", "tokens", "seconds", "first_token_s")}
    store.emit(exchange, "done", {"reply": reply, **done})
    if store.finish_reply(exchange):
        store.emit(exchange, "end", {})
    return {}


def _stopped_before_start(request: dict[str, Any]) -> None:
    """A reply stopped while it waited: done, with nothing written."""
    exchange, reply = request["exchange"], request["reply"]
    stats = {"finish_reason": "stopped", "tokens": 0, "seconds": 0.0, "first_token_s": 0.0}
    store.emit(exchange, "done", {"reply": reply, **stats})
    if store.finish_reply(exchange):
        store.emit(exchange, "end", {})


async def next_request(server_id: str, wait_s: float) -> dict[str, Any] | None:
    """The server's next request within `wait_s` (a long poll: the web process holds no
    thread or database connection while it waits). Requests that waited past their
    expiry (no server came up in time) get an error instead of an answer."""
    deadline = time.monotonic() + wait_s
    # A read may block for the whole wait (BLPOP): the socket's timeout must outlast it.
    client = aioredis.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=5, socket_timeout=wait_s + 10
    )
    try:
        await client.hset(store.server_key(server_id), "seen_at", str(time.time()))
        while (left := deadline - time.monotonic()) > 0.05:
            popped = await client.blpop([store.queue_key(server_id)], timeout=left)
            if popped is None:
                return None
            request: dict[str, Any] = json.loads(popped[1])
            if float(request["expires_at"]) < time.time():
                await sync_to_async(servers.fail_reply, thread_sensitive=False)(
                    request["exchange"], request["reply"], "No model server answered in time."
                )
                continue
            if await client.exists(store.stop_key(request["reply"])):
                await sync_to_async(_stopped_before_start, thread_sensitive=False)(request)
                continue
            request.pop("expires_at")
            return request
        return None
    finally:
        await client.aclose()
