"""The client's sweep requests (docs/sweeps.md): a part of `Client`, kept apart so each
module stays readable."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from studio.client.transport import Transport


class SweepsClient(Transport):
    def sweeps(
        self,
        project: str | None = None,
        *,
        status: list[str] | None = None,
        limit: int | None = None,
    ) -> list[Any]:
        """Sweeps of your projects, newest first, with their trials counted by state."""
        found: list[Any] = []
        for sweep in self.paginate("/api/sweeps/", {"project": project, "status": status}):
            if limit is not None and len(found) >= limit:
                break
            found.append(sweep)
        return found

    def sweep(self, sweep_id: int) -> dict[str, Any]:
        """A sweep with its trials, best trial and parameter importance."""
        result: dict[str, Any] = self.get(f"/api/sweeps/{sweep_id}/")
        return result

    def create_sweep(
        self,
        project: str,
        name: str,
        space: Sequence[Mapping[str, Any]],
        *,
        base_run: int | None = None,
        preset: str | None = None,
        config: dict[str, Any] | None = None,
        overrides: list[str] | None = None,
        inputs: Mapping[str, Any] | None = None,
        **settings: Any,
    ) -> dict[str, Any]:
        """Start a sweep over `space` (a list of parameters: {name, type: float|int|choice|
        input, low, high, log, step, values}) from `base_run` (cloned for each trial) or a
        `preset` with `config`, `overrides` and `inputs` (request fields of POST /api/runs/:
        dataset_version, reward_version, ...). `settings`: method, seed, metric, direction,
        metric_reward, max_trials, parallelism, pruner ({kind, min_steps,
        reduction_factor}), stop_on_critical_alert; unset ones take the server's default."""
        result: dict[str, Any] = self.post(
            "/api/sweeps/",
            {
                "project": project,
                "name": name,
                "space": [dict(p) for p in space],
                "base_run": base_run,
                "preset": preset,
                "config": config,
                "overrides": overrides,
                "inputs": dict(inputs) if inputs else None,
                **settings,
            },
        )
        return result

    def pause_sweep(self, sweep_id: int) -> dict[str, Any]:
        """No more trials are started; the running ones go on."""
        result: dict[str, Any] = self.post(f"/api/sweeps/{sweep_id}/pause/")
        return result

    def resume_sweep(self, sweep_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self.post(f"/api/sweeps/{sweep_id}/resume/")
        return result

    def stop_sweep(self, sweep_id: int) -> dict[str, Any]:
        """End the sweep; its running trials are cancelled."""
        result: dict[str, Any] = self.post(f"/api/sweeps/{sweep_id}/stop/")
        return result

    def add_sweep_trials(self, sweep_id: int, count: int) -> dict[str, Any]:
        """Raise the sweep's trial budget by `count` (a finished sweep runs again)."""
        result: dict[str, Any] = self.post(f"/api/sweeps/{sweep_id}/trials/", {"count": count})
        return result

    def sweep_report(self, sweep_id: int) -> bytes:
        """The sweep's HTML report (plotly.js embedded: opens offline)."""
        response = self.request(
            "GET", f"/api/sweeps/{sweep_id}/report/", headers={"Accept": "text/html"}
        )
        return response.content
