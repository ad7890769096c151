/**
 * Every request the runs pages make. Query keys live in `runKeys`, in one place.
 */
import { api, unwrap, type Schemas } from "../../api/client";
import { createSeriesBatcher, type SeriesShape } from "./seriesBatcher";

export type Run = Schemas["Run"];
export type RunDetail = Schemas["RunDetail"];
export type RunStatus = Schemas["RunStatusEnum"];
export type PresetName = Schemas["PresetEnum"];
export type Preset = Schemas["Preset"];
export type RunCreate = Schemas["RunCreateRequest"];
export type RunClone = Schemas["RunCloneRequest"];
export type ConfigValidation = Schemas["ConfigValidation"];
export type MetricSeries = Schemas["MetricSeries"];
export type Sample = Schemas["RolloutSample"];
export type Dataset = Schemas["Dataset"];
export type DatasetVersion = Schemas["DatasetVersion"];
export type DatasetPreview = Schemas["Preview"];
export type RewardFunction = Schemas["RewardFunction"];
export type RewardVersion = Schemas["RewardVersion"];
export type JsonSchema = Record<string, unknown>;
export type RunInputs = Schemas["RunInputs"];
export type Model = Schemas["Model"];
export type OfferedFolder = Schemas["OfferedFolder"];
export type Validation = Schemas["ValidationEnum"];
export type ProjectQueue = Schemas["ProjectQueue"];

export const ACTIVE_STATUSES: RunStatus[] = ["queued", "starting", "running", "cancelling"];
export const ALL_STATUSES: RunStatus[] = ["queued", "starting", "running", "cancelling", "succeeded", "failed", "cancelled"];
export type Ordering = NonNullable<NonNullable<Parameters<typeof listRuns>[1]>["ordering"]>;

export type RunFilters = { status?: RunStatus[]; tag?: string; search?: string; ordering?: string };

export const runKeys = {
  all: ["runs"] as const,
  list: (slug: string, filters: RunFilters) => ["runs", "list", slug, filters] as const,
  queue: (slug: string) => ["runs", "list", slug, "queue"] as const,
  detail: (id: number) => ["runs", "detail", id] as const,
  metricKeys: (id: number) => ["runs", "metric-keys", id] as const,
  metrics: (ids: number[], key: string, range: StepRange, times: boolean, points: number) => ["runs", "metrics", ids, key, range, times, points] as const,
  samples: (id: number, step: number | null) => ["runs", "samples", id, step] as const,
  logs: (id: number, level: string) => ["runs", "logs", id, level] as const,
  checkpoints: (id: number) => ["runs", "checkpoints", id] as const,
  alerts: (id: number) => ["runs", "alerts", id] as const,
  configSchema: ["config", "schema"] as const,
  presets: ["config", "presets"] as const,
  datasets: (slug: string) => ["datasets", slug] as const,
  datasetVersions: (id: number) => ["datasets", "versions", id] as const,
  preview: (id: number, number: number) => ["datasets", "preview", id, number] as const,
  rewards: (slug: string) => ["rewards", slug] as const,
  rewardVersions: (id: number) => ["rewards", "versions", id] as const,
  rewardVersion: (id: number, number: number) => ["rewards", "version", id, number] as const,
  models: (slug: string) => ["models", slug] as const,
  availableModels: (slug: string) => ["models", "available", slug] as const,
};

export type StepRange = { min: number | null; max: number | null };

const RUNS_PAGE = 100;

