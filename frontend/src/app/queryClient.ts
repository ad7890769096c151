import { type Query, QueryClient } from "@tanstack/react-query";

import { ApiError } from "../api/client";

/** Tries after the first for a failed query (network errors and 5xx only). */
const RETRIES = 3;

/** How long a fetched answer counts as fresh. */
const STALE_MS = 2_000;

/** A 4xx (not found, forbidden, invalid): asked again, the server answers the same. */
function answersTheSameAgain(error: unknown): boolean {
  return error instanceof ApiError && error.status !== null && error.status >= 400 && error.status < 500;
}

/**
 * Whether a failed query is worth another try: a 4xx answers the same again, so the page
 * shows it at once instead of after three retries.
 */
export function shouldRetry(failures: number, error: unknown): boolean {
  return !answersTheSameAgain(error) && failures < RETRIES;
}

/**
 * Whether a page that mounts on a failed query asks again. Not for a 4xx answered within
 * STALE_MS: that is the route loader's own request, made a moment before the page
 * mounted, and a missing run was requested twice. A failure older than that (a page
 * visited again later) or a 5xx is asked again.
 */
export function shouldRetryOnMount(query: Pick<Query, "state">, now: number = Date.now()): boolean {
  const { error, errorUpdatedAt } = query.state;
  return !(answersTheSameAgain(error) && now - errorUpdatedAt < STALE_MS);
}

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: STALE_MS,
        refetchOnWindowFocus: true,
        retry: shouldRetry,
        retryOnMount: shouldRetryOnMount,
      },
    },
  });
}
