/** Every request for a run's metrics, with their query keys. */
import { queryOptions } from "@tanstack/react-query";

import { api, unwrap, type Schemas } from "../../api/client";
import { createSeriesBatcher, type SeriesShape } from "./lib/seriesBatcher";

export type MetricSeries = Schemas["MetricSeries"];
export type StepRange = { min: number | null; max: number | null };

export const metricKeys = {
  all: ["metrics"] as const,
  keys: (run: number) => ["metrics", "keys", run] as const,
  /** The union of several runs' keys (the comparison's charts). */
  keysOf: (runs: number[]) => ["metrics", "keys-of", runs] as const,
  series: (runs: number[], key: string, range: StepRange, times: boolean, points: number) =>
    ["metrics", "series", runs, key, range, times, points] as const,
};

export async function fetchMetricKeys(run: number, signal?: AbortSignal): Promise<string[]> {
  const answer = await unwrap(api.GET("/api/runs/{id}/metrics/keys", { params: { path: { id: run } }, signal }));
  return answer.keys;
}

/** The keys any of `runs` reported, sorted. */
export async function fetchMetricKeysOf(runs: number[], signal?: AbortSignal): Promise<string[]> {
  const each = await Promise.all(runs.map((run) => fetchMetricKeys(run, signal)));
  return [...new Set(each.flat())].sort();
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

/**
 * Metric queries (key and fetcher), shared by the hooks and the route loaders: a run's
 * keys, several runs' keys, and one key's series for a chart's shape (batched with the
 * other series asked for in the same task; a series is fixed once fetched, so never stale).
 */
export const metricQueries = {
  keys: (run: number) => queryOptions({ queryKey: metricKeys.keys(run), queryFn: ({ signal }) => fetchMetricKeys(run, signal) }),
  keysOf: (runs: number[]) => queryOptions({ queryKey: metricKeys.keysOf(runs), queryFn: ({ signal }) => fetchMetricKeysOf(runs, signal) }),
  series: ({ runs, range, times, points }: SeriesShape, key: string) =>
    queryOptions({
      queryKey: metricKeys.series(runs, key, range, times, points),
      queryFn: () => loadSeries({ runs, range, times, points }, key),
      staleTime: Infinity,
    }),
};
