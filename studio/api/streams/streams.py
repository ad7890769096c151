"""Live streams (Server-Sent Events): a run's telemetry and a project's run statuses.

A stream subscribes to its Redis channel *before* it reads the database, replays what
the client missed (after `Last-Event-ID`, or `?last_event_id=` for clients that can't
set headers), then forwards live events, dropping those the replay already sent: no gap
and no duplicate (docs/telemetry.md). Without a Last-Event-ID a stream starts "now",
with a `ready` event whose id marks that point, so a reconnect resumes from there.

These are async views (DRF is sync-only): the DRF classes below only document them for
the OpenAPI schema. Each stream holds a Redis connection and no database connection
once it is live. Under WSGI (tests, `manage.py runserver`) a stream can't stay open, so
the response ends after the replay.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import redis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework.authentication import SessionAuthentication
from rest_framework.request import Request
from rest_framework.views import APIView

from studio.api.common.authentication import ApiTokenAuthentication
from studio.api.common.permissions import has_role
from studio.projects.models import Project, Role
from studio.runs.models import Run
from studio.telemetry.live import pubsub, run_status, sse_frames, stream_slots
from studio.telemetry.live.sse_frames import BadEventId, EventKey
from studio.telemetry.live.stream_slots import StreamSlot

logger = logging.getLogger(__name__)

REPLAY_PAGE = 200  # records per database read while replaying
WSGI_REPLAY_PAGES = 10  # a stream served without ASGI ends after this much replay
RETRY_MS = 2000  # how long EventSource waits before reconnecting

T = TypeVar("T")
Response = HttpResponse | StreamingHttpResponse
_active_streams = 0  # per process (one event loop): streams now open


def heartbeat_s() -> float:
    return float(getattr(settings, "RLSTUDIO_SSE_HEARTBEAT_S", 15.0))


def max_streams() -> int:
    return int(getattr(settings, "RLSTUDIO_SSE_MAX_STREAMS", 500))


def max_stream_s() -> float:
    return float(getattr(settings, "RLSTUDIO_SSE_MAX_STREAM_S", 3600.0))


def _error(status: int, code: str, message: str, field: str | None = None) -> JsonResponse:
    body: dict[str, Any] = {"code": code, "message": f"{field}: {message}" if field else message}
    if field:
        body["fields"] = {field: [message]}
    response = JsonResponse({"error": body}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = "Bearer"
    return response


def _signed_in_user(request: HttpRequest) -> Any:
    """The caller by personal token or session (as the REST API authenticates), or a
    401 response."""
    drf_request = Request(
        request, authenticators=[ApiTokenAuthentication(), SessionAuthentication()]
    )
    try:
        user = drf_request.user
    except exceptions.APIException as exc:
        return _error(exc.status_code, "authentication_failed", str(exc.detail))
    if not user or not user.is_authenticated:
        return _error(401, "not_authenticated", "Authentication credentials were not provided.")
    return user


def _close_db_connection() -> None:
    """A live stream can last an hour: it must not pin a database connection."""
    if not connection.in_atomic_block:  # a test's transaction: leave it alone
        connection.close()


async def _db(fn: Callable[..., T], *args: Any) -> T:
    return await sync_to_async(fn)(*args)


def _raw_last_event_id(request: HttpRequest) -> str | None:
    raw = request.headers.get("Last-Event-ID") or request.GET.get("last_event_id")
    return raw if raw else None


def _stream_response(body: AsyncIterator[bytes] | bytes) -> Response:
    response: Response
    if isinstance(body, bytes):
        response = HttpResponse(body, content_type="text/event-stream")
    else:
        response = StreamingHttpResponse(body, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: don't buffer the stream
    return response


class _Stream:
    """One subscriber's life: subscribe, replay, live. Subclasses name the channel and
    how keys are read and replayed."""

    channel: str

    def parse_live_key(self, raw: bytes) -> Any:
        raise NotImplementedError

    async def start(self) -> list[bytes]:
        """Frames to send first (the snapshot)."""
        return []

    async def ready(self) -> tuple[Any, bytes]:
        """The "now" mark and its `ready` frame, for a client without Last-Event-ID."""
        raise NotImplementedError

    async def replay(self, after: Any) -> list[tuple[Any, bytes]]:
        raise NotImplementedError

    async def opening(self, after: Any | None) -> tuple[Any, list[bytes]]:
        """What to send before going live, and the mark up to which it covers."""
        frames = await self.start()
        if after is None:
            mark, frame = await self.ready()
            return mark, [*frames, frame]
        mark = after
        for _ in range(WSGI_REPLAY_PAGES):
            page = await self.replay(mark)
            if not page:
                break
            frames.extend(frame for _, frame in page)
            mark = page[-1][0]
        return mark, frames

    async def run(self, after: Any | None, slot: StreamSlot) -> AsyncIterator[bytes]:
        global _active_streams
        _active_streams += 1
        loop = asyncio.get_running_loop()
        try:
            yield f"retry: {RETRY_MS}\n\n".encode()
            async with pubsub.subscribe(self.channel) as subscription:
                # Subscribed first: whatever commits from now on arrives live.
                frames = await self.start()
                if frames:
                    yield b"".join(frames)
                if after is None:
                    mark, frame = await self.ready()
                    yield frame
                else:
                    mark = after
                    while page := await self.replay(mark):
                        yield b"".join(frame for _, frame in page)
                        mark = page[-1][0]
                await _db(_close_db_connection)
                async for frame in self._live(subscription, mark, loop, slot):
                    yield frame
        except (pubsub.SubscriptionLost, redis.RedisError, OSError, TimeoutError) as exc:
            # The client reconnects with its Last-Event-ID and loses nothing.
            logger.warning("event stream %s ended: %s", self.channel, exc)
        finally:
            _active_streams -= 1
            slot.release()  # one quick Redis call; awaiting here could be cancelled

    async def _live(
        self,
        subscription: pubsub.Subscription,
        mark: Any,
        loop: asyncio.AbstractEventLoop,
        slot: StreamSlot,
    ) -> AsyncIterator[bytes]:
        deadline = loop.time() + max_stream_s()
        last_write = last_refresh = loop.time()
        while True:
            now = loop.time()
            if now >= deadline:
                return  # streams are recycled; the client reconnects from its last id
            if now - last_refresh >= heartbeat_s():  # the user's slot lives while we do
                await sync_to_async(slot.refresh, thread_sensitive=False)()
                last_refresh = now
            wait = min(heartbeat_s() - (now - last_write), deadline - now)
            if wait <= 0:
                yield sse_frames.comment("heartbeat")
                last_write = now
                continue
            message = await subscription.next(wait)
            if message is None:
                continue
            key, frame = message
            # Only the replay can have sent an event twice: anything live above the
            # replay's mark is new (each record is published once, at its commit).
            if key is not None and self.parse_live_key(key) <= mark:
                continue
            yield frame
            last_write = loop.time()


class _RunStream(_Stream):
    def __init__(self, run: Run) -> None:
        self.run_id = run.pk
        self.channel = pubsub.run_channel(run.pk)

    def parse_live_key(self, raw: bytes) -> EventKey:
        return sse_frames.parse_key_bytes(raw)

    async def start(self) -> list[bytes]:
        return [await _db(run_status.snapshot_of, self.run_id)]

    async def ready(self) -> tuple[EventKey, bytes]:
        mark = await _db(sse_frames.last_key, self.run_id)
        data = {"last_event_id": sse_frames.event_id(mark)}
        return mark, sse_frames.frame("ready", data, sse_frames.event_id(mark))

    async def replay(self, after: EventKey) -> list[tuple[EventKey, bytes]]:
        return await _db(sse_frames.replay, self.run_id, after, REPLAY_PAGE)


class _ProjectStream(_Stream):
    def __init__(self, project: Project) -> None:
        self.project_id = project.pk
        self.channel = pubsub.project_channel(project.pk)

    def parse_live_key(self, raw: bytes) -> int:
        return int(raw)

    async def ready(self) -> tuple[int, bytes]:
        mark = await _db(run_status.last_change_id, self.project_id)
        return mark, sse_frames.frame("ready", {"last_event_id": str(mark)}, str(mark))

    async def replay(self, after: int) -> list[tuple[int, bytes]]:
        return await _db(run_status.replay_project, self.project_id, after, REPLAY_PAGE)


def _parse_change_id(text: str) -> int:
    if not text.strip().isdigit() or len(text.strip()) > 18:
        raise BadEventId(f"{text[:40]!r} is not an event id; expected the number sent in `id:`")
    return int(text.strip())


async def _serve(
    request: HttpRequest,
    lookup: Callable[[Any], _Stream | None],
    parse_id: Callable[[str], Any],
) -> Response:
    if request.method != "GET":
        response = _error(405, "method_not_allowed", f'Method "{request.method}" not allowed.')
        response["Allow"] = "GET"
        return response
    raw = _raw_last_event_id(request)
    try:
        after = None if raw is None else parse_id(raw)
    except BadEventId as exc:
        return _error(400, "validation_error", str(exc), "last_event_id")

    def authorize() -> tuple[Any, _Stream] | JsonResponse:
        user = _signed_in_user(request)
        if isinstance(user, JsonResponse):
            return user
        stream = lookup(user)
        return (user, stream) if stream is not None else _error(404, "not_found", "Not found.")

    authorized = await _db(authorize)
    if isinstance(authorized, JsonResponse):
        return authorized
    user, stream = authorized
    if not isinstance(request, ASGIRequest):
        _, frames = await stream.opening(after)
        return _stream_response(b"".join(frames))
    if _active_streams >= max_streams():
        response = _error(503, "too_many_streams", "Too many live streams; retry shortly.")
        response["Retry-After"] = "5"
        return response
    slot = await _db(stream_slots.claim, user.pk, heartbeat_s())
    if slot is None:
        limit = stream_slots.max_streams_per_user()
        response = _error(
            429,
            "too_many_streams",
            f"You have {limit} live streams open, the most one user may hold; close a tab "
            "(its streams end with it) or retry in a minute.",
        )
        response["Retry-After"] = "15"
        return response
    return _stream_response(stream.run(after, slot))


def event_stream(events: list[str]) -> OpenApiResponse:
    """A `text/event-stream` response, its schema describing one event (the item schema
    of OpenAPI 3.2's streams; 3.0 tools can only show it as the body)."""
    return OpenApiResponse(
        response={
            "type": "object",
            "properties": {
                "event": {"type": "string", "enum": events},
                "data": {"type": "string", "description": "JSON (docs/telemetry.md)"},
                "id": {"type": "string", "description": "Send it back as Last-Event-ID."},
                "retry": {"type": "string"},
            },
            "required": ["event", "data"],
        },
        description="A `text/event-stream`; docs/telemetry.md lists its events.",
    )


LAST_EVENT_ID_PARAMETERS = [
    OpenApiParameter(
        "last_event_id",
        str,
        OpenApiParameter.QUERY,
        description="Resume after this event id (for clients that can't send the "
        "Last-Event-ID header; the header wins).",
    ),
    OpenApiParameter(
        "Last-Event-ID",
        str,
        OpenApiParameter.HEADER,
        description="Resume after this event id (EventSource sends it on reconnect).",
    ),
]


class _AsyncStreamView(APIView):
    """Documents an async stream for the schema; requests go to `serve`, not DRF."""

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        async def view(request: HttpRequest, **kwargs: Any) -> Response:
            return await cls.serve(request, **kwargs)

        view.cls = cls  # type: ignore[attr-defined]  # what drf-spectacular introspects
        view.initkwargs = initkwargs  # type: ignore[attr-defined]
        return view

    @classmethod
    async def serve(cls, request: HttpRequest, **kwargs: Any) -> Response:
        raise NotImplementedError


RUN_EVENTS = ["metrics", "samples", "log", "status", "checkpoint", "alert", "run-status", "ready"]


class RunEventsView(_AsyncStreamView):
    @extend_schema(
        parameters=LAST_EVENT_ID_PARAMETERS,
        responses={(200, "text/event-stream"): event_stream(RUN_EVENTS)},
    )
    def get(self, request: Request, pk: int) -> HttpResponse:
        """A run's live telemetry: `metrics`, `samples`, `log`, `checkpoint`, `status`
        and `alert` events (ids `attempt:seq`), and `run-status` changes. Viewers and up."""
        raise NotImplementedError  # served by `serve`

    @classmethod
    async def serve(cls, request: HttpRequest, **kwargs: Any) -> Response:
        def lookup(user: Any) -> _Stream | None:
            run = Run.objects.select_related("project").filter(pk=kwargs["pk"]).first()
            if run is None or not has_role(run.project, user, Role.VIEWER):
                return None  # another project's run does not exist for this caller
            return _RunStream(run)

        return await _serve(request, lookup, sse_frames.parse_event_id)


class ProjectEventsView(_AsyncStreamView):
    @extend_schema(
        parameters=LAST_EVENT_ID_PARAMETERS,
        responses={(200, "text/event-stream"): event_stream(["run-status", "ready"])},
    )
    def get(self, request: Request, slug: str) -> HttpResponse:
        """`run-status` events for every run of the project (ids: status change ids).
        Viewers and up."""
        raise NotImplementedError  # served by `serve`

    @classmethod
    async def serve(cls, request: HttpRequest, **kwargs: Any) -> Response:
        def lookup(user: Any) -> _Stream | None:
            project = Project.objects.filter(slug=kwargs["slug"]).first()
            if project is None or not has_role(project, user, Role.VIEWER):
                return None
            return _ProjectStream(project)

        return await _serve(request, lookup, _parse_change_id)
