/** Every request about datasets, with their query keys (uploads, which need progress, are in lib/upload.ts). */
import { queryOptions } from "@tanstack/react-query";

import { api, unwrap, type Schemas } from "../../api/client";

export type Dataset = Schemas["Dataset"];
export type DatasetVersion = Schemas["DatasetVersion"];
export type Preview = Schemas["Preview"];
export type DetectedColumns = Schemas["DetectedColumns"];
export type DatasetDiff = Schemas["DatasetDiff"];
export type RowChange = Schemas["RowChange"];
export type DiffQuery = {
  from: number;
  to: number;
  change?: "added" | "removed" | "changed";
  offset: number;
  limit: number;
};

export const datasetKeys = {
  all: ["datasets"] as const,
  list: (project: string) => ["datasets", "list", project] as const,
  detail: (id: number) => ["datasets", "detail", id] as const,
  /** The dataset polled while one import runs (a key of its own, so its polling stops with the import). */
  importing: (id: number, importId: number) => ["datasets", "detail", id, "import", importId] as const,
  versions: (id: number) => ["datasets", "versions", id] as const,
  /** Every project's list of all its versions (what a new version of any dataset changes). */
  projectVersionLists: ["datasets", "project-versions"] as const,
  projectVersions: (project: string) => ["datasets", "project-versions", project] as const,
  preview: (id: number, number: number, offset: number, limit: number) =>
    ["datasets", "preview", id, number, offset, limit] as const,
  diff: (id: number, query: DiffQuery) => ["datasets", "diff", id, query] as const,
};

/** One list page is enough for a project's datasets; the studio caps page_size at this. */
const PAGE_SIZE = 200;

export async function listDatasets(project: string, signal?: AbortSignal): Promise<Dataset[]> {
  const page = await unwrap(
    api.GET("/api/datasets/", { params: { query: { project, page_size: PAGE_SIZE } }, signal }),
  );
  return page.results;
}

export const datasetQueries = {
  list: (project: string) => queryOptions({ queryKey: datasetKeys.list(project), queryFn: ({ signal }) => listDatasets(project, signal) }),
};

export function getDataset(id: number, signal?: AbortSignal): Promise<Dataset> {
  return unwrap(api.GET("/api/datasets/{id}/", { params: { path: { id } }, signal }));
}

export function createDataset(project: string, name: string, description: string): Promise<Dataset> {
  return unwrap(api.POST("/api/datasets/", { body: { project, name, description } }));
}

export function listVersions(datasetId: number, signal?: AbortSignal): Promise<DatasetVersion[]> {
  return unwrap(
    api.GET("/api/datasets/{dataset_id}/versions/", {
      params: { path: { dataset_id: datasetId } },
      signal,
    }),
  );
}

/** Every version of every dataset of a project, in one request (the data pickers). */
export function listProjectVersions(project: string, signal?: AbortSignal): Promise<DatasetVersion[]> {
  return unwrap(api.GET("/api/dataset-versions/", { params: { query: { project } }, signal }));
}

export function getPreview(
  datasetId: number,
  number: number,
  offset: number,
  limit: number,
  signal?: AbortSignal,
): Promise<Preview> {
  return unwrap(
    api.GET("/api/datasets/{dataset_id}/versions/{number}/preview/", {
      params: { path: { dataset_id: datasetId, number }, query: { offset, limit } },
      signal,
    }),
  );
}

export function detectColumns(sample: File, truncated: boolean): Promise<DetectedColumns> {
  const form = new FormData();
  form.set("file", sample);
  form.set("truncated", truncated ? "true" : "false");
  return unwrap(
    api.POST("/api/dataset-columns/", {
      body: form as never,
      bodySerializer: (body: unknown) => body as FormData,
    }),
  );
}

/** One page of the rows that differ between two versions, with the counts and columns. */
export function getDiff(datasetId: number, query: DiffQuery, signal?: AbortSignal): Promise<DatasetDiff> {
  return unwrap(
    api.GET("/api/datasets/{id}/diff/", { params: { path: { id: datasetId }, query }, signal }),
  );
}
