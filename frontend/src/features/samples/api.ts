/**
 * Every request about rollout samples: pages of samples, one sample, a group, a run's
 * steps and distributions, a prompt across steps, labels and the export of labelled
 * samples to a dataset; with their query keys in `sampleKeys`.
 */
import { queryOptions } from "@tanstack/react-query";

import { api, type Schemas, unwrap } from "../../api/client";
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

export type StepSpan = { step_min?: number; step_max?: number };
export type GroupSignal = "any" | "learning" | "zero";

/** The sample list's filters, as the API reads them (unset ones are left out). */
export type SampleQuery = {
  run: number;
  step_min?: number;
  step_max?: number;
  score_min?: number;
  score_max?: number;
  split?: string;
  data_source?: string;
  reward_version?: number;
  reward_version_number?: number;
  label?: string;
  has_error?: boolean;
  turns_min?: number;
  q?: string;
  signal?: Exclude<GroupSignal, "any">;
  groups?: string;
};

export const sampleKeys = {
  all: ["samples"] as const,
  detail: (id: number) => ["samples", "detail", id] as const,
  steps: (run: number) => ["samples", "run", run, "steps"] as const,
  group: (run: number, step: number, groupId: string) => ["samples", "run", run, "group", step, groupId] as const,
  stepGroups: (run: number, step: number, filter: GroupSignal) => ["samples", "run", run, "step-groups", step, filter] as const,
  timeline: (run: number, sample: number) => ["samples", "run", run, "timeline", sample] as const,
  histogram: (run: number, steps: StepSpan) => ["samples", "run", run, "histogram", steps] as const,
  lengths: (run: number, steps: StepSpan) => ["samples", "run", run, "lengths", steps] as const,
  prompts: (run: number, q: string) => ["samples", "run", run, "prompts", q] as const,
  failing: (run: number) => ["samples", "run", run, "failing"] as const,
  /** The newest page of the samples `query` selects: the explorer's list starts from it. */
  firstPage: (query: SampleQuery) => ["samples", "run", query.run, "first-page", query] as const,
};

export const PAGE_SIZE = 100;
const FIRST_PAGE_FRESH_MS = 10_000;

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

export const fetchSteps = (id: number, signal?: AbortSignal) =>
  unwrap(api.GET("/api/runs/{id}/rollouts/steps", { params: { path: { id } }, signal }));

export const fetchStepGroups = (
  id: number,
  step: number,
  signalFilter: GroupSignal,
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

export const fetchPrompts = (id: number, q: string, signal?: AbortSignal) =>
  unwrap(
    api.GET("/api/runs/{id}/rollouts/prompts", {
      params: { path: { id }, query: { limit: 200, ...(q ? { q } : {}) } },
      signal,
    }),
  );

/**
 * Queries read both by the explorer's hooks and by its route loader (one cache entry
 * each). The first page is a query so the loader can start it at navigation; the pages
 * after it, and the newer ones of a live run, are the list's own (see useSampleList).
 */
export const sampleQueries = {
  steps: (run: number) => queryOptions({ queryKey: sampleKeys.steps(run), queryFn: ({ signal }) => fetchSteps(run, signal) }),
  /** Fresh for a while: the page that mounts a moment after its loader asked shows that
   * answer (a live run's list gathers newer samples by itself; labelling invalidates it). */
  firstPage: (query: SampleQuery) =>
    queryOptions({ queryKey: sampleKeys.firstPage(query), queryFn: ({ signal }) => fetchSamplePage(query, null, signal), staleTime: FIRST_PAGE_FRESH_MS }),
};
