"""A studio-launched trainer redeems its job's one-time secret, read from the file the
launcher wrote (and deleted once read): its token goes to its own environment, its reward
code to a file only its user can read, and the secret's path leaves the environment so no
child process inherits it."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from trainer.playground.link import LinkError, StudioLink
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


def secret_file(folder: Path, secret: str) -> Path:
    path = folder / ".bootstrap-a2"
    path.write_text(secret)
    path.chmod(0o600)
    return path


def env_for(url: str, secret_path: Path) -> dict[str, str]:
    return {
        "RLSTUDIO_URL": url,
        "RLSTUDIO_RUN_ID": "7",
        "RLSTUDIO_ATTEMPT": "2",
        "RLSTUDIO_BOOTSTRAP_FILE": str(secret_path),
    }


def test_the_secret_is_redeemed_once_for_the_token_config_and_private_reward_code(studio, tmp_path):
    url, seen = studio
    path = secret_file(tmp_path, "rlb_good")
    environ = env_for(url, path)

    launched = launch_from_studio(environ)

    assert seen == [
        {"path": "/api/ingest/runs/7/bootstrap", "auth": "Bootstrap rlb_good", "attempt": 2}
    ]
    assert not path.exists()  # read once: no later process of this account finds it
    assert environ["RLSTUDIO_RUN_TOKEN"] == "rli_t"
    assert "RLSTUDIO_BOOTSTRAP_FILE" not in environ  # no child process inherits it
    code = Path(launched.config["reward"]["custom_path"])
    assert code.read_text() == CODE
    assert stat.S_IMODE(code.stat().st_mode) == 0o600
    assert stat.S_IMODE(code.parent.stat().st_mode) == 0o700


def test_the_secret_in_the_environment_is_taken_where_the_studio_sends_it_there(studio):
    # RLSTUDIO_BOOTSTRAP_VIA_ENV: a cluster that shares no filesystem with the studio.
    url, seen = studio
    environ = {k: v for k, v in env_for(url, Path("-")).items() if "FILE" not in k}
    environ["RLSTUDIO_BOOTSTRAP"] = "rlb_good"

    launch_from_studio(environ)

    assert seen[0]["auth"] == "Bootstrap rlb_good"
    assert "RLSTUDIO_BOOTSTRAP" not in environ


def test_a_refused_or_missing_secret_is_a_clear_error(studio, tmp_path):
    url, _ = studio
    with pytest.raises(BootstrapError, match="HTTP 403"):
        launch_from_studio(env_for(url, secret_file(tmp_path, "rlb_wrong")))
    with pytest.raises(BootstrapError, match="needs RLSTUDIO_BOOTSTRAP_FILE"):
        launch_from_studio({"RLSTUDIO_URL": url})
    gone = tmp_path / "gone"
    with pytest.raises(BootstrapError, match=f"{gone} can't be read.*RLSTUDIO_TRAINER_OS_USER"):
        launch_from_studio(env_for(url, gone))


def test_a_symlink_in_place_of_the_secret_file_is_refused(studio, tmp_path):
    url, seen = studio
    target = secret_file(tmp_path, "rlb_good")
    link = tmp_path / "link"
    os.symlink(target, link)

    with pytest.raises(BootstrapError, match="can't be read"):
        launch_from_studio(env_for(url, link))

    assert seen == [] and target.exists()


def test_a_model_server_takes_its_secret_from_its_file_as_a_trainer_does(tmp_path):
    path = secret_file(tmp_path, "rlb_server")
    environ = {
        "RLSTUDIO_URL": "http://studio.example",
        "RLSTUDIO_PLAYGROUND_SERVER": "p1-m2",
        "RLSTUDIO_BOOTSTRAP_FILE": str(path),
    }

    link, secret = StudioLink.from_env(environ)

    assert secret == "rlb_server" and not path.exists()
    assert link.base == "http://studio.example/api/playground/servers/p1-m2"
    assert "RLSTUDIO_BOOTSTRAP_FILE" not in environ
    with pytest.raises(LinkError, match="needs RLSTUDIO_BOOTSTRAP_FILE"):
        StudioLink.from_env({k: v for k, v in environ.items() if "FILE" not in k})
