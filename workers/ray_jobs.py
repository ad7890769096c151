"""`studio.runs.jobs.RayJobs` over Ray's Jobs API (`JobSubmissionClient`).

The studio never imports Ray; this is the one place that does. Every request has a
timeout (the SDK sets none, so a hung dashboard would hold a Celery task until its hard
limit), and errors are sorted into the two kinds the run logic acts on: `RayUnavailable`
(could not ask: retry later) and `RayRejected` (Ray said no: the run fails).
"""

from __future__ import annotations

import logging
from typing import Any

import requests
from django.conf import settings
from ray.job_submission import JobDetails, JobSubmissionClient

from studio.runs.jobs import (
    ClusterResources,
    JobSpec,
    NodeShare,
    RayJob,
    RayRejected,
    RayUnavailable,
)

logger = logging.getLogger(__name__)

GIB = 1024**3
# Ray's resource names -> a run request's, with the factor from Ray's unit.
RAY_RESOURCES = {"CPU": ("cpus", 1.0), "GPU": ("gpus", 1.0), "memory": ("memory_gb", 1 / GIB)}


class _TimedClient(JobSubmissionClient):
    """The SDK's client with a timeout on every HTTP request it makes."""

    def __init__(self, address: str, timeout_s: float) -> None:
        self._timeout_s = timeout_s  # before super(): its constructor already calls Ray
        super().__init__(address)

    def _do_request(self, method: str, endpoint: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", self._timeout_s)
        response: requests.Response = super()._do_request(method, endpoint, **kwargs)
        return response


def dashboard_url(address: str) -> str:
    return (address if "://" in address else f"http://{address}").rstrip("/")


def _status_code(exc: RuntimeError) -> int | None:
    """The HTTP status in the SDK's 'Request failed with status code N: ...' errors."""
    text = str(exc)
    marker = "status code "
    if marker not in text:
        return None
    digits = text.split(marker, 1)[1][:3]
    return int(digits) if digits.isdigit() else None


def _job(details: JobDetails) -> RayJob:
    return RayJob(
        submission_id=str(details.submission_id),
        status=details.status.value,
        message=details.message or "",
        start_time_ms=details.start_time,
        end_time_ms=details.end_time,
    )


class RayJobsClient:
    """Talks to the cluster at `address` (the dashboard URL, e.g. http://127.0.0.1:8265)."""

    def __init__(self, address: str, timeout_s: float) -> None:
        if not address:
            raise RayUnavailable("RAY_ADDRESS is not set; the studio has no Ray cluster")
        self.address = dashboard_url(address)
        self.timeout_s = timeout_s
        self._client: _TimedClient | None = None

    @classmethod
    def from_settings(cls) -> RayJobsClient:
        return cls(settings.RAY_ADDRESS, settings.RLSTUDIO_RAY_TIMEOUT_S)

    @property
    def client(self) -> _TimedClient:
        if self._client is None:
            try:
                self._client = _TimedClient(self.address, self.timeout_s)
            except (ConnectionError, requests.RequestException, RuntimeError) as exc:
                raise RayUnavailable(f"{self.address}: {exc}") from exc
        return self._client

    def _call(self, what: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except (ConnectionError, requests.RequestException) as exc:
            raise RayUnavailable(f"{what} at {self.address}: {exc}") from exc

    def submit(self, spec: JobSpec) -> bool:
        try:
            self._call(
                "submitting a job",
                self.client.submit_job,
                entrypoint=spec.entrypoint,
                submission_id=spec.submission_id,
                runtime_env=spec.runtime_env,
                metadata=spec.metadata,
                entrypoint_num_cpus=spec.num_cpus,
                entrypoint_num_gpus=spec.num_gpus,
                entrypoint_memory=spec.memory_bytes,
            )
        except RuntimeError as exc:
            if "already exists" in str(exc):
                return False  # an earlier try of this attempt got through
            code = _status_code(exc)
            if code is not None and 400 <= code < 500:
                raise RayRejected(str(exc)[:2000]) from exc
            raise RayUnavailable(f"submitting a job: {str(exc)[:2000]}") from exc
        except (ValueError, TypeError) as exc:  # the SDK's own checks of the runtime env
            raise RayRejected(str(exc)) from exc
        return True

    def get(self, submission_id: str) -> RayJob | None:
        try:
            details = self._call("reading a job", self.client.get_job_info, submission_id)
        except RuntimeError as exc:
            if _status_code(exc) == 404:
                return None
            raise RayUnavailable(f"reading job {submission_id}: {exc}") from exc
        return _job(details)

    def jobs(self, prefix: str) -> dict[str, RayJob]:
        try:
            listed = self._call("listing jobs", self.client.list_jobs)
        except RuntimeError as exc:
            raise RayUnavailable(f"listing jobs: {exc}") from exc
        return {
            str(d.submission_id): _job(d)
            for d in listed
            if d.submission_id and str(d.submission_id).startswith(prefix)
        }

    def stop(self, submission_id: str) -> bool:
        try:
            return bool(self._call("stopping a job", self.client.stop_job, submission_id))
        except RuntimeError as exc:
            if _status_code(exc) == 404:
                return False
            raise RayUnavailable(f"stopping job {submission_id}: {exc}") from exc

    def logs(self, submission_id: str) -> str:
        try:
            return str(self._call("reading job logs", self.client.get_job_logs, submission_id))
        except RuntimeError as exc:
            if _status_code(exc) == 404:
                return ""
            raise RayUnavailable(f"reading the logs of {submission_id}: {exc}") from exc

    def _state(self, resource: str, **filters: str) -> list[dict[str, Any]]:
        """Rows of Ray's state API (`/api/v0/<resource>`, what `ray list` reads): one
        HTTP request through the SDK's client (timeout, auth header)."""
        params: dict[str, Any] = {"detail": "true", "limit": "1000"}
        if filters:
            params["filter_keys"] = list(filters)
            params["filter_predicates"] = ["="] * len(filters)
            params["filter_values"] = list(filters.values())
        url = f"{self.address}/api/v0/{resource}"
        try:
            response = self.client._do_request("GET", f"/api/v0/{resource}", params=params)
            response.raise_for_status()
            rows = response.json()["data"]["result"]["result"]
        except requests.RequestException as exc:
            raise RayUnavailable(f"reading {url}: {exc}") from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise RayUnavailable(f"{url} answered in an unexpected shape: {exc!r}") from exc
        return list(rows)

    def placement(self, submission_id: str) -> list[NodeShare]:
        """The job's entrypoint node, and the nodes of the bundles of every placed
        placement group the job created (a distributed run's trainer workers, one bundle
        each). Ray's job details do not say what the entrypoint reserved: the caller
        knows (it submitted the job)."""
        try:
            details = self._call("reading a job", self.client.get_job_info, submission_id)
        except RuntimeError as exc:
            if _status_code(exc) == 404:
                return []
            raise RayUnavailable(f"reading job {submission_id}: {exc}") from exc
        driver_node = getattr(details, "driver_node_id", None)
        if not details.job_id or not driver_node:
            return []  # not started yet
        groups = self._state("placement_groups", creator_job_id=str(details.job_id))
        ips = {str(n["node_id"]): str(n.get("node_ip", "")) for n in self._state("nodes")}
        shares: dict[str, dict[str, Any]] = {}

        def share(node_id: str) -> dict[str, Any]:
            return shares.setdefault(
                node_id, {"entrypoint": False, "workers": 0, "CPU": 0.0, "GPU": 0.0, "memory": 0.0}
            )

        share(str(driver_node))["entrypoint"] = True
        for group in groups:
            if group.get("state") != "CREATED":
                continue  # pending (not placed) or removed (the run let it go)
            for bundle in group.get("bundles", []):
                if not bundle.get("node_id"):
                    continue
                held = share(str(bundle["node_id"]))
                held["workers"] += 1
                for name in ("CPU", "GPU", "memory"):
                    held[name] += float(bundle.get("unit_resources", {}).get(name, 0.0))
        return [
            NodeShare(
                node_id=node_id,
                node_ip=ips.get(node_id, ""),
                entrypoint=bool(held["entrypoint"]),
                workers=int(held["workers"]),
                cpus=float(held["CPU"]),
                gpus=float(held["GPU"]),
                memory_gb=round(float(held["memory"]) / GIB, 3),
            )
            for node_id, held in shares.items()
        ]

    def resources(self) -> ClusterResources:
        """Totals and use from the dashboard's cluster status (what `ray status` shows):
        one HTTP request, no driver connection."""
        url = f"{self.address}/api/cluster_status"
        try:
            # Through the SDK's client: it adds Ray's auth header when token auth is on.
            response = self.client._do_request("GET", "/api/cluster_status")
            response.raise_for_status()
            usage = response.json()["data"]["clusterStatus"]["loadMetricsReport"]["usage"]
        except requests.RequestException as exc:
            raise RayUnavailable(f"reading {url}: {exc}") from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise RayUnavailable(f"{url} answered in an unexpected shape: {exc!r}") from exc
        total = {name: 0.0 for name, _ in RAY_RESOURCES.values()}
        available = dict(total)
        for ray_name, (name, factor) in RAY_RESOURCES.items():
            used, capacity = usage.get(ray_name, (0.0, 0.0))
            total[name] = float(capacity) * factor
            available[name] = max(0.0, float(capacity) - float(used)) * factor
        return ClusterResources(total=total, available=available)
