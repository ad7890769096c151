/** Query and mutation hooks of models (their keys and fetchers live in api.ts). */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { addModel, getModel, listAvailableFolders, modelKeys, modelQueries, type Model, type ModelCreate, type ModelRole, type OfferedFolder } from "./api";
import { isPending } from "./lib/format";

/** How often a model a worker is downloading is asked for again. */
export const POLL_MS = 1000;

/** The project's models; polled while one of them is still downloading. */
export function useModels(project: string) {
  return useQuery({
    ...modelQueries.list(project),
    enabled: Boolean(project),
    refetchInterval: (query) => (query.state.data?.some((m) => isPending(m.status)) ? POLL_MS : false),
  });
}

/** The project's models of one role that are ready to use (the run form's pickers): one list, filtered. */
export function useReadyModels(project: string, role: ModelRole) {
  const models = useModels(project);
  return { ...models, data: models.data?.filter((m: Model) => m.role === role && m.status === "ready") };
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

/** The model folders the server offers to add (of one role, when given); asked for only when `enabled`. */
export function useAvailableFolders(project: string, role?: ModelRole, enabled = true) {
  return useQuery({
    queryKey: modelKeys.available(project),
    queryFn: ({ signal }) => listAvailableFolders(project, signal),
    enabled: Boolean(project) && enabled,
    select: (folders: OfferedFolder[]) => (role ? folders.filter((f) => f.role === role) : folders),
  });
}

/**
 * Adds a model; the new one is cached as its detail and in its project's list (a picker
 * can choose it at once), and every models list is refreshed.
 */
export function useAddModel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ModelCreate) => addModel(body),
    onSuccess: (created: Model, body: ModelCreate) => {
      queryClient.setQueryData(modelKeys.detail(created.id), created);
      queryClient.setQueryData<Model[]>(modelKeys.list(body.project), (old) => (old && !old.some((m) => m.id === created.id) ? [...old, created] : old));
      return queryClient.invalidateQueries({
        queryKey: modelKeys.all,
        predicate: (query) => query.queryKey[1] !== "detail" || query.queryKey[2] !== created.id,
      });
    },
  });
}
