"""A loopback retriever speaking verl's retrieval server API, with canned passages."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PASSAGES = [
    {"document": {"contents": "Paris\nParis is the capital of France."}, "score": 0.9},
    {"document": {"contents": "France\nFrance is a country in Europe."}, "score": 0.5},
]


@dataclass
class Retriever:
    url: str
    requests: list[Any] = field(default_factory=list)
    status: int = 200  # what the next answers say
    delay_s: float = 0.0


@contextmanager
def retriever_stub() -> Iterator[Retriever]:
    stub = Retriever(url="")
    done = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            stub.requests.append(body)
            done.wait(stub.delay_s)
            answer = {"result": [PASSAGES[: body["topk"]] for _ in body["queries"]]}
            data = json.dumps(answer).encode()
            self.send_response(stub.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    stub.url = f"http://127.0.0.1:{server.server_address[1]}/retrieve"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield stub
    finally:
        done.set()
        server.shutdown()
        server.server_close()
