/** Query and mutation hooks of sweeps (their keys and fetchers live in api.ts). */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { useToast } from "../../components/Toast";
import { formatBytes } from "../../lib/units";
import { useProjectDatasetVersions } from "../datasets/hooks";
import { useReadyModels } from "../models/hooks";
import { useRewardFunctions, useRewardVersionsOf } from "../rewards/hooks";
import { runKeys } from "../runs/api";
import { actOnSweep, addTrials, createSweep, deleteSweep, sweepKeys, sweepQueries, type SweepAction, type SweepDetail } from "./api";
import { isLive, LIVE_POLL_MS } from "./lib/trials";

/** A project's sweeps; asked again every few seconds while one of them runs. */
export function useSweeps(slug: string) {
  return useQuery({
    ...sweepQueries.list(slug),
    enabled: Boolean(slug),
    refetchInterval: (query) => (query.state.data?.results.some((s) => s.status === "running") ? LIVE_POLL_MS * 5 : false),
  });
}

/** One sweep, asked again every ~2 s while it is live (running, or paused with trials running). */
export function useSweep(id: number) {
  return useQuery({
    ...sweepQueries.detail(id),
    refetchInterval: (query) => (isLive(query.state.data) ? LIVE_POLL_MS : false),
  });
}

export function useCreateSweep() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createSweep,
    onSuccess: (sweep) => {
      queryClient.setQueryData(sweepKeys.detail(sweep.id), sweep);
      void queryClient.invalidateQueries({ queryKey: sweepKeys.list(sweep.project) });
    },
  });
}

const DONE: Record<SweepAction, string> = {
  pause: "Paused: no new trial starts; running trials go on.",
  resume: "Resumed: new trials start again.",
  stop: "Stopped: its running trials are cancelled.",
};

/** Pause / resume / stop / add trials: each answer is the sweep itself, put in the cache at once; delete. */
export function useSweepActions(id: number) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const onSuccess = (message: string) => (sweep: SweepDetail) => {
    queryClient.setQueryData(sweepKeys.detail(id), sweep);
    void queryClient.invalidateQueries({ queryKey: sweepKeys.list(sweep.project) });
    // Trials are runs: their statuses in the runs lists change too.
    void queryClient.invalidateQueries({ queryKey: runKeys.lists(sweep.project) });
    toast.show(message, "success");
  };
  const onError = (error: unknown) => toast.error(error);
  return {
    remove: useMutation({
      mutationFn: () => deleteSweep(id),
      onSuccess: (deleted) => {
        queryClient.removeQueries({ queryKey: sweepKeys.detail(id) });
        void queryClient.invalidateQueries({ queryKey: sweepKeys.all });
        void queryClient.invalidateQueries({ queryKey: runKeys.all, predicate: (q) => q.queryKey[1] === "list" });
        toast.show(`Sweep “${deleted.name}” deleted, with its trials' runs (${formatBytes(deleted.freed_bytes)} freed).`, "success");
      },
      onError,
    }),
    act: useMutation({ mutationFn: (action: SweepAction) => actOnSweep(id, action), onSuccess: (sweep, action) => onSuccess(DONE[action])(sweep), onError }),
    addTrials: useMutation({ mutationFn: (count: number) => addTrials(id, count), onSuccess: (sweep, count) => onSuccess(`${count} more trial${count === 1 ? "" : "s"}: up to ${sweep.max_trials} in all.`)(sweep), onError }),
  };
}

/** An item a sweep's input parameter can take: an id with its label, under a group (its dataset, its reward function). */
export type InputOption = { id: number; label: string; group: string };
type Options = { options: InputOption[] | undefined; error: unknown };

/** The project's dataset versions (for the training or the validation data). */
export function useDatasetVersionOptions(slug: string): Options {
  const { datasets, versions, error } = useProjectDatasetVersions(slug);
  const options = datasets?.flatMap((d) => (versions.get(d.id) ?? []).map((v) => ({ id: v.id, label: `${d.name} v${v.number} · ${v.row_count} rows`, group: d.name })));
  return { options, error };
}

/** Every version of every reward function of the project. */
export function useRewardVersionOptions(slug: string): Options {
  const functions = useRewardFunctions(slug);
  const versions = useRewardVersionsOf((functions.data ?? []).map((f) => f.id));
  const loading = !functions.data || versions.some((q) => q.isPending);
  const options = loading
    ? undefined
    : (functions.data ?? []).flatMap((f, i) => (versions[i]?.data ?? []).map((v) => ({ id: v.id, label: `${f.name} v${v.number}${v.message ? ` · ${v.message}` : ""}`, group: f.name })));
  return { options, error: functions.error ?? versions.find((q) => q.isError)?.error ?? null };
}

/** The project's ready models of a role (the policy, or a saved LoRA adapter). */
export function useModelOptions(slug: string, role: "policy" | "adapter"): Options {
  const models = useReadyModels(slug, role);
  return { options: models.data?.map((m) => ({ id: m.id, label: `${m.name} (${m.kind})`, group: role })), error: models.error };
}
