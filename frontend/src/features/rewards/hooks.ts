/** Query and mutation hooks of reward functions (their keys and fetchers live in api.ts). */
import { keepPreviousData, useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";

import { useDebounced } from "../../lib/useDebounced";
import {
  ENTRYPOINT,
  checkCode,
  createFunction,
  getComparison,
  getFunction,
  getTestRun,
  getVersion,
  isFinished,
  listFunctions,
  listTemplates,
  listVersions,
  rewardKeys,
  saveVersion,
  startComparison,
  startTestRun,
  type RewardCheck,
  type RewardVersion,
  type RewardVersionSummary,
} from "./api";
import { withSavedVersion } from "./lib/versions";

export const POLL_MS = 1000;

export function useRewardFunctions(project: string) {
  return useQuery({ queryKey: rewardKeys.list(project), queryFn: ({ signal }) => listFunctions(project, signal), enabled: Boolean(project) });
}

export function useRewardFunction(id: number) {
  return useQuery({ queryKey: rewardKeys.detail(id), queryFn: ({ signal }) => getFunction(id, signal) });
}

/** The built-in templates a new function may start from. */
export function useRewardTemplates() {
  return useQuery({ queryKey: rewardKeys.templates, queryFn: ({ signal }) => listTemplates(signal), staleTime: Infinity });
}

/** A function's versions, newest first (none asked for while `functionId` is null). */
export function useRewardVersions(functionId: number | null) {
  return useQuery({
    queryKey: rewardKeys.versions(functionId ?? 0),
    queryFn: ({ signal }) => listVersions(functionId ?? 0, signal),
    enabled: functionId !== null,
  });
}

/** The versions of each of several functions (finding which one a version id belongs to). */
export function useRewardVersionsOf(functionIds: number[]) {
  return useQueries({
    queries: functionIds.map((id) => ({
      queryKey: rewardKeys.versions(id),
      queryFn: ({ signal }: { signal: AbortSignal }) => listVersions(id, signal),
    })),
  });
}

/** One version with its code (none asked for until both are known); a version never changes. */
export function useRewardVersion(functionId: number | null, number: number | null) {
  return useQuery({
    queryKey: rewardKeys.version(functionId ?? 0, number ?? 0),
    queryFn: ({ signal }) => getVersion(functionId ?? 0, number ?? 0, signal),
    enabled: functionId !== null && number !== null,
    staleTime: Infinity,
  });
}

/** Creates a function (from a template when named); the project's list refreshes. */
export function useCreateRewardFunction(project: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ name, template }: { name: string; template: string }) =>
      createFunction({
        project,
        name,
        description: "",
        entrypoint: ENTRYPOINT,
        message: "",
        ...(template ? { from_template: template as never } : {}),
      }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: rewardKeys.list(project) }),
  });
}

/**
 * Saves `code` as the function's next version, unless the server's check finds problems:
 * then it answers the check and stores nothing. A saved version is cached at once (its
 * code and its place in the list) and the function and its versions refresh.
 */
export function useSaveRewardVersion(functionId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ code, message }: { code: string; message: string }): Promise<RewardVersion | RewardCheck> => {
      const check = await checkCode(code);
      if (!check.ok) return check;
      return saveVersion(functionId, code, message);
    },
    onSuccess: (result) => {
      if ("problems" in result) return;
      queryClient.setQueryData(rewardKeys.version(functionId, result.number), result);
      queryClient.setQueryData<RewardVersionSummary[]>(rewardKeys.versions(functionId), (list) => withSavedVersion(list, result));
      void queryClient.invalidateQueries({ queryKey: rewardKeys.versions(functionId) });
      void queryClient.invalidateQueries({ queryKey: rewardKeys.detail(functionId) });
    },
  });
}

/** Starts a test-run of one of the function's versions; its list of test-runs refreshes. */
export function useStartTestRun(functionId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: startTestRun,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: rewardKeys.testRuns(functionId) }),
  });
}

/** Scores a test-run's responses again with another version (the A/B). */
export function useStartComparison() {
  return useMutation({
    mutationFn: ({ base, version }: { base: number; version: number }) => startComparison(base, version),
  });
}

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
