"""Ray's job table as a dict, behind the `RayJobs` protocol, for unit tests of one
function of the run logic. It refuses a duplicate submission id, like Ray. The live
tests (live/test_runs_on_ray.py) run the same logic against a real Ray head."""

from __future__ import annotations

from dataclasses import dataclass, field

from studio.runs.jobs import ClusterResources, JobSpec, NodeShare, RayJob, RayJobStatus


@dataclass
class DictRay:
    table: dict[str, RayJob] = field(default_factory=dict)
    specs: list[JobSpec] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    logs_by_id: dict[str, str] = field(default_factory=dict)
    fail_with: Exception | None = None
    placement_by_id: dict[str, list[NodeShare]] = field(default_factory=dict)
    total: dict[str, float] = field(
        default_factory=lambda: {"cpus": 2.0, "gpus": 0.0, "memory_gb": 8.0}
    )

    def submit(self, spec: JobSpec) -> bool:
        if self.fail_with is not None:
            raise self.fail_with
        self.specs.append(spec)
        if spec.submission_id in self.table:
            return False
        self.table[spec.submission_id] = RayJob(spec.submission_id, "PENDING")
        return True

    def set(self, submission_id: str, status: RayJobStatus, message: str = "") -> None:
        self.table[submission_id] = RayJob(submission_id, status, message, 1_000, 2_000)

    def get(self, submission_id: str) -> RayJob | None:
        return self.table.get(submission_id)

    def jobs(self, prefix: str) -> dict[str, RayJob]:
        return {k: v for k, v in self.table.items() if k.startswith(prefix)}

    def stop(self, submission_id: str) -> bool:
        self.stopped.append(submission_id)
        job = self.table.get(submission_id)
        if job is None or job.terminal:
            return False
        self.set(submission_id, "STOPPED", "Job was intentionally stopped.")
        return True

    def placement(self, submission_id: str) -> list[NodeShare]:
        return list(self.placement_by_id.get(submission_id, []))

    def logs(self, submission_id: str) -> str:
        return self.logs_by_id.get(submission_id, "")

    def resources(self) -> ClusterResources:
        return ClusterResources(dict(self.total), dict(self.total))
