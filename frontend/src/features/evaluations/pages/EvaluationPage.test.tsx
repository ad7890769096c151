import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { mockApi, renderApp } from "../../../test/render";

const okHealth = { status: "ok", version: "0.1.0", components: {} };
const scores = (mean: number) => ({ prompts: 4, responses: 4, k: 1, mean_score: mean, pass_at_k: mean, mean_at_k: mean, mean_length: 3, error_rate: 0 });
const model = (step: number, label: string, mean: number | null, checkpoint: number | null) => ({
  step,
  label,
  kind: checkpoint === null ? "model" : "checkpoint",
  model: checkpoint === null ? 1 : null,
  run: checkpoint === null ? null : 7,
  run_name: checkpoint === null ? null : "demo",
  checkpoint_step: checkpoint,
  scores: mean === null ? null : scores(mean),
  by_data_source: mean === null ? {} : { arith: scores(mean) },
});
const settings = { k: 1, greedy: true, temperature: 1, pass_threshold: 1, max_prompts: null, max_new_tokens: 16 };
const models = [model(1, "demo-model", 0.25, null), model(2, "demo @ step 20", 0.5, 20), model(3, "demo @ step 40", 0.75, 40)];
const evaluation = {
  id: 12,
  project: "demo",
  name: "demo: checkpoints",
  status: "succeeded",
  status_reason: "",
  priority: 0,
  settings,
  models,
  question: null,
  inputs: {
    model: null,
    dataset: null,
    validation: "held_out",
    validation_dataset: { dataset: 1, name: "arith", version: 3, number: 1, rows: 20 },
    reward: { function: null, name: "arith", version: null, number: null, kwargs: {} },
    reward_models: [],
  },
  created_by: "owner",
  created_at: "2026-01-01T00:00:00Z",
  started_at: null,
  finished_at: null,
  last_error: "",
  results: { settings, models, progress: { responses: 12, total: 12, fraction: 1 } },
};

describe("EvaluationPage", () => {
  it("compares the models side by side, charts the checkpoints over the base model and links to their responses", async () => {
    mockApi({ "GET /api/health": okHealth, "GET /api/evaluations/12/": evaluation });
    renderApp("/p/demo/evaluations/12");
    const table = await screen.findByRole("table", { name: "Results by model" });
    const rows = within(table).getAllByRole("row");
    expect(rows.map((r) => within(r).queryAllByRole("cell")[0]?.textContent).slice(1)).toEqual(["demo-model", "demo @ step 20", "demo @ step 40"]);
    expect(within(rows[3]!).getAllByText("0.750")).toHaveLength(3); // mean score, pass@1, mean@1
    expect(within(rows[2]!).getByRole("link", { name: "open" })).toHaveAttribute("href", "/p/demo/runs/12/rollouts?split=eval&step=2");
    const chart = screen.getByTestId("checkpoint-chart");
    expect(chart.querySelectorAll("circle")).toHaveLength(2);
    expect(within(chart).getByTestId("baseline")).toHaveTextContent("demo-model 0.250");
    expect(screen.getByRole("table", { name: "Results by data source" })).toBeInTheDocument();
  });

  it("shows an asked sample's answers in a column per step, the base model first, and offers the report", async () => {
    const prompt = "<|im_start|>user\nCount to 3.<|im_end|>\n<|im_start|>assistant\n";
    const question = { sample: 55, run: 7, run_name: "demo", step: 3, split: "train", group_id: "0:7", prompt };
    const answer = (id: number, step: number, response: string) => ({
      id, run: 12, attempt: 1, step, split: "eval", group_id: "0:7", data_source: "arith", prompt, response,
      ground_truth: "1 2 3", score: step === 3 ? 1 : 0, components: {}, reward_extra: {}, advantage: 0, prompt_length: 9,
      response_length: 4, finish_reason: "stop", error: "", reward_version: null, reward_version_number: null, reward_function_name: null, superseded: false,
      created_at: "2026-01-01T00:00:00Z", labels: [], has_token_data: false, num_turns: 0,
    });  // prettier-ignore
    const running = { ...evaluation, status: "running", question, results: { ...evaluation.results, progress: { responses: 2, total: 3, fraction: 2 / 3 } } };
    const samples = { next: null, previous: null, results: [answer(31, 2, "1 2"), answer(30, 1, "one")] };
    const own = { ...answer(55, 3, "1, 2, 3"), run: 7, split: "train" };
    mockApi({ "GET /api/health": okHealth, "GET /api/evaluations/12/": running, "GET /api/samples/": samples, "GET /api/samples/55/": own });
    renderApp("/p/demo/evaluations/12");
    const answers = await screen.findByRole("region", { name: "Answers by step" });
    const columns = within(answers).getAllByTestId("answer-column");
    expect(columns.map((c) => within(c).getByRole("heading").textContent)).toEqual(["Base model", "Step 20", "Step 40"]);
    expect(await within(columns[0]!).findByText("one")).toBeInTheDocument();
    expect(within(columns[1]!).getByText("1 2")).toBeInTheDocument();
    expect(within(columns[2]!).getByText("Waiting for its answer…")).toBeInTheDocument();
    expect(await screen.findByTestId("asked-answer")).toHaveTextContent("1, 2, 3");
    expect(screen.getByRole("link", { name: "Sample #55" })).toHaveAttribute("href", "/p/demo/runs/7/rollouts?sample=55");
    expect(screen.getByRole("link", { name: "Download report" })).toHaveAttribute("href", "/api/evaluations/12/report/");
  });

  it("says so when the evaluation cannot be loaded", async () => {
    mockApi({ "GET /api/health": okHealth });
    renderApp("/p/demo/evaluations/99");
    expect(await screen.findByRole("region", { name: "Could not load the evaluation" })).toBeInTheDocument();
  });
});

describe("EvaluationsPage", () => {
  it("shows an empty state with a way to start one", async () => {
    mockApi({ "GET /api/health": okHealth, "GET /api/evaluations/": { count: 0, next: null, previous: null, results: [] } });
    renderApp("/p/demo/evaluations");
    expect(await screen.findByRole("region", { name: "No evaluations yet" })).toBeInTheDocument();
  });

  it("lists evaluations with their models", async () => {
    mockApi({ "GET /api/health": okHealth, "GET /api/evaluations/": { count: 1, next: null, previous: null, results: [evaluation] } });
    renderApp("/p/demo/evaluations");
    const link = await screen.findByRole("link", { name: "demo: checkpoints" });
    expect(link).toHaveAttribute("href", "/p/demo/evaluations/12");
    expect(screen.getByText("demo-model, demo @ step 20, demo @ step 40")).toBeInTheDocument();
  });
});
