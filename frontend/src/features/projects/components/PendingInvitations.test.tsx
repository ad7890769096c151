import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { demoProject, jsonResponse, mockApi, renderApp } from "../../../test/render";
import type { Invitation, Project } from "../api";

const okHealth = { status: "ok", version: "0.1.0", components: {} };
const noRuns = { count: 0, next: null, previous: null, results: [] };
const lab: Project = { id: 2, name: "Lab", slug: "lab", description: "", created_at: "2026-01-01T00:00:00Z", role: "viewer" };
const toLab: Invitation = {
  id: 9,
  project: "lab",
  project_name: "Lab",
  username: "ada",
  role: "viewer",
  invited_by: "grace",
  created_at: "2026-01-03T00:00:00Z",
  expires_at: "2026-01-17T00:00:00Z",
  status: "pending",
};

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("Invitations to you", () => {
  it("are shown on every page; accepting joins the project and opens it", async () => {
    let joined = false;
    mockApi({
      "GET /api/health": okHealth,
      "GET /api/runs/": noRuns,
      "GET /api/projects/": () => jsonResponse({ count: 2, next: null, previous: null, results: joined ? [demoProject, lab] : [demoProject] }),
      "GET /api/invitations/": () => jsonResponse(joined ? [] : [toLab]),
      "POST /api/invitations/9/accept/": () => {
        joined = true;
        return jsonResponse({ ...toLab, status: "accepted" });
      },
    });
    const { router } = renderApp("/p/demo/runs", { invitations: [toLab] });

    const notice = await screen.findByRole("region", { name: "Invitations to you" });
    expect(notice).toHaveTextContent("grace invited you to Lab as viewer.");
    fireEvent.click(within(notice).getByRole("button", { name: "Accept the invitation to Lab" }));

    await waitFor(() => expect(router.state.location.pathname).toBe("/p/lab/runs"));
    expect(await screen.findByText("You joined Lab as a viewer.")).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByRole("region", { name: "Invitations to you" })).not.toBeInTheDocument());
    await waitFor(() => expect(screen.getByRole("combobox", { name: "Project" })).toHaveValue("lab"));
    expect(await screen.findByRole("heading", { level: 1, name: "Runs" })).toBeInTheDocument();
  });

  it("declining closes the invitation without joining", async () => {
    let declined = false;
    const fetchMock = mockApi({
      "GET /api/health": okHealth,
      "GET /api/runs/": noRuns,
      "GET /api/invitations/": () => jsonResponse(declined ? [] : [toLab]),
      "POST /api/invitations/9/decline/": () => {
        declined = true;
        return new Response(null, { status: 204 });
      },
    });
    const { router } = renderApp("/p/demo/runs", { invitations: [toLab] });

    fireEvent.click(await screen.findByRole("button", { name: "Decline the invitation to Lab" }));

    expect(await screen.findByText("Declined the invitation to Lab.")).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByRole("region", { name: "Invitations to you" })).not.toBeInTheDocument());
    expect(router.state.location.pathname).toBe("/p/demo/runs");
    const paths = fetchMock.mock.calls.map((c) => new URL((c[0] as Request).url).pathname);
    expect(paths).not.toContain("/api/invitations/9/accept/");
  });

  it("greets someone in no project yet with their invitation above the empty state", async () => {
    mockApi({ "GET /api/health": okHealth });
    renderApp("/", { projects: [], invitations: [toLab] });

    // The root route's loader settles before the shell renders.
    expect(await screen.findByRole("region", { name: "Invitations to you" })).toHaveTextContent("Lab");
    expect(screen.getByRole("region", { name: "You are in no project yet" })).toHaveTextContent("invite you");
  });
});
