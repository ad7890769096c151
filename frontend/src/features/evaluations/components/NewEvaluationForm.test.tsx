import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { jsonResponse, mockApi, pageOf, renderApp } from "../../../test/render";
import type { Dataset, DatasetVersion } from "../../datasets/api";
import { model } from "../../models/fixtures";
import { NO_MODELS, NO_PROMPTS } from "../lib/evaluationForm";

afterEach(() => vi.unstubAllGlobals());

const version = { id: 31, number: 1, dataset: 3 } as DatasetVersion;

function api(created: (request: Request) => Response) {
  return mockApi({
    "GET /api/health": { status: "ok", version: "0.1.0", components: {} },
    "GET /api/evaluations/": pageOf([]),
    "GET /api/models/": pageOf([model()]),
    "GET /api/runs/": pageOf([]),
    "GET /api/datasets/": pageOf([{ id: 3, name: "larger", latest_version: version } as Dataset]),
    "GET /api/dataset-versions/": [version],
    "GET /api/reward-functions/": pageOf([]),
    "POST /api/evaluations/": created,
  });
}

async function openForm() {
  renderApp("/p/demo/evaluations");
  fireEvent.click((await screen.findAllByRole("button", { name: "New evaluation" }))[0] as HTMLElement);
  return screen.findByRole("form", { name: "New evaluation" });
}

const posts = (fetchMock: ReturnType<typeof mockApi>) => fetchMock.mock.calls.map(([request]) => request as Request).filter((r) => r.method === "POST");

describe("the new evaluation form", () => {
  it("asks for something to evaluate and its prompts at their fields, and sends nothing", async () => {
    const fetchMock = api(() => jsonResponse({}, 201));
    const form = await openForm();
    fireEvent.click(within(form).getByRole("button", { name: "Start evaluation" }));
    expect(await within(form).findByText(NO_MODELS)).toBeInTheDocument();
    expect(within(form).getByText(NO_PROMPTS)).toBeInTheDocument();
    expect(within(form).getByLabelText("Prompts")).toHaveAttribute("aria-invalid", "true");
    expect(posts(fetchMock)).toEqual([]);
  });

  it("shows a refusal at the field it is about, and one without a field once for the form", async () => {
    let answer = jsonResponse({ error: { code: "validation_error", message: "Invalid.", fields: { dataset_version: ["No built-in scorer knows 'max_task'."] } } }, 400);
    const fetchMock = api(() => answer);
    const form = await openForm();
    fireEvent.click(await within(form).findByRole("checkbox", { name: "tiny-demo" }));
    const prompts = within(form).getByLabelText("Prompts");
    await within(form).findByRole("option", { name: "Dataset larger v1" });
    fireEvent.change(prompts, { target: { value: "version:31" } });
    fireEvent.click(within(form).getByRole("button", { name: "Start evaluation" }));
    expect(await within(form).findByText("No built-in scorer knows 'max_task'.")).toBeInTheDocument();
    expect(prompts).toHaveAttribute("aria-invalid", "true");
    expect(await posts(fetchMock)[0]?.json()).toMatchObject({ project: "demo", models: [{ model: 1 }], dataset_version: 31, greedy: true, k: 1 });

    answer = jsonResponse({ error: { code: "conflict", message: "The queue is full." } }, 409);
    fireEvent.click(within(form).getByRole("button", { name: "Start evaluation" }));
    await waitFor(() => expect(within(form).getAllByRole("alert").map((a) => a.textContent)).toContain("The queue is full."));
  });
});
