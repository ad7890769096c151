/**
 * Every request about sweeps (the project's list, one sweep's detail, its creation and its
 * actions), with their query keys in `sweepKeys`. A trial is an ordinary run: its page,
 * metrics and files are the runs feature's.
 */
import { queryOptions } from "@tanstack/react-query";

import { api, unwrap } from "../../api/client";
import type { SweepCreate, SweepDetail, SweepSummary } from "./lib/types";

export type { SweepCreate, SweepDetail, SweepSummary } from "./lib/types";

export const sweepKeys = {
  all: ["sweeps"] as const,
  list: (slug: string) => ["sweeps", "list", slug] as const,
  detail: (id: number) => ["sweeps", "detail", id] as const,
};

const SWEEPS_PAGE = 100;

type Answer<T> = Promise<{ data?: T; error?: unknown; response: Response }>;
/**
 * The client with free-form paths: the sweeps endpoints are not in the generated schema
 * this module is built against (`scripts/gen-api.sh` adds them once the server has them).
 */
const loose = api as unknown as {
  GET: <T>(path: string, init?: { params?: { path?: Record<string, unknown>; query?: Record<string, unknown> }; signal?: AbortSignal }) => Answer<T>;
  POST: <T>(path: string, init?: { params?: { path?: Record<string, unknown> }; body?: unknown }) => Answer<T>;
  DELETE: <T>(path: string, init?: { params?: { path?: Record<string, unknown> } }) => Answer<T>;
};

export async function listSweeps(slug: string, signal?: AbortSignal): Promise<{ count: number; results: SweepSummary[] }> {
  const page = await unwrap(loose.GET<{ count: number; results: SweepSummary[] }>("/api/sweeps/", { params: { query: { project: slug, page_size: SWEEPS_PAGE } }, signal }));
  return { count: page.count, results: page.results };
}

export function getSweep(id: number, signal?: AbortSignal): Promise<SweepDetail> {
  return unwrap(loose.GET<SweepDetail>("/api/sweeps/{id}/", { params: { path: { id } }, signal }));
}

export function createSweep(body: SweepCreate): Promise<SweepDetail> {
  return unwrap(loose.POST<SweepDetail>("/api/sweeps/", { body }));
}

export type SweepAction = "pause" | "resume" | "stop";

export function actOnSweep(id: number, action: SweepAction): Promise<SweepDetail> {
  return unwrap(loose.POST<SweepDetail>(`/api/sweeps/{id}/${action}/`, { params: { path: { id } } }));
}

/** Raises the sweep's budget by `count` trials. */
export function addTrials(id: number, count: number): Promise<SweepDetail> {
  return unwrap(loose.POST<SweepDetail>("/api/sweeps/{id}/trials/", { params: { path: { id } }, body: { count } }));
}

export function deleteSweep(id: number): Promise<unknown> {
  return unwrap(loose.DELETE<unknown>("/api/sweeps/{id}/", { params: { path: { id } } }));
}

/** What a sweep query is (key and fetcher), shared by the hooks and the route loaders. */
export const sweepQueries = {
  list: (slug: string) => queryOptions({ queryKey: sweepKeys.list(slug), queryFn: ({ signal }) => listSweeps(slug, signal) }),
  detail: (id: number) => queryOptions({ queryKey: sweepKeys.detail(id), queryFn: ({ signal }) => getSweep(id, signal) }),
};
