import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { jsonResponse, mockFetch, renderApp } from "../test/render";

const okHealth = { status: "ok", version: "0.1.0", components: {} };

describe("App shell", () => {
  it("shows the product name and every section in the left nav", async () => {
    mockFetch(jsonResponse(okHealth));
    renderApp("/runs");

    expect(screen.getByRole("link", { name: "RL Studio" })).toBeInTheDocument();
    const nav = within(screen.getByRole("navigation", { name: "Main" }));
    expect(nav.getAllByRole("link").map((a) => a.textContent)).toEqual([
      "Runs",
      "Datasets",
      "Reward functions",
      "System status",
    ]);
    expect(nav.getByRole("link", { name: "Runs" })).toHaveAttribute("aria-current", "page");
    expect(await screen.findByRole("link", { name: /All systems operational/ })).toBeInTheDocument();
  });

  it("sends the root path to Runs", () => {
    mockFetch(jsonResponse(okHealth));
    const { router } = renderApp("/");

    expect(router.state.location.pathname).toBe("/runs");
    expect(screen.getByRole("heading", { level: 1, name: "Runs" })).toBeInTheDocument();
  });

  it.each([["/runs", "Runs are on the way"]])("shows a coming-soon state at %s", (path, title) => {
    mockFetch(jsonResponse(okHealth));
    renderApp(path);

    const empty = within(screen.getByRole("region", { name: title }));
    expect(empty.getByText("Coming soon")).toBeInTheDocument();
  });

  it("shows a not-found page for unknown paths inside the shell", () => {
    mockFetch(jsonResponse(okHealth));
    renderApp("/no/such/page");

    expect(screen.getByRole("heading", { name: "Nothing lives at /no/such/page" })).toBeInTheDocument();
    expect(screen.getByRole("navigation", { name: "Main" })).toBeInTheDocument();
  });
});
