import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { demoProject, jsonResponse, mockApi, renderApp } from "../../../test/render";
import type { Invitation, Membership } from "../api";

const okHealth = { status: "ok", version: "0.1.0", components: {} };
const members: Membership[] = [
  { id: 1, username: "ada", role: "owner", created_at: "2026-01-01T00:00:00Z" },
  { id: 2, username: "bob", role: "viewer", created_at: "2026-01-02T00:00:00Z" },
];

function invitation(overrides: Partial<Invitation> = {}): Invitation {
  return {
    id: 7,
    project: "demo",
    project_name: "Demo",
    username: "carol",
    role: "member",
    invited_by: "ada",
    created_at: "2026-01-03T00:00:00Z",
    expires_at: "2026-01-17T00:00:00Z",
    status: "pending",
    ...overrides,
  };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("Members page", () => {
  it("invites a username instead of adding it, and lists the open invitations", async () => {
    let open: Invitation[] = [];
    const fetchMock = mockApi({
      "GET /api/health": okHealth,
      "GET /api/projects/demo/members/": members,
      "GET /api/projects/demo/invitations/": () => jsonResponse(open),
      "POST /api/projects/demo/invitations/": () => {
        open = [invitation()];
        return jsonResponse(invitation(), 201);
      },
    });
    renderApp("/p/demo/members");

    expect(await screen.findByText("No open invitations.")).toBeInTheDocument();
    const form = screen.getByRole("form", { name: "Invite someone" });
    fireEvent.change(within(form).getByLabelText("Username"), { target: { value: " carol " } });
    fireEvent.click(within(form).getByRole("button", { name: "Invite" }));

    expect(await screen.findByRole("status")).toHaveTextContent("Invited carol as a member: they join when they accept.");
    const table = await screen.findByRole("table", { name: "Open invitations" });
    expect(within(table).getAllByRole("row")[1]).toHaveTextContent("carolmemberada");
    const post = fetchMock.mock.calls.map((c) => c[0] as Request).find((r) => r.method === "POST");
    expect(await post?.json()).toEqual({ username: "carol", role: "member" });
    expect(within(screen.getByRole("table", { name: "Members" })).getAllByRole("row")).toHaveLength(3);
  });

  it("shows the server's refusal under the username", async () => {
    mockApi({
      "GET /api/health": okHealth,
      "GET /api/projects/demo/members/": members,
      "GET /api/projects/demo/invitations/": [],
      "POST /api/projects/demo/invitations/": () =>
        jsonResponse({ error: { code: "validation_error", message: "username: 'bob' is already a member; change their role instead.", fields: { username: ["'bob' is already a member; change their role instead."] } } }, 400),
    });
    renderApp("/p/demo/members");

    const form = await screen.findByRole("form", { name: "Invite someone" });
    fireEvent.change(within(form).getByLabelText("Username"), { target: { value: "bob" } });
    fireEvent.click(within(form).getByRole("button", { name: "Invite" }));

    expect(await within(form).findByRole("alert")).toHaveTextContent("already a member");
    expect(within(form).getByLabelText("Username")).toHaveAttribute("aria-invalid", "true");
  });

  it("revokes an open invitation", async () => {
    let open = [invitation()];
    mockApi({
      "GET /api/health": okHealth,
      "GET /api/projects/demo/members/": members,
      "GET /api/projects/demo/invitations/": () => jsonResponse(open),
      "DELETE /api/projects/demo/invitations/7/": () => {
        open = [];
        return new Response(null, { status: 204 });
      },
    });
    renderApp("/p/demo/members");

    fireEvent.click(await screen.findByRole("button", { name: "Revoke the invitation to carol" }));

    expect(await screen.findByRole("status")).toHaveTextContent("Invitation to carol revoked.");
    expect(await screen.findByText("No open invitations.")).toBeInTheDocument();
  });

  it("shows members, not invitations, to someone who is not an owner", async () => {
    const fetchMock = mockApi({ "GET /api/health": okHealth, "GET /api/projects/demo/members/": members });
    renderApp("/p/demo/members", { projects: [{ ...demoProject, role: "member" }] });

    expect(await screen.findByRole("table", { name: "Members" })).toHaveTextContent("bob");
    expect(screen.queryByRole("form", { name: "Invite someone" })).not.toBeInTheDocument();
    expect(screen.getByText(/Only the project's owners can invite people/)).toBeInTheDocument();
    await waitFor(() => expect(fetchMock).toHaveBeenCalled());
    expect(fetchMock.mock.calls.map((c) => new URL((c[0] as Request).url).pathname)).not.toContain("/api/projects/demo/invitations/");
  });
});
