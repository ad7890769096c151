"""The uploader: a background thread that sends the spool to the studio in batches.

It always reads from the spool file (never from an in-memory queue), so the memory it
holds is one batch, however long the studio is unreachable; the spool keeps the rest.

What a reply means for a batch (docs/telemetry.md, "Trainer side"):
- 2xx: stored (the studio skips seqs it already has, so a re-send is harmless).
- connection error, timeout, 408, 429, 5xx: transient; retry the same batch (same
  seqs) with exponential back-off and jitter, for as long as training runs.
- 401, 403, 404, 3xx: the token, run or URL is refused; every later batch would be
  too, so this process stops sending and leaves the spool for `trainer spool-send`.
- other 4xx (400, 413, 422, ...): this batch is refused. It is split in halves until
  the refused records stand alone; those are logged, written to the `.rejected` file
  and skipped, the rest is stored. A batch is never retried forever.
"""

from __future__ import annotations

import enum
import logging
import random
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import requests

from trainer.config.schema import LoggingConfig
from trainer.reporting.spool import SAFE_NAME, Spool, SpoolEntry

log = logging.getLogger(__name__)

DETAIL_CHARS = 300  # of a refusal's response body, in logs
# Of a flush's time limit, kept back for the thread to notice its deadline and stop, so
# that the flush as a whole (the stop included) stays within the limit it was given.
JOIN_GRACE_S = 0.25


class TargetError(ValueError):
    """The studio to report to is misconfigured (URL, run id, attempt or token)."""


@dataclass(frozen=True)
class IngestTarget:
    url: str  # base URL of the studio, e.g. http://127.0.0.1:8000
    run_id: str
    attempt: int
    token: str = field(repr=False)  # never in logs or reprs

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise TargetError(f"studio URL must be http(s)://host[:port], got {self.url!r}")
        if not self.token or len(self.token) > 512 or any(c.isspace() for c in self.token):
            raise TargetError("run token must be 1-512 characters without spaces")
        if self.attempt < 1:
            raise TargetError(f"attempt must be >= 1, got {self.attempt}")
        if not SAFE_NAME.match(self.run_id):
            raise TargetError(
                f"run id must be 1-64 characters from A-Z a-z 0-9 _ . -, got {self.run_id!r}"
            )

    @property
    def records_url(self) -> str:
        return f"{self.url.rstrip('/')}/api/ingest/runs/{self.run_id}/records"


class Verdict(enum.Enum):
    STORED = "stored"
    RETRY = "retry"  # transient: same batch again after a back-off
    REJECTED = "rejected"  # this batch is refused for good
    REFUSED = "refused"  # the token/run/URL is refused: stop sending


@dataclass(frozen=True)
class Reply:
    verdict: Verdict
    detail: str = ""
    retry_after: float | None = None


def classify(status: int) -> Verdict:
    if 200 <= status < 300:
        return Verdict.STORED
    if status in (408, 429) or status >= 500:
        return Verdict.RETRY
    if status in (401, 403, 404) or 300 <= status < 400:
        return Verdict.REFUSED
    return Verdict.REJECTED


def batch_body(attempt: int, entries: list[SpoolEntry]) -> bytes:
    """The request body, spliced from the spooled JSON (no re-encoding)."""
    return b'{"attempt":%d,"records":[%s]}' % (attempt, b",".join(e.body for e in entries))


class IngestClient:
    """POSTs batches of records to the studio's ingest endpoint (keep-alive session)."""

    def __init__(self, target: IngestTarget) -> None:
        self.target = target
        self.session = requests.Session()
        self.session.headers.update(
            {
                "Authorization": f"Bearer {target.token}",
                "Content-Type": "application/json",
                "User-Agent": "rlstudio-trainer",
            }
        )

    def post(self, body: bytes, timeout: float) -> Reply:
        """POST one batch body (from `batch_body`); never raises for network trouble."""
        try:
            response = self.session.post(
                self.target.records_url,
                data=body,
                timeout=(min(timeout, 5.0), timeout),
                allow_redirects=False,  # a redirected POST becomes a GET: refuse instead
            )
        except requests.RequestException as exc:
            return Reply(Verdict.RETRY, f"{type(exc).__name__}: {exc}")
        verdict = classify(response.status_code)
        detail = f"HTTP {response.status_code}"
        if verdict is not Verdict.STORED:
            detail += f": {response.text[:DETAIL_CHARS]}"
        if 300 <= response.status_code < 400:
            detail += f" (redirect to {response.headers.get('Location', '?')}: fix the URL)"
        return Reply(verdict, detail, retry_after_seconds(response.headers.get("Retry-After")))

    def close(self) -> None:
        self.session.close()


