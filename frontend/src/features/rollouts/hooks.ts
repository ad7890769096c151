/** Query keys and hooks of the rollout review pages, in one place. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import {
  addLabel,
  exportLabelled,
  fetchDatasets,
  fetchGroup,
  fetchHistogram,
  fetchLengths,
  fetchMe,
  fetchPrompts,
  fetchRun,
  fetchRuns,
  fetchSample,
  fetchStepGroups,
  fetchSteps,
  fetchTimeline,
  previewExport,
  removeLabel,
  type ExportRequest,
} from "./api";

type StepSpan = { step_min?: number; step_max?: number };

export const rolloutKeys = {
  all: ["rollouts"] as const,
  run: (run: number) => ["rollouts", "run", run] as const,
  runs: (project: string) => ["rollouts", "runs", project] as const,
  steps: (run: number) => ["rollouts", run, "steps"] as const,
  samples: (run: number) => ["rollouts", run, "samples"] as const,
  sample: (id: number) => ["rollouts", "sample", id] as const,
  group: (run: number, step: number, groupId: string) =>
    ["rollouts", run, "group", step, groupId] as const,
  stepGroups: (run: number, step: number, filter: string) =>
    ["rollouts", run, "step-groups", step, filter] as const,
  timeline: (run: number, sample: number) => ["rollouts", run, "timeline", sample] as const,
  histogram: (run: number, steps: StepSpan) => ["rollouts", run, "histogram", steps] as const,
  lengths: (run: number, steps: StepSpan) => ["rollouts", run, "lengths", steps] as const,
  prompts: (run: number, q: string) => ["rollouts", run, "prompts", q] as const,
  me: ["rollouts", "me"] as const,
  datasets: (project: string) => ["rollouts", "datasets", project] as const,
};

/** How often a live run's steps are re-read (the slider's "follow latest"). */
export const LIVE_REFRESH_MS = 5_000;

export const useRun = (run: number) =>
  useQuery({ queryKey: rolloutKeys.run(run), queryFn: ({ signal }) => fetchRun(run, signal) });

export const useProjectRuns = (project: string) =>
  useQuery({
    queryKey: rolloutKeys.runs(project),
    queryFn: ({ signal }) => fetchRuns(project, signal),
    enabled: Boolean(project),
  });

export const useSteps = (run: number, live: boolean) =>
  useQuery({
    queryKey: rolloutKeys.steps(run),
    queryFn: ({ signal }) => fetchSteps(run, signal),
    refetchInterval: live ? LIVE_REFRESH_MS : false,
  });

export const useSample = (id: number | null) =>
  useQuery({
    queryKey: rolloutKeys.sample(id ?? 0),
    queryFn: ({ signal }) => fetchSample(id ?? 0, signal),
    enabled: id !== null,
  });

export const useGroup = (run: number, step: number, groupId: string) =>
  useQuery({
    queryKey: rolloutKeys.group(run, step, groupId),
    queryFn: ({ signal }) => fetchGroup(run, step, groupId, signal),
  });

export const useStepGroups = (
  run: number,
  step: number | null,
  filter: "any" | "learning" | "zero",
) =>
  useQuery({
    queryKey: rolloutKeys.stepGroups(run, step ?? -1, filter),
    queryFn: ({ signal }) => fetchStepGroups(run, step ?? 0, filter, signal),
    enabled: step !== null,
  });

export const useTimeline = (run: number | null, sample: number) =>
  useQuery({
    queryKey: rolloutKeys.timeline(run ?? 0, sample),
    queryFn: ({ signal }) => fetchTimeline(run ?? 0, sample, signal),
    enabled: run !== null,
  });

export const useHistogram = (run: number, steps: StepSpan) =>
  useQuery({
    queryKey: rolloutKeys.histogram(run, steps),
    queryFn: ({ signal }) => fetchHistogram(run, steps, signal),
    placeholderData: keepPreviousData,
  });

export const useLengths = (run: number, steps: StepSpan) =>
  useQuery({
    queryKey: rolloutKeys.lengths(run, steps),
    queryFn: ({ signal }) => fetchLengths(run, steps, signal),
    placeholderData: keepPreviousData,
  });

export const useDatasets = (project: string) =>
  useQuery({
    queryKey: rolloutKeys.datasets(project),
    queryFn: ({ signal }) => fetchDatasets(project, signal),
    enabled: Boolean(project),
  });

/** Adds or removes one of your labels; every view holding the sample refreshes. */
export function useLabelToggle() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ sample, label, on }: { sample: number; label: string; on: boolean }) =>
      on ? addLabel(sample, label) : removeLabel(sample, label),
    onSuccess: (_data, { sample }) => {
      void client.invalidateQueries({ queryKey: rolloutKeys.sample(sample) });
      void client.invalidateQueries({ queryKey: rolloutKeys.all });
    },
  });
}

/** What an export would store (a dry run: nothing is written). */
export const useExportPreview = (run: number) =>
  useMutation({ mutationFn: (request: ExportRequest) => previewExport(run, request) });

/** Exports the labelled samples; the dataset lists refresh (a new dataset, a new version). */
export function useExportLabelled(run: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (request: ExportRequest) => exportLabelled(run, request),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ["rollouts", "datasets"] });
    },
  });
}

/** The signed-in user's name (whose labels are "mine"). */
export const useMe = () =>
  useQuery({ queryKey: rolloutKeys.me, queryFn: ({ signal }) => fetchMe(signal), staleTime: Infinity });

export const usePrompts = (run: number, q: string) =>
  useQuery({
    queryKey: rolloutKeys.prompts(run, q),
    queryFn: ({ signal }) => fetchPrompts(run, q, signal),
    placeholderData: keepPreviousData,
  });
