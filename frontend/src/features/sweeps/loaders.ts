/**
 * The sweep pages' route loaders: each starts the request its page makes first, through
 * the same query options as the page's hooks (one cache entry), without waiting for it.
 */
import type { QueryClient } from "@tanstack/react-query";
import type { LoaderFunctionArgs } from "react-router";

import { sweepQueries } from "./api";

const IF_MISSING = { staleTime: Infinity } as const;

/** `/p/:slug/sweeps`. */
export function sweepsPageLoader(queryClient: QueryClient) {
  return ({ params }: LoaderFunctionArgs): null => {
    if (params.slug) void queryClient.prefetchQuery({ ...sweepQueries.list(params.slug), ...IF_MISSING });
    return null;
  };
}

/** `/p/:slug/sweeps/:sweepId`. */
export function sweepPageLoader(queryClient: QueryClient) {
  return ({ params }: LoaderFunctionArgs): null => {
    const id = Number(params.sweepId);
    if (Number.isInteger(id) && id > 0) void queryClient.prefetchQuery({ ...sweepQueries.detail(id), ...IF_MISSING });
    return null;
  };
}
