import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useParams } from "react-router";

import { createProject, fetchMembers, fetchProjects, projectKeys, setMember, type Role } from "./api";

export function useProjects() {
  return useQuery({ queryKey: projectKeys.all, queryFn: ({ signal }) => fetchProjects(signal), staleTime: 30_000 });
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
