"""The ingest wire format (docs/telemetry.md), validated with size bounds.

Everything a trainer sends is untrusted: every string, list and map is bounded, numbers
are JSON numbers (no strings, no booleans), and the first problem is reported with the
record's index and field (`records[3].data.step`). Unknown fields are ignored, so a
newer trainer can add fields without being refused by an older studio.

Non-finite numbers: JSON has none, but Python's encoder writes `NaN`/`Infinity`, so they
are accepted on input. A non-finite metric value is dropped like `null`; a non-finite
sample score or advantage is stored as NaN (the API shows null).
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from trainer.reporting.startup import STUDIO_PHASES, TRAINER_PHASES
from trainer.rewards.sandbox.values import extra_problem

MAX_BODY_BYTES = 8 * 1024 * 1024
MAX_RECORDS = 2000
MAX_SEQ = 2**62  # seq is a 64-bit column; leave room so nobody overflows it by counting
MAX_STEP = 2**31 - 1  # steps are 32-bit columns
MAX_METRICS_PER_RECORD = 2000
MAX_METRIC_KEY = 200  # MetricPoint.key
MAX_SAMPLES_PER_RECORD = 8192  # a 512 KB record of short samples holds ~2,000
MAX_PROMPT = 200_000  # characters; bounded by the body size anyway
MAX_RESPONSE = 200_000
MAX_GROUND_TRUTH = 20_000
MAX_COMPONENTS = 64
MAX_TOKEN_SERIES = 8
MAX_TOKENS = 65_536
MAX_TOKEN_TEXT = 1_000  # one decoded token
MAX_MESSAGE = 65_536  # log lines and status details
MAX_PATH = 500  # Checkpoint.uri
MAX_TIME = 1e10  # unix seconds (year 2286): a garbled clock can't overflow datetimes
MAX_TURNS = 64  # per multi-turn episode
MAX_TOOL_CALLS = 16  # per assistant turn
MAX_ARGUMENTS_BYTES = 16_384  # one tool call's arguments, as compact JSON
MAX_ARGUMENTS_DEPTH = 32  # nesting of those arguments
LOSS_MASK = "mask"  # the token series that marks the policy's own tokens (1) in an episode


# Postgres text (and jsonb) can't hold NUL characters. In names a NUL is a bug and is
# refused; free text (a response a random-init model sampled byte 0 into, a decoded
# token) keeps everything else, with U+FFFD in place of each NUL.
def _no_nul(text: str) -> str:
    if "\x00" in text:
        raise ValueError("must not contain NUL characters (\\u0000)")
    return text


def _replace_nul(text: str) -> str:
    return text.replace("\x00", "\ufffd")


NoNul = AfterValidator(_no_nul)
FreeText = AfterValidator(_replace_nul)
Name = Annotated[str, Field(min_length=1, max_length=100), NoNul]
ShortText = Annotated[str, Field(max_length=100), NoNul]  # group ids, data sources
Label = Annotated[str, Field(min_length=1, max_length=16), NoNul]  # log levels
FinishReason = Annotated[str, Field(max_length=16), NoNul]
MetricKey = Annotated[str, Field(min_length=1, max_length=MAX_METRIC_KEY), NoNul]
CheckpointPath = Annotated[str, Field(min_length=1, max_length=MAX_PATH), NoNul]
Prompt = Annotated[str, Field(max_length=MAX_PROMPT), FreeText]
Response = Annotated[str, Field(max_length=MAX_RESPONSE), FreeText]
GroundTruth = Annotated[str, Field(max_length=MAX_GROUND_TRUTH), FreeText]
Message = Annotated[str, Field(max_length=MAX_MESSAGE), FreeText]
TokenText = Annotated[str, Field(max_length=MAX_TOKEN_TEXT), FreeText]
# A per-token series: ids (int), texts (str) or values (float; null when non-finite).
TokenSeries = Annotated[
    list[Annotated[int, Field(ge=-(2**53), le=2**53)] | float | TokenText | None],
    Field(max_length=MAX_TOKENS),
]
Step = Annotated[int, Field(ge=0, le=MAX_STEP)]
Length = Annotated[int, Field(ge=0, le=MAX_STEP)]


def _bounded_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments as the model wrote them: any JSON object, but small and
    shallow, with NULs replaced (jsonb can't hold them; a random model may write one)."""

    def clean(value: Any, depth: int) -> Any:
        if depth > MAX_ARGUMENTS_DEPTH:
            raise ValueError(f"nests deeper than {MAX_ARGUMENTS_DEPTH} levels")
        if isinstance(value, str):
            return _replace_nul(value)
        if isinstance(value, dict):
            return {_replace_nul(k): clean(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v, depth + 1) for v in value]
        if isinstance(value, float) and not math.isfinite(value):
            return None  # jsonb has no NaN or infinity
        return value

    cleaned: dict[str, Any] = clean(arguments, 1)
    size = len(json.dumps(cleaned, separators=(",", ":")).encode())
    if size > MAX_ARGUMENTS_BYTES:
        raise ValueError(f"is {size:,} bytes as JSON; at most {MAX_ARGUMENTS_BYTES:,} allowed")
    return cleaned


