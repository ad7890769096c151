"""The API client: one method per common task, errors raised as `ApiError`.

Every method returns the API's JSON as plain dicts and lists (the shapes are in the
OpenAPI schema at /api/schema/). Lists are followed across pages: page-number pages
(`next` URLs) and the samples' cursor pages look the same from here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from studio.client.evaluations import EvaluationsClient
from studio.client.sweeps import SweepsClient
from studio.client.transport import clean_fields


class Client(EvaluationsClient, SweepsClient):
    """A session with one studio. `url` and `token` default to RLSTUDIO_URL and
    RLSTUDIO_TOKEN (a personal token, `rls_...`, made at /api/tokens/)."""

    # --- account -----------------------------------------------------------------------

    def me(self) -> dict[str, Any]:
        result: dict[str, Any] = self.get("/api/auth/me")
        return result

    def projects(self) -> list[dict[str, Any]]:
        return list(self.paginate("/api/projects/"))

    # --- datasets ----------------------------------------------------------------------

    def datasets(self, project: str | None = None, search: str | None = None) -> list[Any]:
        return list(self.paginate("/api/datasets/", {"project": project, "search": search}))

    def dataset(self, dataset_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self.get(f"/api/datasets/{dataset_id}/")
        return result

    def find_dataset(self, project: str, name: str) -> dict[str, Any] | None:
        matches = [d for d in self.datasets(project, search=name) if d["name"] == name]
        return matches[0] if matches else None

    def create_dataset(self, project: str, name: str, description: str = "") -> dict[str, Any]:
        result: dict[str, Any] = self.post(
            "/api/datasets/", {"project": project, "name": name, "description": description}
        )
        return result

    def upload_dataset_version(
        self,
        dataset_id: int,
        path: str | Path,
        *,
        message: str = "",
        format: str = "auto",
        prompt_key: str | None = None,
        answer_key: str | None = None,
        data_source: str | None = None,
    ) -> dict[str, Any]:
        """Upload a parquet/JSONL/CSV file as the dataset's next version (streamed)."""
        fields = clean_fields(
            {
                "message": message,
                "format": format,
                "prompt_key": prompt_key,
                "answer_key": answer_key,
                "data_source": data_source,
            }
        )
        source = Path(path)
        with source.open("rb") as handle:
            response = self.request(
                "POST",
                f"/api/datasets/{dataset_id}/versions/",
                data=fields,
                files={"file": (source.name, handle)},
            )
        result: dict[str, Any] = response.json()
        return result

    def download_dataset_version(self, dataset_id: int, number: int, dest: str | Path) -> Path:
        target = Path(dest)
        response = self.request(
            "GET",
            f"/api/datasets/{dataset_id}/versions/{number}/download/",
            headers={"Accept": "application/octet-stream"},
            stream=True,
        )
        with target.open("wb") as handle:
            for chunk in response.iter_content(1 << 20):
                handle.write(chunk)
        return target

    # --- reward functions --------------------------------------------------------------

    def reward_functions(self, project: str | None = None) -> list[Any]:
        return list(self.paginate("/api/reward-functions/", {"project": project}))

    def find_reward_function(self, project: str, name: str) -> dict[str, Any] | None:
        matches = [f for f in self.reward_functions(project) if f["name"] == name]
        return matches[0] if matches else None

    def create_reward_function(
        self,
        project: str,
        name: str,
        *,
        code: str | None = None,
        from_template: str | None = None,
        entrypoint: str = "compute_score",
        message: str = "",
        description: str = "",
    ) -> dict[str, Any]:
        """A reward function; with `code` or `from_template` it gets version 1 too."""
        result: dict[str, Any] = self.post(
            "/api/reward-functions/",
            {
                "project": project,
                "name": name,
                "code": code,
                "from_template": from_template,
                "entrypoint": entrypoint,
                "message": message,
                "description": description,
            },
        )
        return result

    def push_reward_version(
        self, function_id: int, code: str, *, entrypoint: str = "compute_score", message: str = ""
    ) -> dict[str, Any]:
        result: dict[str, Any] = self.post(
            f"/api/reward-functions/{function_id}/versions/",
            {"code": code, "entrypoint": entrypoint, "message": message},
        )
        return result

    def test_reward_version(
        self,
        function_id: int,
        number: int,
        *,
        completions: list[dict[str, Any]] | None = None,
        dataset_version: int | None = None,
        rows: int | None = None,
        offset: int | None = None,
        solution_template: str | None = None,
    ) -> dict[str, Any]:
        """Score pasted completions ({solution_str, ground_truth, ...}) or a dataset
        version's rows in the sandbox; returns per-row results and a summary."""
        result: dict[str, Any] = self.post(
            f"/api/reward-functions/{function_id}/versions/{number}/test/",
            {
                "completions": completions,
                "dataset_version": dataset_version,
                "rows": rows,
                "offset": offset,
                "solution_template": solution_template,
            },
        )
        return result

    # --- runs --------------------------------------------------------------------------

    def runs(
        self,
        project: str | None = None,
        *,
        status: list[str] | None = None,
        tag: str | None = None,
        search: str | None = None,
        limit: int | None = None,
    ) -> list[Any]:
        params = {"project": project, "status": status, "tag": tag, "search": search}
        runs: list[Any] = []
        for run in self.paginate("/api/runs/", params):
            if limit is not None and len(runs) >= limit:
                break
            runs.append(run)
        return runs

    def run(self, run_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self.get(f"/api/runs/{run_id}/")
        return result

    def create_run(
        self,
        project: str,
        name: str,
        *,
        preset: str | None = None,
        config: dict[str, Any] | None = None,
        overrides: list[str] | None = None,
        model: int | None = None,
        dataset: int | None = None,
        dataset_version: int | None = None,
        validation: str | None = None,
        validation_version: int | None = None,
        reward_version: int | None = None,
        inputs: Mapping[str, Any] | None = None,
        priority: int | None = None,
        tags: list[str] | None = None,
        notes: str | None = None,
    ) -> dict[str, Any]:
        """A queued run: defaults <- preset <- config <- overrides (`key=value`), on the
        project's model, dataset (its latest version) or dataset_version, validation
        (`held_out`, `dataset_version` with validation_version, or `none`) and reward
        version, each by id (docs/resources.md). `inputs` names any other run input the
        server registers by its request field (`{"critic_model": 7}`), so a kind added on
        the server needs no change here; a field it does not know is refused (400)."""
        result: dict[str, Any] = self.post(
            "/api/runs/",
            {
                "project": project,
                "name": name,
                "preset": preset,
                "config": config,
                "overrides": overrides,
                "model": model,
                "dataset": dataset,
                "dataset_version": dataset_version,
                "validation": validation,
                "validation_version": validation_version,
                "reward_version": reward_version,
                "priority": priority,
                "tags": tags,
                "notes": notes,
                **(inputs or {}),
            },
        )
        return result

    def cancel_run(self, run_id: int, reason: str = "") -> dict[str, Any]:
        result: dict[str, Any] = self.post(f"/api/runs/{run_id}/cancel/", {"reason": reason})
        return result

    def resume_run(self, run_id: int, reason: str = "") -> dict[str, Any]:
        result: dict[str, Any] = self.post(f"/api/runs/{run_id}/resume/", {"reason": reason})
        return result

    def delete_run(self, run_id: int) -> dict[str, Any]:
        """Delete a run that has ended with its records and files: {id, name, freed_bytes}."""
        result: dict[str, Any] = self.request("DELETE", f"/api/runs/{run_id}/").json()
        return result

    def archive_run(self, run_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self.post(f"/api/runs/{run_id}/archive/")
        return result

    def unarchive_run(self, run_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self.post(f"/api/runs/{run_id}/unarchive/")
        return result

    def project_storage(self, project: str) -> dict[str, Any]:
        """What the project's files take and its quota: {used_bytes, quota_bytes, ...}."""
        result: dict[str, Any] = self.get(f"/api/projects/{project}/storage/")
        return result

    def clone_run(
        self,
        run_id: int,
        *,
        name: str | None = None,
        config: dict[str, Any] | None = None,
        overrides: list[str] | None = None,
        priority: int | None = None,
        inputs: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A clone of the run with the changes given; `inputs` as in `create_run` (the
        parent's inputs stay where none is given)."""
        result: dict[str, Any] = self.post(
            f"/api/runs/{run_id}/clone/",
            {
                "name": name,
                "config": config,
                "overrides": overrides,
                "priority": priority,
                **(inputs or {}),
            },
        )
        return result

    def set_priority(self, run_id: int, priority: int) -> dict[str, Any]:
        result: dict[str, Any] = self.post(f"/api/runs/{run_id}/priority/", {"priority": priority})
        return result

    # --- metrics -----------------------------------------------------------------------

    def metric_keys(self, run_id: int) -> list[str]:
        keys: list[str] = self.get(f"/api/runs/{run_id}/metrics/keys")["keys"]
        return keys

    def query_metrics(
        self,
        run_ids: list[int],
        keys: list[str],
        *,
        step_min: int | None = None,
        step_max: int | None = None,
        points: int | None = None,
    ) -> dict[str, Any]:
        """Downsampled series: {"points": N, "series": [{run, key, steps, values}, ...]}."""
        result: dict[str, Any] = self.get(
            "/api/metrics/query",
            {
                "runs": ",".join(str(r) for r in run_ids),
                "keys": ",".join(keys),
                "step_min": step_min,
                "step_max": step_max,
                "points": points,
            },
        )
        return result

    def metrics_csv(self, run_id: int, keys: list[str] | None = None) -> str:
        params = {"keys": ",".join(keys) if keys else None}
        response = self.request(
            "GET",
            f"/api/runs/{run_id}/metrics.csv",
            params=clean_fields(params),
            headers={"Accept": "text/csv"},
        )
        return response.text

    def report(self, run_ids: list[int]) -> bytes:
        """The HTML report of one run or several (plotly.js embedded: opens offline)."""
        if len(run_ids) == 1:
            path, params = f"/api/runs/{run_ids[0]}/report", None
        else:
            path, params = "/api/runs/report", {"ids": ",".join(map(str, run_ids))}
        response = self.request("GET", path, params=params, headers={"Accept": "text/html"})
        return response.content

    # --- samples -----------------------------------------------------------------------

    def samples(self, run_id: int, **filters: Any) -> Iterator[Any]:
        """Live samples of a run, newest first, following cursor pages. Filters:
        step_min, step_max, score_min, score_max, data_source, split, group_id,
        reward_version, label, has_error, q (full-text), page_size, ordering."""
        return self.paginate("/api/samples/", {"run": run_id, **filters})

    def sample(self, sample_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self.get(f"/api/samples/{sample_id}/")
        return result

    def sample_group(self, run_id: int, step: int, group_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self.get(
            "/api/samples/group/", {"run": run_id, "step": step, "group_id": group_id}
        )
        return result

    def label_sample(self, sample_id: int, label: str, note: str = "") -> dict[str, Any]:
        result: dict[str, Any] = self.post(
            f"/api/samples/{sample_id}/labels/", {"label": label, "note": note}
        )
        return result

    def unlabel_sample(self, sample_id: int, label: str) -> None:
        self.delete(f"/api/samples/{sample_id}/labels/", {"label": label})

    def export_labelled(
        self,
        run_id: int,
        dataset_id: int | None = None,
        label: str | None = None,
        new_dataset: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """The run's labelled samples as a new dataset named `new_dataset`, or as a new
        version of the project's dataset `dataset_id`; `dry_run` says what would be
        stored, and stores nothing."""
        body: dict[str, Any] = {"dataset": dataset_id} if dataset_id else {}
        if new_dataset:
            body["new_dataset"] = new_dataset
        if label:
            body["label"] = label
        if dry_run:
            body["dry_run"] = True
        result: dict[str, Any] = self.post(f"/api/runs/{run_id}/export-labelled", body)
        return result
