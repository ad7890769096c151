"""The trainer fetches a studio-launched run's dataset by URL with its run token."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from trainer.data.remote import RemoteDataError, local_copy

BODY = b"PAR1 pretend parquet bytes PAR1"


class Studio(BaseHTTPRequestHandler):
    """The ingest dataset endpoint in miniature: parquet for the right token only."""

    requests: list[str] = []

    tokens: list[str | None] = []

    def do_GET(self) -> None:
        Studio.requests.append(self.path)
        Studio.tokens.append(self.headers.get("Authorization"))
        if self.headers.get("Authorization") != "Bearer rli_good":
            self.send_response(401)
            self.end_headers()
            self.wfile.write(b'{"error": "Invalid ingest token."}')
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def studio(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    monkeypatch.setenv("RLSTUDIO_DATA_CACHE", str(tmp_path / "cache"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Studio)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Studio.requests = []
    Studio.tokens = []
    url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("RLSTUDIO_URL", url)
    yield url
    server.shutdown()


def test_a_url_is_downloaded_once_with_the_run_token(studio: str, monkeypatch):
    monkeypatch.setenv("RLSTUDIO_RUN_TOKEN", "rli_good")
    url = f"{studio}/api/ingest/runs/7/dataset?split=train"

    first = local_copy(url)
    second = local_copy(url)

    assert first == second
    assert first.endswith(".parquet")  # the readers pick a format by suffix
    assert Path(first).read_bytes() == BODY
    assert Studio.requests == ["/api/ingest/runs/7/dataset?split=train"]
    assert not [p for p in Path(first).parent.iterdir() if p.name.startswith(".part-")]


def test_a_refused_token_is_a_clear_error_without_retries(studio: str, monkeypatch):
    monkeypatch.setenv("RLSTUDIO_RUN_TOKEN", "rli_revoked")
    url = f"{studio}/api/ingest/runs/7/dataset?split=train"

    with pytest.raises(RemoteDataError, match="HTTP 401: .*Invalid ingest token"):
        local_copy(url)

    assert len(Studio.requests) == 1
    assert "rli_revoked" not in str(Studio.requests)


def test_the_run_token_goes_to_the_studio_only(studio: str, monkeypatch):
    monkeypatch.setenv("RLSTUDIO_RUN_TOKEN", "rli_good")
    # Another server (another port of the same host): a config naming it must not get the
    # token, so it can neither read the run's data nor impersonate its trainer.
    monkeypatch.setenv("RLSTUDIO_URL", "http://127.0.0.1:1")
    with pytest.raises(RemoteDataError, match="HTTP 401"):
        local_copy(f"{studio}/elsewhere.parquet")
    assert Studio.tokens == [None]


def test_local_paths_are_left_alone(tmp_path: Path):
    assert local_copy("var/demo-data/arith/train.parquet") == "var/demo-data/arith/train.parquet"
