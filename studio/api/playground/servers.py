"""The model servers' endpoints (trainer/playground): redeem the job's one-time secret,
long-poll for the next chat request, report a state or a step of a reply.

No user authenticates here. A server proves itself with the token its bootstrap gave it
(`Authorization: Bearer rlp_...`), valid for its own server id only and only while the
studio's record is that job's (a replaced or released server gets 401 and exits).
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponse, JsonResponse
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import authentication, exceptions, permissions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.api.streams.streams import _AsyncStreamView
from studio.playground import exchanges, servers
from studio.playground.serializers import (
    ServerBootstrapSerializer,
    ServerReportAnswerSerializer,
    ServerReportSerializer,
    ServerSettingsSerializer,
)

SERVER_ID = OpenApiParameter(
    "server_id", str, OpenApiParameter.PATH, description="The model server's id."
)
MAX_WAIT_S = servers.POLL_SECONDS


class ServerIdentity:
    """`request.auth` of a model server's request: its id and the studio's record."""

    def __init__(self, server_id: str, record: dict[str, str]) -> None:
        self.server_id = server_id
        self.record = record


def _bearer(header: str) -> str:
    scheme, _, raw = header.partition(" ")
    return raw.strip() if scheme == "Bearer" else ""


class PlaygroundServerAuthentication(authentication.BaseAuthentication):
    """A model server's `rlp_` token, for the server id in the URL only."""

    def authenticate(self, request: Request) -> tuple[AnonymousUser, ServerIdentity] | None:
        raw = _bearer(authentication.get_authorization_header(request).decode("latin-1"))
        if not raw.startswith(servers.TOKEN_PREFIX):
            return None
        server_id = str(request.parser_context["kwargs"]["server_id"])
        record = servers.authenticate(server_id, raw)
        if record is None:
            raise exceptions.AuthenticationFailed(
                "This playground server token is not valid for this server (released, or "
                "replaced by a newer server)."
            )
        return AnonymousUser(), ServerIdentity(server_id, record)

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"


class PlaygroundServerScheme(OpenApiAuthenticationExtension):
    target_class = "studio.api.playground.servers.PlaygroundServerAuthentication"
    name = "playgroundServerToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A playground model server's token (rlp_…), for its server only",
        }


class IsThisServer(permissions.BasePermission):
    def has_permission(self, request: Request, view: APIView) -> bool:
        return isinstance(request.auth, ServerIdentity)


class ServerBootstrapView(APIView):
    authentication_classes: list[type[authentication.BaseAuthentication]] = []
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[SERVER_ID],
        request=ServerBootstrapSerializer,
        responses={200: ServerSettingsSerializer, 403: OpenApiResponse(description="Refused")},
    )
    def post(self, request: Request, server_id: str) -> Response:
        """Redeem the job's one-time secret for the server's token, the model folder the
        studio resolved and the server's settings. A second use is refused."""
        data = ServerBootstrapSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            answer = servers.bootstrap(server_id, data.validated_data["secret"])
        except servers.BootstrapRefused as exc:
            raise exceptions.PermissionDenied(str(exc)) from None
        return Response(ServerSettingsSerializer(answer).data)


class ServerReportView(APIView):
    authentication_classes = [PlaygroundServerAuthentication]
    permission_classes = [IsThisServer]

    @extend_schema(
        parameters=[SERVER_ID],
        request=ServerReportSerializer,
        responses={200: ServerReportAnswerSerializer},
    )
    def post(self, request: Request, server_id: str) -> Response:
        """The server's state (loading, ready, failed, released) or a step of a reply
        (start, chunk, done, error), published to the reply's exchange."""
        data = ServerReportSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        identity = request.auth
        assert isinstance(identity, ServerIdentity)  # IsThisServer let it through
        try:
            answer = exchanges.record_report(server_id, identity.record, data.validated_data)
        except exchanges.NotThisServers as exc:
            raise exceptions.PermissionDenied(str(exc)) from None
        return Response(ServerReportAnswerSerializer(answer).data)


def _error(status: int, code: str, message: str) -> JsonResponse:
    response = JsonResponse({"error": {"code": code, "message": message}}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = "Bearer"
    return response


class ServerNextView(_AsyncStreamView):
    authentication_classes = [PlaygroundServerAuthentication]
    permission_classes = [IsThisServer]

    @extend_schema(
        parameters=[
            SERVER_ID,
            OpenApiParameter("wait", float, description=f"Seconds to wait (at most {MAX_WAIT_S})."),
        ],
        responses={
            200: OpenApiResponse(description="The next chat request (JSON)."),
            204: OpenApiResponse(description="None came within `wait`."),
        },
    )
    def get(self, request: Request, server_id: str) -> HttpResponse:
        """The server's next chat request: a long poll, answered as soon as a message is
        sent to its model, or empty after `wait` seconds."""
        raise NotImplementedError  # served by `serve`

    @classmethod
    async def serve(cls, request: HttpRequest, **kwargs: Any) -> HttpResponse:
        if request.method != "GET":
            response = _error(405, "method_not_allowed", f'Method "{request.method}" not allowed.')
            response["Allow"] = "GET"
            return response
        server_id = str(kwargs["server_id"])
        raw = _bearer(request.headers.get("Authorization", ""))
        authenticate = sync_to_async(servers.authenticate, thread_sensitive=False)
        if not raw or await authenticate(server_id, raw) is None:
            return _error(401, "not_authenticated", "A valid playground server token is needed.")
        try:
            wait = min(max(float(request.GET.get("wait", MAX_WAIT_S)), 0.0), MAX_WAIT_S)
        except ValueError:
            return _error(400, "validation_error", "wait: a number of seconds.")
        next_request = await exchanges.next_request(server_id, wait)
        if next_request is None:
            return HttpResponse(status=204)
        return JsonResponse(next_request)
