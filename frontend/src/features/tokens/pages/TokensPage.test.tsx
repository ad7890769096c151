import { fireEvent, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { jsonResponse, mockApi, renderApp } from "../../../test/render";
import type { ApiToken } from "../api";

const okHealth = { status: "ok", version: "0.1.0", components: {} };

function token(overrides: Partial<ApiToken> = {}): ApiToken {
  return {
    id: 1,
    name: "laptop",
    prefix: "Vd3kq0aB",
    scopes: ["read", "write"],
    created_at: "2026-01-01T00:00:00Z",
    expires_at: null,
    revoked_at: null,
    last_used_at: null,
    ...overrides,
  };
}

function page(results: ApiToken[]) {
  return { count: results.length, next: null, previous: null, results };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("API tokens page", () => {
  it("says what to do when there are no tokens", async () => {
    mockApi({ "GET /api/health": okHealth, "GET /api/tokens/": page([]) });
    renderApp("/tokens");
    expect(await screen.findByRole("region", { name: "No tokens yet" })).toBeInTheDocument();
  });

  it("lists each token's scopes, expiry, last use and creation", async () => {
    mockApi({
      "GET /api/health": okHealth,
      "GET /api/tokens/": page([
        token(),
        token({ id: 2, name: "ci", scopes: ["read"], expires_at: "2001-01-01T00:00:00Z", last_used_at: "2000-12-31T10:00:00Z" }),
      ]),
    });
    renderApp("/tokens");

    const rows = within(await screen.findByRole("table", { name: "API tokens" })).getAllByRole("row");
    expect(rows[0]).toHaveTextContent("NameStarts withScopesCreatedExpiresLast used");
    expect(rows[1]).toHaveTextContent("readwrite");
    expect(rows[1]).toHaveTextContent(/never.*never/); // no expiry, never used
    expect(within(rows[1] as HTMLElement).getByRole("button", { name: "Revoke laptop" })).toBeInTheDocument();
    expect(rows[2]).toHaveTextContent("read");
    expect(rows[2]).not.toHaveTextContent("write");
    expect(rows[2]).toHaveTextContent(new Date("2000-12-31T10:00:00Z").toLocaleString());
    expect(rows[2]).toHaveTextContent("expired");
  });

  it("creates a token with the chosen scopes and expiry, and shows its secret once", async () => {
    const created = { ...token({ id: 3, name: "ci", scopes: ["read", "write", "members"] }), token: "rls_secret" };
    const fetchMock = mockApi({
      "GET /api/health": okHealth,
      "GET /api/tokens/": page([]),
      "POST /api/tokens/": () => jsonResponse(created, 201),
    });
    renderApp("/tokens");

    const form = await screen.findByRole("form", { name: "New token" });
    const read = within(form).getByRole("checkbox", { name: /^Read/ });
    const write = within(form).getByRole("checkbox", { name: /^Write/ });
    const members = within(form).getByRole("checkbox", { name: /^Manage members/ });
    expect(read).toBeChecked();
    expect(read).toBeDisabled();
    expect(write).toBeChecked();
    expect(members).not.toBeChecked();
    fireEvent.click(write);
    fireEvent.click(members); // needs write: checks it again
    expect(write).toBeChecked();
    fireEvent.change(within(form).getByLabelText("Token name"), { target: { value: "ci" } });
    fireEvent.change(within(form).getByLabelText("Expires (optional)"), { target: { value: "2030-06-01" } });
    fireEvent.click(within(form).getByRole("button", { name: "Create token" }));

    expect(await screen.findByTestId("new-token")).toHaveTextContent("rls_secret");
    const post = fetchMock.mock.calls.map((c) => c[0] as Request).find((r) => r.method === "POST");
    expect(await post?.json()).toEqual({
      name: "ci",
      scopes: ["read", "write", "members"],
      expires_at: new Date("2030-06-01T23:59:59").toISOString(),
    });
  });

  it("unchecking write drops members too", async () => {
    mockApi({ "GET /api/health": okHealth, "GET /api/tokens/": page([]) });
    renderApp("/tokens");
    const form = await screen.findByRole("form", { name: "New token" });
    fireEvent.click(within(form).getByRole("checkbox", { name: /^Manage members/ }));
    fireEvent.click(within(form).getByRole("checkbox", { name: /^Write/ }));
    expect(within(form).getByRole("checkbox", { name: /^Manage members/ })).not.toBeChecked();
  });
});
