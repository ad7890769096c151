/** Every request of the rollout review pages (no fetch outside this file). */
import { api, type Schemas, unwrap } from "../../api/client";
import type { SampleQuery } from "./lib/explorerQuery";
import type { CursorPage } from "./lib/samplePager";

export type Sample = Schemas["RolloutSample"];
export type SampleDetail = Schemas["RolloutSampleDetail"];
export type Turn = Schemas["Turn"];
export type SampleGroup = Schemas["SampleGroup"];
export type SampleLabel = Schemas["SampleLabel"];
export type StepCount = Schemas["StepCount"];
export type GroupSummary = Schemas["GroupSummary"];
export type HistogramBin = Schemas["HistogramBin"];
export type LengthPoint = Schemas["LengthPoint"];
export type PromptTimeline = Schemas["PromptTimeline"];
export type ExportedVersion = Schemas["ExportedVersion"];
export type ExportPreview = Schemas["ExportPreview"];
export type Run = Schemas["Run"];
export type Dataset = Schemas["Dataset"];

export const PAGE_SIZE = 100;

/** The cursor inside a `next` link (the link itself carries the filters again). */
export function cursorOf(next: string | null | undefined): string | null {
  if (!next) return null;
  return new URL(next, globalThis.location?.origin ?? "http://localhost").searchParams.get("cursor");
}

export async function fetchSamplePage(
  query: SampleQuery,
  cursor: string | null,
  signal?: AbortSignal,
): Promise<CursorPage<Sample>> {
  const page = await unwrap(
    api.GET("/api/samples/", {
      params: { query: { ...query, page_size: PAGE_SIZE, ...(cursor ? { cursor } : {}) } },
      signal,
    }),
  );
  return { results: page.results, next: cursorOf(page.next) };
}

export const fetchSample = (id: number, signal?: AbortSignal) =>
  unwrap(api.GET("/api/samples/{id}/", { params: { path: { id } }, signal }));

export const fetchGroup = (run: number, step: number, groupId: string, signal?: AbortSignal) =>
  unwrap(
    api.GET("/api/samples/group/", { params: { query: { run, step, group_id: groupId } }, signal }),
  );

export const fetchRun = (id: number, signal?: AbortSignal) =>
  unwrap(api.GET("/api/runs/{id}/", { params: { path: { id } }, signal }));

export const fetchRuns = (project: string, signal?: AbortSignal) =>
  unwrap(api.GET("/api/runs/", { params: { query: { project, page_size: 100 } }, signal }));

export const fetchSteps = (id: number, signal?: AbortSignal) =>
  unwrap(api.GET("/api/runs/{id}/rollouts/steps", { params: { path: { id } }, signal }));

export const fetchStepGroups = (
  id: number,
  step: number,
  signalFilter: "any" | "learning" | "zero",
  signal?: AbortSignal,
) =>
  unwrap(
    api.GET("/api/runs/{id}/rollouts/groups", {
      params: { path: { id }, query: { step, signal: signalFilter } },
      signal,
    }),
  );

export const fetchTimeline = (id: number, sample: number, signal?: AbortSignal) =>
  unwrap(
    api.GET("/api/runs/{id}/rollouts/timeline", {
      params: { path: { id }, query: { sample } },
      signal,
    }),
  );

type StepSpan = { step_min?: number; step_max?: number };

export const fetchHistogram = (id: number, steps: StepSpan, signal?: AbortSignal) =>
  unwrap(
    api.GET("/api/runs/{id}/rollouts/histogram", {
      params: { path: { id }, query: { ...steps, bins: 20 } },
      signal,
    }),
  );

export const fetchLengths = (id: number, steps: StepSpan, signal?: AbortSignal) =>
  unwrap(
    api.GET("/api/runs/{id}/rollouts/lengths", {
      params: { path: { id }, query: { ...steps, limit: 2000 } },
      signal,
    }),
  );

export const addLabel = (sample: number, label: string) =>
  unwrap(
    api.POST("/api/samples/{id}/labels/", { params: { path: { id: sample } }, body: { label, note: "" } }),
  );

export const removeLabel = (sample: number, label: string) =>
  unwrap(
    api.DELETE("/api/samples/{id}/labels/", { params: { path: { id: sample }, query: { label } } }),
  );

export const fetchDatasets = (project: string, signal?: AbortSignal) =>
  unwrap(api.GET("/api/datasets/", { params: { query: { project, page_size: 100 } }, signal }));

/** Where an export of labelled samples goes: a new dataset (by name) or an existing one. */
export type ExportTarget = { new_dataset: string } | { dataset: number };
export type ExportRequest = ExportTarget & { label?: string };

const exportCall = (run: number, { label, ...target }: ExportRequest, dryRun: boolean) =>
  unwrap(
    api.POST("/api/runs/{id}/export-labelled", {
      params: { path: { id: run } },
      body: { ...target, ...(label ? { label } : {}), dry_run: dryRun },
    }),
  );

/** What the export would store (rows, rows per label, the version it becomes); stores nothing. */
export const previewExport = (run: number, request: ExportRequest) =>
  exportCall(run, request, true) as Promise<ExportPreview>;

export const exportLabelled = (run: number, request: ExportRequest) =>
  exportCall(run, request, false) as Promise<ExportedVersion>;

export const fetchMe = (signal?: AbortSignal) => unwrap(api.GET("/api/auth/me", { signal }));

export const fetchPrompts = (id: number, q: string, signal?: AbortSignal) =>
  unwrap(
    api.GET("/api/runs/{id}/rollouts/prompts", {
      params: { path: { id }, query: { limit: 200, ...(q ? { q } : {}) } },
      signal,
    }),
  );
