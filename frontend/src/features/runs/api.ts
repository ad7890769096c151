/**
 * Every request about runs (their lists, details, actions, logs, checkpoints, alerts and
 * the run form's config), with their query keys in `runKeys`. A run's metrics, samples,
 * datasets and reward are other resources: see features/metrics, samples, datasets, rewards.
 */
import { queryOptions } from "@tanstack/react-query";

import { api, unwrap, type Schemas } from "../../api/client";
import type { ChoiceItem } from "./lib/inputKinds";

export type Run = Schemas["Run"];
export type RunDetail = Schemas["RunDetail"];
export type RunStatus = Schemas["RunStatusEnum"];
export type PresetName = Schemas["PresetEnum"];
export type Preset = Schemas["Preset"];
export type RunCreate = Schemas["RunCreateRequest"];
export type RunClone = Schemas["RunCloneRequest"];
export type ConfigValidation = Schemas["ConfigValidation"];
export type JsonSchema = Record<string, unknown>;
export type RunInputs = Schemas["RunInputs"];
export type Validation = Schemas["ValidationEnum"];
export type ProjectQueue = Schemas["ProjectQueue"];
export type DeletedRun = Schemas["DeletedRun"];

export const ACTIVE_STATUSES: RunStatus[] = ["queued", "starting", "running", "cancelling"];
export const ALL_STATUSES: RunStatus[] = ["queued", "starting", "running", "cancelling", "succeeded", "failed", "cancelled"];
type SortField = "created_at" | "priority" | "name" | "status" | "started_at" | "finished_at";
export type Ordering = SortField | `-${SortField}`;

/** Which runs a list shows by archiving: not archived (the API's default), archived only, or both. */
export type ArchivedFilter = "false" | "true" | "all";

/** A list's filters; absent ones do not filter. They are part of the list's query key. */
export type RunFilters = { status?: RunStatus[]; tag?: string; search?: string; ordering?: Ordering; hasCheckpoint?: boolean; archived?: ArchivedFilter };

export const runKeys = {
  all: ["runs"] as const,
  /** Every list of a project's runs (with any filters), and its queue. */
  lists: (slug: string) => ["runs", "list", slug] as const,
  list: (slug: string, filters: RunFilters) => ["runs", "list", slug, filters] as const,
  queue: (slug: string) => ["runs", "list", slug, "queue"] as const,
  detail: (id: number) => ["runs", "detail", id] as const,
  logs: (id: number, level: string) => ["runs", "logs", id, level] as const,
  checkpoints: (id: number) => ["runs", "checkpoints", id] as const,
  alerts: (id: number) => ["runs", "alerts", id] as const,
  /** A list endpoint's items for the generic input pickers (lib/inputKinds). */
  choices: (list: string, slug: string) => ["runs", "choices", list, slug] as const,
  configSchema: ["config", "schema"] as const,
  presets: ["config", "presets"] as const,
};

const RUNS_PAGE = 100;

export async function listRuns(slug: string, filters: RunFilters = {}, signal?: AbortSignal): Promise<{ count: number; results: Run[] }> {
  const query = {
    project: slug,
    page_size: RUNS_PAGE,
    ...(filters.status?.length ? { status: filters.status } : {}),
    ...(filters.tag ? { tag: filters.tag } : {}),
    ...(filters.search ? { search: filters.search } : {}),
    ...(filters.ordering ? { ordering: [filters.ordering] } : {}),
    ...(filters.hasCheckpoint !== undefined ? { has_checkpoint: String(filters.hasCheckpoint) } : {}),
    ...(filters.archived ? { archived: filters.archived } : {}),
  };
  const page = await unwrap(api.GET("/api/runs/", { params: { query }, signal }));
  return { count: page.count, results: page.results };
}

export function fetchProjectQueue(slug: string, signal?: AbortSignal): Promise<ProjectQueue> {
  return unwrap(api.GET("/api/queue/", { params: { query: { project: slug } }, signal }));
}

export function getRun(id: number, signal?: AbortSignal): Promise<RunDetail> {
  return unwrap(api.GET("/api/runs/{id}/", { params: { path: { id } }, signal }));
}

export function createRun(body: RunCreate): Promise<RunDetail> {
  return unwrap(api.POST("/api/runs/", { body }));
}

export function cloneRun(id: number, body: RunClone): Promise<RunDetail> {
  return unwrap(api.POST("/api/runs/{id}/clone/", { params: { path: { id } }, body }));
}

export function cancelRun(id: number): Promise<unknown> {
  return unwrap(api.POST("/api/runs/{id}/cancel/", { params: { path: { id } }, body: {} }));
}

export function resumeRun(id: number): Promise<unknown> {
  return unwrap(api.POST("/api/runs/{id}/resume/", { params: { path: { id } } }));
}

