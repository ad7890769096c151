import { useQuery } from "@tanstack/react-query";

import { getComparison, getTestRun, isFinished, rewardKeys } from "./api";

export const POLL_MS = 1000;

/** A test-run, polled every second until it has ended. */
export function useTestRun(id: number | null) {
  return useQuery({
    queryKey: rewardKeys.testRun(id ?? 0),
    queryFn: ({ signal }) => getTestRun(id as number, signal),
    enabled: id !== null,
    refetchInterval: (query) => {
      const run = query.state.data;
      return run && isFinished(run) ? false : POLL_MS;
    },
  });
}

export function useComparison(a: number | null, b: number | null, ready: boolean) {
  return useQuery({
    queryKey: rewardKeys.comparison(a ?? 0, b ?? 0),
    queryFn: ({ signal }) => getComparison(a as number, b as number, signal),
    enabled: a !== null && b !== null && ready,
  });
}
