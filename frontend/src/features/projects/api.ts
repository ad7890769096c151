import { api, unwrap, type Schemas } from "../../api/client";

export type Project = Schemas["Project"];
export type Membership = Schemas["Membership"];
export type Role = Schemas["RoleEnum"];

export const projectKeys = {
  all: ["projects"] as const,
  members: (slug: string) => ["projects", slug, "members"] as const,
};

const MAX_PROJECTS = 200;

export async function fetchProjects(signal?: AbortSignal): Promise<Project[]> {
  const page = await unwrap(api.GET("/api/projects/", { params: { query: { page_size: MAX_PROJECTS } }, signal }));
  return page.results;
}

export function createProject(body: { name: string; description?: string }): Promise<Project> {
  return unwrap(api.POST("/api/projects/", { body }));
}

export function fetchMembers(slug: string, signal?: AbortSignal): Promise<Membership[]> {
  return unwrap(api.GET("/api/projects/{slug}/members/", { params: { path: { slug } }, signal }));
}

/** Adds a member or changes their role (owners only). Answers the new member list. */
export function setMember(slug: string, username: string, role: Role): Promise<Membership[]> {
  return unwrap(api.POST("/api/projects/{slug}/members/", { params: { path: { slug } }, body: { username, role } }));
}
