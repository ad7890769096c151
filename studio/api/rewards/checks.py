"""Check reward code without running it: the problems a save would refuse, each with
the line and column an editor marks. Any signed-in user; nothing is stored or run."""

from __future__ import annotations

from dataclasses import asdict

from drf_spectacular.utils import extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.rewards.check_serializers import RewardCheckRequestSerializer, RewardCheckSerializer
from studio.rewards.checks import problems_in


class RewardCheckView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=RewardCheckRequestSerializer, responses=RewardCheckSerializer)
    def post(self, request: Request) -> Response:
        """Syntax errors (line and column), a missing entry point, `async def`, and an
        entry point verl can't call by keyword, as line-addressed problems."""
        data = RewardCheckRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        problems = problems_in(data.validated_data["code"], data.validated_data["entrypoint"])
        return Response({"ok": not problems, "problems": [asdict(p) for p in problems]})