def retry_after_seconds(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: fall back to our own back-off


def backoff_delay(failures: int, base: float, cap: float, rng: random.Random) -> float:
    """Exponential back-off with "equal jitter": half fixed, half random, so retries of
    many trainers spread out but none retries immediately."""
    ceiling = min(cap, base * 2 ** min(failures - 1, 30))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


@dataclass(frozen=True)
class UploadLimits:
    max_records: int = 500
    max_bytes: int = 1 << 20
    request_timeout_s: float = 10.0
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0

    @classmethod
    def from_config(cls, cfg: LoggingConfig) -> UploadLimits:
        return cls(
            max_records=cfg.upload_batch_records,
            max_bytes=cfg.upload_batch_bytes,
            request_timeout_s=cfg.upload_timeout_s,
            backoff_max_s=cfg.upload_max_backoff_s,
        )


@dataclass
class UploadStats:
    batches: int = 0
    records: int = 0
    retries: int = 0
    rejected: int = 0
    refused: str = ""  # why sending stopped for good, empty while it goes on


class Uploader:
    """Sends durable spool records in order, settling each batch before the next."""

    def __init__(
        self,
        spool: Spool,
        client: IngestClient,
        limits: UploadLimits,
        rng: random.Random | None = None,
    ) -> None:
        self.spool = spool
        self.client = client
        self.limits = limits
        self.rng = rng or random.Random()
        self.stats = UploadStats()
        self._offset = spool.read_offset
        self._deadline: float | None = None  # set by finish(): give up sending past it
        self._wakeup = threading.Event()
        self._thread = threading.Thread(target=self._run, name="studio-upload", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def finish(self, timeout: float) -> bool:
        """Send what is durable now, returning within `timeout` seconds; True when all
        was settled. Sending stops a grace before the limit (a quarter of it at most) and
        requests started from now on are cut to the time left; one already in flight may
        outlive the deadline, and is then abandoned (the thread is a daemon, the spool
        keeps its records)."""
        timeout = max(0.0, timeout)
        started = time.monotonic()
        self._deadline = started + timeout - min(JOIN_GRACE_S, timeout / 4)
        self._wakeup.set()
        self.spool.wake()
        self._thread.join(max(0.0, started + timeout - time.monotonic()))
        self.client.close()
        return not self._thread.is_alive() and self.spool.fully_acked

    def wait_until_acked(self, seq: int, timeout: float) -> bool:
        """For tests and `spool-send`: wait until every record up to `seq` is settled."""
        end = time.monotonic() + timeout
        while self.spool.acked_through < seq:
            if time.monotonic() >= end or not self._thread.is_alive():
                return self.spool.acked_through >= seq
            time.sleep(0.01)
        return True

    def _time_left(self) -> float | None:
        return None if self._deadline is None else self._deadline - time.monotonic()

    def _run(self) -> None:
        try:
            self._loop()
        except Exception:  # a bug here must not take training down; the spool keeps all
            log.exception("studio uploader stopped; records stay in %s", self.spool.paths.data)

    def _loop(self) -> None:
        while not self.stats.refused:
            left = self._time_left()
            if left is not None and left <= 0:
                return
            batch = self.spool.read_batch(
                self._offset, self.limits.max_records, self.limits.max_bytes
            )
            if not batch.entries:
                if batch.end > self._offset:  # only damaged lines: step over them
                    self._offset = batch.end
                elif left is not None:
                    return  # finishing, and everything durable is settled
                else:
                    self.spool.wait_for_data(
                        self._offset, timeout=1.0, interrupted=lambda: self._deadline is not None
                    )
                continue
            if not self._deliver(batch.entries):
                return
            self._offset = batch.end

    def _deliver(self, entries: list[SpoolEntry]) -> bool:
        """Settle `entries`: True once stored or refused for good; False when this
        process must stop sending (deadline passed, or the token is refused)."""
        failures = 0
        # One body for every retry of this batch: a failed request stays referenced
        # from its exception's reference cycle until the garbage collector runs, so a
        # fresh copy per retry piled up (five 400 KB bodies at once in an outage test).
        body = batch_body(self.client.target.attempt, entries)
        while True:
            left = self._time_left()
            if left is not None and left <= 0:
                return False
            timeout = (
                self.limits.request_timeout_s
                if left is None
                else min(self.limits.request_timeout_s, left)
            )
            reply = self.client.post(body, timeout)
            if reply.verdict is Verdict.STORED:
                if failures:
                    log.info("studio reachable again after %d failed tries", failures)
                self.spool.ack(entries[-1].seq)
                self.stats.batches += 1
                self.stats.records += len(entries)
                return True
            if reply.verdict is Verdict.REFUSED:
                self.stats.refused = reply.detail
                log.error(
                    "studio refused run %s attempt %s (%s); stopping uploads, records stay in %s",
                    self.client.target.run_id,
                    self.client.target.attempt,
                    reply.detail,
                    self.spool.paths.data,
                )
                return False
            if reply.verdict is Verdict.REJECTED:
                return self._split_rejected(entries, reply)
            failures += 1
            self.stats.retries += 1
            delay = backoff_delay(
                failures, self.limits.backoff_base_s, self.limits.backoff_max_s, self.rng
            )
            if reply.retry_after is not None:
                delay = min(max(delay, reply.retry_after), self.limits.backoff_max_s)
            level = logging.WARNING if failures == 1 else logging.DEBUG
            log.log(
                level, "studio upload failed (%s); retry %d in %.1fs", reply.detail, failures, delay
            )
            self._sleep(delay)

    def _split_rejected(self, entries: list[SpoolEntry], reply: Reply) -> bool:
        if len(entries) > 1:
            # One bad record fails its whole request (the studio stores nothing of it):
            # halve until the bad ones stand alone, so good neighbours still get stored.
            middle = len(entries) // 2
            return self._deliver(entries[:middle]) and self._deliver(entries[middle:])
        (entry,) = entries
        log.error(
            "studio rejected record seq %d (%s); skipped, kept in %s",
            entry.seq,
            reply.detail,
            self.spool.paths.rejected,
        )
        with open(self.spool.paths.rejected, "ab") as handle:
            handle.write(entry.body + b"\n")
        self.spool.ack(entry.seq)
        self.stats.rejected += 1
        return True

    def _sleep(self, delay: float) -> None:
        """Back off, but wake at once when finish() starts the final flush (one prompt
        retry), and never past the deadline."""
        left = self._time_left()
        if left is not None:
            delay = min(delay, max(0.0, left))
        if self._wakeup.wait(delay):
            self._wakeup.clear()
