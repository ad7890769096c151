"""A studio-launched trainer redeems its job's one-time secret: its token goes to its own
environment, its reward code to a file only its user can read, and the secret leaves the
environment so no child process inherits it."""

from __future__ import annotations

import json
import stat
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from trainer.reporting.bootstrap import BootstrapError, launch_from_studio

CODE = "def compute_score(*args, **kwargs):\n    return 1.0\n"


@pytest.fixture
def studio() -> Iterator[tuple[str, list[dict]]]:
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "auth": self.headers["Authorization"], **body})
            if self.headers["Authorization"] != "Bootstrap rlb_good" or len(seen) > 1:
                self.send_response(403)
                self.end_headers()
                self.wfile.write(b'{"error": {"message": "already used"}}')
                return
            answer = {
                "token": "rli_t",
                "config": {"reward": {"function": "custom"}},
                "reward_code": CODE,
            }
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()


def env_for(url: str, secret: str) -> dict[str, str]:
    return {
        "RLSTUDIO_URL": url,
        "RLSTUDIO_RUN_ID": "7",
        "RLSTUDIO_ATTEMPT": "2",
        "RLSTUDIO_BOOTSTRAP": secret,
    }


def test_the_secret_is_redeemed_once_for_the_token_config_and_private_reward_code(studio):
    url, seen = studio
    environ = env_for(url, "rlb_good")

    launched = launch_from_studio(environ)

    assert seen == [
        {"path": "/api/ingest/runs/7/bootstrap", "auth": "Bootstrap rlb_good", "attempt": 2}
    ]
    assert environ["RLSTUDIO_RUN_TOKEN"] == "rli_t"
    assert "RLSTUDIO_BOOTSTRAP" not in environ  # no child process inherits it
    code = Path(launched.config["reward"]["custom_path"])
    assert code.read_text() == CODE
    assert stat.S_IMODE(code.stat().st_mode) == 0o600
    assert stat.S_IMODE(code.parent.stat().st_mode) == 0o700


def test_a_refused_secret_is_a_clear_error(studio):
    url, _ = studio
    with pytest.raises(BootstrapError, match="HTTP 403"):
        launch_from_studio(env_for(url, "rlb_wrong"))
    with pytest.raises(BootstrapError, match="needs RLSTUDIO_BOOTSTRAP"):
        launch_from_studio({"RLSTUDIO_URL": url})
