/** Query hooks of a run's metrics (keys and fetchers in api.ts). */
import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { useLayoutEffect } from "react";

import { metricKeys, metricQueries } from "./api";
import type { SeriesShape } from "./lib/seriesBatcher";

export function useMetricKeys(run: number) {
  return useQuery(metricQueries.keys(run));
}

/** The keys any of `runs` reported (asked for only when `enabled`). */
export function useMetricKeysOf(runs: number[], enabled = true) {
  return useQuery({ ...metricQueries.keysOf(runs), enabled });
}

/** Marks a run's metric keys stale (a live record named a key the list lacks). */
export function useRefreshMetricKeys() {
  const queryClient = useQueryClient();
  return (run: number) => void queryClient.invalidateQueries({ queryKey: metricKeys.keys(run) });
}

/**
 * One key's series (none while `key` is undefined). A new range or axis refetches and the
 * previous series stays meanwhile. With `early`, it is asked for while the component
 * commits, beside the other charts mounted with it: useQuery alone would ask after the
 * browser's next task (plotly's evaluation, say), and the batch would split.
 */
export function useSeries(request: SeriesShape, key: string | undefined, early = false) {
  const queryClient = useQueryClient();
  const options = metricQueries.series(request, key ?? "");
  const requestId = JSON.stringify(options.queryKey);
  useLayoutEffect(() => {
    if (early && key !== undefined) void queryClient.prefetchQuery(options);
  }, [requestId]); // eslint-disable-line react-hooks/exhaustive-deps
  return useQuery({ ...options, enabled: key !== undefined, placeholderData: keepPreviousData });
}
