import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { jsonResponse, mockApi, renderApp } from "../../../test/render";
import { model, page } from "../fixtures";

const okHealth = { status: "ok", version: "0.1.0", components: {} };
const offered = [{ folder: "demo:tiny-qwen", kind: "demo", name: "tiny-qwen" }];
const noRuns = page([]);

afterEach(() => {
  vi.unstubAllGlobals();
});

function api(overrides: Record<string, unknown> = {}) {
  return mockApi({
    "GET /api/health": okHealth,
    "GET /api/models/": page([]),
    "GET /api/models/available/": offered,
    "GET /api/runs/": noRuns,
    ...overrides,
  });
}

describe("Models page", () => {
  it("is in the project's nav and lists the models with their facts and status", async () => {
    api({
      "GET /api/models/": page([
        model(),
        model({ id: 2, name: "rm", role: "reward", kind: "server", info: { architecture: "Qwen2ForSequenceClassification", parameters: 494_032_768, tokenizer: "Qwen2Tokenizer" } }),
        model({ id: 3, name: "Qwen/Qwen2.5-0.5B", kind: "hub", hub_id: "Qwen/Qwen2.5-0.5B", revision: "main", status: "downloading", info: {}, progress: { files_done: 1, files_total: 3, bytes_done: 1024 * 1024, bytes_total: 4 * 1024 * 1024 } }),
        model({ id: 4, name: "org/offline", kind: "hub", hub_id: "org/offline", status: "failed", info: {}, error: "huggingface.co is unreachable: offline." }),
      ]),
    });
    renderApp("/p/demo/models");

    expect(await screen.findByRole("heading", { level: 1, name: "Models" })).toBeInTheDocument();
    expect(within(screen.getByRole("navigation", { name: "Main" })).getByRole("link", { name: "Models" })).toHaveAttribute("aria-current", "page");
    const table = await screen.findByRole("table", { name: "Models" });
    const rows = within(table).getAllByRole("row");
    expect(within(rows[1] as HTMLElement).getByRole("link", { name: "tiny-demo" })).toHaveAttribute("href", "/p/demo/models/1");
    expect(rows[1]).toHaveTextContent("Demo model");
    expect(rows[1]).toHaveTextContent("Policy");
    expect(rows[1]).toHaveTextContent("3.3M");
    expect(rows[1]).toHaveTextContent("Ready");
    expect(rows[2]).toHaveTextContent("Reward model");
    expect(rows[2]).toHaveTextContent("494M");
    const bar = within(rows[3] as HTMLElement).getByRole("progressbar");
    expect(bar).toHaveAttribute("aria-valuenow", "25");
    expect(rows[3]).toHaveTextContent("1.0 MiB of 4.0 MiB · 1 of 3 files");
    expect(rows[4]).toHaveTextContent("Failed");
    expect(rows[4]).toHaveTextContent("huggingface.co is unreachable: offline.");
  });

  it("says what to do when the project has no models", async () => {
    api();
    renderApp("/p/demo/models");
    const empty = await screen.findByRole("region", { name: "No models yet" });
    expect(empty).toHaveTextContent(/pick a folder the server offers/);
  });

  it("adds a folder the server offers", async () => {
    const created = model({ id: 5, name: "tiny-qwen" });
    const fetchMock = api({ "POST /api/models/": () => jsonResponse(created, 201) });
    renderApp("/p/demo/models");

    const form = await screen.findByRole("form", { name: "Add a server folder" });
    const select = await within(form).findByRole("combobox", { name: "Folder" });
    await waitFor(() => expect(select).toHaveValue("demo:tiny-qwen"));
    fireEvent.click(within(form).getByRole("button", { name: "Add model" }));

    expect(await screen.findByRole("status")).toHaveTextContent("Added tiny-qwen");
    const post = fetchMock.mock.calls.map((c) => c[0] as Request).find((r) => r.method === "POST");
    expect(await post?.json()).toEqual({ project: "demo", folder: "demo:tiny-qwen" });
  });

  it("explains why no folder can be chosen when the server offers none", async () => {
    api({ "GET /api/models/available/": [] });
    renderApp("/p/demo/models");
    const form = await screen.findByRole("form", { name: "Add a server folder" });
    await waitFor(() => expect(form).toHaveTextContent("This server offers no model folders"));
    expect(within(form).getByRole("combobox", { name: "Folder" })).toBeDisabled();
    expect(within(form).getByRole("button", { name: "Add model" })).toBeDisabled();
  });

  it("adds a run's checkpoint chosen from the project's runs, showing the server's error at the field", async () => {
    const fetchMock = api({
      "GET /api/runs/": page([{ id: 12, name: "grpo-1", status: "succeeded" }]),
      "POST /api/models/": () =>
        jsonResponse({ error: { code: "validation_error", message: "Invalid.", fields: { checkpoint_run: ["No checkpoint of run 12 in this project."] } } }, 400),
    });
    renderApp("/p/demo/models");
    fireEvent.click(await screen.findByRole("tab", { name: "Run checkpoint" }));
    const form = screen.getByRole("form", { name: "Add a run checkpoint" });
    const select = within(form).getByRole("combobox", { name: "Run" });
    await waitFor(() => expect(select).toHaveValue("12"));
    fireEvent.click(within(form).getByRole("button", { name: "Add checkpoint" }));

    await waitFor(() => expect(select).toHaveAttribute("aria-invalid", "true"));
    expect(within(form).getByRole("alert")).toHaveTextContent("No checkpoint of run 12 in this project.");
    const post = fetchMock.mock.calls.map((c) => c[0] as Request).find((r) => r.method === "POST");
    expect(await post?.json()).toEqual({ project: "demo", checkpoint_run: 12 });
  });

  it("shows a hub download's progress live, then why it failed", async () => {
    const queued = model({ id: 8, name: "org/name", kind: "hub", hub_id: "org/name", revision: "main", status: "queued", info: {} });
    const answers = [
      { ...queued, status: "downloading", progress: { files_done: 0, files_total: 2, bytes_done: 0, bytes_total: 0 } },
      { ...queued, status: "failed", error: "Could not reach https://huggingface.co: the server is offline." },
    ];
    let call = 0;
    const fetchMock = api({
      "POST /api/models/": () => jsonResponse(queued, 202),
      "GET /api/models/8/": () => jsonResponse(answers[Math.min(call++, answers.length - 1)]),
    });
    renderApp("/p/demo/models");
    fireEvent.click(await screen.findByRole("tab", { name: "Hugging Face hub" }));
    const form = screen.getByRole("form", { name: "Add from the Hugging Face hub" });
    fireEvent.change(within(form).getByRole("textbox", { name: "Repository id" }), { target: { value: "org/name" } });
    fireEvent.click(within(form).getByRole("button", { name: "Download and add" }));

    expect(await within(form).findByRole("progressbar", { name: "Download of org/name" })).toBeInTheDocument();
    const alert = await within(form).findByRole("alert", {}, { timeout: 4000 });
    expect(alert).toHaveTextContent("org/name could not be downloaded.");
    expect(alert).toHaveTextContent("the server is offline");
    const post = fetchMock.mock.calls.map((c) => c[0] as Request).find((r) => r.method === "POST");
    expect(await post?.json()).toEqual({ project: "demo", hub_id: "org/name" });
  });

  it("shows a bad hub id's error at its field", async () => {
    api({
      "POST /api/models/": () =>
        jsonResponse({ error: { code: "validation_error", message: "Invalid.", fields: { hub_id: ["Not a hub repository id: `name` or `owner/name`."] } } }, 400),
    });
    renderApp("/p/demo/models");
    fireEvent.click(await screen.findByRole("tab", { name: "Hugging Face hub" }));
    const form = screen.getByRole("form", { name: "Add from the Hugging Face hub" });
    const input = within(form).getByRole("textbox", { name: "Repository id" });
    fireEvent.change(input, { target: { value: "not a/repo id" } });
    fireEvent.click(within(form).getByRole("button", { name: "Download and add" }));

    await waitFor(() => expect(input).toHaveAttribute("aria-invalid", "true"));
    expect(within(form).getByRole("alert")).toHaveTextContent("Not a hub repository id");
  });
});

describe("Model page", () => {
  it("shows the chat template as text, never as HTML", async () => {
    api({ "GET /api/models/1/": model() });
    const { container } = renderApp("/p/demo/models/1");
    expect(await screen.findByRole("heading", { level: 1, name: "tiny-demo" })).toBeInTheDocument();
    const pre = screen.getByTestId("chat-template");
    expect(pre.tagName).toBe("PRE");
    expect(pre.textContent).toBe("{% for m in messages %}<b>{{ m.content }}</b>{% endfor %}");
    expect(container.querySelector("pre b")).toBeNull();
    expect(screen.getByText("3.3M (3,300,000)")).toBeInTheDocument();
  });

  it("says so when the model cannot be loaded", async () => {
    api();
    renderApp("/p/demo/models/99");
    expect(await screen.findByRole("region", { name: "The model could not be loaded" })).toBeInTheDocument();
  });
});
