"""One error format for the whole API, and the one place domain errors become HTTP.

{"error": {"code": "validation_error", "message": "first problem, in words",
           "fields": {"config.actor.lr": ["..."]}}}

The services raise their own errors (a run's refused transition, a config it can't
resolve); `DOMAIN_ERRORS` maps each to the API error a view would raise, so views call
services without translating what they raise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from studio.runs.configs import InvalidConfig
from studio.runs.deletion import RunHeld
from studio.runs.lifecycle import TransitionRefused
from studio.runs.quota import StorageQuotaExceeded


def _first_message(detail: Any) -> str:
    if isinstance(detail, dict):
        for key, value in detail.items():
            message = _first_message(value)
            return message if key in ("detail", "non_field_errors") else f"{key}: {message}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)


class Conflict(exceptions.APIException):
    """The object's state or its users forbid the change (409); the message says which."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"
    default_detail = "This object is in use."


class PayloadTooLarge(exceptions.APIException):
    status_code = 413
    default_code = "payload_too_large"
    default_detail = "The request body is larger than this endpoint accepts."


class QuotaExceeded(exceptions.APIException):
    """The project is at or over its storage quota (studio.runs.quota). A 400, not 507:
    the caller fixes it (deletes runs), and a 5xx reads as the server's fault to clients
    and proxies that retry; not 403, which reads as a missing role."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "storage_quota_exceeded"
    default_detail = "The project is at or over its storage quota."


def _refused(exc: Exception) -> exceptions.APIException:
    return Conflict(str(exc))


def _invalid_config(exc: Exception) -> exceptions.APIException:
    assert isinstance(exc, InvalidConfig)
    return exceptions.ValidationError(exc.errors)  # keyed by config path or request field


# Domain error -> the API error it is answered with (the first class `exc` is an instance of).
DOMAIN_ERRORS: dict[type[Exception], Callable[[Exception], exceptions.APIException]] = {
    TransitionRefused: _refused,  # the run's status (or kind) does not allow the action
    RunHeld: _refused,  # a model or an evaluation uses the run
    InvalidConfig: _invalid_config,
    StorageQuotaExceeded: lambda exc: QuotaExceeded(str(exc)),
}


def _as_api_error(exc: Exception) -> Exception:
    for error, answer in DOMAIN_ERRORS.items():
        if isinstance(exc, error):
            return answer(exc)
    return exc


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    exc = _as_api_error(exc)
    # Django's own 404/403 (get_object_or_404, ...) get the same codes as DRF's, and a body
    # over DATA_UPLOAD_MAX_MEMORY_SIZE a 413 in our format instead of a bare 400 page.
    if isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge(f"{exc} Send a smaller body or upload a file instead.")
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        code = "validation_error"
    elif isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else exc.default_code
    else:
        code = "error"
    body: dict[str, Any] = {"code": code, "message": _first_message(response.data)}
    if isinstance(exc, exceptions.ValidationError) and isinstance(response.data, dict):
        body["fields"] = response.data
    response.data = {"error": body}
    return response
