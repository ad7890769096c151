import { QueryClient } from "@tanstack/react-query";

import { ApiError } from "../api/client";

/** Tries after the first for a failed query (network errors and 5xx only). */
const RETRIES = 3;

/**
 * Whether a failed query is worth another try: a 4xx (not found, forbidden, invalid)
 * answers the same again, so the page shows it at once instead of after three retries.
 */
export function shouldRetry(failures: number, error: unknown): boolean {
  if (error instanceof ApiError && error.status !== null && error.status >= 400 && error.status < 500) {
    return false;
  }
  return failures < RETRIES;
}

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 2_000,
        refetchOnWindowFocus: true,
        retry: shouldRetry,
      },
    },
  });
}
