import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useParams } from "react-router";

import {
  acceptInvitation,
  createProject,
  declineInvitation,
  fetchMembers,
  fetchMyInvitations,
  fetchNotifications,
  fetchProjectInvitations,
  fetchProjectStorage,
  projectQueries,
  invitationKeys,
  inviteMember,
  projectKeys,
  revokeInvitation,
  setMember,
  updateNotifications,
  type NotificationsUpdate,
  type Role,
} from "./api";

export function useProjects() {
  return useQuery(projectQueries.all());
}

/** The project named in the URL (`/p/:slug/...`). */
export function useProjectSlug(): string {
  const { slug } = useParams();
  if (!slug) throw new Error("useProjectSlug is used outside a /p/:slug route");
  return slug;
}

export function useCurrentProject() {
  const slug = useProjectSlug();
  const projects = useProjects();
  return { ...projects, project: projects.data?.find((p) => p.slug === slug) };
}

export function useCreateProject() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createProject,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: projectKeys.all }),
  });
}

export function useMembers(slug: string) {
  return useQuery({ queryKey: projectKeys.members(slug), queryFn: ({ signal }) => fetchMembers(slug, signal) });
}

export function useSetMember(slug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ username, role }: { username: string; role: Role }) => setMember(slug, username, role),
    onSuccess: (members) => queryClient.setQueryData(projectKeys.members(slug), members),
  });
}

/** A project's open invitations (only owners may read them). */
export function useProjectInvitations(slug: string) {
  return useQuery({ queryKey: projectKeys.invitations(slug), queryFn: ({ signal }) => fetchProjectInvitations(slug, signal) });
}

export function useInviteMember(slug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ username, role }: { username: string; role: Role }) => inviteMember(slug, username, role),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: projectKeys.invitations(slug) }),
  });
}

export function useRevokeInvitation(slug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => revokeInvitation(slug, id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: projectKeys.invitations(slug) }),
  });
}

/** Invitations to me: checked again each minute and when the window regains focus. */
export function useMyInvitations() {
  return useQuery({ queryKey: invitationKeys.mine, queryFn: ({ signal }) => fetchMyInvitations(signal), refetchInterval: 60_000 });
}

export function useAnswerInvitation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, accept }: { id: number; accept: boolean }) => {
      if (accept) await acceptInvitation(id);
      else await declineInvitation(id);
    },
    onSuccess: async (_, { accept }) => {
      await queryClient.invalidateQueries({ queryKey: invitationKeys.mine });
      if (accept) await queryClient.invalidateQueries({ queryKey: projectKeys.all, exact: true });
    },
  });
}

export function useNotifications(slug: string) {
  return useQuery({ queryKey: projectKeys.notifications(slug), queryFn: ({ signal }) => fetchNotifications(slug, signal) });
}

export function useUpdateNotifications(slug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: NotificationsUpdate) => updateNotifications(slug, body),
    onSuccess: (saved) => queryClient.setQueryData(projectKeys.notifications(slug), saved),
  });
}

/** The project's storage against its quota (the runs page's meter). */
export function useProjectStorage(slug: string) {
  return useQuery({ queryKey: projectKeys.storage(slug), queryFn: ({ signal }) => fetchProjectStorage(slug, signal), staleTime: 30_000 });
}
