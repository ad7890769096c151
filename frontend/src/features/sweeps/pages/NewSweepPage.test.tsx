import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { jsonResponse, mockApi, pageOf, renderApp } from "../../../test/render";
import type { Dataset, DatasetVersion } from "../../datasets/api";
import schema from "../../runs/fixtures/config-schema.json";
import presets from "../../runs/fixtures/presets.json";
import { sweepDetail } from "../fixtures";

afterEach(() => vi.unstubAllGlobals());

/** The first look waits for the lazily loaded page (seconds on a busy machine). */
const FIRST = { timeout: 10_000 };

const version = { id: 31, number: 2, dataset: 3, row_count: 100, message: "" } as DatasetVersion;
const arith = { id: 3, name: "Arith", latest_version: version } as Dataset;

function api(created: (request: Request) => Response) {
  return mockApi({
    "GET /api/health": { status: "ok", version: "0.1.0", components: {} },
    "GET /api/config/schema": schema,
    "GET /api/config/presets": presets,
    "GET /api/datasets/": pageOf([arith]),
    "GET /api/dataset-versions/": [version],
    "GET /api/reward-functions/": pageOf([]),
    "GET /api/sweeps/": pageOf([]),
    "POST /api/sweeps/": created,
  });
}

const posted = (fetchMock: ReturnType<typeof mockApi>) => fetchMock.mock.calls.map(([request]) => request as Request).filter((r) => r.method === "POST");

function addParameter(name: string) {
  fireEvent.change(screen.getByLabelText("Add a parameter"), { target: { value: name } });
}

describe("the new sweep form", { timeout: 30_000 }, () => {
  it("starts ranges around the preset's values, counts a grid's trials and refuses a grid over a float range", async () => {
    const fetchMock = api(() => jsonResponse(sweepDetail, 201));
    renderApp("/p/demo/sweeps/new");
    await screen.findByRole("button", { name: "Start sweep" }, FIRST);
    addParameter("rollout.n"); // the preset's 8: 4 to 16
    const n = screen.getByRole("group", { name: "Parameter rollout.n" });
    expect(within(n).getByLabelText("Low")).toHaveValue("4");
    expect(within(n).getByLabelText("High")).toHaveValue("16");
    fireEvent.change(within(n).getByLabelText("Step"), { target: { value: "4" } });
    addParameter("actor.optim.lr"); // the preset's 1e-4: 1e-5 to 1e-3, log
    const lr = screen.getByRole("group", { name: "Parameter actor.optim.lr" });
    expect(within(lr).getByLabelText("Low")).toHaveValue("1e-5");
    expect(within(lr).getByLabelText("High")).toHaveValue("0.001");
    expect(within(lr).getByRole("checkbox", { name: "log scale" })).toBeChecked();

    fireEvent.change(screen.getByLabelText("Search method"), { target: { value: "grid" } });
    expect(await screen.findByText(/actor\.optim\.lr is a float range/)).toBeInTheDocument();
    fireEvent.click(screen.getByRole("button", { name: "Start sweep" }));
    await waitFor(() => expect(screen.getByLabelText("Search method")).toHaveAttribute("aria-invalid", "true"));
    expect(posted(fetchMock)).toEqual([]);

    // As a choice of values the learning rate makes a grid: 3 (n: 4, 8, 12, 16 by 4 is 4) x 2.
    fireEvent.change(within(lr).getByLabelText("Search"), { target: { value: "choice" } });
    fireEvent.change(within(lr).getByLabelText("Values"), { target: { value: "1e-5, 1e-4" } });
    expect(await screen.findByTestId("grid-size")).toHaveTextContent("The grid makes 4 × 2 = 8 trials.");
  });

  it("sends the sweep the form describes and opens its page", async () => {
    const fetchMock = api(() => jsonResponse(sweepDetail, 201));
    const { router } = renderApp("/p/demo/sweeps/new");
    await screen.findByRole("button", { name: "Start sweep" }, FIRST);
    await waitFor(() => expect(screen.getByLabelText("Training data")).toHaveTextContent("Arith · latest (v2)"));
    fireEvent.change(screen.getByLabelText("Training data"), { target: { value: "v:31" } });
    addParameter("rollout.n");
    fireEvent.change(screen.getByLabelText("Max trials"), { target: { value: "6" } });
    fireEvent.click(screen.getByRole("button", { name: "Start sweep" }));
    await waitFor(() => expect(router.state.location.pathname).toBe("/p/demo/sweeps/5"));
    const [request] = posted(fetchMock);
    expect(await request?.json()).toEqual({
      project: "demo",
      name: "grpo-tiny-arith-sweep",
      base_run: null,
      preset: "grpo-tiny-arith",
      inputs: { dataset_version: 31 },
      space: [{ name: "rollout.n", type: "int", low: 4, high: 16, step: 1 }],
      method: "tpe",
      seed: 0,
      metric: "",
      direction: "maximize",
      metric_reward: "",
      max_trials: 6,
      parallelism: 2,
      pruner: { kind: "asha", min_steps: 2, reduction_factor: 2 },
      stop_on_critical_alert: true,
      overrides: [],
    });
  });

  it("shows the server's errors at their fields", async () => {
    api(() => jsonResponse({ error: { code: "validation_error", message: "Invalid.", fields: { parallelism: ["4 trials at once is above the queue's cap of 2 running runs (RLSTUDIO_MAX_RUNNING_PER_PROJECT); choose at most 2."] } } }, 400));
    renderApp("/p/demo/sweeps/new");
    await screen.findByRole("button", { name: "Start sweep" }, FIRST);
    fireEvent.change(await screen.findByLabelText("Training data"), { target: { value: "v:31" } });
    addParameter("rollout.n");
    fireEvent.change(screen.getByLabelText("At a time"), { target: { value: "4" } });
    fireEvent.click(screen.getByRole("button", { name: "Start sweep" }));
    expect(await screen.findByText(/above the queue's cap of 2/)).toBeInTheDocument();
    expect(screen.getByLabelText("At a time")).toHaveAttribute("aria-invalid", "true");
  });
});
