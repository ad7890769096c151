"""The playground's request and response shapes (studio/api/playground/)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

SERVER_STATES = ["starting", "loading", "ready", "failed"]
REPLY_STATES = ["loading", "queued", "failed"]
MAX_MESSAGES = 200
MAX_CONTENT = 20_000
HEX_ID = r"^[0-9a-f]{32}$"


class TargetSerializer(serializers.Serializer):
    """A model of the project (`model`) or a checkpoint of one of its runs (`checkpoint`)."""

    model = serializers.IntegerField(required=False, min_value=1)
    checkpoint = serializers.IntegerField(required=False, min_value=1)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if len(attrs) != 1:
            raise serializers.ValidationError("Name exactly one of `model` or `checkpoint`.")
        return attrs


class MessageSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["user", "assistant"])
    content = serializers.CharField(max_length=MAX_CONTENT, allow_blank=True, trim_whitespace=False)


class SamplingSerializer(serializers.Serializer):
    temperature = serializers.FloatField(min_value=0.0, max_value=2.0, default=0.7)
    top_p = serializers.FloatField(min_value=0.01, max_value=1.0, default=0.95)
    max_new_tokens = serializers.IntegerField(min_value=1, default=256)
    min_new_tokens = serializers.IntegerField(
        min_value=0, default=0, help_text="The reply may not end before this many tokens."
    )
    seed = serializers.IntegerField(required=False, allow_null=True, min_value=0)

    def validate_max_new_tokens(self, value: int) -> int:
        limit = settings.RLSTUDIO_PLAYGROUND_MAX_NEW_TOKENS
        if value > limit:
            raise serializers.ValidationError(f"At most {limit} (got {value}).")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["min_new_tokens"] > attrs["max_new_tokens"]:
            raise serializers.ValidationError(
                {"min_new_tokens": [f"At most max_new_tokens ({attrs['max_new_tokens']})."]}
            )
        return attrs


class ChatSerializer(serializers.Serializer):
    target = TargetSerializer()
    messages = serializers.ListField(
        child=MessageSerializer(), min_length=1, max_length=MAX_MESSAGES
    )

    def validate_messages(self, value: list[dict[str, str]]) -> list[dict[str, str]]:
        if value[-1]["role"] != "user" or not value[-1]["content"].strip():
            raise serializers.ValidationError("The last message must be the user's, not empty.")
        return value


class ExchangeCreateSerializer(serializers.Serializer):
    project = serializers.SlugField()
    system = serializers.CharField(
        max_length=MAX_CONTENT, allow_blank=True, default="", trim_whitespace=False
    )
    sampling = SamplingSerializer(required=False)
    chats = serializers.ListField(child=ChatSerializer(), min_length=1, max_length=2)


class ReplySerializer(serializers.Serializer):
    id = serializers.CharField()
    target = serializers.CharField(help_text="`model:<id>` or `checkpoint:<id>`")
    label = serializers.CharField()  # type: ignore[assignment]
    state = serializers.ChoiceField(choices=REPLY_STATES)


class ExchangeSerializer(serializers.Serializer):
    id = serializers.CharField()
    replies = ReplySerializer(many=True)


class PlaygroundModelSerializer(serializers.Serializer):
    """A model or checkpoint the project can chat with, and its server's state."""

    key = serializers.CharField(help_text="`model:<id>` or `checkpoint:<id>`")
    kind = serializers.ChoiceField(choices=["model", "checkpoint"])
    id = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]
    detail = serializers.CharField()
    server = serializers.ChoiceField(
        choices=SERVER_STATES, allow_null=True, help_text="null: not loaded"
    )
    server_message = serializers.CharField(allow_blank=True)


class WarmSerializer(serializers.Serializer):
    project = serializers.SlugField()
    target = TargetSerializer()


class StopSerializer(serializers.Serializer):
    replies = serializers.ListField(
        child=serializers.RegexField(HEX_ID), min_length=1, max_length=2
    )


# --- the model server's ----------------------------------------------------------------
class ServerBootstrapSerializer(serializers.Serializer):
    secret = serializers.CharField(max_length=200)


class ServerSettingsSerializer(serializers.Serializer):
    token = serializers.CharField()
    model_path = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]
    idle_seconds = serializers.FloatField()
    poll_seconds = serializers.FloatField()
    chunk_interval_s = serializers.FloatField()
    threads = serializers.IntegerField()


REPLY_KINDS = ("start", "chunk", "done", "error")
NEEDS = {
    "start": ("prompt_tokens",),
    "chunk": ("offset", "text"),
    "done": ("offset", "finish_reason", "tokens", "seconds", "first_token_s"),
    "error": ("message",),
}


class ServerReportSerializer(serializers.Serializer):
    """What a model server reports: its own state, or a step of one reply."""

    kind = serializers.ChoiceField(choices=["loading", "ready", "failed", "released", *REPLY_KINDS])
    exchange = serializers.RegexField(HEX_ID, required=False)
    reply = serializers.RegexField(HEX_ID, required=False)
    prompt_tokens = serializers.IntegerField(required=False, min_value=0)
    offset = serializers.IntegerField(required=False, min_value=0)
    text = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False, max_length=1_000_000
    )
    finish_reason = serializers.ChoiceField(
        choices=["eos", "length", "stop", "stopped"], required=False
    )
    tokens = serializers.IntegerField(required=False, min_value=0)
    seconds = serializers.FloatField(required=False, min_value=0)
    first_token_s = serializers.FloatField(required=False, min_value=0)
    message = serializers.CharField(required=False, allow_blank=True, max_length=4000)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        kind = attrs["kind"]
        if kind in REPLY_KINDS:
            missing = [f for f in ("exchange", "reply", *NEEDS[kind]) if f not in attrs]
            if missing:
                raise serializers.ValidationError(
                    {name: [f"Required for a `{kind}` report."] for name in missing}
                )
        return attrs


class ServerReportAnswerSerializer(serializers.Serializer):
    stop = serializers.BooleanField(required=False, help_text="chunk: stop this reply")
    released = serializers.BooleanField(required=False, help_text="released: exit now")
