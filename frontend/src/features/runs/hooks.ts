/** Query and mutation hooks of runs (their keys and fetchers live in api.ts). */
import { keepPreviousData, useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";

import { useToast } from "../../components/Toast";
import { useEventStream } from "../../lib/useEventStream";
import { metricKeys } from "../metrics/api";
import { projectKeys } from "../projects/api";
import {
  archiveRun,
  cancelRun,
  cloneRun,
  createRun,
  deleteRun,
  fetchAlerts,
  fetchCheckpoints,
  fetchLogs,
  fetchPresets,
  listChoices,
  fetchProjectQueue,
  resumeRun,
  runKeys,
  runQueries,
  setPriority,
  unarchiveRun,
  validateConfig,
  type LogLine,
  type RunClone,
  type RunCreate,
  type RunFilters,
} from "./api";

export function useRun(id: number, enabled = true) {
  return useQuery({ ...runQueries.detail(id), enabled });
}

/** Several runs by id, each cached as its own detail (the comparison). */
export function useRunsById(ids: number[]) {
  return useQueries({ queries: ids.map((id) => runQueries.detail(id)) });
}

/** A project's runs; the last answer stays while another filter's loads. */
export function useRuns(slug: string, filters: RunFilters = {}) {
  return useQuery({
    ...runQueries.list(slug, filters),
    enabled: Boolean(slug),
    placeholderData: keepPreviousData,
  });
}

/** The project's jobs against its cap. Its key sits under the runs lists', so what refreshes them refreshes it. */
export function useProjectQueue(slug: string) {
  return useQuery({ queryKey: runKeys.queue(slug), queryFn: ({ signal }) => fetchProjectQueue(slug, signal) });
}

/** While mounted, a status change of any of the project's runs refreshes its lists (and queue). */
export function useLiveRunLists(slug: string) {
  const queryClient = useQueryClient();
  useEventStream(`/api/projects/${slug}/events`, {
    "run-status": () => {
      void queryClient.invalidateQueries({ queryKey: runKeys.lists(slug) });
      // A run that ends has been measured (studio.runs.run_files): its project's storage moved.
      void queryClient.invalidateQueries({ queryKey: projectKeys.storage(slug) });
    },
  });
}

export type LiveRecord = { step: number; time: number; values: Record<string, number | null> };

/**
 * While mounted, a run's events keep its cached resources fresh: a record with a key the
 * run had not reported refreshes its metric keys, a checkpoint or an alert refreshes that
 * list, a status change refreshes the run, and so do the trainer's startup marks and, while
 * its startup timeline waits for it (`startupPending`), its first metric. Records and log
 * lines go to the callbacks.
 */
export function useLiveRun(
  run: { id: number; status: string; startupPending?: boolean },
  knownKeys: ReadonlySet<string>,
  on: { metrics: (record: LiveRecord) => void; log: (line: LogLine) => void },
) {
  const queryClient = useQueryClient();
  const refresh = (queryKey: readonly unknown[]) => void queryClient.invalidateQueries({ queryKey });
  useEventStream(`/api/runs/${run.id}/events`, {
    metrics: (data) => {
      // The event carries its record's `time` (the trainer's clock): the same clock the
      // metrics API's `times` are read from, so live points line up on the time axis.
      const record = data as LiveRecord;
      const fresh = Object.keys(record.values).filter((k) => !knownKeys.has(k));
      if (fresh.length) {
        // Its keys are the run's now: their charts mount at once, not after a round trip for
        // the keys (the run's first chart waited for it). The refetch still catches keys
        // this page's stream started too late to see.
        queryClient.setQueryData<string[]>(metricKeys.keys(run.id), (keys = []) => [...new Set([...keys, ...fresh])].sort());
        refresh(metricKeys.keys(run.id));
      }
      if (run.startupPending) refresh(runKeys.detail(run.id)); // its first metric is stored
      on.metrics(record);
    },
    startup: () => refresh(runKeys.detail(run.id)),
    log: (data) => on.log(data as LogLine),
    checkpoint: () => refresh(runKeys.checkpoints(run.id)),
    alert: () => refresh(runKeys.alerts(run.id)),
    "run-status": (data) => {
      if ((data as { status: string }).status !== run.status) refresh(runKeys.detail(run.id));
    },
  });
}

export function useConfigSchema() {
  return useQuery(runQueries.configSchema());
}

/** A generic input picker's choices: the project's items of its list endpoint, one request per endpoint; asked for only when `enabled` (the picker is shown). */
export function useChoices(list: string, slug: string, enabled = true) {
  return useQuery({ queryKey: runKeys.choices(list, slug), queryFn: ({ signal }) => listChoices(list, slug, signal), enabled: Boolean(slug) && enabled });
}

export function usePresets() {
  return useQuery({ queryKey: runKeys.presets, queryFn: ({ signal }) => fetchPresets(signal), staleTime: Infinity });
}

export function useLogs(id: number, level: string) {
  return useQuery({ queryKey: runKeys.logs(id, level), queryFn: ({ signal }) => fetchLogs(id, level, signal) });
}

/** A run's checkpoints (none asked for while `enabled` is false: no run chosen yet). */
export function useCheckpoints(id: number, enabled = true) {
  return useQuery({ queryKey: runKeys.checkpoints(id), queryFn: ({ signal }) => fetchCheckpoints(id, signal), enabled });
}

export function useAlerts(id: number) {
  return useQuery({ queryKey: runKeys.alerts(id), queryFn: ({ signal }) => fetchAlerts(id, signal) });
}

/** A new run (`body` a RunCreate) or a clone of `clone` with edits; the runs lists refresh. */
export type StartRun = { clone: number; body: RunClone } | { clone: null; body: RunCreate };

export function useStartRun() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (request: StartRun) => (request.clone !== null ? cloneRun(request.clone, request.body) : createRun(request.body)),
    onSuccess: (run) => {
      queryClient.setQueryData(runKeys.detail(run.id), run);
      void queryClient.invalidateQueries({ queryKey: runKeys.all, predicate: (q) => q.queryKey[1] === "list" });
    },
  });
}

