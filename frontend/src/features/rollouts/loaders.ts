/**
 * The rollout explorer's route loader: starts the first page of samples the URL's filters
 * select, then the run, through the same query options as the page's hooks (one cache
 * entry each), without waiting for them (the page shows its own loading states). The
 * step list and the distributions are left to the page: on a busy server they would
 * share it with the page of samples the first screen shows.
 */
import type { QueryClient } from "@tanstack/react-query";
import type { LoaderFunctionArgs } from "react-router";

import { IF_MISSING } from "../../lib/prefetch";
import { runQueries } from "../runs/api";
import { sampleQueries } from "../samples/api";
import { parseFilters, sampleQuery } from "./lib/explorerQuery";

/** `/p/:slug/runs/:runId/rollouts`: the first page of samples and the run. */
export function explorerPageLoader(queryClient: QueryClient) {
  return ({ params, request }: LoaderFunctionArgs): null => {
    const run = Number(params.runId);
    if (!Number.isInteger(run) || run <= 0) return null;
    const filters = parseFilters(new URL(request.url).searchParams);
    // With "follow latest", the page moves the range to the newest step once the steps
    // are in, so a first page read now would be for another query.
    if (!filters.follow) void queryClient.prefetchQuery({ ...sampleQueries.firstPage(sampleQuery(run, filters)), ...IF_MISSING });
    void queryClient.prefetchQuery({ ...runQueries.detail(run), ...IF_MISSING });
    return null;
  };
}
