/** Every request about evaluations, with their query keys (docs/evaluate.md). */
import { api, unwrap, type Schemas } from "../../api/client";
import { runKeys } from "../runs/api";

export type Evaluation = Schemas["Evaluation"];
export type EvaluationDetail = Schemas["EvaluationDetail"];
export type EvaluationCreate = Schemas["EvaluationCreateRequest"];
export type RunCheckpointsCreate = Schemas["RunCheckpointsEvaluationRequest"];
export type AskCheckpointsCreate = Schemas["AskCheckpointsRequest"];
export type SampleQuestion = Schemas["SampleQuestion"];
export type ModelResult = Schemas["EvaluationModelResult"];
export type Scores = Schemas["EvaluationScores"];

/**
 * An evaluation is a run: its detail (the results) is cached under the run's own key, so
 * what refreshes the run (its status events, a cancel, the run page) refreshes its
 * results, and the explorer and the evaluation page never hold two ages of one record.
 * The lists are the evaluations endpoint's own.
 */
export const evaluationKeys = {
  lists: ["evaluations", "list"] as const,
  list: (project: string) => ["evaluations", "list", project] as const,
  detail: (id: number) => [...runKeys.detail(id), "evaluation"] as const,
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
