import { queryOptions } from "@tanstack/react-query";

import { api, unwrap, type Schemas } from "../../api/client";

export type Project = Schemas["Project"];
export type Membership = Schemas["Membership"];
export type Role = Schemas["RoleEnum"];
export type Invitation = Schemas["Invitation"];
export type Notifications = Schemas["Notifications"];
export type NotificationsUpdate = Schemas["NotificationsUpdateRequest"];
export type ProjectStorage = Schemas["ProjectStorage"];

export const projectKeys = {
  all: ["projects"] as const,
  members: (slug: string) => ["projects", slug, "members"] as const,
  invitations: (slug: string) => ["projects", slug, "invitations"] as const,
  notifications: (slug: string) => ["projects", slug, "notifications"] as const,
  /** What the project's files take, and its quota: deleting a run refreshes it. */
  storage: (slug: string) => ["projects", slug, "storage"] as const,
};

/** Invitations addressed to the signed-in user (not one project's). */
export const invitationKeys = { mine: ["invitations"] as const };

const MAX_PROJECTS = 200;

export async function fetchProjects(signal?: AbortSignal): Promise<Project[]> {
  const page = await unwrap(api.GET("/api/projects/", { params: { query: { page_size: MAX_PROJECTS } }, signal }));
  return page.results;
}

export const projectQueries = {
  all: () => queryOptions({ queryKey: projectKeys.all, queryFn: ({ signal }) => fetchProjects(signal), staleTime: 30_000 }),
};

export function createProject(body: { name: string; description?: string }): Promise<Project> {
  return unwrap(api.POST("/api/projects/", { body }));
}

export function fetchMembers(slug: string, signal?: AbortSignal): Promise<Membership[]> {
  return unwrap(api.GET("/api/projects/{slug}/members/", { params: { path: { slug } }, signal }));
}

/** Changes an existing member's role (owners only); others are invited. Answers the member list. */
export function setMember(slug: string, username: string, role: Role): Promise<Membership[]> {
  return unwrap(api.POST("/api/projects/{slug}/members/", { params: { path: { slug } }, body: { username, role } }));
}

/** A project's open invitations (owners only). */
export function fetchProjectInvitations(slug: string, signal?: AbortSignal): Promise<Invitation[]> {
  return unwrap(api.GET("/api/projects/{slug}/invitations/", { params: { path: { slug } }, signal }));
}

/** Invites a username (owners only): the answer is the same whether or not the account exists. */
export function inviteMember(slug: string, username: string, role: Role): Promise<Invitation> {
  return unwrap(api.POST("/api/projects/{slug}/invitations/", { params: { path: { slug } }, body: { username, role } }));
}

export async function revokeInvitation(slug: string, id: number): Promise<void> {
  await unwrap(api.DELETE("/api/projects/{slug}/invitations/{invitation_id}/", { params: { path: { slug, invitation_id: id } } }));
}

export function fetchMyInvitations(signal?: AbortSignal): Promise<Invitation[]> {
  return unwrap(api.GET("/api/invitations/", { signal }));
}

export function acceptInvitation(id: number): Promise<Invitation> {
  return unwrap(api.POST("/api/invitations/{id}/accept/", { params: { path: { id } } }));
}

export async function declineInvitation(id: number): Promise<void> {
  await unwrap(api.POST("/api/invitations/{id}/decline/", { params: { path: { id } } }));
}

/** What the project sends outside the browser, and what you are emailed about. */
export function fetchNotifications(slug: string, signal?: AbortSignal): Promise<Notifications> {
  return unwrap(api.GET("/api/projects/{slug}/notifications/", { params: { path: { slug } }, signal }));
}

/** Changes the fields named (the webhook's: owners only). */
export function updateNotifications(slug: string, body: NotificationsUpdate): Promise<Notifications> {
  return unwrap(api.PUT("/api/projects/{slug}/notifications/", { params: { path: { slug } }, body }));
}

/** What the project's files take (runs, evaluations, datasets, hub models) and its quota (0: none). */
export function fetchProjectStorage(slug: string, signal?: AbortSignal): Promise<ProjectStorage> {
  return unwrap(api.GET("/api/projects/{slug}/storage/", { params: { path: { slug } }, signal }));
}
