import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { jsonResponse, mockApi, pageOf, renderApp } from "../../../test/render";
import { sweepDetail, sweepTrials } from "../fixtures";

afterEach(() => vi.unstubAllGlobals());

/** The first look waits for the lazily loaded page (seconds on a busy machine). */
const FIRST = { timeout: 10_000 };

const health = { status: "ok", version: "0.1.0", components: {} };

describe("the sweep page", { timeout: 15_000 }, () => {
  it("shows the trials best first, the best trial's config diff, the importance and the top trials to compare", async () => {
    mockApi({ "GET /api/health": health, "GET /api/sweeps/5/": { ...sweepDetail, status: "finished" } });
    renderApp("/p/demo/sweeps/5");
    const table = await screen.findByRole("table", { name: "Trials" }, FIRST);
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows.map((r) => within(r).getAllByRole("cell")[0]?.textContent)).toEqual(["1", "3", "0", "2", "4"]);
    expect(within(rows[0]!).getByRole("link", { name: "lr-sweep-t1" })).toHaveAttribute("href", "/p/demo/runs/101");
    expect(rows[3]).toHaveTextContent("prunedat step 2");
    expect(rows[0]).toHaveTextContent("3e-4"); // actor.optim.lr
    expect(rows[0]).toHaveTextContent("#8"); // reward_version, an input's id

    // Sorting by the metric from the keyboard: the header is a button.
    const metricHeader = within(table).getByRole("button", { name: /validation score/ });
    fireEvent.click(metricHeader);
    const resorted = within(table).getAllByRole("row").slice(1);
    expect(resorted.map((r) => within(r).getAllByRole("cell")[0]?.textContent)).toEqual(["2", "0", "3", "1", "4"]);

    const best = screen.getByRole("region", { name: "Best trial" });
    expect(within(best).getByTestId("best-value")).toHaveTextContent("0.81");
    expect(within(best).getByRole("table", { name: "Config of trial #1 against run #12" })).toHaveTextContent("actor.optim.lr1e-63e-4rollout.n48");

    const importance = screen.getByRole("region", { name: "Parameter importance" });
    expect(importance).toHaveTextContent("by PED-ANOVA (Optuna)");
    expect(within(importance).getAllByRole("listitem").map((li) => li.textContent)).toEqual(["actor.optim.lr0.62", "rollout.n0.25", "rollout.temperature0.08", "reward_version0.05"]);

    // Parallel coordinates: an axis per parameter and the metric, a line per trial with a value.
    const chart = screen.getByTestId("parcoords-chart");
    expect([...chart.querySelectorAll("[data-axis]")].map((a) => a.getAttribute("data-axis"))).toEqual(["actor.optim.lr (log)", "rollout.n", "rollout.temperature", "reward_version", "validation score"]);
    expect([...chart.querySelectorAll("polyline")].map((l) => l.getAttribute("data-trial")).sort()).toEqual(["0", "1", "2", "3"]);
    expect(screen.getByRole("link", { name: "Compare" })).toHaveAttribute("href", "/p/demo/compare?runs=101,100,103");
    expect(screen.queryByRole("button", { name: "Pause" })).not.toBeInTheDocument(); // finished
  });

  it("polls a running sweep and shows what changed", async () => {
    let calls = 0;
    const later = { ...sweepDetail, trials: [...sweepTrials, { ...sweepTrials[0]!, number: 5, run: { id: 105, name: "lr-sweep-t5", status: "running" }, state: "running", value: null }] };
    mockApi({ "GET /api/health": health, "GET /api/sweeps/5/": () => jsonResponse((calls += 1) === 1 ? sweepDetail : later) });
    renderApp("/p/demo/sweeps/5");
    await screen.findByRole("table", { name: "Trials" }, FIRST);
    expect(screen.queryByRole("link", { name: "lr-sweep-t5" })).not.toBeInTheDocument();
    expect(await screen.findByRole("link", { name: "lr-sweep-t5" }, { timeout: 5000 })).toBeInTheDocument();
  });

  it("pauses the sweep and shows its new status", async () => {
    const fetchMock = mockApi({ "GET /api/health": health, "GET /api/sweeps/5/": sweepDetail, "POST /api/sweeps/5/pause/": { ...sweepDetail, status: "paused" }, "GET /api/sweeps/": pageOf([]), "GET /api/runs/": pageOf([]) });
    renderApp("/p/demo/sweeps/5");
    fireEvent.click(await screen.findByRole("button", { name: "Pause" }, FIRST));
    expect(await screen.findByRole("button", { name: "Resume" })).toBeInTheDocument();
    expect(fetchMock.mock.calls.some(([r]) => (r as Request).method === "POST" && (r as Request).url.endsWith("/api/sweeps/5/pause/"))).toBe(true);
  });

  it("deletes an ended sweep after asking, and goes back to the list", async () => {
    const ended = { ...sweepDetail, status: "finished", trials: sweepTrials.filter((t) => t.state !== "running") };
    const fetchMock = mockApi({ "GET /api/health": health, "GET /api/sweeps/5/": ended, "DELETE /api/sweeps/5/": { id: 5, name: "lr and n", freed_bytes: 2048 }, "GET /api/sweeps/": pageOf([]) });
    const { router } = renderApp("/p/demo/sweeps/5");
    fireEvent.click(await screen.findByRole("button", { name: "Delete" }, FIRST));
    const dialog = screen.getByRole("alertdialog", { name: "Delete sweep “lr and n”?" });
    expect(dialog).toHaveTextContent("Its 4 trial runs and their files");
    fireEvent.click(within(dialog).getByRole("button", { name: "Delete sweep" }));
    await waitFor(() => expect(router.state.location.pathname).toBe("/p/demo/sweeps"));
    expect(fetchMock.mock.calls.some(([r]) => (r as Request).method === "DELETE")).toBe(true);
  });

  it("offers no delete while a trial runs", async () => {
    mockApi({ "GET /api/health": health, "GET /api/sweeps/5/": { ...sweepDetail, status: "paused" } });
    renderApp("/p/demo/sweeps/5");
    await screen.findByRole("button", { name: "Resume" }, FIRST);
    expect(screen.queryByRole("button", { name: "Delete" })).not.toBeInTheDocument();
  });

  it("says when the sweep cannot be loaded", async () => {
    mockApi({ "GET /api/health": health });
    renderApp("/p/demo/sweeps/5");
    expect(await screen.findByRole("region", { name: "Could not load sweep #5" }, FIRST)).toBeInTheDocument();
  });
});

describe("the sweeps list", { timeout: 15_000 }, () => {
  it("lists the project's sweeps with their trials by state and best value", async () => {
    mockApi({ "GET /api/health": health, "GET /api/sweeps/": pageOf([sweepDetail]) });
    renderApp("/p/demo/sweeps");
    const table = await screen.findByRole("table", { name: "Sweeps" }, FIRST);
    expect(within(table).getByRole("link", { name: "lr and n" })).toHaveAttribute("href", "/p/demo/sweeps/5");
    expect(table).toHaveTextContent("1 running · 2 complete · 1 pruned · 1 failed");
    expect(within(table).getByRole("link", { name: "trial #1" })).toHaveAttribute("href", "/p/demo/runs/101");
  });

  it("offers a first sweep when there is none", async () => {
    mockApi({ "GET /api/health": health, "GET /api/sweeps/": pageOf([]) });
    renderApp("/p/demo/sweeps");
    expect(await screen.findByRole("region", { name: "No sweeps yet" }, FIRST)).toBeInTheDocument();
    await waitFor(() => expect(screen.getByRole("link", { name: "Start from a preset" })).toHaveAttribute("href", "/p/demo/sweeps/new"));
  });
});
