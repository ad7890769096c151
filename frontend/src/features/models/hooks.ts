import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { listRuns, runKeys } from "../runs/api";
import { addModel, getModel, listAvailableFolders, listModels, type Model, type ModelCreate } from "./api";
import { isPending } from "./format";

/** How often a model a worker is downloading is asked for again. */
export const POLL_MS = 1000;

/**
 * Query keys of the models feature. Everything sits under ["models"], like the run form's
 * model picker (runKeys.models), so invalidating `modelKeys.all` refreshes both.
 */
export const modelKeys = {
  all: ["models"] as const,
  lists: () => ["models", "list"] as const,
  list: (project: string) => ["models", "list", project] as const,
  detail: (id: number) => ["models", "detail", id] as const,
  available: (project: string) => ["models", "offered", project] as const,
};

/** The project's models; polled while one of them is still downloading. */
export function useModels(project: string) {
  return useQuery({
    queryKey: modelKeys.list(project),
    queryFn: ({ signal }) => listModels(project, signal),
    enabled: Boolean(project),
    refetchInterval: (query) => (query.state.data?.some((m) => isPending(m.status)) ? POLL_MS : false),
  });
}

/** One model; polled every second while it is queued or downloading. */
export function useModel(id: number | null) {
  return useQuery({
    queryKey: modelKeys.detail(id ?? 0),
    queryFn: ({ signal }) => getModel(id as number, signal),
    enabled: id !== null,
    refetchInterval: (query) => {
      const model = query.state.data;
      return !model || isPending(model.status) ? POLL_MS : false;
    },
  });
}

/** The model folders the server offers to add. */
export function useAvailableFolders(project: string) {
  return useQuery({
    queryKey: modelKeys.available(project),
    queryFn: ({ signal }) => listAvailableFolders(project, signal),
    enabled: Boolean(project),
  });
}

/** The project's runs, newest first, for choosing a checkpoint (the runs feature's fetcher). */
export function useProjectRuns(project: string) {
  return useQuery({
    queryKey: runKeys.list(project, { ordering: "-created_at" }),
    queryFn: ({ signal }) => listRuns(project, { ordering: ["-created_at"] }, signal),
    enabled: Boolean(project),
  });
}

/** Adds a model; the new one is cached as its detail and every models list is refreshed. */
export function useAddModel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ModelCreate) => addModel(body),
    onSuccess: (created: Model) => {
      queryClient.setQueryData(modelKeys.detail(created.id), created);
      return queryClient.invalidateQueries({
        queryKey: modelKeys.all,
        predicate: (query) => query.queryKey[1] !== "detail" || query.queryKey[2] !== created.id,
      });
    },
  });
}
