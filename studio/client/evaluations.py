"""The client's evaluation requests (docs/evaluate.md): a part of `Client`, kept apart so
each module stays readable."""

from __future__ import annotations

from typing import Any

from studio.client.transport import Transport


class EvaluationsClient(Transport):
    def evaluations(self, project: str | None = None, limit: int | None = None) -> list[Any]:
        found: list[Any] = []
        for evaluation in self.paginate("/api/evaluations/", {"project": project}):
            if limit is not None and len(found) >= limit:
                break
            found.append(evaluation)
        return found

    def evaluation(self, evaluation_id: int) -> dict[str, Any]:
        """An evaluation with its results per model."""
        result: dict[str, Any] = self.get(f"/api/evaluations/{evaluation_id}/")
        return result

    def create_evaluation(
        self, project: str, models: list[dict[str, int]], **fields: Any
    ) -> dict[str, Any]:
        """Queue an evaluation of `models` ({"model": id} or {"run": id, "step": n}) on a
        `dataset_version` or the `validation_of_run`'s validation data; optional fields:
        name, reward_version, builtin_reward, k, greedy, temperature, max_prompts,
        max_new_tokens, priority."""
        result: dict[str, Any] = self.post(
            "/api/evaluations/", {"project": project, "models": models, **fields}
        )
        return result

    def evaluate_run_checkpoints(self, run_id: int, **fields: Any) -> dict[str, Any]:
        """Queue an evaluation of every checkpoint of a run and its base model on the run's
        validation data (fields as in `create_evaluation`'s sampling settings)."""
        result: dict[str, Any] = self.post(
            "/api/evaluations/run-checkpoints/", {"run": run_id, **fields}
        )
        return result

    def cancel_evaluation(self, evaluation_id: int, reason: str = "") -> dict[str, Any]:
        result: dict[str, Any] = self.post(
            f"/api/evaluations/{evaluation_id}/cancel/", {"reason": reason}
        )
        return result

    def ask_checkpoints(self, sample_id: int, **fields: Any) -> dict[str, Any]:
        """Queue "Ask the checkpoints": a training run's sample's prompt answered by every
        checkpoint of the run and its base model (sampling fields as above)."""
        result: dict[str, Any] = self.post("/api/evaluations/ask/", {"sample": sample_id, **fields})
        return result

    def evaluation_report(self, evaluation_id: int) -> bytes:
        """The evaluation's HTML report (plotly.js embedded: opens offline)."""
        response = self.request(
            "GET", f"/api/evaluations/{evaluation_id}/report/", headers={"Accept": "text/html"}
        )
        return response.content
