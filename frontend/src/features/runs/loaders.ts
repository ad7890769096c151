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

import { metricQueries } from "../metrics/api";
import { runQueries } from "./api";
import { runListFilters, runListSearchIn, runTabIn, type RunListSearch, type RunTab } from "./lib/searchParams";

/** Fetched unless cached: the hooks refresh what they show by their own stale times. */
const IF_MISSING = { staleTime: Infinity } as const;

export type RunPageData = { tab: RunTab };
export type RunsPageData = { search: RunListSearch };

/** `/p/:slug/runs/:runId`: the run and its metric keys (the charts need both), and `?tab`. */
export function runPageLoader(queryClient: QueryClient) {
  return ({ params, request }: LoaderFunctionArgs): RunPageData => {
    const id = Number(params.runId);
    if (Number.isInteger(id) && id > 0) {
      void queryClient.prefetchQuery({ ...runQueries.detail(id), ...IF_MISSING });
      void queryClient.prefetchQuery({ ...metricQueries.keys(id), ...IF_MISSING });
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

export function useRunPageData(): RunPageData {
  return useLoaderData<RunPageData>();
}

export function useRunsPageData(): RunsPageData {
  return useLoaderData<RunsPageData>();
}