/** Deletes a run that has ended with its rows and files; answers the bytes freed. */
export function deleteRun(id: number): Promise<DeletedRun> {
  return unwrap(api.DELETE("/api/runs/{id}/", { params: { path: { id } } }));
}

/** Hides a run that has ended from the runs list (it frees nothing). */
export function archiveRun(id: number): Promise<RunDetail> {
  return unwrap(api.POST("/api/runs/{id}/archive/", { params: { path: { id } } }));
}

export function unarchiveRun(id: number): Promise<RunDetail> {
  return unwrap(api.POST("/api/runs/{id}/unarchive/", { params: { path: { id } } }));
}

export function setPriority(id: number, priority: number): Promise<unknown> {
  return unwrap(api.POST("/api/runs/{id}/priority/", { params: { path: { id } }, body: { priority } }));
}

const CHOICES_PAGE = 200;

/** The project's items of a generic picker's list endpoint (`x-input-kind.list`). */
export async function listChoices(list: string, slug: string, signal?: AbortSignal): Promise<ChoiceItem[]> {
  // The path comes from the schema at run time, so the typed client can't name it; that it
  // is a list endpoint taking the project is checked by tests/studio/test_input_registry.py.
  const answer: unknown = await unwrap(api.GET(list as "/api/models/", { params: { query: { project: slug, page_size: CHOICES_PAGE } }, signal }));
  if (Array.isArray(answer)) return answer as ChoiceItem[];
  return (answer as { results?: ChoiceItem[] } | null)?.results ?? [];
}

export async function fetchConfigSchema(signal?: AbortSignal): Promise<JsonSchema> {
  return (await unwrap(api.GET("/api/config/schema", { signal }))) as JsonSchema;
}

export function fetchPresets(signal?: AbortSignal): Promise<Preset[]> {
  return unwrap(api.GET("/api/config/presets", { signal }));
}

export function validateConfig(body: Schemas["ConfigRequestRequest"]): Promise<ConfigValidation> {
  return unwrap(api.POST("/api/config/validate", { body }));
}

export type Checkpoint = Schemas["Checkpoint"];
export type LogLine = Schemas["LogLine"];
export type Alert = Schemas["RunAlert"];

const LOG_TAIL = 500;
const MAX_ROWS = 200;

export async function fetchCheckpoints(run: number, signal?: AbortSignal): Promise<Checkpoint[]> {
  const page = await unwrap(api.GET("/api/runs/{id}/checkpoints/", { params: { path: { id: run }, query: { page_size: MAX_ROWS } }, signal }));
  return page.results;
}

/** The last lines of the run's log (oldest first), at one level or all. */
export async function fetchLogs(run: number, level: string, signal?: AbortSignal): Promise<LogLine[]> {
  const query = { page_size: LOG_TAIL, ...(level ? { level } : {}) };
  const first = await unwrap(api.GET("/api/runs/{id}/logs/", { params: { path: { id: run }, query }, signal }));
  const pages = Math.ceil(first.count / LOG_TAIL);
  if (pages <= 1) return first.results;
  // A tail: the last page, plus the one before it so the tail is never a few lines only.
  const last = await unwrap(api.GET("/api/runs/{id}/logs/", { params: { path: { id: run }, query: { ...query, page: pages } }, signal }));
  const before = await unwrap(api.GET("/api/runs/{id}/logs/", { params: { path: { id: run }, query: { ...query, page: pages - 1 } }, signal }));
  return [...before.results, ...last.results];
}

export async function fetchAlerts(run: number, signal?: AbortSignal): Promise<Alert[]> {
  const page = await unwrap(api.GET("/api/runs/{id}/alerts/", { params: { path: { id: run }, query: { page_size: MAX_ROWS } }, signal }));
  return page.results;
}

/** The HTML report of one run or several (api1's report endpoints). */
export function reportUrl(runs: number[]): string {
  return runs.length === 1 ? `/api/runs/${runs[0]}/report` : `/api/runs/report?ids=${runs.join(",")}`;
}

/**
 * What a run query is (key and fetcher), shared by the hooks that read it and the route
 * loaders that prefetch it, so both ask for one cache entry.
 */
export const runQueries = {
  detail: (id: number) => queryOptions({ queryKey: runKeys.detail(id), queryFn: ({ signal }) => getRun(id, signal) }),
  list: (slug: string, filters: RunFilters = {}) => queryOptions({ queryKey: runKeys.list(slug, filters), queryFn: ({ signal }) => listRuns(slug, filters, signal) }),
  configSchema: () => queryOptions({ queryKey: runKeys.configSchema, queryFn: ({ signal }) => fetchConfigSchema(signal), staleTime: Infinity }),
};
