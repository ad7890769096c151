"""The chat playground's API: what a project can chat with, a message sent to one or two
models, its replies streamed as they are written (SSE), and a stop.

Viewers see the models and read an exchange's stream; sending (which starts model
servers on the cluster) and stopping need the member role. The model servers' own
endpoints are in studio/api/playground/servers.py; the logic in studio/playground/.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, status
from rest_framework.request import Request
from rest_framework.response import Response

from studio.api.common.permissions import has_role, signed_in_user
from studio.api.common.scoping import ProjectScopedViewSet
from studio.api.streams.streams import (
    LAST_EVENT_ID_PARAMETERS,
    _AsyncStreamView,
    _serve,
    _Stream,
    event_stream,
)
from studio.api.streams.streams import Response as StreamResponse
from studio.playground import exchanges, store
from studio.playground.serializers import (
    ExchangeCreateSerializer,
    ExchangeSerializer,
    PlaygroundModelSerializer,
    SamplingSerializer,
    WarmSerializer,
)
from studio.playground.servers import ServerRefused, alive, ensure_server
from studio.playground.targets import Target, TargetError, find_target, project_targets
from studio.projects.models import Project, Role
from studio.telemetry.live import sse_frames

PROJECT = OpenApiParameter("project", str, OpenApiParameter.QUERY, required=True)
EXCHANGE_ID = OpenApiParameter(
    "exchange_id", str, OpenApiParameter.PATH, description="The exchange's id."
)
EXCHANGE_EVENTS = ["reply-status", "chunk", "done", "error", "end", "ready"]


def _row(target: Target, record: dict[str, str]) -> dict[str, Any]:
    live = alive(record)
    return {
        "key": target.key,
        "kind": target.kind,
        "id": target.pk,
        "label": target.label,
        "detail": target.detail,
        "server": record.get("state") if live else None,
        "server_message": record.get("message", "") if live else "",
    }


def _target(project: Project, spec: dict[str, int], field: str) -> Target:
    kind, pk = next(iter(spec.items()))
    try:
        return find_target(project, "model" if kind == "model" else "checkpoint", pk)
    except TargetError as exc:
        raise exceptions.ValidationError({field: [str(exc)]}) from None


class PlaygroundViewSet(ProjectScopedViewSet):
    """The playground of a project (no objects of its own: its state lives in Redis)."""

    queryset = Project.objects.all()
    pagination_class = None  # the models list is short (bounded by MAX_CHECKPOINTS)

    def get_serializer_class(self) -> Any:  # what OPTIONS describes
        return {"send": ExchangeCreateSerializer, "warm": WarmSerializer}.get(
            self.action, PlaygroundModelSerializer
        )

    @extend_schema(parameters=[PROJECT], responses={200: PlaygroundModelSerializer(many=True)})
    def models(self, request: Request) -> Response:
        """The project's models and its runs' reachable checkpoints, each with the state
        of its model server (null: not loaded). Viewers and up."""
        project = self.project_for(str(request.query_params.get("project", "")), Role.VIEWER)
        targets = project_targets(project)
        records = store.read_servers([t.server_id for t in targets])
        rows = [_row(t, records.get(t.server_id, {})) for t in targets]
        return Response(PlaygroundModelSerializer(rows, many=True).data)

    @extend_schema(request=WarmSerializer, responses={200: PlaygroundModelSerializer})
    def warm(self, request: Request) -> Response:
        """Load a model now (its server starts if none is up), so the first message is
        answered without the wait. Members and owners. 400 when no server may start: the
        model can't be loaded, or a running-job cap is reached (model servers count)."""
        data = WarmSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        project = self.project_for(data.validated_data["project"])
        target = _target(project, data.validated_data["target"], "target")
        try:
            record = ensure_server(target, signed_in_user(request).pk)
        except ServerRefused as exc:  # nothing was submitted to the cluster
            raise exceptions.ValidationError({"target": [str(exc)]}) from None
        return Response(PlaygroundModelSerializer(_row(target, record)).data)

    @extend_schema(request=ExchangeCreateSerializer, responses={201: ExchangeSerializer})
    def send(self, request: Request) -> Response:
        """Send a message to one or two models (each with its own conversation so far);
        read their replies from the exchange's events. Members and owners."""
        data = ExchangeCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        project = self.project_for(v["project"])
        chats = [
            exchanges.Chat(_target(project, c["target"], f"chats.{i}.target"), c["messages"])
            for i, c in enumerate(v["chats"])
        ]
        if "sampling" in v:
            sampling = dict(v["sampling"])
        else:  # the defaults, as the serializer declares them
            defaults = SamplingSerializer(data={})
            defaults.is_valid(raise_exception=True)
            sampling = dict(defaults.validated_data)
        user = signed_in_user(request)
        exchange_id, replies = exchanges.send(project.pk, user.pk, chats, v["system"], sampling)
        body = {
            "id": exchange_id,
            "replies": [
                {"id": r.id, "target": r.target.key, "label": r.target.label, "state": r.state}
                for r in replies
            ],
        }
        return Response(ExchangeSerializer(body).data, status=status.HTTP_201_CREATED)

    @extend_schema(parameters=[EXCHANGE_ID], request=None, responses={204: None})
    def stop(self, request: Request, exchange_id: str) -> Response:
        """Stop the exchange's replies where they are. Members and owners."""
        record = store.read_exchange(exchange_id)
        project = Project.objects.filter(pk=int(record.get("project", 0))).first()
        if project is None or not has_role(project, request.user, Role.VIEWER):
            raise exceptions.NotFound("No such exchange.")
        self.require_role(project)
        store.ask_stop([r for r in record.get("reply_ids", "").split(",") if r])
        return Response(status=status.HTTP_204_NO_CONTENT)


