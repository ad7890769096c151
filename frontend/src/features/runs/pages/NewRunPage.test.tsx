import { fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { jsonResponse, mockApi, pageOf, renderApp } from "../../../test/render";
import type { Dataset, DatasetVersion } from "../../datasets/api";
import schema from "../fixtures/config-schema.json";
import presets from "../fixtures/presets.json";
import { MISSING_DATASET } from "../lib/runForm";

afterEach(() => vi.unstubAllGlobals());

const version = { id: 31, number: 2, dataset: 3, row_count: 100, message: "" } as DatasetVersion;
const arith = { id: 3, name: "Arith", latest_version: version } as Dataset;

function api(datasets: Dataset[], created: (request: Request) => Response) {
  return mockApi({
    "GET /api/health": { status: "ok", version: "0.1.0", components: {} },
    "GET /api/config/schema": schema,
    "GET /api/config/presets": presets,
    "GET /api/datasets/": pageOf(datasets),
    "GET /api/dataset-versions/": [version],
    "GET /api/models/": pageOf([]),
    "GET /api/models/available/": [],
    "GET /api/reward-functions/": pageOf([]),
    "POST /api/runs/": created,
  });
}

const posted = (fetchMock: ReturnType<typeof mockApi>) => fetchMock.mock.calls.map(([request]) => request as Request).filter((r) => r.method === "POST");

describe("the new run form", () => {
  it("asks for the training data at its field, and sends nothing", async () => {
    const fetchMock = api([], () => jsonResponse({}, 201));
    renderApp("/p/demo/runs/new");
    fireEvent.click(await screen.findByRole("button", { name: "Create run" }));
    const data = await screen.findByLabelText("Training data");
    await waitFor(() => expect(data).toHaveAttribute("aria-invalid", "true"));
    expect(screen.getByText(MISSING_DATASET)).toBeInTheDocument();
    await waitFor(() => expect(data).toHaveFocus());
    expect(posted(fetchMock)).toEqual([]);
  });

  it("shows the server's errors at the fields that hold them, the config's in the config form", async () => {
    const fetchMock = api([arith], () =>
      jsonResponse({ error: { code: "validation_error", message: "Invalid.", fields: { name: ["A run with this name exists."], dataset_version: ["Not in this project."], resources: { gpus: ["Too many."] }, config: { rollout: { n: ["Must be at least 2 for GRPO."] } } } } }, 400),
    );
    renderApp("/p/demo/runs/new");
    const data = await screen.findByLabelText("Training data");
    await waitFor(() => expect(data).toHaveValue("d:3"));
    fireEvent.change(screen.getByLabelText("Run name"), { target: { value: "taken" } });
    fireEvent.click(screen.getByRole("button", { name: "Create run" }));

    expect(await screen.findByText("A run with this name exists.")).toBeInTheDocument();
    expect(screen.getByLabelText("Run name")).toHaveAttribute("aria-invalid", "true");
    expect(screen.getByText("Not in this project.")).toBeInTheDocument();
    expect(data).toHaveAttribute("aria-invalid", "true");
    expect(screen.getByLabelText("GPUs")).toHaveAttribute("aria-invalid", "true");
    expect(screen.getByText("Must be at least 2 for GRPO.")).toBeInTheDocument();
    const [request] = posted(fetchMock);
    expect(await request?.json()).toMatchObject({ name: "taken", dataset: 3, project: "demo", preset: "grpo-tiny-arith" });

    // Editing a field clears the server's word on it, in the config form too.
    fireEvent.change(screen.getByLabelText("Run name"), { target: { value: "free" } });
    await waitFor(() => expect(screen.queryByText("A run with this name exists.")).not.toBeInTheDocument());
    const samples = document.querySelector('[data-path="rollout.n"]') as HTMLInputElement;
    expect(samples).toHaveAttribute("aria-invalid", "true");
    fireEvent.change(samples, { target: { value: "4" } });
    await waitFor(() => expect(screen.queryByText("Must be at least 2 for GRPO.")).not.toBeInTheDocument());
    expect(samples).not.toHaveAttribute("aria-invalid", "true");
  });

  it("keeps the suggested name still while its field has focus, then follows the dataset chosen", async () => {
    let answerDatasets: () => void = () => {};
    const datasetsAnswered = new Promise<void>((resolve) => (answerDatasets = resolve));
    const fetchMock = api([], () => jsonResponse({}, 201));
    const answers = fetchMock.getMockImplementation()!;
    fetchMock.mockImplementation(async (input, init) => {
      const request = input instanceof Request ? input : new Request(new URL(String(input), "http://localhost"), init);
      if (new URL(request.url).pathname !== "/api/datasets/") return answers(input, init);
      await datasetsAnswered; // the project's one dataset arrives while the name is being edited
      return jsonResponse(pageOf([arith]));
    });
    renderApp("/p/demo/runs/new");
    const name = (await screen.findByLabelText("Run name")) as HTMLInputElement;
    const suggested = name.value;
    expect(suggested).toMatch(/^grpo-tiny-arith-\d{4}-\d{4}$/);

    fireEvent.focus(name);
    answerDatasets();
    await waitFor(() => expect(screen.getByLabelText("Training data")).toHaveValue("d:3"));
    expect(name).toHaveValue(suggested); // the text someone selected to type over stays put

    fireEvent.blur(name);
    expect(name).toHaveValue(`arith-${suggested}`);
  });
});
