"""Loopback sinks for notifications: a webhook receiver keeping every JSON body posted to
it, and a mail server keeping every message it is given (the SMTP dialogue's few verbs
a client uses, nothing relayed)."""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Sink:
    url: str
    port: int
    received: list[Any] = field(default_factory=list)


@contextmanager
def _serving(server: socketserver.BaseServer) -> Iterator[None]:
    """Serve on a thread until the block ends."""
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def webhook_sink() -> Iterator[Sink]:
    sink = Sink(url="", port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            sink.received.append(json.loads(self.rfile.read(length)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    sink.port = server.server_address[1]
    sink.url = f"http://127.0.0.1:{sink.port}/hooks/studio"
    with _serving(server):
        yield sink


@contextmanager
def mail_sink() -> Iterator[Sink]:
    """Messages as {"from": str, "to": [str], "data": str}."""
    sink = Sink(url="", port=0)

    class Handler(socketserver.StreamRequestHandler):
        def reply(self, line: str) -> None:
            self.wfile.write(f"{line}\r\n".encode())

        def handle(self) -> None:
            message: dict[str, Any] = {"from": "", "to": []}
            self.reply("220 sink")
            while line := self.rfile.readline().decode(errors="replace"):
                verb = line[:4].upper()
                if verb in ("EHLO", "HELO"):
                    self.reply("250 sink")
                elif verb == "MAIL":
                    message["from"] = line.split(":", 1)[1].strip()
                    self.reply("250 ok")
                elif verb == "RCPT":
                    message["to"].append(line.split(":", 1)[1].strip().strip("<>"))
                    self.reply("250 ok")
                elif verb == "DATA":
                    self.reply("354 go on")
                    lines = []
                    while (body := self.rfile.readline().decode(errors="replace")) != ".\r\n":
                        lines.append(body)
                    sink.received.append({**message, "data": "".join(lines)})
                    message = {"from": "", "to": []}
                    self.reply("250 kept")
                elif verb == "QUIT":
                    self.reply("221 bye")
                    return
                else:
                    self.reply("250 ok")

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    sink.port = server.server_address[1]
    with _serving(server):
        yield sink