/** Checks a config and its overrides (nothing is stored): the run form's "apply overrides". */
export function useValidateConfig() {
  return useMutation({ mutationFn: validateConfig });
}

/** Cancel / resume / priority: each refreshes the run and says what happened. */
export function useRunAction(id: number) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const done = (message: string) => () => {
    toast.show(message, "success");
    void queryClient.invalidateQueries({ queryKey: runKeys.detail(id) });
    void queryClient.invalidateQueries({ queryKey: runKeys.all, predicate: (q) => q.queryKey[1] === "list" });
  };
  const onError = (error: unknown) => toast.error(error);
  return {
    cancel: useMutation({ mutationFn: () => cancelRun(id), onSuccess: done("Cancelling the run."), onError }),
    resume: useMutation({ mutationFn: () => resumeRun(id), onSuccess: done("The run is queued again."), onError }),
    priority: useMutation({ mutationFn: (p: number) => setPriority(id, p), onSuccess: done("Priority changed."), onError }),
    archive: useMutation({ mutationFn: () => archiveRun(id), onSuccess: done("Archived: the run is hidden from the runs list. Archiving frees no storage; deleting does."), onError }),
    unarchive: useMutation({ mutationFn: () => unarchiveRun(id), onSuccess: done("The run is listed again."), onError }),
  };
}

/**
 * Deletes a run that has ended, with its files: the project's runs lists and storage
 * refresh, the run's own cache entries go. `onDeleted` gets the bytes freed; a refusal (a
 * live run, a model or an evaluation that uses it) is shown as the server words it.
 */
export function useDeleteRun(id: number, slug: string, onDeleted: (freedBytes: number) => void) {
  const queryClient = useQueryClient();
  const toast = useToast();
  return useMutation({
    mutationFn: () => deleteRun(id),
    onSuccess: (deleted) => {
      queryClient.removeQueries({ queryKey: runKeys.detail(id) });
      void queryClient.invalidateQueries({ queryKey: runKeys.lists(slug) });
      void queryClient.invalidateQueries({ queryKey: projectKeys.storage(slug) });
      onDeleted(deleted.freed_bytes);
    },
    onError: (error: unknown) => toast.error(error),
  });
}
