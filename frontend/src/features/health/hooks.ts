import { useQuery } from "@tanstack/react-query";

import { fetchHealth, healthKeys } from "./api";

export const HEALTH_REFRESH_MS = 5_000;

/**
 * The studio's health, polled every 5 s. No retries: a failed poll shows the
 * error at once and the next poll is the retry.
 */
export function useHealth() {
  return useQuery({
    queryKey: healthKeys.all,
    queryFn: ({ signal }) => fetchHealth(signal),
    refetchInterval: HEALTH_REFRESH_MS,
    retry: false,
  });
}
