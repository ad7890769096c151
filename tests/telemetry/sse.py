"""A small Server-Sent-Events client for tests: parses frames as EventSource does."""

from __future__ import annotations

import contextlib
import http.client
import json
import queue
import socket
import threading
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Event:
    event: str
    data: Any
    id: str | None


def parse(text: str) -> list[Event]:
    """Every complete event of a stream's text (comments and `retry:` dropped)."""
    found: list[Event] = []
    for block in text.split("\n\n")[:-1]:  # the part after the last blank line is partial
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        if "event" in fields or "data" in fields:
            found.append(
                Event(fields.get("event", "message"), json.loads(fields["data"]), fields.get("id"))
            )
    return found


class Stream:
    """One live connection whose events a background thread reads into a queue, so a
    test can wait for the next one with a timeout; `cut()` drops the connection without
    a goodbye, like a network failure."""

    def __init__(self, url: str, path: str, headers: dict[str, str], timeout: float = 30) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
        self.conn.request("GET", path, headers={"Accept": "text/event-stream", **headers})
        self.response = self.conn.getresponse()
        self.comments: list[str] = []
        self._events: queue.Queue[Event | None] = queue.Queue()
        if self.response.status == 200:
            threading.Thread(target=self._read, daemon=True).start()

    @property
    def status(self) -> int:
        return self.response.status

    def next(self, timeout: float = 30) -> Event | None:
        """The next event; None when the stream ended or nothing came within `timeout`."""
        try:
            return self._events.get(timeout=timeout)
        except queue.Empty:
            return None

    def _read(self) -> None:
        fields: dict[str, str] = {}
        try:
            while raw := self.response.readline():
                line = raw.decode().rstrip("\n")
                if line.startswith(":"):
                    self.comments.append(line[1:].strip())
                elif line:
                    name, _, value = line.partition(": ")
                    fields[name] = value
                elif "event" in fields or "data" in fields:
                    data = json.loads(fields["data"])
                    self._events.put(Event(fields.get("event", "message"), data, fields.get("id")))
                    fields = {}
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            pass  # cut (close races the read), or the server went away: the stream is over
        finally:
            self._events.put(None)

    def cut(self) -> None:
        sock = self.conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # already gone
                sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()