ToolArguments = Annotated[dict[str, Any], AfterValidator(_bounded_arguments)]


def _reward_extra(extra: dict[str, Any]) -> dict[str, Any]:
    """The reward's extra info, under the rules its dict return met in the trainer."""
    problem = extra_problem(extra)
    if problem:
        raise ValueError(problem)
    return extra


RewardExtra = Annotated[dict[str, Any], AfterValidator(_reward_extra)]


class Strict(BaseModel):
    """Every model of the wire format (studio.telemetry.ingest.openapi documents them)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class MetricsData(Strict):
    step: Step
    values: dict[MetricKey, float | None] = Field(max_length=MAX_METRICS_PER_RECORD)

    def finite_values(self) -> dict[str, float]:
        return {k: v for k, v in self.values.items() if v is not None and math.isfinite(v)}


class ToolCall(Strict):
    name: ShortText
    arguments: ToolArguments = Field(default_factory=dict)


TurnRole = Literal["assistant", "tool", "user"]
TURN_ROLES: tuple[str, ...] = get_args(TurnRole)


class Turn(Strict):
    """One turn of a multi-turn episode after the prompt (SampleRecord.turns)."""

    role: TurnRole
    content: Response
    tool_calls: list[ToolCall] | None = Field(None, max_length=MAX_TOOL_CALLS)
    name: ShortText | None = None  # the tool that answered (tool turns)
    error: Message | None = None  # the tool failed: what it said
    reward: float | None = Field(None, allow_inf_nan=False)


class SampleData(Strict):
    """trainer.reporting.base.SampleRecord, as `dataclasses.asdict` writes it."""

    step: Step
    group_id: ShortText
    data_source: ShortText
    prompt: Prompt
    response: Response
    ground_truth: GroundTruth = ""
    score: float | None
    components: dict[Name, float | None] = Field(default_factory=dict, max_length=MAX_COMPONENTS)
    reward_extra: RewardExtra = Field(default_factory=dict)
    advantage: float | None = 0.0
    prompt_length: Length = 0
    response_length: Length = 0
    finish_reason: FinishReason = ""
    error: Message = ""
    split: Literal["train", "val", "eval"] = "train"
    token_data: dict[Name, TokenSeries] | None = Field(None, max_length=MAX_TOKEN_SERIES)
    turns: list[Turn] | None = Field(None, max_length=MAX_TURNS)
    # The prompt's row in the run's data file (trainer.reporting.base.SampleRecord.row).
    row: int | None = Field(None, ge=0, le=2**31 - 1)

    @field_validator("token_data")
    @classmethod
    def _mask_marks_every_token(
        cls, token_data: dict[str, list[Any]] | None
    ) -> dict[str, list[Any]] | None:
        """The loss mask is 0/1 per token: the viewer greys the 0s (tool and user tokens)."""
        if token_data is None or LOSS_MASK not in token_data:
            return token_data
        mask = token_data[LOSS_MASK]
        for value in mask:
            if type(value) is not int or value not in (0, 1):
                raise ValueError(f"{LOSS_MASK}: every entry must be 0 or 1, got {value!r:.40}")
        texts_or_ids = [token_data[k] for k in ("tokens", "token_ids") if k in token_data]
        if texts_or_ids and len(texts_or_ids[0]) != len(mask):
            tokens = texts_or_ids[0]
            raise ValueError(
                f"{LOSS_MASK}: has {len(mask)} entries for {len(tokens)} tokens; "
                "it needs one per token"
            )
        return token_data

    def stored_turns(self) -> list[dict[str, Any]] | None:
        """The turns as the studio keeps them: only the keys a turn had."""
        if self.turns is None:
            return None
        return [turn.model_dump(exclude_none=True) for turn in self.turns]


class SamplesData(Strict):
    step: Step
    samples: list[SampleData] = Field(max_length=MAX_SAMPLES_PER_RECORD)


class LogData(Strict):
    level: Label
    message: Message


class CheckpointData(Strict):
    step: Step
    path: CheckpointPath


class StatusData(Strict):
    status: Literal["running", "succeeded", "failed", "cancelled"]
    detail: Message = ""


def _trainer_phases(phases: dict[str, float]) -> dict[str, float]:
    """Only the trainer's own phases: the studio marks the others itself."""
    for name in phases:
        if name in STUDIO_PHASES:
            raise ValueError(f"{name!r} is marked by the studio, not sent by the trainer")
        if name not in TRAINER_PHASES:
            raise ValueError(
                f"unknown startup phase {name[:40]!r}; allowed: {', '.join(TRAINER_PHASES)}"
            )
    return phases


