import { keepPreviousData, useQuery } from "@tanstack/react-query";

import { useDebounced } from "../../lib/useDebounced";
import { checkCode, getComparison, getTestRun, isFinished, rewardKeys } from "./api";

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

/** How long typing pauses before the code is checked again. */
export const CHECK_DELAY_MS = 400;

/**
 * The problems the server finds in `code` (what a save would refuse), re-checked each
 * time typing pauses; the last answer stays while the next is on its way.
 */
export function useCodeCheck(code: string | null) {
  const settled = useDebounced(code, CHECK_DELAY_MS);
  return useQuery({
    queryKey: rewardKeys.check(settled ?? ""),
    queryFn: ({ signal }) => checkCode(settled ?? "", signal),
    enabled: settled !== null,
    placeholderData: keepPreviousData,
    staleTime: Infinity, // the same code has the same problems
  });
}
