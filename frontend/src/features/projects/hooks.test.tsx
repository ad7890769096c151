import { act, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { demoProject, mockApi, pageOf, renderQueryHook } from "../../test/render";
import { invitationKeys, projectKeys, type Invitation } from "./api";
import { useAnswerInvitation, useInviteMember, useProjects } from "./hooks";

afterEach(() => vi.unstubAllGlobals());

const invitation: Invitation = { id: 4, project: "demo", project_name: "Demo", username: "bo", role: "viewer", invited_by: "ada", created_at: "2026-01-01T00:00:00Z" } as Invitation;

describe("useProjects", () => {
  it("answers the projects of the page", async () => {
    mockApi({ "GET /api/projects/": pageOf([demoProject]) });
    const { result } = renderQueryHook(() => useProjects());
    await waitFor(() => expect(result.current.data).toEqual([demoProject]));
  });
});

describe("useInviteMember", () => {
  it("refreshes the project's open invitations", async () => {
    mockApi({ "POST /api/projects/demo/invitations/": invitation });
    const { result, queryClient } = renderQueryHook(() => useInviteMember("demo"));
    queryClient.setQueryData(projectKeys.invitations("demo"), []);
    await act(() => result.current.mutateAsync({ username: "bo", role: "viewer" }));
    expect(queryClient.getQueryState(projectKeys.invitations("demo"))?.isInvalidated).toBe(true);
  });
});

describe("useAnswerInvitation", () => {
  it("refreshes my invitations, and my projects once I accepted", async () => {
    mockApi({ "POST /api/invitations/4/accept/": invitation, "POST /api/invitations/4/decline/": () => new Response(null, { status: 204 }) });
    const { result, queryClient } = renderQueryHook(() => useAnswerInvitation());
    queryClient.setQueryData(invitationKeys.mine, [invitation]);
    queryClient.setQueryData(projectKeys.all, []);
    await act(() => result.current.mutateAsync({ id: 4, accept: false }));
    expect(queryClient.getQueryState(invitationKeys.mine)?.isInvalidated).toBe(true);
    expect(queryClient.getQueryState(projectKeys.all)?.isInvalidated).toBe(false);

    await act(() => result.current.mutateAsync({ id: 4, accept: true }));
    expect(queryClient.getQueryState(projectKeys.all)?.isInvalidated).toBe(true);
  });
});
