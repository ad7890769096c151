"""Posting a project's notifications to its webhook, without becoming a way into the
studio's own network.

A webhook URL is typed by a project owner, so it is untrusted: it must be http(s), and
every address its host resolves to must be public, unless the operator lists the host
in `RLSTUDIO_WEBHOOK_ALLOWED_HOSTS` (a chat server on the private network, or the test
sink on loopback). The check runs when the URL is saved and again before each post, and
the post connects to the address that was checked (never a second lookup a rebinding
DNS server could answer differently). Redirects are not followed, the answer's body is
not read, and each post has a short time limit.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from typing import Any
from urllib.parse import urlsplit

import urllib3
from django.conf import settings


class WebhookRefused(ValueError):
    """The URL may not be posted to; the message says why."""


def _allowed_hosts() -> set[str]:
    return {h.strip().lower() for h in settings.RLSTUDIO_WEBHOOK_ALLOWED_HOSTS if h.strip()}


def checked_address(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, the IP to connect to) of a URL that may be posted to;
    `WebhookRefused` otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebhookRefused("A webhook URL starts with http:// or https:// and names a host.")
    if parts.username or parts.password:
        raise WebhookRefused("A webhook URL may not carry a user name or password.")
    host = parts.hostname.lower()
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise WebhookRefused(f"The webhook's host {host!r} does not resolve: {exc}.") from None
    addresses = sorted({str(info[4][0]) for info in found})
    if host not in _allowed_hosts():
        for address in addresses:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
            if not ip.is_global:
                raise WebhookRefused(
                    f"The webhook's host {host!r} is a private address ({address}): "
                    "only public hosts, or those the operator allows "
                    "(RLSTUDIO_WEBHOOK_ALLOWED_HOSTS)."
                )
    return parts.scheme, host, port, addresses[0]


def post_json(url: str, body: dict[str, Any]) -> int:
    """POST `body` to the webhook; its HTTP status. Raises `WebhookRefused` for a URL
    that may not be posted to and `urllib3` errors for a failed connection."""
    scheme, host, port, address = checked_address(url)
    # Small by construction (studio.projects.notify bounds the title and detail): cutting
    # the encoded JSON would only make it invalid.
    data = json.dumps(body, ensure_ascii=False).encode()
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    timeout = urllib3.Timeout(total=settings.RLSTUDIO_WEBHOOK_TIMEOUT_S)
    headers = {"Content-Type": "application/json", "Host": host}
    if scheme == "https":
        pool: urllib3.HTTPConnectionPool = urllib3.HTTPSConnectionPool(
            address, port, timeout=timeout, retries=False, server_hostname=host,
            assert_hostname=host,
        )  # fmt: skip
    else:
        pool = urllib3.HTTPConnectionPool(address, port, timeout=timeout, retries=False)
    with pool:
        response = pool.urlopen(
            "POST", path, body=data, headers=headers, redirect=False, preload_content=False
        )
        response.release_conn()
        return int(response.status)
