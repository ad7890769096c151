/**
 * Every request about sweeps (the project's list, one sweep's detail, its creation and its
 * actions), with their query keys in `sweepKeys`. A trial is an ordinary run: its page,
 * metrics and files are the runs feature's.
 */
import { queryOptions } from "@tanstack/react-query";

import { api, unwrap, type Schemas } from "../../api/client";
import type { Param, ParamValue, Pruner, SweepCreate, SweepDetail, SweepSummary, Trial, TrialCounts, TrialState } from "./lib/types";

export type { SweepCreate, SweepDetail, SweepSummary } from "./lib/types";

export const sweepKeys = {
  all: ["sweeps"] as const,
  list: (slug: string) => ["sweeps", "list", slug] as const,
  detail: (id: number) => ["sweeps", "detail", id] as const,
};

const SWEEPS_PAGE = 100;

const NO_TRIALS: TrialCounts = { running: 0, complete: 0, pruned: 0, failed: 0, stopped: 0 };
const NO_PRUNER: Pruner = { kind: "none", min_steps: 1, reduction_factor: 2 };

/** A listed sweep with the fields the server defaults filled in. */
export function readSummary(sweep: Schemas["Sweep"]): SweepSummary {
  return {
    ...sweep,
    status: sweep.status ?? "running",
    metric: sweep.metric ?? "",
    direction: sweep.direction ?? "maximize",
    parallelism: sweep.parallelism ?? 1,
    trial_counts: { ...NO_TRIALS, ...(sweep.trial_counts as Partial<TrialCounts>) },
    created_at: sweep.created_at ?? "",
  };
}

function readTrial(trial: Schemas["Trial"]): Trial {
  return {
    ...trial,
    params: (trial.params ?? {}) as Record<string, ParamValue>,
    state: (trial.state ?? "running") as TrialState,
    value: trial.value ?? null,
    intermediate: trial.intermediate.map(([step, value]) => [step ?? 0, value ?? Number.NaN] as [number, number]),
    stopped_at_step: trial.stopped_at_step ?? null,
    stop_reason: trial.stop_reason ?? "",
    created_at: trial.created_at ?? "",
    finished_at: trial.finished_at ?? null,
  };
}

/** A stored parameter as the form posted it, `log` and `step` filled in where the server left them out. */
function readParam(raw: Record<string, unknown>): Param {
  if (raw.type === "float") return { ...(raw as Param), log: raw.log === true } as Param;
  if (raw.type === "int") return { ...(raw as Param), step: typeof raw.step === "number" ? raw.step : 1 } as Param;
  return raw as Param;
}

/** A sweep's detail as the pages read it: its space, pruner and trials in their stored shapes. */
export function readSweep(sweep: Schemas["SweepDetail"]): SweepDetail {
  return {
    ...sweep,
    ...readSummary(sweep),
    space: Array.isArray(sweep.space) ? (sweep.space as Record<string, unknown>[]).map(readParam) : [],
    pruner: { ...NO_PRUNER, ...(sweep.pruner as Partial<Pruner> | null) },
    preset: sweep.preset ?? "",
    seed: sweep.seed ?? 0,
    metric_reward: sweep.metric_reward ?? "",
    stop_on_critical_alert: sweep.stop_on_critical_alert ?? true,
    status_reason: sweep.status_reason ?? "",
    trials: sweep.trials.map(readTrial),
    best_trial: sweep.best_trial ? { ...readTrial(sweep.best_trial), config_diff: sweep.best_trial.config_diff } : null,
  };
}

export async function listSweeps(slug: string, signal?: AbortSignal): Promise<{ count: number; results: SweepSummary[] }> {
  const page = await unwrap(api.GET("/api/sweeps/", { params: { query: { project: slug, page_size: SWEEPS_PAGE } }, signal }));
  return { count: page.count, results: page.results.map(readSummary) };
}

export async function getSweep(id: number, signal?: AbortSignal): Promise<SweepDetail> {
  return readSweep(await unwrap(api.GET("/api/sweeps/{id}/", { params: { path: { id } }, signal })));
}

export async function createSweep(body: SweepCreate): Promise<SweepDetail> {
  return readSweep(await unwrap(api.POST("/api/sweeps/", { body })));
}

export type SweepAction = "pause" | "resume" | "stop";

export async function actOnSweep(id: number, action: SweepAction): Promise<SweepDetail> {
  const path = { params: { path: { id } } };
  const answer =
    action === "pause" ? api.POST("/api/sweeps/{id}/pause/", path) : action === "resume" ? api.POST("/api/sweeps/{id}/resume/", path) : api.POST("/api/sweeps/{id}/stop/", path);
  return readSweep(await unwrap(answer));
}

/** Raises the sweep's budget by `count` trials. */
export async function addTrials(id: number, count: number): Promise<SweepDetail> {
  return readSweep(await unwrap(api.POST("/api/sweeps/{id}/trials/", { params: { path: { id } }, body: { count } })));
}

export type DeletedSweep = Schemas["DeletedSweep"];

/** Deletes a sweep whose trials have all ended, with its trials' runs and their files. */
export function deleteSweep(id: number): Promise<DeletedSweep> {
  return unwrap(api.DELETE("/api/sweeps/{id}/", { params: { path: { id } } }));
}

/** What a sweep query is (key and fetcher), shared by the hooks and the route loaders. */
export const sweepQueries = {
  list: (slug: string) => queryOptions({ queryKey: sweepKeys.list(slug), queryFn: ({ signal }) => listSweeps(slug, signal) }),
  detail: (id: number) => queryOptions({ queryKey: sweepKeys.detail(id), queryFn: ({ signal }) => getSweep(id, signal) }),
};
