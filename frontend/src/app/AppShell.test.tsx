import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { jsonResponse, mockApi, mockFetch, renderApp } from "../test/render";

const okHealth = { status: "ok", version: "0.1.0", components: {} };
const noRuns = { count: 0, next: null, previous: null, results: [] };

describe("App shell", () => {
  it("shows the product name, the project's sections and the account's in the left nav", async () => {
    mockApi({ "GET /api/health": okHealth, "GET /api/runs/": noRuns });
    renderApp("/p/demo/runs");

    // The runs route's loader runs before the first render: the shell shows a tick later.
    expect(await screen.findByRole("link", { name: "RL Studio" })).toBeInTheDocument();
    const nav = within(screen.getByRole("navigation", { name: "Main" }));
    expect(nav.getAllByRole("link").map((a) => a.textContent)).toEqual([
      "Runs",
      "Sweeps",
      "Evaluations",
      "Playground",
      "Models",
      "Datasets",
      "Reward functions",
      "Members",
      "API tokens",
      "System status",
    ]);
    expect(nav.getByRole("link", { name: "Runs" })).toHaveAttribute("aria-current", "page");
    expect(screen.getByRole("combobox", { name: "Project" })).toHaveValue("demo");
    expect(await screen.findByRole("link", { name: /All systems operational/ })).toBeInTheDocument();
  });

  it("sends the root path to the first project's runs", async () => {
    mockApi({ "GET /api/health": okHealth, "GET /api/runs/": noRuns });
    const { router } = renderApp("/");

    await waitFor(() => expect(router.state.location.pathname).toBe("/p/demo/runs"));
    expect(await screen.findByRole("heading", { level: 1, name: "Runs" })).toBeInTheDocument();
    expect(await screen.findByRole("region", { name: "No runs yet" })).toBeInTheDocument();
  });

  it("sends a visitor who is not signed in to the sign-in page, keeping where they were going", async () => {
    mockFetch(jsonResponse(okHealth));
    const { router } = renderApp("/p/demo/runs", { user: null });

    await waitFor(() => expect(router.state.location.pathname).toBe("/sign-in"));
    expect(router.state.location.search).toBe(`?next=${encodeURIComponent("/p/demo/runs")}`);
    expect(screen.getByRole("heading", { name: "Sign in" })).toBeInTheDocument();
  });

  it("says so when the project in the URL is not one of yours", async () => {
    mockFetch(jsonResponse(okHealth));
    renderApp("/p/someone-elses/runs");

    expect(await screen.findByRole("region", { name: "No project “someone-elses” for you" })).toBeInTheDocument();
  });

  it("shows a not-found page for unknown paths inside the shell", async () => {
    mockFetch(jsonResponse(okHealth));
    renderApp("/no/such/page");

    // The root route's loader (the session) runs before the first render: a tick later.
    expect(await screen.findByRole("heading", { name: "Nothing lives at /no/such/page" })).toBeInTheDocument();
    expect(screen.getByRole("navigation", { name: "Main" })).toBeInTheDocument();
  });
});
