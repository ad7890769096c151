"""A tiny stand-in for the studio's ingest endpoint, for unit tests of the uploader.

A real local HTTP server (stdlib), not a mock: it stores records by (attempt, seq)
like the studio does (a seq it already has is a duplicate, skipped), and can be told
to fail the first K requests, to store and still answer 500, to reject batches holding
a poisoned record, or to refuse the token. The real endpoint is tested with the studio.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = "rli_test-token"


@dataclass
class StubBehaviour:
    fail_first: int = 0  # answer 503 to this many requests (nothing stored)
    store_then_fail: int = 0  # store, then answer 500 to this many requests (forces re-sends)
    refuse_with: int = 0  # answer every request with this status (e.g. 401)
    poison: Callable[[dict[str, Any]], bool] | None = None  # 400 if any record matches
    delay_s: float = 0.0  # before answering


@dataclass
class IngestStub:
    run_id: str = "7"
    behaviour: StubBehaviour = field(default_factory=StubBehaviour)
    port: int = 0
    records: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)
    requests: int = 0
    duplicates: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> IngestStub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status, reply = stub.handle(self.path, self.headers.get("Authorization"), body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def handle(self, path: str, auth: str | None, body: bytes) -> tuple[int, dict[str, Any]]:
        b = self.behaviour
        if b.delay_s:
            time.sleep(b.delay_s)
        with self.lock:
            self.requests += 1
            if b.refuse_with:
                return b.refuse_with, {"detail": "refused"}
            if path != f"/api/ingest/runs/{self.run_id}/records" or auth != f"Bearer {TOKEN}":
                return 403, {"detail": f"wrong path or token: {path}"}
            if b.fail_first > 0:
                b.fail_first -= 1
                return 503, {"detail": "try later"}
            payload = json.loads(body)
            if b.poison and any(b.poison(r) for r in payload["records"]):
                return 400, {"detail": "records[i]: poisoned"}
            stored = duplicates = 0
            for record in payload["records"]:
                key = (payload["attempt"], record["seq"])
                if key in self.records:
                    duplicates += 1
                    assert self.records[key] == record, f"seq {key} re-sent with new content"
                else:
                    self.records[key] = record
                    stored += 1
            self.duplicates += duplicates
            if b.store_then_fail > 0:
                b.store_then_fail -= 1
                return 500, {"detail": "stored, but the reply failed"}
            last = max(s for a, s in self.records if a == payload["attempt"])
            return 200, {"stored": stored, "duplicates": duplicates, "last_seq": last}

    def seqs(self, attempt: int = 1) -> list[int]:
        with self.lock:
            return sorted(s for a, s in self.records if a == attempt)

    def of_kind(self, kind: str, attempt: int = 1) -> list[dict[str, Any]]:
        with self.lock:
            return [
                r
                for (a, _), r in sorted(self.records.items())
                if a == attempt and r["kind"] == kind
            ]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class BlackHole:
    """Accepts connections and never answers: the worst case for a flush deadline."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.sock.close()
