/** Every request about a project's models, with their query keys (the run form's pickers use them too). */
import { queryOptions } from "@tanstack/react-query";

import { api, unwrap, type Schemas } from "../../api/client";

export type Model = Schemas["Model"];
export type ModelKind = Schemas["ModelKindEnum"];
export type ModelRole = Schemas["ModelRoleEnum"];
export type ModelStatus = Schemas["ModelStatusEnum"];
export type OfferedFolder = Schemas["OfferedFolder"];
export type ModelCreate = Schemas["ModelCreateRequest"];

/** Everything sits under ["models"]: invalidating `modelKeys.all` refreshes every list and picker. */
export const modelKeys = {
  all: ["models"] as const,
  list: (project: string) => ["models", "list", project] as const,
  detail: (id: number) => ["models", "detail", id] as const,
  available: (project: string) => ["models", "offered", project] as const,
};

/** One list page is enough for a project's models; the studio caps page_size at this. */
const PAGE_SIZE = 200;

export async function listModels(project: string, signal?: AbortSignal): Promise<Model[]> {
  const page = await unwrap(api.GET("/api/models/", { params: { query: { project, page_size: PAGE_SIZE } }, signal }));
  return page.results;
}

export const modelQueries = {
  list: (project: string) => queryOptions({ queryKey: modelKeys.list(project), queryFn: ({ signal }) => listModels(project, signal) }),
};

export function getModel(id: number, signal?: AbortSignal): Promise<Model> {
  return unwrap(api.GET("/api/models/{id}/", { params: { path: { id } }, signal }));
}

/** The model folders the server offers (demo models, folders under its model roots). */
export async function listAvailableFolders(project: string, signal?: AbortSignal): Promise<OfferedFolder[]> {
  const answer: unknown = await unwrap(api.GET("/api/models/available/", { params: { query: { project } }, signal }));
  // The server answers a plain list although its schema says a page: read either.
  if (Array.isArray(answer)) return answer as OfferedFolder[];
  return (answer as { results?: OfferedFolder[] } | null)?.results ?? [];
}

/** Adds a model: 201 for a folder or a run's checkpoint, 202 for a hub download (poll it). */
export function addModel(body: ModelCreate): Promise<Model> {
  return unwrap(api.POST("/api/models/", { body }));
}