class _ExchangeStream(_Stream):
    """An exchange's events from the first (the page asks with last_event_id=0); the
    stream ends after `end`, so a finished exchange holds no stream slot."""

    END = b"\nevent: end\n"

    def __init__(self, exchange_id: str) -> None:
        self.exchange_id = exchange_id
        self.channel = store.exchange_channel(exchange_id)
        self.ended = False

    def parse_live_key(self, raw: bytes) -> int:
        return int(raw)

    async def ready(self) -> tuple[int, bytes]:
        mark = store.last_event(self.exchange_id)
        return mark, sse_frames.frame("ready", {"last_event_id": str(mark)}, str(mark))

    async def replay(self, after: int) -> list[tuple[int, bytes]]:
        page = store.events_after(self.exchange_id, after, 200)
        self.ended = self.ended or any(self.END in frame for _, frame in page)
        return page

    async def _live(self, subscription: Any, mark: Any, loop: Any, slot: Any) -> Any:
        if self.ended:
            return
        async for frame in super()._live(subscription, mark, loop, slot):
            yield frame
            if self.END in frame:
                return


def _parse_number(text: str) -> int:
    if not text.strip().isdigit() or len(text.strip()) > 18:
        raise sse_frames.BadEventId(f"{text[:40]!r} is not an event id; expected a number")
    return int(text.strip())


class ExchangeEventsView(_AsyncStreamView):
    @extend_schema(
        parameters=[EXCHANGE_ID, *LAST_EVENT_ID_PARAMETERS],
        responses={(200, "text/event-stream"): event_stream(EXCHANGE_EVENTS)},
    )
    def get(self, request: Request, exchange_id: str) -> StreamResponse:
        """An exchange's replies as they are written: `reply-status` (loading, queued,
        generating), `chunk` (text from `offset`), `done` or `error` per reply, then
        `end`. Counts under the per-user limit of live streams. Viewers and up."""
        raise NotImplementedError  # served by `serve`

    @classmethod
    async def serve(cls, request: HttpRequest, **kwargs: Any) -> StreamResponse:
        exchange_id = str(kwargs["exchange_id"])

        def lookup(user: Any) -> _Stream | None:
            record = store.read_exchange(exchange_id)
            if not record or not has_role(int(record["project"]), user, Role.VIEWER):
                return None  # another project's exchange does not exist for this caller
            return _ExchangeStream(exchange_id)

        return await _serve(request, lookup, _parse_number)
