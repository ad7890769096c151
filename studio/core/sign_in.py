"""Where every password sign-in meets the login limits (studio.core.login_limits).

Every sign-in path checks its password through `authenticate()`, which asks the
authentication backends: the API's session login, the admin's login page, and any login
form added later. So the limits sit in the one backend, not in each view, and a new path
can't miss them. A refusal is a 429: DRF's views render it in the API's error format;
`LoginLimitMiddleware` renders it for the others (the admin's page).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html

from studio.core import login_limits


class LimitedModelBackend(ModelBackend):
    """Django's username and password check, admitted by the login limits first."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if username is None or password is None:
            return None  # not a password sign-in: nothing to count
        address = login_limits.client_address(request) if request is not None else None
        login_limits.admit(address, username)
        user = super().authenticate(request, username, password, **kwargs)
        if user is not None:
            login_limits.succeeded(username)
        return user

    async def aauthenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        # ModelBackend's own async check would skip the limits.
        return await sync_to_async(self.authenticate)(request, username, password, **kwargs)


REFUSALS = (login_limits.LoginLimited, login_limits.SignInUnavailable)


class LoginLimitMiddleware:
    """A refused sign-in in a view outside DRF (the admin's login page): a short page
    saying why and for how long, with the status and Retry-After of the API's answer."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, REFUSALS):
            return None
        page = format_html(
            "<!doctype html><html><head><title>Sign-in refused</title></head>"
            "<body><h1>Sign-in refused</h1><p>{}</p></body></html>",
            str(exception.detail),
        )
        response = HttpResponse(page, status=exception.status_code)
        wait = getattr(exception, "wait", None)
        if wait:
            response["Retry-After"] = str(int(wait))
        return response