export async function listRuns(
  slug: string,
  filters: { status?: RunStatus[]; tag?: string; search?: string; ordering?: ("-created_at" | "created_at" | "-priority" | "priority" | "-name" | "name" | "-status" | "status" | "-started_at" | "started_at" | "-finished_at" | "finished_at")[] } = {},
  signal?: AbortSignal,
): Promise<{ count: number; results: Run[] }> {
  const query = {
    project: slug,
    page_size: RUNS_PAGE,
    ...(filters.status?.length ? { status: filters.status } : {}),
    ...(filters.tag ? { tag: filters.tag } : {}),
    ...(filters.search ? { search: filters.search } : {}),
    ...(filters.ordering?.length ? { ordering: filters.ordering } : {}),
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

export function setPriority(id: number, priority: number): Promise<unknown> {
  return unwrap(api.POST("/api/runs/{id}/priority/", { params: { path: { id } }, body: { priority } }));
}

export async function fetchMetricKeys(id: number, signal?: AbortSignal): Promise<string[]> {
  const answer = await unwrap(api.GET("/api/runs/{id}/metrics/keys", { params: { path: { id } }, signal }));
  return answer.keys;
}

/** The most keys one metrics query may name (the API's bound). */
export const MAX_QUERY_KEYS = 100;

/** Series of `keys`, each downsampled by the server to at most `shape.points` points (min/max kept). */
export async function queryMetrics(shape: SeriesShape, keys: string[], signal?: AbortSignal): Promise<MetricSeries[]> {
  const { runs, range, times, points } = shape;
  if (!runs.length || !keys.length) return [];
  const query = {
    runs: runs.join(","),
    keys: keys.join(","),
    points,
    ...(range.min !== null ? { step_min: range.min } : {}),
    ...(range.max !== null ? { step_max: range.max } : {}),
    // Times cost the server ~30-60% more: asked for only when the time axis is shown.
    ...(times ? { times: true } : {}),
  };
  const answer = await unwrap(api.GET("/api/metrics/query", { params: { query }, signal }));
  return answer.series;
}

/** One key's series; the charts that scroll into view together share one request. */
export const loadSeries = createSeriesBatcher(queryMetrics, MAX_QUERY_KEYS);

export async function fetchSamples(run: number, step: number | null, signal?: AbortSignal): Promise<Sample[]> {
  const query = { run, page_size: 50, ...(step !== null ? { step_min: step, step_max: step } : {}) };
  const page = await unwrap(api.GET("/api/samples/", { params: { query }, signal }));
  return page.results;
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

export async function listDatasets(slug: string, signal?: AbortSignal): Promise<Dataset[]> {
  const page = await unwrap(api.GET("/api/datasets/", { params: { query: { project: slug, page_size: 200 } }, signal }));
  return page.results;
}

export async function listDatasetVersions(datasetId: number, signal?: AbortSignal): Promise<DatasetVersion[]> {
  return unwrap(api.GET("/api/datasets/{dataset_id}/versions/", { params: { path: { dataset_id: datasetId } }, signal }));
}

export function previewDataset(datasetId: number, number: number, signal?: AbortSignal): Promise<DatasetPreview> {
  return unwrap(
    api.GET("/api/datasets/{dataset_id}/versions/{number}/preview/", {
      params: { path: { dataset_id: datasetId, number }, query: { limit: 5 } },
      signal,
    }),
  );
}

export async function listRewardFunctions(slug: string, signal?: AbortSignal): Promise<RewardFunction[]> {
  const page = await unwrap(api.GET("/api/reward-functions/", { params: { query: { project: slug, page_size: 200 } }, signal }));
  return page.results;
}

export type RewardVersionSummary = Schemas["RewardVersionSummary"];

export function listRewardVersions(functionId: number, signal?: AbortSignal): Promise<RewardVersionSummary[]> {
  return unwrap(api.GET("/api/reward-functions/{function_id}/versions/", { params: { path: { function_id: functionId } }, signal }));
}

export function getRewardVersion(functionId: number, number: number, signal?: AbortSignal): Promise<RewardVersion> {
  return unwrap(
    api.GET("/api/reward-functions/{function_id}/versions/{number}/", { params: { path: { function_id: functionId, number } }, signal }),
  );
}

/** The project's policy models that are ready to train (a hub download may still run). */
export async function listModels(slug: string, signal?: AbortSignal): Promise<Model[]> {
  const page = await unwrap(api.GET("/api/models/", { params: { query: { project: slug, role: "policy", page_size: 200 } }, signal }));
  return page.results.filter((model) => model.status === "ready");
}

/** The policy model folders the server offers, to add to the project. */
export async function listAvailableModels(slug: string, signal?: AbortSignal): Promise<OfferedFolder[]> {
  const folders = await unwrap(api.GET("/api/models/available/", { params: { query: { project: slug } }, signal }));
  return folders.filter((folder) => folder.role === "policy");
}

export function addModel(body: Schemas["ModelCreateRequest"]): Promise<Model> {
  return unwrap(api.POST("/api/models/", { body }));
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
