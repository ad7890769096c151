/** Every request about evaluations, with their query keys (docs/evaluate.md). */
import { api, unwrap, type Schemas } from "../../api/client";

export type Evaluation = Schemas["Evaluation"];
export type EvaluationDetail = Schemas["EvaluationDetail"];
export type EvaluationCreate = Schemas["EvaluationCreateRequest"];
export type RunCheckpointsCreate = Schemas["RunCheckpointsEvaluationRequest"];
export type AskCheckpointsCreate = Schemas["AskCheckpointsRequest"];
export type SampleQuestion = Schemas["SampleQuestion"];
export type ModelResult = Schemas["EvaluationModelResult"];
export type Scores = Schemas["EvaluationScores"];

/** Everything sits under ["evaluations"]: invalidating `evaluationKeys.all` refreshes lists and details. */
export const evaluationKeys = {
  all: ["evaluations"] as const,
  list: (project: string) => ["evaluations", "list", project] as const,
  detail: (id: number) => ["evaluations", "detail", id] as const,
};

const PAGE_SIZE = 100;

export async function listEvaluations(project: string, signal?: AbortSignal): Promise<Evaluation[]> {
  const page = await unwrap(api.GET("/api/evaluations/", { params: { query: { project, page_size: PAGE_SIZE } }, signal }));
  return page.results;
}

export function getEvaluation(id: number, signal?: AbortSignal): Promise<EvaluationDetail> {
  return unwrap(api.GET("/api/evaluations/{id}/", { params: { path: { id } }, signal }));
}

export function createEvaluation(body: EvaluationCreate): Promise<EvaluationDetail> {
  return unwrap(api.POST("/api/evaluations/", { body }));
}

/** Every reachable checkpoint of a run and its base model, on the run's validation data. */
export function evaluateRunCheckpoints(body: RunCheckpointsCreate): Promise<EvaluationDetail> {
  return unwrap(api.POST("/api/evaluations/run-checkpoints/", { body }));
}

export function cancelEvaluation(id: number): Promise<EvaluationDetail> {
  return unwrap(api.POST("/api/evaluations/{id}/cancel/", { params: { path: { id } }, body: {} }));
}

/** "Ask the checkpoints": a training sample's prompt, answered by every checkpoint of its run and its base model. */
export function askCheckpoints(body: AskCheckpointsCreate): Promise<EvaluationDetail> {
  return unwrap(api.POST("/api/evaluations/ask/", { body }));
}

/** The evaluation's self-contained HTML report (a download, not a query). */
export function evaluationReportUrl(id: number): string {
  return `/api/evaluations/${id}/report/`;
}
