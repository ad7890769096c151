/** Query and mutation hooks of datasets (their keys and fetchers live in api.ts). */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { createDataset, datasetKeys, datasetQueries, getDataset, getDiff, getPreview, listProjectVersions, listVersions, type DatasetVersion, type DiffQuery } from "./api";

export function useDatasets(project: string) {
  return useQuery({ ...datasetQueries.list(project), enabled: Boolean(project) });
}

export function useDataset(id: number) {
  return useQuery({ queryKey: datasetKeys.detail(id), queryFn: ({ signal }) => getDataset(id, signal) });
}

/** A dataset's versions (none asked for while `id` is null). */
export function useDatasetVersions(id: number | null) {
  return useQuery({ queryKey: datasetKeys.versions(id ?? 0), queryFn: ({ signal }) => listVersions(id ?? 0, signal), enabled: id !== null });
}

/** The project's datasets with every version of each, newest version first (the data pickers): two requests, whatever the number of datasets. */
export function useProjectDatasetVersions(project: string) {
  const datasets = useDatasets(project);
  const versions = useQuery({ queryKey: datasetKeys.projectVersions(project), queryFn: ({ signal }) => listProjectVersions(project, signal), enabled: Boolean(project) });
  const byDataset = new Map<number, DatasetVersion[]>();
  for (const d of datasets.data ?? []) byDataset.set(d.id, []);
  for (const v of versions.data ?? []) byDataset.get(v.dataset)?.push(v);
  for (const list of byDataset.values()) list.sort((a, b) => b.number - a.number);
  return { datasets: datasets.data, versions: byDataset, isPending: datasets.isPending, error: datasets.error };
}

/** A page of a version's rows; the last page stays while the next loads. */
export function usePreview(datasetId: number, number: number, offset: number, limit: number) {
  return useQuery({
    queryKey: datasetKeys.preview(datasetId, number, offset, limit),
    queryFn: ({ signal }) => getPreview(datasetId, number, offset, limit, signal),
    placeholderData: keepPreviousData,
    staleTime: Infinity, // versions never change
  });
}

/** The dataset, polled every `everyMs` while import `importId` runs (not at all while it is null). */
export function useImportPoll(datasetId: number, importId: number | null, everyMs: number) {
  return useQuery({
    queryKey: datasetKeys.importing(datasetId, importId ?? 0),
    queryFn: ({ signal }) => getDataset(datasetId, signal),
    enabled: importId !== null,
    refetchInterval: everyMs,
  });
}

/** Marks a dataset and its versions stale (a version was uploaded or imported). */
export function useRefreshDataset() {
  const queryClient = useQueryClient();
  return (id: number) => {
    void queryClient.invalidateQueries({ queryKey: datasetKeys.versions(id) });
    void queryClient.invalidateQueries({ queryKey: datasetKeys.projectVersionLists });
    void queryClient.invalidateQueries({ queryKey: datasetKeys.detail(id) });
  };
}

/** Creates an empty dataset; the project's list refreshes. */
export function useCreateDataset(project: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ name, description }: { name: string; description: string }) => createDataset(project, name, description),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: datasetKeys.list(project) }),
  });
}

/** A page of the diff of two versions; the last page stays while the next loads. */
export function useVersionDiff(datasetId: number, query: DiffQuery | null) {
  return useQuery({
    queryKey: datasetKeys.diff(datasetId, query ?? { from: 0, to: 0, offset: 0, limit: 0 }),
    queryFn: ({ signal }) => getDiff(datasetId, query as DiffQuery, signal),
    enabled: query !== null,
    placeholderData: keepPreviousData,
    staleTime: Infinity, // versions never change
  });
}
