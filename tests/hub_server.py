"""A local HTTP server that serves model folders the way the Hugging Face hub does: the
revision's file list at `/api/models/<id>/revision/<rev>` and each file at
`/<id>/resolve/<rev>/<file>`. Files are sent in small pieces at a bounded rate, so a
download takes long enough for its progress to be seen."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PIECE = 256 * 1024


@dataclass
class FakeHub:
    url: str
    repos: dict[str, Path]  # repo id -> folder
    requests: list[str]


@contextmanager
def fake_hub(repos: dict[str, Path], bytes_per_s: float = 8e6) -> Iterator[FakeHub]:
    served: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.append(self.path)
            for repo, folder in repos.items():
                listing = f"/api/models/{repo}/revision/main"
                if self.path == listing:
                    siblings = [
                        {"rfilename": p.name, "size": p.stat().st_size}
                        for p in sorted(folder.iterdir())
                        if p.is_file()
                    ]
                    return self._send(json.dumps({"sha": "0" * 40, "siblings": siblings}).encode())
                prefix = f"/{repo}/resolve/main/"
                if self.path.startswith(prefix) and (folder / self.path[len(prefix) :]).is_file():
                    return self._send((folder / self.path[len(prefix) :]).read_bytes(), slow=True)
            self.send_response(404)
            self.end_headers()

        def _send(self, body: bytes, slow: bool = False) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for start in range(0, len(body), PIECE):
                self.wfile.write(body[start : start + PIECE])
                if slow:
                    time.sleep(PIECE / bytes_per_s)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield FakeHub(f"http://127.0.0.1:{server.server_address[1]}", repos, served)
    finally:
        server.shutdown()