PhaseTime = Annotated[float, Field(ge=0, le=MAX_TIME, allow_inf_nan=False)]  # unix seconds


class StartupData(Strict):
    """trainer.reporting.startup: when the trainer reached phases of its start."""

    phases: Annotated[
        dict[Name, PhaseTime],
        Field(min_length=1, max_length=len(TRAINER_PHASES)),
        AfterValidator(_trainer_phases),
    ]


class _Record(Strict):
    seq: Annotated[int, Field(ge=0, le=MAX_SEQ)]
    time: float = Field(ge=0, le=MAX_TIME)  # the trainer's clock, unix seconds


class MetricsRecord(_Record):
    kind: Literal["metrics"]
    data: MetricsData


class SamplesRecord(_Record):
    kind: Literal["samples"]
    data: SamplesData


class LogRecord(_Record):
    kind: Literal["log"]
    data: LogData


class CheckpointRecord(_Record):
    kind: Literal["checkpoint"]
    data: CheckpointData


class StatusRecord(_Record):
    kind: Literal["status"]
    data: StatusData


class StartupRecord(_Record):
    kind: Literal["startup"]
    data: StartupData


Record = Annotated[
    MetricsRecord | SamplesRecord | LogRecord | CheckpointRecord | StatusRecord | StartupRecord,
    Field(discriminator="kind"),
]
KINDS = ("metrics", "samples", "log", "checkpoint", "status", "startup")


class IngestBatch(Strict):
    """`POST /api/ingest/runs/{run_id}/records`: one upload of a trainer's spool."""

    attempt: Annotated[int, Field(ge=1, le=2**31 - 1)]
    records: list[Record] = Field(max_length=MAX_RECORDS)


class IngestResult(Strict):
    stored: int = Field(description="Records stored by this request.")
    duplicates: int = Field(description="Records skipped: already stored under their seq.")
    last_seq: int | None = Field(
        description="The highest seq now stored for this attempt (null: none yet)."
    )


class InvalidBatch(Exception):
    """The first problem of a batch, as (field path, message)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def parse_batch(body: bytes) -> IngestBatch:
    try:
        return IngestBatch.model_validate_json(body)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise InvalidBatch(_field_path(first), _message(first)) from None


def _field_path(error: Any) -> str:
    loc = list(error["loc"])
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        loc.append("kind")
    if loc and loc[-1] == "[key]":  # a bad map key: name the map, not the (long) key
        loc[-2:] = ["(key)"]
    path = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            path += f"[{part}]"
        elif i == 2 and loc[0] == "records" and part in KINDS:
            continue  # the union's tag pydantic puts in the path: the record's kind
        else:
            name = str(part) if len(str(part)) <= 60 else str(part)[:57] + "..."
            path += f".{name}" if path else name
    return path or "body"


def _message(error: Any) -> str:
    return str(error["msg"])
