import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { useToast } from "../../components/Toast";
import {
  cancelRun,
  fetchAlerts,
  fetchCheckpoints,
  fetchConfigSchema,
  fetchLogs,
  fetchMetricKeys,
  fetchPresets,
  getRewardVersion,
  getRun,
  resumeRun,
  runKeys,
  setPriority,
} from "./api";

export function useRun(id: number, enabled = true) {
  return useQuery({ queryKey: runKeys.detail(id), queryFn: ({ signal }) => getRun(id, signal), enabled });
}

export function useMetricKeys(id: number) {
  return useQuery({ queryKey: runKeys.metricKeys(id), queryFn: ({ signal }) => fetchMetricKeys(id, signal) });
}

export function useConfigSchema() {
  return useQuery({ queryKey: runKeys.configSchema, queryFn: ({ signal }) => fetchConfigSchema(signal), staleTime: Infinity });
}

export function usePresets() {
  return useQuery({ queryKey: runKeys.presets, queryFn: ({ signal }) => fetchPresets(signal), staleTime: Infinity });
}

/** A reward function's version (its code), when the run names one. */
export function useRewardVersion(functionId: number | null, number: number | null) {
  return useQuery({
    queryKey: runKeys.rewardVersion(functionId ?? 0, number ?? 0),
    queryFn: ({ signal }) => getRewardVersion(functionId ?? 0, number ?? 0, signal),
    enabled: functionId !== null && number !== null,
    staleTime: Infinity, // a version's code never changes
  });
}

export function useLogs(id: number, level: string) {
  return useQuery({ queryKey: runKeys.logs(id, level), queryFn: ({ signal }) => fetchLogs(id, level, signal) });
}

export function useCheckpoints(id: number) {
  return useQuery({ queryKey: runKeys.checkpoints(id), queryFn: ({ signal }) => fetchCheckpoints(id, signal) });
}

export function useAlerts(id: number) {
  return useQuery({ queryKey: runKeys.alerts(id), queryFn: ({ signal }) => fetchAlerts(id, signal) });
}

/** Cancel / resume / priority: each refreshes the run and says what happened. */
export function useRunAction(id: number) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const done = (message: string) => () => {
    toast.show(message, "success");
    void queryClient.invalidateQueries({ queryKey: runKeys.detail(id) });
    void queryClient.invalidateQueries({ queryKey: ["runs", "list"] });
  };
  const onError = (error: unknown) => toast.error(error);
  return {
    cancel: useMutation({ mutationFn: () => cancelRun(id), onSuccess: done("Cancelling the run."), onError }),
    resume: useMutation({ mutationFn: () => resumeRun(id), onSuccess: done("The run is queued again."), onError }),
    priority: useMutation({ mutationFn: (p: number) => setPriority(id, p), onSuccess: done("Priority changed."), onError }),
  };
}
