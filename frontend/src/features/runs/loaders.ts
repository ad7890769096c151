/**
 * The run pages' route loaders: each checks its page's search parameters and starts the
 * requests the page makes first, while the router resolves the route, through the same
 * query options as the page's hooks (one cache entry). They do not wait for the answers:
 * the page shows its own loading and error states, as it does when data goes stale. They
 * ask only for what the cache lacks (or holds invalidated): a loader runs again on every
 * change of the URL's search (a tab, a filter), and freshness is the hooks' business.
 */
import type { QueryClient } from "@tanstack/react-query";
import { useLoaderData, type LoaderFunctionArgs } from "react-router";

import { loadPlotly } from "../../lib/plotly";
import { IF_MISSING } from "../../lib/prefetch";
import { metricQueries } from "../metrics/api";
import { runQueries } from "./api";
import { firstScreenSeries } from "./lib/chartView";
import { comparedRunsIn, runListFilters, runListSearchIn, runTabIn, type RunListSearch, type RunTab } from "./lib/searchParams";

export type RunPageData = { tab: RunTab };
export type RunsPageData = { search: RunListSearch };
export type ComparePageData = { runs: number[] };

/** `/p/:slug/runs/:runId`: the run and its metric keys (the charts need both), plotly, and `?tab`. */
export function runPageLoader(queryClient: QueryClient) {
  return ({ params, request }: LoaderFunctionArgs): RunPageData => {
    const id = Number(params.runId);
    if (Number.isInteger(id) && id > 0) {
      void queryClient.prefetchQuery({ ...runQueries.detail(id), ...IF_MISSING });
      void queryClient.prefetchQuery({ ...metricQueries.keys(id), ...IF_MISSING });
      void loadPlotly(); // its chunk loads and runs while the session and the run are asked for
    }
    return { tab: runTabIn(new URL(request.url).searchParams) };
  };
}

/** `/p/:slug/runs`: the list with the URL's filters. */
export function runsPageLoader(queryClient: QueryClient) {
  return ({ params, request }: LoaderFunctionArgs): RunsPageData => {
    const search = runListSearchIn(new URL(request.url).searchParams);
    if (params.slug) void queryClient.prefetchQuery({ ...runQueries.list(params.slug, runListFilters(search)), ...IF_MISSING });
    return { search };
  };
}

/**
 * `/p/:slug/compare?runs=`: the runs, their metric keys, the config schema (the diff) and
 * plotly; once the keys are in, the series of the charts' first rows (they would otherwise
 * be asked for only after the page renders and plotly runs).
 */
export function comparePageLoader(queryClient: QueryClient) {
  return ({ request }: LoaderFunctionArgs): ComparePageData => {
    const params = new URL(request.url).searchParams;
    const runs = comparedRunsIn(params);
    if (runs.length >= 2) {
      for (const id of runs) void queryClient.prefetchQuery({ ...runQueries.detail(id), ...IF_MISSING });
      void queryClient
        .ensureQueryData(metricQueries.keysOf(runs))
        .then((keys) => prefetchFirstCharts(queryClient, runs, keys, params))
        .catch(() => undefined); // the page's own query shows the error
      void queryClient.prefetchQuery({ ...runQueries.configSchema(), ...IF_MISSING });
      void loadPlotly();
    }
    return { runs };
  };
}

/** The first rows' series, asked for together (one batched request), as the grid's charts ask. */
function prefetchFirstCharts(queryClient: QueryClient, runs: number[], keys: string[], params: URLSearchParams) {
  const first = firstScreenSeries(runs, keys, params, document.documentElement.clientWidth);
  if (!first) return;
  for (const key of first.keys) void queryClient.prefetchQuery(metricQueries.series(first.shape, key));
}

export function useComparePageData(): ComparePageData {
  return useLoaderData<ComparePageData>();
}

export function useRunPageData(): RunPageData {
  return useLoaderData<RunPageData>();
}

export function useRunsPageData(): RunsPageData {
  return useLoaderData<RunsPageData>();
}
